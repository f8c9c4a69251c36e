//! The command line: parses arguments, runs the library, writes files. Exit codes are decided
//! here: 0 success, 1 a failure while running or writing, 2 bad input (arguments or scenario).

mod bench;
mod budget;
mod check;
mod compare;
mod completions;
mod conform;
mod driver;
mod error;
mod explain;
mod init;
mod interrupt;
mod keys;
mod merge;
mod progress;
mod recommend;
mod run;
mod serve;
mod shard;
mod sweep;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

pub(crate) use error::{CommandError, CommandResult};

use crate::eureka::RequestMode;
use crate::scenario::{Scenario, ScenarioError};

#[derive(Debug, Parser)]
#[command(
    name = "eureka-sim",
    version,
    about = "Simulates how long callers keep hitting a stopped Eureka instance, and why",
    after_help = examples::MAIN
)]
pub struct Cli {
    #[command(flatten)]
    budget: budget::BudgetArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario's trials; print a summary and write trials.csv and summary.csv.
    #[command(after_help = examples::RUN)]
    Run(RunArgs),
    /// Run the trials of scenario files and check their [[claim]]s; exit 1 if one fails.
    #[command(after_help = examples::CHECK)]
    Check(check::CheckArgs),
    /// Measure simulated events/s, trials/s on 1 and 2 threads, and cost vs request rate.
    #[command(after_help = examples::BENCH)]
    Bench(bench::BenchArgs),
    /// Tell the causal chain of one trial in words and times; --trace writes every event.
    #[command(after_help = examples::EXPLAIN)]
    Explain(explain::ExplainArgs),
    /// The shortest wait that makes pause / service-registry clean, and what shortens it.
    #[command(after_help = examples::RECOMMEND)]
    Recommend(recommend::RecommendArgs),
    /// Run one scenario under several shutdown strategies with common random numbers; print
    /// them side by side and write compare.csv, exposure-cdf.svg and report.html.
    #[command(after_help = examples::COMPARE)]
    Compare(compare::CompareArgs),
    /// Compare trials of the real stack (conformance/rig.py) with the simulator's on the
    /// equivalent scenario; write conform.csv, the CDFs and report.html.
    #[command(after_help = examples::CONFORM)]
    Conform(conform::ConformArgs),
    /// Run one scenario over a grid of key values with common random numbers; write sweep.csv,
    /// line plots (one key) or heatmaps (two keys) and report.html.
    #[command(after_help = examples::SWEEP)]
    Sweep(sweep::SweepArgs),
    /// Put the shards of a run, compare or sweep (--shard I/N) back together: check that they
    /// are every shard of one command line once, and write the files one unsharded run writes.
    #[command(after_help = examples::MERGE)]
    Merge(merge::MergeArgs),
    /// Serve a page on 127.0.0.1 that tunes a scenario's settings live: the exposure against
    /// the scenario's, the keys to paste into each application.yml.
    #[command(after_help = examples::SERVE)]
    Serve(serve::ServeArgs),
    /// Write a commented starter scenario, optionally from Spring files and a preset.
    Init(init::InitArgs),
    /// List the presets (real-world configurations, with their sources).
    #[command(
        after_help = "Examples:\n  eureka-sim presets\n  eureka-sim presets | grep -A8 jhipster"
    )]
    Presets,
    /// List every scenario key with its default, meaning and allowed values, as TOML.
    #[command(after_help = examples::KEYS)]
    Keys {
        /// Print a Markdown table (as in docs/keys.md).
        #[arg(long)]
        markdown: bool,
    },
    /// Print a shell completion script for SHELL on stdout.
    #[command(after_help = examples::COMPLETIONS)]
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff) of eureka-sim, or of one of its commands, on stdout.
    #[command(after_help = examples::MAN)]
    Man(completions::ManArgs),
}

/// The examples at the end of each command's `--help`. Every command line here runs as written
/// from the root of the repository (a test runs each one's `--help` and checks they are there).
mod examples {
    pub(super) const MAIN: &str = "\
Examples:
  eureka-sim run scenarios/kill-9.toml
  eureka-sim compare scenarios/kill-9.toml --strategy kill-9,kill-15,service-registry
  eureka-sim check scenarios/claims/ --junit reports/claims.xml
  eureka-sim keys

Install: cargo install --locked --path .   (then: eureka-sim completions bash, eureka-sim man)";

