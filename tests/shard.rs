//! End to end: `--shard I/N` and `merge` as a batch cluster uses them. Each shard runs as its
//! own process of the built binary (as the pods of a Kubernetes Indexed Job, the tasks of a
//! Slurm array or the jobs of GNU parallel would), `merge` puts them together, and every file
//! it writes must be byte-identical to the file one unsharded run writes: that is the whole
//! specification, so the tests compare bytes, not figures. Bad shard input (a malformed or out
//! of range `--shard`, a missing batch variable, shards of different runs, a missing or
//! duplicated shard) is exit 2 with a message naming what is wrong, and `merge` writes nothing
//! then.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::{BIN, eureka_sim, kill9, ok, repo, temp};

/// Every file of `dir` by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `merged` holds exactly the files of `single`, byte for byte.
fn assert_same_files(single: &Path, merged: &Path) {
    let (a, b) = (files(single), files(merged));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the merged folder has other files than the single run"
    );
    for (name, bytes) in &a {
        assert!(
            *bytes == b[name],
            "{name} differs between the single run and the merge:\n--- single\n{}\n--- merged\n{}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&b[name])
        );
    }
}

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

/// Runs `command ARGS --out single` once, then `command ARGS --shard I/N --out shards/I` for
/// every I as separate processes, merges the shard folders into `merged` and checks that it is
/// the single run's folder byte for byte. Returns the merge's stdout.
fn shards_merge_to_one_run(command: &str, scenario: &Path, rest: &[&str], count: u32) -> String {
    let tmp = temp();
    let base: Vec<OsString> = [vec![command.into(), scenario.into()], args(rest)].concat();
    let single = tmp.path().join("single");
    let single_stdout = ok(eureka_sim(
        tmp.path(),
        0,
        &[base.clone(), args(&["--out"]), vec![single.clone().into()]].concat(),
    ));
    let mut merge: Vec<OsString> = args(&["merge"]);
    for i in 0..count {
        let dir = tmp.path().join("shards").join(i.to_string());
        let shard = format!("{i}/{count}");
        let stdout = ok(eureka_sim(
            tmp.path(),
            1,
            &[
                base.clone(),
                args(&["--shard", &shard, "--out"]),
                vec![dir.clone().into()],
            ]
            .concat(),
        ));
        assert!(
            stdout.contains(&format!("shard-{i}-of-{count}.json")),
            "{stdout}"
        );
        // A shard writes its outcomes, not the reports.
        assert_eq!(
            files(&dir).into_keys().collect::<Vec<_>>(),
            [format!("shard-{i}-of-{count}.json")]
        );
        merge.push(dir.into());
    }
    let merged = tmp.path().join("merged");
    merge.extend([OsString::from("--out"), merged.clone().into()]);
    let stdout = ok(eureka_sim(tmp.path(), 0, &merge));
    assert_same_files(&single, &merged);
    // The terminal text is the single run's (its folder named as merge's), then one line.
    let (single, merged) = (single.to_str().unwrap(), merged.to_str().unwrap());
    let expected = single_stdout.replace(single, merged);
    let rest = stdout.strip_prefix(&expected).unwrap_or_else(|| {
        panic!("merge's stdout is not the run's:\n{stdout}\n--- single run:\n{expected}")
    });
    assert!(
        rest.starts_with("merged ") && rest.lines().count() == 1,
        "{rest}"
    );
    stdout
}

#[test]
fn run_shards_merged_are_byte_identical_to_one_run() {
    // 23 trials over 4 shards: slices of 5, 6, 6 and 6 trials ([floor(23 I / 4), ...)).
    let stdout = shards_merge_to_one_run(
        "run",
        &kill9(),
        &[
            "--trials",
            "23",
            "--seed",
            "7",
            "--set",
            "caller[0].rate-per-s=30",
        ],
        4,
    );
    assert!(
        stdout.contains("merged 4 shard(s) of run over 23 trials"),
        "{stdout}"
    );
}

#[test]
fn run_shards_of_a_rolling_deploy_merge_its_deploy_json_too() {
    shards_merge_to_one_run(
        "run",
        &repo().join("scenarios/rolling-deploy.toml"),
        &["--trials", "5"],
        2,
    );
}

