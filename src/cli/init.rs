//! `eureka-sim presets` and `eureka-sim init`: print the presets; write a starter scenario
//! ([`crate::report::starter`]), checked by parsing before it is put in place.

use super::error::InitError;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::report::starter::{
    RepoRole, RepoTable, Starter, StarterPeer, render_config_repo, render_presets, render_starter,
};
use crate::scenario::presets::{PRESET_NAMES, preset};
use crate::scenario::{FileEvidence, file_evidence, profile_document};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    eureka-sim init\n  \
    eureka-sim init my-question.toml --preset jhipster\n  \
    eureka-sim init q.toml --server-config eureka/application.yml \\\n      \
    --app-config svc/application.properties --caller-config gateway/application.yml")]
pub(crate) struct InitArgs {
    /// The scenario file to write.
    #[arg(default_value = "scenario.toml")]
    path: PathBuf,
    /// Start from a preset (`eureka-sim presets` lists them).
    #[arg(long)]
    preset: Option<String>,
    /// The Eureka server's application.yml or .properties.
    #[arg(long, value_name = "FILE")]
    server_config: Option<PathBuf>,
    /// The called service's application.yml or .properties.
    #[arg(long, value_name = "FILE")]
    app_config: Option<PathBuf>,
    /// The gateway's (the caller's) application.yml or .properties.
    #[arg(long, value_name = "FILE")]
    caller_config: Option<PathBuf>,
    /// One [[peer]] per profile of --server-config's file (Spring's HA guide: peer1,peer2,peer3),
    /// each with its document's hostname, zone and service URLs.
    #[arg(long, value_name = "A,B", requires = "server_config")]
    peer_profiles: Option<String>,
    /// A Spring Cloud Config repository: application.yml shared by all, {name}.yml and
    /// {name}-{profile}.yml per application, read in Spring Cloud Config's order.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["server_config", "app_config", "caller_config", "peer_profiles"])]
    config_repo: Option<PathBuf>,
    /// The profiles the applications run with (for --config-repo's {name}-{profile} files).
    #[arg(long, value_name = "A,B", requires = "config_repo")]
    profile: Option<String>,
    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
}

pub(crate) fn print_presets() -> super::CommandResult<()> {
    std::io::stdout()
        .lock()
        .write_all(render_presets().as_bytes())?;
    Ok(())
}

pub(crate) fn init(args: InitArgs) -> super::CommandResult<()> {
    if args.path.exists() && !args.force {
        return Err(InitError(format!(
            "{} exists; choose another name or add --force to replace it",
            args.path.display()
        ))
        .into());
    }
    let preset = match &args.preset {
        None => None,
        Some(name) => Some(preset(name).ok_or_else(|| {
            InitError(format!(
                "--preset {name}: no such preset; allowed: {}",
                PRESET_NAMES.join(", ")
            ))
        })?),
    };
    let folder = args
        .path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(repo) = &args.config_repo {
        let text = config_repo(repo, folder, args.profile.as_deref())?;
        return write_checked(&args.path, folder, &text);
    }
    let relative = |flag: &str, file: &Option<PathBuf>| -> super::CommandResult<Option<String>> {
        let Some(file) = file else { return Ok(None) };
        if !file.is_file() {
            return Err(InitError(format!("{flag} {}: no such file", file.display())).into());
        }
        Ok(Some(relative_to(folder, file)?))
    };
    let app_config = relative("--app-config", &args.app_config)?;
    let caller_config = relative("--caller-config", &args.caller_config)?;
    let evidence =
        |file: &Option<PathBuf>| -> super::CommandResult<Option<(String, FileEvidence)>> {
            let Some(file) = file else { return Ok(None) };
            // A file that cannot be read is reported by the starter's parse, as the scenario's.
            let Ok(text) = file_text(file) else {
                return Ok(None);
            };
            let shown = file.display().to_string();
            Ok(file_evidence(&shown, &text).ok().map(|e| (shown, e)))
        };
    let server = evidence(&args.server_config)?;
    let app = evidence(&args.app_config)?;
    let caller = evidence(&args.caller_config)?;
    let mut app_name_written = false;
    let app_name = match &app {
        Some((_, e)) if e.application_name.is_some() => e.application_name.clone(),
        Some((shown, _)) => {
            app_name_written = true;
            println!(
                "note: {shown} has no spring.application.name (Spring would register the service \
                 as UNKNOWN, EurekaInstanceConfigBean's default); the starter names it `svc`: \
                 change `name` in [[app]] to yours"
            );
            Some("svc".to_string())
        }
        None => None,
    };
    let caller_name = match &caller {
        Some((shown, e)) if e.application_name.is_none() => {
            println!(
                "note: {shown} has no spring.application.name; the starter names the caller \
                 `gateway`: change `name` in [[caller]] to yours"
            );
            Some("gateway".to_string())
        }
        _ => None,
    };
    // The caller's file decides first (its balancer is the question), then the app's, then the
    // server's.
    let release = [&caller, &app, &server]
        .into_iter()
        .flatten()
        .find_map(|(_, e)| e.train.clone())
        .map(|(train, why)| (train.to_string(), why));
    if let Some((train, why)) = &release {
        println!("note: release = \"{train}\", from {why}");
    }
    let http_client = caller
        .as_ref()
        .and_then(|(_, e)| e.http_client.clone())
        .map(|(client, why)| (client.to_string(), why));
    let peers = match (&args.peer_profiles, &args.server_config) {
        (Some(profiles), Some(file)) => peers_of(file, profiles)?,
        _ => Vec::new(),
    };
    let starter = Starter {
        preset,
        server_config: relative("--server-config", &args.server_config)?,
        app_config,
        caller_config,
        app_name,
        app_name_written,
        caller_name,
        release,
        http_client,
        peers,
    };
    let text = render_starter(&starter);
    write_checked(&args.path, folder, &text)
}