    pub(super) const RUN: &str = "\
Examples:
  eureka-sim run scenarios/kill-9.toml
  eureka-sim run scenarios/kill-9.toml --trials 1000 --seed 7 --out results/kill-9
  eureka-sim run scenarios/kill-15.toml --set server.eureka.server.response-cache-update-interval-ms=5000
  eureka-sim run scenarios/kill-9.toml --format json";

    pub(super) const CHECK: &str = "\
Examples:
  eureka-sim check scenarios/claims/
  eureka-sim check scenarios/claims/ scenarios/incidents/ --junit reports/claims.xml
  eureka-sim check scenarios/claims/kill-9.toml --set claim[0].value-s=330 --format json";

    pub(super) const BENCH: &str = "\
Examples:
  eureka-sim bench
  eureka-sim bench scenarios/kill-15.toml --trials 100 --no-oracle";

    pub(super) const EXPLAIN: &str = "\
Examples:
  eureka-sim explain scenarios/kill-9.toml
  eureka-sim explain scenarios/kill-9.toml --trial 3 --trace trial-3.jsonl --plot trial-3.svg";

    pub(super) const RECOMMEND: &str = "\
Examples:
  eureka-sim recommend scenarios/pause.toml
  eureka-sim recommend scenarios/service-registry.toml --target p99 --trials 400 --no-what-if";

    pub(super) const COMPARE: &str = "\
Examples:
  eureka-sim compare scenarios/kill-9.toml
  eureka-sim compare scenarios/kill-9.toml --strategy kill-15,pause --wait-s 30,60,90 --trials 500";

    pub(super) const CONFORM: &str = "\
Examples:
  eureka-sim conform conformance/scenario.toml \\
      --real conformance/results/2025.1.4-fresh/real-kill-9.csv \\
      --real conformance/results/2025.1.4-fresh/real-kill-15.csv";

    pub(super) const SWEEP: &str = "\
Examples:
  eureka-sim sweep scenarios/kill-15.toml --vary clients.ribbon.ServerListRefreshInterval=5000,15000,30000
  eureka-sim sweep scenarios/kill-15.toml --trials 300 \\
      --vary server.eureka.server.response-cache-update-interval-ms=5000,30000 \\
      --vary clients.ribbon.ServerListRefreshInterval=5000,30000";

    pub(super) const SERVE: &str = "\
Examples:
  eureka-sim serve                                  # the bundled kill -9 scenario, port 8080
  eureka-sim serve scenarios/kill-15.toml --port 0  # any free port; the address is printed";

    pub(super) const MERGE: &str = "\
Examples:
  eureka-sim run scenarios/kill-9.toml --trials 1000 --shard 0/2 --out shards
  eureka-sim run scenarios/kill-9.toml --trials 1000 --shard 1/2 --out shards
  eureka-sim merge shards --out output/kill-9";

    pub(super) const KEYS: &str = "\
Examples:
  eureka-sim keys                 # TOML: each key's default, meaning and allowed values
  eureka-sim keys --markdown      # the table of docs/keys.md";

    pub(super) const COMPLETIONS: &str = "\
Examples:
  eureka-sim completions bash > ~/.local/share/bash-completion/completions/eureka-sim
  eureka-sim completions zsh > ~/.zfunc/_eureka-sim      # with fpath+=~/.zfunc before compinit
  eureka-sim completions fish > ~/.config/fish/completions/eureka-sim.fish
  eureka-sim completions powershell >> $PROFILE";

    pub(super) const MAN: &str = "\
Examples:
  eureka-sim man | man -l -
  eureka-sim man run > ~/.local/share/man/man1/eureka-sim-run.1";
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    #[command(flatten)]
    pub(crate) common: Common,
    #[command(flatten)]
    pub(crate) shard: shard::ShardArgs,
    /// Simulate every request as its own step (the reference mode) instead of counting the
    /// requests between routing changes at once. Same distributions, slower at high rates.
    #[arg(long)]
    pub(crate) per_request: bool,
    /// Run the trials twice, on one thread and on all, and compare the outcomes before writing:
    /// exit 1 naming the first trial that differs (for users who suspect their platform).
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// `--format json` prints summary.json (the same bytes as the file) instead of the text.
    #[command(flatten)]
    pub(crate) format: FormatArg,
}

