//! `eureka-sim presets` and `eureka-sim init`: print the presets; write a starter scenario
//! ([`crate::report::starter`]), checked by parsing before it is put in place.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::report::starter::{Starter, render_presets, render_starter};
use crate::scenario::presets::{PRESET_NAMES, preset};
use crate::scenario::{FileEvidence, file_evidence};

/// A bad `init` argument: exit 2, nothing written.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InitError(String);

pub(crate) fn is_bad_input(err: &anyhow::Error) -> bool {
    err.downcast_ref::<InitError>().is_some()
}

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
    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
}

pub(crate) fn print_presets() -> anyhow::Result<()> {
    std::io::stdout()
        .lock()
        .write_all(render_presets().as_bytes())?;
    Ok(())
}

pub(crate) fn init(args: InitArgs) -> anyhow::Result<()> {
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
    let relative = |flag: &str, file: &Option<PathBuf>| -> anyhow::Result<Option<String>> {
        let Some(file) = file else { return Ok(None) };
        if !file.is_file() {
            return Err(InitError(format!("{flag} {}: no such file", file.display())).into());
        }
        Ok(Some(relative_to(folder, file)?))
    };
    let app_config = relative("--app-config", &args.app_config)?;
    let caller_config = relative("--caller-config", &args.caller_config)?;
    let evidence = |file: &Option<PathBuf>| -> anyhow::Result<Option<(String, FileEvidence)>> {
        let Some(file) = file else { return Ok(None) };
        let text = file_text(file)?;
        let shown = file.display().to_string();
        let e = file_evidence(&shown, &text).map_err(|why| InitError(format!("{shown}: {why}")))?;
        Ok(Some((shown, e)))
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
    };
    let text = render_starter(&starter);
    // Written beside its target, checked by parsing (its Spring files found from there), then
    // renamed into place: a starter that would not run is never left behind.
    let tmp = folder.join(format!(
        ".{}.init-{}",
        args.path
            .file_name()
            .map_or_else(|| "scenario".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&tmp, &text)?;
    // Messages name the file being written, not the temporary one (which is gone by then).
    let parsed = crate::scenario::ScenarioSource::read(&tmp).and_then(|mut source| {
        source.source = args.path.display().to_string();
        source.parse(&[])
    });
    if let Err(e) = parsed {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    std::fs::rename(&tmp, &args.path)?;
    println!(
        "wrote {}; run it with: eureka-sim run {}",
        args.path.display(),
        args.path.display()
    );
    Ok(())
}

/// The text of a Spring file as Spring Boot reads it: `.properties` as ISO-8859-1, others as
/// UTF-8.
fn file_text(file: &Path) -> anyhow::Result<String> {
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
fn relative_to(folder: &Path, file: &Path) -> anyhow::Result<String> {
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
