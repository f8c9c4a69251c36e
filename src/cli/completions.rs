//! `eureka-sim completions SHELL` and `eureka-sim man [COMMAND]`: the shell completion scripts
//! (`clap_complete`) and the manual pages (`clap_mangen`), both generated from the clap
//! definition at run time, so they always describe the binary that prints them (no build script,
//! nothing to keep in step).

use std::io::{self, Write};

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    shell: Shell,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// The command whose page to print (eureka-sim-COMMAND(1)); without it, the page of
    /// eureka-sim itself, which lists the commands.
    #[arg(value_name = "COMMAND", value_parser = command_names())]
    command: Option<String>,
}

/// The commands `man COMMAND` takes, as in [`super::Command`] (a test holds them to it; they
/// cannot be read from the clap definition here, which this parser is part of).
const COMMANDS: [&str; 15] = [
    "run",
    "check",
    "bench",
    "explain",
    "recommend",
    "compare",
    "conform",
    "sweep",
    "merge",
    "serve",
    "init",
    "presets",
    "keys",
    "completions",
    "man",
];

fn command_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(COMMANDS)
}

pub(crate) fn print_completions(args: &CompletionsArgs) -> super::CommandResult<()> {
    // Into a buffer first: the generators panic on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "eureka-sim", &mut script);
    io::stdout().lock().write_all(&script)?;
    Ok(())
}

pub(crate) fn print_man(args: &ManArgs) -> super::CommandResult<()> {
    let mut cli = Cli::command();
    cli.build();
    let command = match &args.command {
        None => cli,
        Some(name) => {
            let sub = cli
                .find_subcommand(name)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("no command `{name}`"))?;
            // clap names are `&'static str` (without its `string` feature): one short name,
            // once per process.
            let full: &'static str = Box::leak(format!("eureka-sim-{name}").into_boxed_str());
            sub.name(full)
                .bin_name(full)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    io::stdout().lock().write_all(&page)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn man_takes_every_command_and_only_those() {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert_eq!(names, COMMANDS);
    }
}
