//! The front door: shell completions, manual pages and the examples in `--help`.

use std::process::Command;

use super::test::Test;

/// Every command of `eureka-sim --help`, read from its `Commands:` section (so the list is the
/// binary's, not a copy in this test).
fn commands() -> Vec<String> {
    let help = Test::new().arg("--help").run().stdout;
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 12, "{help}");
    names
}

/// `completions bash` prints a script that bash loads and that completes the commands: sourced
/// in a fresh bash, `complete -p` shows it registered for `eureka-sim`, and asking it for the
/// first word offers every command.
#[test]
fn bash_completion_completes_every_command() {
    let script = Test::new().args(["completions", "bash"]).run().stdout;
    let commands = commands();
    for command in &commands {
        assert!(
            script.contains(command.as_str()),
            "no `{command}` in the script"
        );
    }
    let probe = "complete -p eureka-sim; \
                 COMP_WORDS=(eureka-sim ''); COMP_CWORD=1; COMP_LINE='eureka-sim '; COMP_POINT=11; \
                 fn=$(complete -p eureka-sim | sed -E 's/.* -F ([^ ]+) .*/\\1/'); \
                 \"$fn\" eureka-sim '' eureka-sim; printf '%s\\n' \"${COMPREPLY[@]}\"";
    let Ok(out) = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            &format!("source /dev/stdin <<'EOS'\n{script}\nEOS\n{probe}"),
        ])
        .output()
    else {
        eprintln!("no bash here: the script was only read, not run");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    let registered = lines.next().unwrap_or_default();
    assert!(
        registered.starts_with("complete ") && registered.ends_with(" eureka-sim"),
        "{registered}"
    );
    let offered: Vec<&str> = lines.collect();
    for command in &commands {
        assert!(
            offered.contains(&command.as_str()),
            "`{command}` not offered: {offered:?}"
        );
    }
}

/// Each shell's script names the program and every command; an unknown shell is refused with
/// the ones allowed (exit 2, nothing on stdout).
#[test]
fn completions_for_zsh_fish_and_powershell() {
    let commands = commands();
    for shell in ["zsh", "fish", "powershell"] {
        let script = Test::new().args(["completions", shell]).run().stdout;
        assert!(script.contains("eureka-sim"), "{shell}");
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell}: no `{command}`");
        }
    }
    let out = Test::new()
        .args(["completions", "tcsh"])
        .status(2)
        .stderr_contains("possible values: bash")
        .run();
    assert!(out.stdout.is_empty());
}

/// `man` prints a roff page (`.TH eureka-sim 1`) that lists every command; `man run` the page
/// of `run` with its options; an unknown command is refused with the commands allowed.
#[test]
fn man_prints_roff_pages() {
    let page = Test::new().arg("man").run().stdout;
    assert!(page.contains(".TH eureka-sim 1"), "{page}");
    for command in commands() {
        let reference = format!("eureka\\-sim\\-{}(1)", command.replace('-', "\\-"));
        assert!(page.contains(&reference), "no {reference} in the page");
    }
    let run = Test::new().args(["man", "run"]).run().stdout;
    assert!(run.contains(".TH eureka-sim-run 1"), "{run}");
    assert!(run.contains("\\-\\-trials"), "{run}");
    Test::new()
        .args(["man", "nope"])
        .status(2)
        .stderr_contains("possible values: run, check")
        .run();
}

/// Every command's `--help` ends with examples of itself: lines `eureka-sim <command> ...`.
#[test]
fn every_help_has_examples() {
    for command in commands() {
        let help = Test::new().args([command.as_str(), "--help"]).run().stdout;
        let examples: Vec<&str> = help
            .lines()
            .skip_while(|l| *l != "Examples:")
            .filter(|l| l.trim_start().starts_with(&format!("eureka-sim {command}")))
            .collect();
        assert!(
            !examples.is_empty(),
            "`{command} --help` has no example:\n{help}"
        );
    }
}
