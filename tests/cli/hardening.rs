//! The findings of the mutation fuzzer, each as the command that found it: every one must
//! now end with 0, 1 or 2 within seconds, never a panic (which `Test::run` checks) or an abort.

use super::test::Test;

/// `rate-per-s` at or below about 5e-7 (0 to 100 000 is allowed) drew a first request some
/// 2 * 10^9 ms ahead and ended `run`, `explain`, `compare` and `sweep` with "event queue key
/// overflow". A request that late never comes within the trial: the outcome is that of a
/// caller that sends nothing.
#[test]
fn rate_per_s_5e_7_ends_cleanly_in_every_command() {
    for rate in ["5e-7", "1e-300"] {
        let set = format!("caller[0].rate-per-s={rate}");
        Test::scenario("kill-9.toml").trials(2).set(&set).run();
        Test::new()
            .copy_bundled("kill-9.toml")
            .args(["explain", "kill-9.toml", "--set", &set])
            .run();
        // compare and sweep, two trials of each variant or point (a sweep with a key to vary).
        let vary = [
            "--vary",
            "clients.ribbon.ServerListRefreshInterval=1000,2000",
        ];
        for (command, extra) in [("compare", &[][..]), ("sweep", &vary[..])] {
            Test::new()
                .copy_bundled("kill-9.toml")
                .args([
                    command,
                    "kill-9.toml",
                    "--trials",
                    "2",
                    "--out",
                    "out",
                    "--set",
                    &set,
                ])
                .args(extra.iter().copied())
                .run();
        }
    }
}

