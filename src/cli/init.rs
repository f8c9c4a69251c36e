//! `eureka-sim presets` and `eureka-sim init`: print the presets; write a starter scenario
//! ([`crate::report::starter`]), checked by parsing before it is put in place.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::report::starter::{Starter, render_presets, render_starter};
use crate::scenario::presets::{PRESET_NAMES, preset};

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
    let app_name = app_config
        .as_deref()
        .and_then(|f| spring_application_name(folder, f));
    let starter = Starter {
        preset,
        server_config: relative("--server-config", &args.server_config)?,
        app_config,
        caller_config: relative("--caller-config", &args.caller_config)?,
        app_name,
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

/// The name an `[[app]]` takes from Spring file `file` (relative to `folder`): its
/// spring.application.name, read as a scenario reads it; `None` without one.
fn spring_application_name(folder: &Path, file: &str) -> Option<String> {
    let probe = folder.join("init-probe.toml");
    let text = format!(
        "[[app]]\nspring-config = {}\n",
        toml_edit::value(file).to_string().trim()
    );
    crate::scenario::parse_str(&text, &probe.to_string_lossy(), "probe", &[])
        .ok()
        .and_then(|s| s.apps.first().map(|a| a.name.clone()))
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
