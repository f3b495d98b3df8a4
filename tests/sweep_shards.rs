//! Sharded sweeps: `--shard I/N` slices merged with `sweep merge` equal the sweep run on
//! one machine (sweep.csv byte for byte, sweep.json except timing), and the shipped Slurm
//! and Kubernetes files run those same command lines.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const SCENARIO: &str = "scenarios/demo.toml";
const PARAMS: &str = "--param params.concurrency=1..6 --param params.dram_channels=2,4";
const SETS: &str = "--set arrivals.jobs=30";

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("binary builds")
}

fn bwsim_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bwsim"))
}

/// The single-machine sweep of the tiny grid.
fn unsharded(dir: &Path) -> PathBuf {
    let out = dir.join("whole");
    bwsim()
        .args(["sweep", SCENARIO])
        .args(PARAMS.split(' '))
        .args(SETS.split(' '))
        .args(["--replications", "2", "--jobs", "2", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

fn without_timing(path: &Path) -> Value {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("timing");
    v
}

fn assert_same_sweep(whole: &Path, merged: &Path) {
    assert_eq!(
        std::fs::read_to_string(whole.join("sweep.csv")).unwrap(),
        std::fs::read_to_string(merged.join("sweep.csv")).unwrap(),
        "merged sweep.csv differs from the single-machine one"
    );
    assert_eq!(
        without_timing(&whole.join("sweep.json")),
        without_timing(&merged.join("sweep.json"))
    );
    assert_eq!(
        std::fs::read(whole.join("throughput.png")).unwrap(),
        std::fs::read(merged.join("throughput.png")).unwrap()
    );
}

#[test]
fn four_shards_merged_equal_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let whole = unsharded(dir.path());
    let mut shards = Vec::new();
    // Shards in reverse order, one with a different --jobs: neither may matter.
    for i in (0..4).rev() {
        let out = dir.path().join(format!("shard-{i}"));
        bwsim()
            .args(["sweep", SCENARIO])
            .args(PARAMS.split(' '))
            .args(SETS.split(' '))
            .args([
                "--replications",
                "2",
                "--jobs",
                if i == 1 { "1" } else { "2" },
            ])
            .args(["--shard", &format!("{i}/4"), "--out"])
            .arg(&out)
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "shard {i}/4: 3 of 12 points"
            )));
        shards.push(out);
    }
    let merged = dir.path().join("merged");
    bwsim()
        .args(["sweep", "merge"])
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success()
        .stdout(predicate::str::contains("merged 4 shard folders"));
    assert_same_sweep(&whole, &merged);

    // A missing shard is named, exit 2.
    bwsim()
        .args(["sweep", "merge"])
        .args(&shards[..3])
        .arg("--out")
        .arg(dir.path().join("partial"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard(s) 0/4 of 4 not given"));
    // The same shard twice is refused.
    bwsim()
        .args(["sweep", "merge"])
        .args([&shards[0], &shards[0]])
        .arg("--out")
        .arg(dir.path().join("twice"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("given twice"));
    // A shard of another sweep (other --replications) is refused, naming the difference.
    let other = dir.path().join("other");
    bwsim()
        .args(["sweep", SCENARIO])
        .args(PARAMS.split(' '))
        .args(SETS.split(' '))
        .args([
            "--replications",
            "1",
            "--jobs",
            "2",
            "--shard",
            "0/4",
            "--out",
        ])
        .arg(&other)
        .assert()
        .success();
    bwsim()
        .args(["sweep", "merge"])
        .args([&other, &shards[1], &shards[2], &shards[3]])
        .arg("--out")
        .arg(dir.path().join("mixed"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--replications 1 vs 2"));
    // A folder that is not a shard is named.
    bwsim()
        .args(["sweep", "merge"])
        .arg(&merged)
        .arg("--out")
        .arg(dir.path().join("nonsense"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard.json: cannot read"));
}

#[test]
fn bad_shard_specs_are_input_errors() {
    bwsim()
        .args(["sweep", SCENARIO, "--param", "params.concurrency=1..3"])
        .args(["--shard", "4/4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("I must be below N"));
}

#[test]
fn a_shard_folder_is_staged_and_holds_shard_json_and_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    bwsim()
        .args(["sweep", SCENARIO, "--param", "params.concurrency=1..3"])
        .args(SETS.split(' '))
        .args(["--replications", "1", "--shard", "1/2", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("shard 1/2: 1 of 3 points"));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["manifest.json", "shard.json"]);
    let shard: Value =
        serde_json::from_slice(&std::fs::read(out.join("shard.json")).unwrap()).unwrap();
    assert_eq!(shard["shard"], serde_json::json!({"index": 1, "count": 2}));
    assert_eq!(shard["points"][0]["index"], 1);
    assert_eq!(shard["sweep"]["scenario_hash"].as_str().unwrap().len(), 16);
}

/// Runs `sh`-compatible `script` with the tiny study's settings in the environment.
fn run_script(shell: &str, script: &[&str], env: &[(&str, String)]) {
    let mut p = Process::new(shell);
    p.args(script).current_dir(env!("CARGO_MANIFEST_DIR"));
    p.env("BWSIM", bwsim_path())
        .env("SCENARIO", SCENARIO)
        .env("PARAMS", PARAMS)
        .env("SETS", SETS)
        .env("SEEDS", "2");
    for (k, v) in env {
        p.env(k, v);
    }
    let out = p.output().expect("shell runs");
    assert!(
        out.status.success(),
        "{script:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_slurm_array_script_runs_shards_and_merges_them() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/slurm/sweep-array.sh");
    let syntax = Process::new("bash").args(["-n", script]).status().unwrap();
    assert!(syntax.success(), "bash -n {script}");
    let text = std::fs::read_to_string(script).unwrap();
    assert!(text.contains("#SBATCH"), "no #SBATCH directives");

    let dir = tempfile::tempdir().unwrap();
    let whole = unsharded(dir.path());
    let study = dir.path().join("study").display().to_string();
    // Task 0 is interrupted after one point; its requeued run resumes the staging folder.
    bwsim()
        .args(["sweep", SCENARIO])
        .args(PARAMS.split(' '))
        .args(SETS.split(' '))
        .args([
            "--replications",
            "2",
            "--jobs",
            "1",
            "--shard",
            "0/3",
            "--stop-after",
            "1",
        ])
        .arg("--out")
        .arg(Path::new(&study).join("shard-0"))
        .assert()
        .failure();
    assert!(Path::new(&study).join(".shard-0.partial").is_dir());
    for i in 0..3 {
        run_script(
            "bash",
            &[script],
            &[
                ("STUDY", study.clone()),
                ("SLURM_ARRAY_TASK_ID", i.to_string()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
                ("SLURM_CPUS_PER_TASK", "2".into()),
            ],
        );
    }
    run_script(
        "bash",
        &[script, "merge"],
        &[("STUDY", study.clone()), ("SHARDS", "3".into())],
    );
    assert_same_sweep(&whole, &Path::new(&study).join("merged"));
}

/// The value of `- name: NAME` in the manifest's env list.
fn env_value(yaml: &str, name: &str) -> String {
    let mut lines = yaml.lines();
    lines
        .find(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("env {name} not in the manifest"));
    let v = lines.next().unwrap().trim();
    let v = v.strip_prefix("value:").expect("value: after name:").trim();
    v.trim_matches('"').to_string()
}

#[test]
fn the_kubernetes_indexed_job_runs_shards_that_merge() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/k8s/sweep-indexed-job.yaml"
    );
    let yaml = std::fs::read_to_string(path).unwrap();
    // Structure: an Indexed batch/v1 Job whose SHARDS matches its completions.
    let field = |key: &str| -> String {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
            .unwrap_or_else(|| panic!("no {key}: in {path}"))
            .trim()
            .to_string()
    };
    assert_eq!(field("apiVersion"), "batch/v1");
    assert_eq!(field("kind"), "Job");
    assert_eq!(field("completionMode"), "Indexed");
    assert_eq!(field("restartPolicy"), "Never");
    assert_eq!(field("completions"), env_value(&yaml, "SHARDS"));
    assert!(!yaml.contains('\t'), "YAML must not contain tabs");
    // The container's shell command: the block scalar after `args:`.
    let args_at = yaml.find("args:\n").expect("args:");
    let block: Vec<&str> = yaml[args_at..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("              "))
        .map(str::trim)
        .collect();
    let command = block.join("\n");
    assert!(
        command.contains("--shard \"$JOB_COMPLETION_INDEX/$SHARDS\""),
        "{command}"
    );
    // Every variable it uses is set in the manifest (or by Kubernetes).
    for var in [
        "BWSIM", "SCENARIO", "PARAMS", "SETS", "SEEDS", "JOBS", "STUDY", "SHARDS",
    ] {
        assert!(command.contains(&format!("${var}")) || command.contains(&format!("${{{var}}}")));
        env_value(&yaml, var);
    }

    let dir = tempfile::tempdir().unwrap();
    let whole = unsharded(dir.path());
    let study = dir.path().join("study");
    for i in 0..4 {
        run_script(
            "sh",
            &["-c", &command],
            &[
                ("STUDY", study.display().to_string()),
                ("SHARDS", "4".into()),
                ("JOBS", "2".into()),
                ("JOB_COMPLETION_INDEX", i.to_string()),
            ],
        );
    }
    let shards: Vec<PathBuf> = (0..4).map(|i| study.join(format!("shard-{i}"))).collect();
    bwsim()
        .args(["sweep", "merge"])
        .args(&shards)
        .arg("--out")
        .arg(study.join("merged"))
        .assert()
        .success();
    assert_same_sweep(&whole, &study.join("merged"));
}