#[test]
fn run_shards_on_several_peers_merge_callers_and_servers_csv() {
    shards_merge_to_one_run(
        "run",
        &repo().join("scenarios/cluster/three-peers-two-zones.toml"),
        &["--trials", "5", "--per-request"],
        3,
    );
}

#[test]
fn more_shards_than_trials_leave_some_empty_and_still_merge() {
    // 3 trials over 5 shards: shards 0 and 2 are empty ([0,0), [1,1)).
    shards_merge_to_one_run("run", &kill9(), &["--trials", "3"], 5);
}

#[test]
fn compare_shards_of_trials_merged_are_byte_identical_to_one_compare() {
    // 7 trials over 3 shards (2, 2 and 3 trials), every variant in each shard.
    let stdout = shards_merge_to_one_run(
        "compare",
        &kill9(),
        &[
            "--strategy",
            "kill-9,pause,service-registry",
            "--wait-s",
            "30,60",
            "--trials",
            "7",
            "--set",
            "simulation.release=Hoxton.SR4",
        ],
        3,
    );
    assert!(
        stdout.contains("merged 3 shard(s) of compare over 7 trials"),
        "{stdout}"
    );
    // The four default strategies.
    shards_merge_to_one_run("compare", &kill9(), &["--trials", "4"], 2);
}

#[test]
fn sweep_shards_of_grid_points_merged_are_byte_identical_to_one_sweep() {
    // 3 x 2 = 6 grid points over 4 shards: 1, 2, 1 and 2 points ([floor(6 I / 4), ...)).
    let stdout = shards_merge_to_one_run(
        "sweep",
        &kill9(),
        &[
            "--vary",
            "server.eureka.server.response-cache-update-interval-ms=5000,15000,30000",
            "--vary",
            "clients.ribbon.ServerListRefreshInterval=5000,30000",
            "--trials",
            "4",
        ],
        4,
    );
    assert!(
        stdout.contains("merged 4 shard(s) of sweep over 6 grid points"),
        "{stdout}"
    );
    // One key (line plots, not heatmaps), and more shards than points.
    shards_merge_to_one_run(
        "sweep",
        &kill9(),
        &[
            "--vary",
            "clients.ribbon.ServerListRefreshInterval=5000,30000",
            "--trials",
            "3",
        ],
        3,
    );
}

