//! The one error type every command returns, and the exit code each kind of error means.
//!
//! The codes follow ripgrep's and cargo-nextest's habit: 2 for input the user can fix (the
//! scenario, a flag, the budget, the files given to `merge` or `conform`), 1 for a failure while
//! running or writing, 0 when the reader of standard output went away (`| head`), since the
//! command did all it was asked for that anyone reads.

use std::io;

use crate::experiment::budget::BudgetError;
use crate::experiment::conform::RealTrialsError;
use crate::experiment::shard::ShardError;
use crate::report::output::OutputError;
use crate::report::shard::MergeError;
use crate::scenario::ScenarioError;

use super::FlagConflict;

/// Exit code of a command that failed on input the user can fix.
pub(crate) const EXIT_BAD_INPUT: i32 = 2;
/// Exit code of a command that failed while running or writing.
pub(crate) const EXIT_FAILED: i32 = 1;

/// What a command failed with. Each input error keeps its own type, so the exit code is a
/// `match`, never a search through a chain of causes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// The scenario file or a `--set` is wrong.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A scenario error found while applying a variant, a grid point or a real file's strategy,
    /// with what was being applied in front.
    #[error("{context}: {source}")]
    ScenarioIn {
        context: String,
        #[source]
        source: Box<ScenarioError>,
    },
    /// An explicit flag and a `--set` of the same setting disagree.
    #[error(transparent)]
    Flags(#[from] FlagConflict),
    /// The run is larger than the time, memory or disk it may take.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// Writing an output folder or file failed, or would not fit.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// `init`'s files or flags are wrong.
    #[error(transparent)]
    Init(#[from] InitError),
    /// `--shard` is wrong.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// The shards given to `merge` are not every shard of one run, once.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// `conform`'s real-trial files are wrong.
    #[error(transparent)]
    RealTrials(#[from] RealTrialsError),
    /// `recommend` was given a scenario with nothing it could tune.
    #[error(transparent)]
    NothingToTune(#[from] NothingToTune),
    /// `check`: some claims do not hold (exit 1, as a failing test run).
    #[error(transparent)]
    ClaimsFailed(#[from] ClaimsFailed),
    /// `conform`: the real trials reject the model (exit 1, as a failing test run).
    #[error(transparent)]
    ConformanceDiffers(#[from] ConformanceDiffers),
    /// `--check-determinism`: two runs of one plan differ.
    #[error(transparent)]
    NotDeterministic(#[from] NotDeterministic),
    /// Reading or writing a stream failed (standard output, mostly).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Anything else that failed while running.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// What every command returns.
pub(crate) type CommandResult<T = ()> = Result<T, CommandError>;

impl CommandError {
    /// The process's exit code for this error.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Self::Scenario(_)
            | Self::ScenarioIn { .. }
            | Self::Flags(_)
            | Self::Budget(_)
            | Self::Output(OutputError::Budget(_))
            | Self::Init(_)
            | Self::Shard(_)
            | Self::Merge(_)
            | Self::RealTrials(_)
            | Self::NothingToTune(_) => EXIT_BAD_INPUT,
            Self::Io(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
            Self::Output(_)
            | Self::ClaimsFailed(_)
            | Self::ConformanceDiffers(_)
            | Self::NotDeterministic(_)
            | Self::Io(_)
            | Self::Failed(_) => EXIT_FAILED,
        }
    }

    /// Whether the message is for the user to act on (printed alone, without causes).
    pub(crate) fn is_bad_input(&self) -> bool {
        self.exit_code() == EXIT_BAD_INPUT
    }

    /// The message and each of its causes, joined by ": " (as anyhow's `{:#}` prints them).
    pub(crate) fn with_causes(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }
}

/// Claims failed: exit status 1 (the lines above say which).
#[derive(Debug, thiserror::Error)]
#[error("{failed} of {total} claim(s) failed")]
pub(crate) struct ClaimsFailed {
    pub(crate) failed: usize,
    pub(crate) total: usize,
}

/// With `--check`: a test rejected, exit status 1 (the table above says which).
#[derive(Debug, thiserror::Error)]
#[error("{rejected} of {total} comparison(s) differ at alpha = {alpha}")]
pub(crate) struct ConformanceDiffers {
    pub(crate) rejected: usize,
    pub(crate) total: usize,
    pub(crate) alpha: f64,
}

/// Two runs of the scenario's trials did not give the same outcomes.
#[derive(Debug, thiserror::Error)]
#[error(
    "determinism check failed: trial {trial} differs between a run on 1 thread and a run on \
     {threads} (hashes {first:016x} and {second:016x}); please report it with the scenario, \
     the seed and this machine's platform"
)]
pub(crate) struct NotDeterministic {
    pub(crate) trial: u32,
    pub(crate) threads: usize,
    pub(crate) first: u64,
    pub(crate) second: u64,
}

/// A bad `init` argument: exit 2, nothing written.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InitError(pub(crate) String);

/// A file `recommend` cannot tune: bad input (exit 2), as for every command.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} has no [[shutdown]] to tune: recommend finds the wait of a stop; add one, e.g. \
         [[shutdown]] instance = \"svc-0\" at-s = 300 strategy = \"pause\""
)]
pub(crate) struct NothingToTune(pub(crate) String);

#[cfg(test)]
mod tests {
    use super::*;

    fn unreadable() -> ScenarioError {
        ScenarioError::Read {
            path: "q.toml".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "no such file"),
        }
    }

    #[test]
    fn input_errors_exit_2_failures_1_and_a_closed_pipe_0() {
        let conflict = CommandError::from(FlagConflict {
            flag: "trials",
            flag_value: "3".into(),
            key: "simulation.trials",
            set_value: "5".into(),
        });
        assert_eq!(conflict.exit_code(), 2);
        let scenario = CommandError::ScenarioIn {
            context: "variant a".into(),
            source: Box::new(unreadable()),
        };
        assert_eq!(scenario.exit_code(), 2);
        assert_eq!(CommandError::from(anyhow::anyhow!("boom")).exit_code(), 1);
        let pipe = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert_eq!(CommandError::from(pipe).exit_code(), 0);
        let disk = io::Error::new(io::ErrorKind::StorageFull, "full");
        assert_eq!(CommandError::from(disk).exit_code(), 1);
    }

    #[test]
    fn a_failure_prints_its_causes_as_anyhow_does() {
        let inner = anyhow::anyhow!("disk full").context("cannot write out/trials.csv");
        let expected = format!("{inner:#}");
        assert_eq!(CommandError::from(inner).with_causes(), expected);
    }

    #[test]
    fn a_scenario_error_in_a_variant_names_the_variant_first() {
        let e = CommandError::ScenarioIn {
            context: "variant a".into(),
            source: Box::new(unreadable()),
        };
        assert!(e.to_string().starts_with("variant a: "), "{e}");
    }
}