/// `--format`: what a command prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Text for people.
    Text,
    /// One JSON document (the schema is in docs/guide.md, "Machine-readable output").
    Json,
}

/// The `--format` flag, flattened into each command that has a JSON form.
#[derive(Debug, clap::Args)]
pub(crate) struct FormatArg {
    /// What to print on stdout: text for people, or one JSON document for machines (the files
    /// written are the same either way).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

impl FormatArg {
    pub(crate) fn is_text(&self) -> bool {
        self.format == Format::Text
    }
}

/// `--trials`, `--seed` and `--set`: how every command that runs trials changes the scenario.
/// Declared once and flattened into each command (`#[command(flatten)]`).
#[derive(Debug, clap::Args)]
pub(crate) struct Overrides {
    /// Number of trials (same as --set simulation.trials=N); for compare, sweep and conform, of
    /// every variant, grid point or strategy.
    #[arg(long)]
    pub(crate) trials: Option<u32>,
    /// Seed of the run (same as --set simulation.seed=S).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Override any scenario key by its dotted path, e.g.
    /// server.eureka.server.response-cache-update-interval-ms=5000 or shutdown[0].strategy=kill-15
    /// (check: claim[0].value-s=200). What a command sets itself comes after and wins: a
    /// compare variant's strategy and wait, a sweep's --vary, a conform group's strategy and wait.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Activate these Spring profiles in every spring-config file, as
    /// --spring.profiles.active does (same as --set simulation.spring-profiles=[...]).
    #[arg(long, value_name = "A,B")]
    pub(crate) profile: Option<String>,
}

impl Overrides {
    /// The overrides as `--set` assignments, in the order they apply; refused when an explicit
    /// flag and a `--set` of the same key disagree (`--trials 3` used to lose in silence to
    /// `--set simulation.trials=1000000`, and a million trials ran).
    pub(crate) fn list(&self) -> Result<Vec<String>, FlagConflict> {
        let trials = self.trials.map(|t| t.to_string());
        FlagConflict::check(&self.set, "trials", "simulation.trials", trials)?;
        let seed = self.seed.map(|s| s.to_string());
        FlagConflict::check(&self.set, "seed", "simulation.seed", seed)?;
        let profile = self.profile.clone();
        FlagConflict::check(&self.set, "profile", "simulation.spring-profiles", profile)?;
        Ok(base_overrides(self.trials, self.seed, &self.assignments()))
    }

    /// `--profile` as its `--set` assignment, then the `--set`s.
    pub(crate) fn assignments(&self) -> Vec<String> {
        let profiles = self.profile.iter().flat_map(|p| {
            let quoted: Vec<String> = p
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| toml_edit::value(p).to_string().trim().to_string())
                .collect();
            std::iter::once(format!(
                "simulation.spring-profiles=[{}]",
                quoted.join(", ")
            ))
        });
        profiles.chain(self.set.iter().cloned()).collect()
    }
}

/// An explicit flag (`--trials`, `--seed`, `--profile`) and a `--set` of the key it stands for
/// that disagree. Neither wins in silence: the user gives one of them (exit 2).
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "--{flag} {flag_value} and --set {key}={set_value} disagree: give one of them (--{flag} \
     is the same as --set {key}=...)"
)]
pub(crate) struct FlagConflict {
    flag: &'static str,
    flag_value: String,
    key: &'static str,
    set_value: String,
}

impl FlagConflict {
    /// Whether `sets` assigns `key` a value other than the flag's (`--profile` and any
    /// `--set simulation.spring-profiles` at all: two spellings of a list are not compared).
    fn check(
        sets: &[String],
        flag: &'static str,
        key: &'static str,
        flag_value: Option<String>,
    ) -> Result<(), FlagConflict> {
        let Some(flag_value) = flag_value else {
            return Ok(());
        };
        for assignment in sets {
            let Some((k, v)) = assignment.split_once('=') else {
                continue;
            };
            let same = flag != "profile" && v.trim() == flag_value.trim();
            if k.trim() == key && !same {
                return Err(FlagConflict {
                    flag,
                    flag_value,
                    key,
                    set_value: v.trim().to_string(),
                });
            }
        }
        Ok(())
    }
}

