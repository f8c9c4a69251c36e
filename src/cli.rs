//! The command line: parses arguments, runs the library, writes files. Exit codes are decided
//! here: 0 success, 1 a failure while running or writing, 2 bad input (arguments or scenario).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::experiment::run_trials;
use crate::report::{render_summary, summarize, write_summary_csv, write_trials_csv};
use crate::scenario::{ScenarioError, key_catalogue, load};

#[derive(Debug, Parser)]
#[command(
    name = "eureka-sim",
    version,
    about = "Simulates how long callers keep hitting a stopped Eureka instance, and why"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario's trials; print a summary and write trials.csv and summary.csv.
    Run(RunArgs),
    /// List every scenario key with its default.
    Keys {
        /// Print a Markdown table (as in README.md).
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Number of trials (same as --set simulation.trials=N).
    #[arg(long)]
    trials: Option<u32>,
    /// Seed of the run (same as --set simulation.seed=S).
    #[arg(long)]
    seed: Option<u64>,
    /// Output folder [default: output/<scenario file stem>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override any scenario key by its dotted path, e.g.
    /// server.eureka.server.response-cache-update-interval-ms=5000 or shutdown[0].strategy=kill-15.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

/// Runs the command line and returns the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return err.exit_code();
        }
    };
    match run(cli) {
        Ok(()) => 0,
        Err(err) => {
            if err.downcast_ref::<ScenarioError>().is_some() {
                eprintln!("error: {err}");
                2
            } else if is_broken_pipe(&err) {
                0
            } else {
                eprintln!("error: {err:#}");
                1
            }
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => run_scenario(args),
        Command::Keys { markdown } => print_keys(markdown),
    }
}

fn run_scenario(args: RunArgs) -> anyhow::Result<()> {
    let mut overrides = Vec::new();
    if let Some(trials) = args.trials {
        overrides.push(format!("simulation.trials={trials}"));
    }
    if let Some(seed) = args.seed {
        overrides.push(format!("simulation.seed={seed}"));
    }
    overrides.extend(args.set.iter().cloned());
    let scenario = load(&args.scenario, &overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    let out_dir = args
        .out
        .unwrap_or_else(|| Path::new("output").join(&scenario.name));
    let outcomes = run_trials(&scenario);
    let rows = summarize(&scenario, &outcomes);
    fs::create_dir_all(&out_dir)
        .with_context(|| format!("failed to create output folder {}", out_dir.display()))?;
    let trials_path = out_dir.join("trials.csv");
    let summary_path = out_dir.join("summary.csv");
    let file = fs::File::create(&trials_path)
        .with_context(|| format!("failed to create {}", trials_path.display()))?;
    write_trials_csv(io::BufWriter::new(file), &scenario, &outcomes)
        .with_context(|| format!("failed to write {}", trials_path.display()))?;
    let file = fs::File::create(&summary_path)
        .with_context(|| format!("failed to create {}", summary_path.display()))?;
    write_summary_csv(io::BufWriter::new(file), &rows)
        .with_context(|| format!("failed to write {}", summary_path.display()))?;
    let source = args.scenario.display().to_string();
    let mut stdout = io::stdout().lock();
    stdout.write_all(render_summary(&scenario, &source, &outcomes, &rows).as_bytes())?;
    writeln!(
        stdout,
        "\nwrote {} and {}",
        trials_path.display(),
        summary_path.display()
    )?;
    Ok(())
}

fn print_keys(markdown: bool) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    if markdown {
        writeln!(stdout, "| table | key | default | meaning |")?;
        writeln!(stdout, "|---|---|---|---|")?;
        for key in key_catalogue() {
            writeln!(
                stdout,
                "| `[{}]` | `{}` | {} | {} |",
                key.table,
                key.key,
                key.default,
                key.meaning.replace('|', "\\|")
            )?;
        }
        return Ok(());
    }
    let mut table = "";
    for key in key_catalogue() {
        if key.table != table {
            table = key.table;
            writeln!(stdout, "[{table}]")?;
        }
        writeln!(
            stdout,
            "  {} = {}    # {}",
            key.key, key.default, key.meaning
        )?;
    }
    Ok(())
}