/// Writes `text` to `path`: beside its target first, checked by parsing (its Spring files found
/// from there), then renamed into place, so that a starter that would not run is never left
/// behind.
fn write_checked(path: &Path, folder: &Path, text: &str) -> super::CommandResult<()> {
    let tmp = folder.join(format!(
        ".{}.init-{}",
        path.file_name()
            .map_or_else(|| "scenario".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&tmp, text)?;
    // Messages name the file being written, not the temporary one (which is gone by then).
    let parsed = crate::scenario::ScenarioSource::read(&tmp).and_then(|mut source| {
        source.source = path.display().to_string();
        source.parse(&[])
    });
    if let Err(e) = parsed {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    std::fs::rename(&tmp, path)?;
    println!(
        "wrote {}; run it with: eureka-sim run {}",
        path.display(),
        path.display()
    );
    Ok(())
}

/// One application of a config repository: its name, its files in Spring Cloud Config's order
/// (lowest precedence first) and what they show.
struct RepoApp {
    name: String,
    files: Vec<PathBuf>,
    evidence: Vec<FileEvidence>,
}

/// The scenario for Spring Cloud Config repository `repo` with `profiles` active: one table per
/// application (`{name}.yml`), the server the one whose files hold eureka.server keys, the
/// callers those of a gateway, the others apps. Spring Cloud Config's order, highest first:
/// `{name}-{profile}`, `application-{profile}` (later profiles first), `{name}`, `application`
/// (`NativeEnvironmentRepository` / `GenericResourceRepository`); a `spring-config` list takes
/// them lowest first.
fn config_repo(repo: &Path, folder: &Path, profiles: Option<&str>) -> super::CommandResult<String> {
    let mut stems: Vec<(String, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(repo)
        .map_err(|e| InitError(format!("--config-repo {}: {e}", repo.display())))?;
    for entry in entries {
        let path = entry?.path();
        let spring = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            ["yml", "yaml", "properties"].contains(&e.to_ascii_lowercase().as_str())
        });
        if spring && path.is_file() {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            stems.extend(stem.map(|s| (s, path.clone())));
        }
    }
    stems.sort();
    let profiles: Vec<String> = profiles
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let is_profile_file = |stem: &str| {
        stems.iter().any(|(other, _)| {
            stem.strip_prefix(other.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|p| !p.is_empty())
        })
    };
    let names: Vec<String> = stems
        .iter()
        .map(|(s, _)| s.clone())
        .filter(|s| s != "application" && !s.starts_with("application-") && !is_profile_file(s))
        .fold(Vec::new(), |mut acc, s| {
            if !acc.contains(&s) {
                acc.push(s);
            }
            acc
        });
    if names.is_empty() {
        return Err(InitError(format!(
            "--config-repo {}: no application's file ({{name}}.yml or .properties beside \
             application.yml); a Spring Cloud Config repository holds one per application",
            repo.display()
        ))
        .into());
    }
    let files_of = |stem: &str| -> Vec<PathBuf> {
        stems
            .iter()
            .filter(|(s, _)| s == stem)
            .map(|(_, p)| p.clone())
            .collect()
    };
    let mut apps = Vec::new();
    for name in &names {
        let mut files = files_of("application");
        files.extend(files_of(name));
        for p in &profiles {
            files.extend(files_of(&format!("application-{p}")));
            files.extend(files_of(&format!("{name}-{p}")));
        }
        let mut evidence = Vec::new();
        for f in &files {
            let shown = f.display().to_string();
            evidence.push(
                file_evidence(&shown, &file_text(f)?)
                    .map_err(|why| InitError(format!("{shown}: {why}")))?,
            );
        }
        apps.push(RepoApp {
            name: name.clone(),
            files,
            evidence,
        });
    }
    let relative: Vec<Vec<String>> = apps
        .iter()
        .map(|a| a.files.iter().map(|f| relative_to(folder, f)).collect())
        .collect::<super::CommandResult<_>>()?;
    let mut tables = Vec::new();
    for (app, files) in apps.iter().zip(relative) {
        let role = if app.evidence.iter().any(|e| e.eureka_server.is_some()) {
            RepoRole::Server
        } else if app.evidence.iter().any(|e| e.http_client.is_some()) {
            RepoRole::Caller
        } else {
            RepoRole::App
        };
        println!(
            "note: {} {} from {}",
            role.table(),
            app.name,
            app.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let http_client = app
            .evidence
            .iter()
            .find_map(|e| e.http_client.clone())
            .map(|(c, why)| (c.to_string(), why));
        tables.push(RepoTable {
            role,
            name: app.name.clone(),
            files,
            http_client,
        });
    }
    let release = apps
        .iter()
        .flat_map(|a| &a.evidence)
        .find_map(|e| e.train.clone())
        .map(|(t, why)| (t.to_string(), why));
    render_config_repo(&tables, &profiles, release.as_ref())
        .map_err(|why| InitError(format!("--config-repo {}: {why}", repo.display())).into())
}

/// One peer per profile of `profiles` (comma-separated) in server file `file`.
fn peers_of(file: &Path, profiles: &str) -> super::CommandResult<Vec<StarterPeer>> {
    let text = file_text(file)?;
    let shown = file.display().to_string();
    let mut peers: Vec<StarterPeer> = Vec::new();
    for profile in profiles.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let doc = profile_document(&shown, &text, profile)
            .map_err(|why| InitError(format!("--peer-profiles {profile}: {why}")))?;
        let name = doc.hostname.clone().unwrap_or_else(|| profile.to_string());
        if peers.iter().any(|p| p.name == name) {
            return Err(InitError(format!(
                "--peer-profiles: profiles {} and {profile} of {shown} both name the host `{name}` \
                 (eureka.instance.hostname); Eureka would see one peer; give each document its \
                 own hostname",
                peers
                    .iter()
                    .find(|p| p.name == name)
                    .map_or("", |p| p.profile.as_str())
            ))
            .into());
        }
        let from = format!("{shown} line {}", doc.line);
        println!(
            "note: [[peer]] {name} from the `{profile}` document ({from}){}",
            doc.service_url
                .as_deref()
                .map_or_else(String::new, |u| format!(", service URLs {u}"))
        );
        peers.push(StarterPeer {
            name,
            profile: profile.to_string(),
            zone: doc.zone,
            from,
        });
    }
    Ok(peers)
}

/// The text of a Spring file as Spring Boot reads it: `.properties` as ISO-8859-1, others as
/// UTF-8.
fn file_text(file: &Path) -> super::CommandResult<String> {
    let bytes = std::fs::read(file).map_err(|e| InitError(format!("{}: {e}", file.display())))?;
    let properties = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("properties"));
    if properties {
        return Ok(bytes.iter().map(|&b| char::from(b)).collect());
    }
    String::from_utf8(bytes).map_err(|e| {
        InitError(format!(
            "{}: not UTF-8 (invalid byte at offset {})",
            file.display(),
            e.utf8_error().valid_up_to()
        ))
        .into()
    })
}

/// `file` as a path from `folder` (both from the working folder), e.g. `../svc/app.yml`.
fn relative_to(folder: &Path, file: &Path) -> super::CommandResult<String> {
    let abs =
        |p: &Path| std::fs::canonicalize(p).map_err(|e| InitError(format!("{}: {e}", p.display())));
    let (from, to) = (abs(folder)?, abs(file)?);
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    Ok(out.to_string_lossy().replace('\\', "/"))
}