/// A fleet far beyond this machine (2 000 apps of 10 000 instances: some 50 GB by the
/// estimate, where CI and this machine have 24 GiB) is refused with its estimate before any
/// trial starts, and nothing is written.
#[test]
fn a_fleet_beyond_the_machine_is_refused_with_its_estimate() {
    let mut text = String::from("[simulation]\nduration-s = 600\ntrials = 1\n");
    for k in 0..2000 {
        text.push_str(&format!("[[app]]\nname = \"app{k}\"\ninstances = 10000\n"));
    }
    text.push_str("[[caller]]\nname = \"gw\"\ncalls = \"app0\"\nrate-per-s = 1\n");
    text.push_str("[[shutdown]]\ninstance = \"app0-0\"\nat-s = 60\nstrategy = \"kill-9\"\n");
    let started = std::time::Instant::now();
    let out = Test::new()
        .write("huge.toml", text)
        .args(["run", "huge.toml", "--out", "out"])
        .status(2)
        .stderr_contains("one trial of this scenario would need about")
        .stderr_contains("GB of memory, more than the")
        .stderr_contains("this machine has available")
        .run();
    assert!(
        !out.path("out").exists(),
        "output written for a refused run"
    );
    // Parsing 2 000 tables and estimating: well under the seconds a trial would take.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// `--max-memory` refuses a trial above it, naming the flag; with room for one trial but not
/// two, the run goes on one trial at a time and says so.
#[test]
fn max_memory_refuses_or_runs_fewer_trials_at_once() {
    let out = Test::scenario("kill-9.toml")
        .set("app[0].instances=10000")
        .args(["--max-memory", "20M"])
        .status(2)
        .stderr_contains("more than --max-memory 20 MB")
        .run();
    assert!(!out.path("out").exists());
    Test::scenario("kill-9.toml")
        .trials(2)
        .set("app[0].instances=4000")
        .env("RAYON_NUM_THREADS", "2")
        // A 32 MB base and 4 000 x 3.3 KB a trial (`experiment::budget`): 45 MB for one, 58 MB
        // for two.
        .args(["--max-memory", "52M"])
        .stderr_contains("note: 1 trials at once instead of 2")
        .run();
}

/// 10^6 trials ran on with nothing said; `--max-events` refuses them with the estimate.
#[test]
fn a_million_trials_are_refused_under_max_events() {
    Test::scenario("kill-9.toml")
        .trials(1_000_000)
        .args(["--max-events", "1000000"])
        .status(2)
        .stderr_contains("x 1000000 trials), more than --max-events 1000000")
        .run();
}

/// `recommend` on a file without a `[[shutdown]]` exited 1 where every command exits 2 on bad
/// input.
#[test]
fn recommend_without_a_shutdown_exits_2() {
    Test::new()
        .write("none.toml", "[[app]]\nname = \"svc\"\ninstances = 2\n")
        .args(["recommend", "none.toml"])
        .status(2)
        .stderr_contains("none.toml has no [[shutdown]] to tune")
        .run();
}

/// "invalid TOML: duplicate key" named neither the key nor the table.
#[test]
fn a_duplicate_key_is_named_with_its_table_and_first_line() {
    Test::new()
        .write(
            "dup.toml",
            "[simulation]\nduration-s = 900\n\n[[app]]\nname = \"svc\"\ninstances = 2\ninstances = 3\n",
        )
        .args(["run", "dup.toml"])
        .status(2)
        .stderr_contains(
            "dup.toml:7:1: invalid TOML: duplicate key `instances` in table [[app]] (first set \
             at line 6)",
        )
        .run();
}

/// Non-UTF-8 input got no position: now its byte offset, line and column.
#[test]
fn non_utf8_input_names_its_offset_line_and_column() {
    Test::new()
        .write(
            "latin1.toml",
            b"[simulation]\nduration-s = 900\n# caf\xe9\n".as_slice(),
        )
        .args(["run", "latin1.toml"])
        .status(2)
        .stderr_contains("latin1.toml:3:6: not UTF-8 (byte 35 is the first")
        .run();
}

/// `1e-300` was echoed as 300 digits and a 100 KB value in full.
#[test]
fn huge_and_tiny_numbers_and_long_values_are_shown_short() {
    let out = Test::scenario("kill-9.toml")
        .set("caller[0].rate-per-s=1e300")
        .status(2)
        .stderr_contains("must be at most 100000, got 1e300")
        .run();
    assert!(out.stderr.len() < 400, "{}", out.stderr);
    Test::scenario("kill-9.toml")
        .set("caller[0].rate-per-s=-1e-300")
        .status(2)
        .stderr_contains("must be at least 0, got -1e-300")
        .run();
    let long = format!("app[0].name=\"{}\"", "a".repeat(100_000));
    let out = Test::scenario("kill-9.toml")
        .set(&long)
        .status(2)
        .stderr_contains("characters)")
        .run();
    assert!(out.stderr.len() < 600, "{} bytes", out.stderr.len());
}

/// Names in reports: a scenario file named with markup and quotes reaches
/// report.html and the SVG subtitles escaped, never as markup. (App and caller names with
/// markup are refused by validation: a name is ASCII letters, digits, `_`, `.` and `-`.)
#[test]
fn markup_in_a_file_name_is_escaped_in_html_and_svg() {
    let name = "<script>alert('x')<\u{2f}script>\"q\"&.toml".replace('/', "");
    let out = Test::new()
        .write(&name, super::test::bundled_text("kill-9.toml"))
        .args(["run", &name, "--trials", "3", "--out", "out"])
        .run();
    let mut checked = 0;
    for file in ["report.html", "exposure-cdf.svg", "timeline.svg"] {
        let text = String::from_utf8(out.read(std::path::Path::new("out").join(file))).unwrap();
        assert!(!text.contains("<script>"), "{file} carries raw markup");
        assert!(!text.contains("'x')<script>\"q\""), "{file}");
        if text.contains("&lt;script&gt;") {
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "the name shows escaped in at most {checked} files"
    );
    Test::new()
        .write(
            "bad.toml",
            super::test::edit(
                &super::test::bundled_text("kill-9.toml"),
                "name = \"svc\"",
                "name = \"<svc>\"",
            ),
        )
        .args(["run", "bad.toml"])
        .status(2)
        .stderr_contains("a name of ASCII letters")
        .run();
}

/// `--check-determinism` runs the trials twice, says they agree, and writes the very files a
/// plain run writes.
#[test]
fn check_determinism_agrees_and_writes_what_a_plain_run_writes() {
    let checked = Test::scenario("kill-9.toml")
        .trials(20)
        .env("RAYON_NUM_THREADS", "2")
        .arg("--check-determinism")
        .stderr_contains("determinism: 20 trials run twice (1 thread, then 2) gave identical")
        .run();
    let plain = Test::scenario("kill-9.toml").trials(20).run();
    assert_eq!(checked.trials_bytes(), plain.trials_bytes());
    assert_eq!(checked.summary_bytes(), plain.summary_bytes());
}

/// `explain` with `eviction-interval-timer-in-ms=1` ran past 30 s (its cost grew with the
/// square of the eviction rate: a scan of the whole trace per eviction run). Now it answers
/// within seconds, and says which eviction run removed the instance.
#[test]
fn explain_with_a_1_ms_eviction_timer_answers_within_seconds() {
    let started = std::time::Instant::now();
    Test::new()
        .copy_bundled("kill-9.toml")
        .args(["explain", "kill-9.toml"])
        .args([
            "--set",
            "server.eureka.server.eviction-interval-timer-in-ms=1",
        ])
        .stdout_contains("eviction")
        .run();
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// One file that could not be written failed the run with exit 1 after the other five were
/// written. Now nothing moves until every file is written: a folder where trials.csv goes
/// (made by hand) fails the run with exit 1, and the previous run's files stay as they were.
#[test]
fn a_file_that_cannot_be_written_leaves_the_previous_output_whole() {
    let first = Test::scenario("kill-9.toml").trials(3).run();
    let summary = first.summary_bytes();
    let dir = first.path("out");
    std::fs::remove_file(dir.join("trials.csv")).unwrap();
    std::fs::create_dir(dir.join("trials.csv")).unwrap();
    let second = Test::new()
        .copy_bundled("kill-9.toml")
        .args(["run", "kill-9.toml", "--trials", "5", "--out"])
        .arg(dir.as_os_str())
        .status(1)
        .stderr_contains("a folder is in the way")
        .run();
    assert!(second.stdout.is_empty());
    assert_eq!(std::fs::read(dir.join("summary.csv")).unwrap(), summary);
    assert!(dir.join("trials.csv").is_dir());
}

/// Spring files nested 400 levels deep in block style and 3 000 in flow style are refused at
/// once with their file, line and column (exit 2); `init` names the scenario it
/// writes, not the temporary file it checks it under, and leaves neither behind.
#[test]
fn spring_files_nested_deep_are_refused_at_once() {
    // Every line one level deeper than the last: 3 000 levels would be 9 MB, over the size
    // limit, so 400 (the limit is 64).
    let block: String = (0..400)
        .map(|i| format!("{}k{i}:", "  ".repeat(i)))
        .collect::<Vec<_>>()
        .join("\n")
        + " 1\n";
    let flow = format!("a: {}{}\n", "[".repeat(3000), "]".repeat(3000));
    for (file, text, message) in [
        ("block.yml", block, "block.yml:65:"),
        ("flow.yml", flow, "flow.yml:1:"),
    ] {
        let t = Test::new()
            .write(file, &text)
            .args(["init", "q.toml", "--app-config", file])
            .status(2)
            .stderr_contains(message)
            .stderr_contains("(spring-config of q.toml)")
            .stderr_lacks(".init-")
            .run();
        assert!(!t.path("q.toml").exists());
        let leftovers: Vec<_> = std::fs::read_dir(t.path("."))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".init-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