/// The arguments of every command that runs trials and writes files: [`Overrides`], `--out` and
/// `--png`.
#[derive(Debug, clap::Args)]
pub(crate) struct Common {
    #[command(flatten)]
    pub(crate) overrides: Overrides,
    /// Output folder [default: output/<scenario file stem> for run, .../compare and .../sweep
    /// for compare and sweep; for conform the folder of the first --real file].
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Also write the plots as PNG (SVG is always written).
    #[arg(long)]
    pub(crate) png: bool,
}

impl Common {
    /// Where and how to write for `scenario`: `--out` or `default_dir`, `--png`, and the `--set`
    /// overrides as given (for the plots' subtitles and the report).
    pub(crate) fn output(
        &self,
        scenario: &std::path::Path,
        default_dir: PathBuf,
    ) -> crate::report::output::OutputOptions {
        crate::report::output::OutputOptions {
            source: scenario.display().to_string(),
            set: self.overrides.assignments(),
            out_dir: self.out.clone().unwrap_or(default_dir),
            png: self.png,
        }
    }

    /// [`Common::output`] staged: the options write into a hidden staging folder of the output
    /// folder, which [`interrupt::Staging::commit`] moves in once every file is written (the
    /// folder is whole or keeps its previous output; see `report::output::StagedDir`).
    pub(crate) fn staged_output(
        &self,
        scenario: &std::path::Path,
        default_dir: PathBuf,
    ) -> Result<
        (crate::report::output::OutputOptions, interrupt::Staging),
        crate::report::output::OutputError,
    > {
        let mut options = self.output(scenario, default_dir);
        let staging = interrupt::stage(&options.out_dir)?;
        options.out_dir = staging.dir();
        Ok((options, staging))
    }
}

/// The `--trials`, `--seed` and `--set` overrides, in the order every command applies them.
fn base_overrides(trials: Option<u32>, seed: Option<u64>, set: &[String]) -> Vec<String> {
    let mut overrides = Vec::new();
    if let Some(trials) = trials {
        overrides.push(format!("simulation.trials={trials}"));
    }
    if let Some(seed) = seed {
        overrides.push(format!("simulation.seed={seed}"));
    }
    overrides.extend(set.iter().cloned());
    overrides
}

/// Validates the scenario read into `source` with `overrides`, and prints its warnings.
pub(crate) fn load_source(
    source: &crate::scenario::ScenarioSource,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let scenario = source.parse(overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(scenario)
}

/// Loads and validates the scenario file with `overrides`, and prints its warnings.
pub(crate) fn load(
    path: &std::path::Path,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let scenario = crate::scenario::load(path, overrides)?;
    for warning in &scenario.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(scenario)
}

/// A scenario error found while applying a variant, a grid point or a real file's strategy,
/// with what was being applied in front. It stays a scenario error for the exit code (2: bad
/// input), and its message carries the whole text.
pub(crate) fn scenario_error_in(context: &str, source: ScenarioError) -> CommandError {
    CommandError::ScenarioIn {
        context: context.to_string(),
        source: Box::new(source),
    }
}

/// Prints the warnings of `scenario` that `base` does not have, once each, after `label`.
pub(crate) fn warn_new(base: &Scenario, scenario: &Scenario, label: &str, seen: &mut Vec<String>) {
    for warning in &scenario.warnings {
        if base.warnings.contains(warning) || seen.contains(warning) {
            continue;
        }
        eprintln!("warning: {label}: {warning}");
        seen.push(warning.clone());
    }
}

/// `--per-request`: the reference mode; otherwise the batched counting.
pub(crate) fn request_mode(per_request: bool) -> RequestMode {
    if per_request {
        RequestMode::PerRequest
    } else {
        RequestMode::Batched
    }
}

/// The default output folder of scenario file `path`: `output/` and its path from the working
/// folder without a leading `scenarios/` and without the extension, so that two files of one
/// name in different folders never share one (`scenarios/kill-9.toml` -> `output/kill-9`,
/// `scenarios/claims/kill-9.toml` -> `output/claims/kill-9`). A path outside the working folder
/// (absolute, or through `..`) gives `output/<stem>`.
pub(crate) fn default_output(path: &std::path::Path, stem: &str) -> PathBuf {
    use std::path::Component;
    let inside = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Path::new("output").join(stem);
    }
    let mut parts: Vec<_> = path
        .with_extension("")
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_os_string()),
            _ => None,
        })
        .collect();
    if parts.len() > 1 && parts[0] == "scenarios" {
        parts.remove(0);
    }
    parts
        .iter()
        .fold(PathBuf::from("output"), |dir, p| dir.join(p))
}