/// The binary with `env` set (and every batch variable of the test's own environment removed).
fn with_env(cwd: &Path, args: &[OsString], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command.current_dir(cwd).args(args);
    for var in [
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_COUNT",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    output
}

/// As a Kubernetes Indexed Job's pods and a Slurm array's tasks: `--shard auto` writing into
/// one shared folder, merged from it.
#[test]
fn shard_auto_reads_a_kubernetes_indexed_job_and_a_slurm_array() {
    let tmp = temp();
    let single = tmp.path().join("single");
    let run = |extra: &[&str], out: &Path| -> Vec<OsString> {
        [
            args(&["run"]),
            vec![kill9().into()],
            args(&["--trials", "9"]),
            args(extra),
            args(&["--out"]),
            vec![out.into()],
        ]
        .concat()
    };
    ok(with_env(tmp.path(), &run(&[], &single), &[]));

    let k8s = tmp.path().join("k8s");
    for i in ["0", "1", "2"] {
        let auto = run(&["--shard", "auto", "--shard-count", "3"], &k8s);
        ok(with_env(tmp.path(), &auto, &[("JOB_COMPLETION_INDEX", i)]));
    }
    let slurm = tmp.path().join("slurm");
    // `sbatch --array=1-2`: task ids 1 and 2 are shards 0 and 1 of 2.
    for id in ["1", "2"] {
        let auto = run(&["--shard", "auto"], &slurm);
        let env = [
            ("SLURM_ARRAY_TASK_ID", id),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ];
        ok(with_env(tmp.path(), &auto, &env));
    }
    assert_eq!(
        files(&slurm).into_keys().collect::<Vec<_>>(),
        ["shard-0-of-2.json", "shard-1-of-2.json"]
    );
    for (shards, merged) in [(k8s, "merged-k8s"), (slurm, "merged-slurm")] {
        let merged = tmp.path().join(merged);
        let merge = [
            args(&["merge"]),
            vec![shards.into()],
            args(&["--out"]),
            vec![merged.clone().into()],
        ]
        .concat();
        ok(eureka_sim(tmp.path(), 0, &merge));
        assert_same_files(&single, &merged);
    }
}

/// A bad-input run: exit 2, nothing on stdout, and the message on stderr.
fn bad(output: Output) -> String {
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// A bad-input case: the extra arguments, the environment, a part of the message.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn a_bad_shard_argument_is_exit_2_naming_the_flag_and_what_is_allowed() {
    let tmp = temp();
    let out = tmp.path().join("out");
    let run = |extra: &[&str]| -> Vec<OsString> {
        [
            args(&["run"]),
            vec![kill9().into()],
            args(&["--trials", "3"]),
            args(extra),
            args(&["--out"]),
            vec![out.clone().into()],
        ]
        .concat()
    };
    let cases: [Case; 9] = [
        (
            &["--shard", "4/4"],
            &[],
            "--shard 4/4: shard index 4 is not below the shard count 4; allowed: 0 to 3",
        ),
        (
            &["--shard", "0/0"],
            &[],
            "--shard 0/0: the shard count is 0; allowed: a count of at least 1",
        ),
        (&["--shard", "1of4"], &[], "--shard \"1of4\": expected I/N"),
        (&["--shard=-1/4"], &[], "--shard \"-1/4\": expected I/N"),
        (
            &["--shard", "auto"],
            &[],
            "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID",
        ),
        (
            &["--shard", "auto"],
            &[("JOB_COMPLETION_INDEX", "2")],
            "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but --shard-count is not",
        ),
        (
            &["--shard", "auto", "--shard-count", "2"],
            &[("JOB_COMPLETION_INDEX", "2")],
            "shard index 2 is not below the shard count 2; allowed: 0 to 1",
        ),
        (
            &["--shard", "auto"],
            &[
                ("SLURM_ARRAY_TASK_ID", "x"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            "SLURM_ARRAY_TASK_ID=\"x\": expected a whole number",
        ),
        (
            &["--shard", "1/2", "--shard-count", "2"],
            &[],
            "--shard-count is given without --shard auto",
        ),
    ];
    for (extra, env, message) in cases {
        let stderr = bad(with_env(tmp.path(), &run(extra), env));
        assert!(stderr.contains(message), "{extra:?} {env:?}: {stderr}");
    }
    assert!(
        !out.exists(),
        "a bad shard argument wrote {}",
        out.display()
    );
}

/// Writes shard `shard` of `run kill-9.toml --trials 6 EXTRA` into `dir`.
fn shard(cwd: &Path, dir: &Path, shard: &str, extra: &[&str]) -> PathBuf {
    let list = [
        args(&["run"]),
        vec![kill9().into()],
        args(&["--trials", "6", "--shard", shard]),
        args(extra),
        args(&["--out"]),
        vec![dir.into()],
    ]
    .concat();
    ok(eureka_sim(cwd, 1, &list));
    dir.to_path_buf()
}

fn merge(cwd: &Path, dirs: &[&Path], out: &Path) -> Output {
    let mut list = args(&["merge"]);
    list.extend(dirs.iter().map(|d| d.as_os_str().to_owned()));
    list.extend([OsString::from("--out"), out.into()]);
    eureka_sim(cwd, 1, &list)
}

#[test]
fn merge_refuses_shards_that_are_not_every_shard_of_one_run_once() {
    let tmp = temp();
    let cwd = tmp.path();
    let out = cwd.join("merged");
    let a0 = shard(cwd, &cwd.join("a0"), "0/3", &[]);
    let a1 = shard(cwd, &cwd.join("a1"), "1/3", &[]);
    let a2 = shard(cwd, &cwd.join("a2"), "2/3", &[]);
    let a1_again = shard(cwd, &cwd.join("a1-again"), "1/3", &[]);
    let other_seed = shard(cwd, &cwd.join("seed-9"), "2/3", &["--seed", "9"]);
    let other_count = shard(cwd, &cwd.join("of-2"), "1/2", &[]);
    let empty = cwd.join("empty");
    fs::create_dir(&empty).unwrap();

    let stderr = bad(merge(cwd, &[&a0, &a2], &out));
    assert!(
        stderr.contains("shard(s) 1 of 3 missing (found 0, 2); allowed: every shard 0 to 2 once"),
        "{stderr}"
    );
    let stderr = bad(merge(cwd, &[&a0, &a1, &a1_again, &a2], &out));
    assert!(stderr.contains("are both shard 1 of 3"), "{stderr}");
    assert!(stderr.contains("a1-again"), "{stderr}");
    let stderr = bad(merge(cwd, &[&a0, &a1, &other_seed], &out));
    assert!(
        stderr.contains("seed-9/shard-2-of-3.json: its --seed differs"),
        "{stderr}"
    );
    let stderr = bad(merge(cwd, &[&a0, &a1, &other_count], &out));
    assert!(
        stderr.contains("of-2/shard-1-of-2.json: its shard count differs"),
        "{stderr}"
    );
    let stderr = bad(merge(cwd, &[&a0, &a1, &a2, &empty], &out));
    assert!(
        stderr.contains("empty: no shard file (shard-I-of-N.json) in this folder"),
        "{stderr}"
    );
    let stderr = bad(merge(cwd, &[&a0, &a1, &cwd.join("nowhere")], &out));
    assert!(stderr.contains("nowhere"), "{stderr}");

    // A file that is not a shard, and a shard whose outcomes were cut.
    let junk = cwd.join("junk");
    fs::create_dir(&junk).unwrap();
    fs::write(junk.join("shard-0-of-3.json"), "{\"manifest\": 1}").unwrap();
    let stderr = bad(merge(cwd, &[&junk, &a1, &a2], &out));
    assert!(
        stderr.contains("junk/shard-0-of-3.json: not a shard file of eureka-sim"),
        "{stderr}"
    );
    let cut = cwd.join("cut");
    fs::create_dir(&cut).unwrap();
    let mut file: serde_json::Value =
        serde_json::from_slice(&fs::read(a0.join("shard-0-of-3.json")).unwrap()).unwrap();
    file["groups"][0]["outcomes"].as_array_mut().unwrap().pop();
    fs::write(cut.join("shard-0-of-3.json"), file.to_string()).unwrap();
    let stderr = bad(merge(cwd, &[&cut, &a1, &a2], &out));
    assert!(stderr.contains("not trials 0 to 1 in order"), "{stderr}");

    // A shard of another scenario file.
    let other_file = cwd.join("kill-15");
    let list = [
        args(&["run"]),
        vec![repo().join("scenarios/kill-15.toml").into()],
        args(&["--trials", "6", "--shard", "2/3", "--out"]),
        vec![other_file.clone().into()],
    ]
    .concat();
    ok(eureka_sim(cwd, 1, &list));
    let stderr = bad(merge(cwd, &[&a0, &a1, &other_file], &out));
    assert!(
        stderr.contains("kill-15/shard-2-of-3.json: its scenario file differs from that of"),
        "{stderr}"
    );
    // Shards whose scenario no longer validates to the hash they ran (another build).
    let rehashed = cwd.join("rehashed");
    fs::create_dir(&rehashed).unwrap();
    for (dir, name) in [
        (&a0, "shard-0-of-3.json"),
        (&a1, "shard-1-of-3.json"),
        (&a2, "shard-2-of-3.json"),
    ] {
        let mut file: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join(name)).unwrap()).unwrap();
        file["manifest"]["scenario_hash"] = "0123456789abcdef".into();
        fs::write(rehashed.join(name), file.to_string()).unwrap();
    }
    let stderr = bad(merge(cwd, &[&rehashed], &out));
    assert!(
        stderr.contains("validates to a different hash") && stderr.contains("(0123456789abcdef)"),
        "{stderr}"
    );

    assert!(!out.exists(), "a refused merge wrote {}", out.display());
    ok(merge(cwd, &[&a2, &a0, &a1], &out));
}