/// Runs the command line and returns the process exit code.
/// Installs the Ctrl-C/SIGTERM handler that keeps output folders whole (the binary only).
pub use interrupt::install as install_interrupt_handler;

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
            let code = err.exit_code();
            if err.is_bad_input() {
                eprintln!("error: {}", shortened(&err.to_string()));
            } else if code != 0 {
                eprintln!("error: {}", err.with_causes());
            }
            code
        }
    }
}

/// A message whose user-given values could be of any length (a 100 KB `--set` value echoed
/// twice, found by fuzzing) with every run of more than [`LONG_WORD`] characters without a space cut to
/// its first 40 and its length.
fn shortened(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while !rest.is_empty() {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(word_end);
        let chars = word.chars().count();
        if chars > LONG_WORD {
            out.extend(word.chars().take(40));
            out.push_str(&format!("... ({chars} characters)"));
        } else {
            out.push_str(word);
        }
        let space_end = tail
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(tail.len());
        out.push_str(&tail[..space_end]);
        rest = &tail[space_end..];
    }
    out
}

/// Longer than any path or key a message names in practice.
const LONG_WORD: usize = 200;

fn run(cli: Cli) -> CommandResult {
    let budget = &cli.budget;
    match cli.command {
        Command::Run(args) => run::run_scenario(args, budget),
        Command::Check(args) => check::check(args, budget),
        Command::Bench(args) => bench::run_bench(args),
        Command::Explain(args) => explain::explain(args, budget),
        Command::Recommend(args) => recommend::recommend(args, budget),
        Command::Compare(args) => compare::compare(args, budget),
        Command::Sweep(args) => sweep::sweep(args, budget),
        Command::Merge(args) => merge::merge(args),
        Command::Serve(args) => serve::serve(args, budget),
        Command::Conform(args) => conform::conform(args),
        Command::Keys { markdown } => keys::print_keys(markdown),
        Command::Init(args) => init::init(args),
        Command::Presets => init::print_presets(),
        Command::Completions(args) => completions::print_completions(&args),
        Command::Man(args) => completions::print_man(&args),
    }
}

#[cfg(test)]
mod output_tests {
    use super::*;

    #[test]
    fn default_outputs_of_files_of_one_name_differ() {
        let out = |p: &str| default_output(Path::new(p), "stem");
        assert_eq!(out("scenarios/kill-9.toml"), Path::new("output/kill-9"));
        assert_eq!(
            out("scenarios/claims/kill-9.toml"),
            Path::new("output/claims/kill-9")
        );
        assert_eq!(out("./mine/q.toml"), Path::new("output/mine/q"));
        assert_eq!(out("q.toml"), Path::new("output/q"));
        assert_eq!(out("/tmp/x/q.toml"), Path::new("output/stem"));
        assert_eq!(out("../q.toml"), Path::new("output/stem"));
    }
}

#[cfg(test)]
mod message_tests {
    use super::*;

    #[test]
    fn long_words_are_cut_and_the_rest_kept() {
        let long = "a".repeat(100_000);
        let message = format!("x.toml (--set app[0].name=\"{long}\"): bad\n  next line");
        let short = shortened(&message);
        assert!(short.len() < 200, "{short}");
        assert!(short.contains("(100016 characters)"), "{short}");
        assert!(short.starts_with("x.toml (--set app[0].name=\"aaaa"));
        assert!(short.ends_with("characters) bad\n  next line"), "{short}");
        let plain = "s.toml:2:10: `simulation.trials`: expected an integer";
        assert_eq!(shortened(plain), plain);
    }
}
