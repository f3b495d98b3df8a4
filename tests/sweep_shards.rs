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

/// `bwsim sweep merge SHARDS.. --out OUT`, to assert on.
fn merge<P: AsRef<std::ffi::OsStr>>(
    shards: impl IntoIterator<Item = P>,
    out: &Path,
) -> assert_cmd::assert::Assert {
    bwsim()
        .args(["sweep", "merge"])
        .args(shards)
        .arg("--out")
        .arg(out)
        .assert()
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
    merge(&shards, &merged)
        .success()
        .stdout(predicate::str::contains("merged 4 shard folders"));
    assert_same_sweep(&whole, &merged);

    // A missing shard is named, exit 2.
    merge(&shards[..3], &dir.path().join("partial"))
        .code(2)
        .stderr(predicate::str::contains("shard(s) 0/4 of 4 not given"));
    // The same shard twice is refused.
    merge([&shards[0], &shards[0]], &dir.path().join("twice"))
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
    merge(
        [&other, &shards[1], &shards[2], &shards[3]],
        &dir.path().join("mixed"),
    )
    .code(2)
    .stderr(predicate::str::contains("--replications 1 vs 2"));
    // A folder that is not a shard is named.
    merge([&merged], &dir.path().join("nonsense"))
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

#[test]
fn more_shards_than_points_leave_empty_shards_that_merge() {
    let dir = tempfile::tempdir().unwrap();
    let whole = unsharded(dir.path());
    let shards: Vec<PathBuf> = (0..15).map(|i| dir.path().join(format!("s{i}"))).collect();
    for (i, out) in shards.iter().enumerate() {
        let points = if i < 12 {
            "1 of 12 points"
        } else {
            "0 of 12 points"
        };
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
                &format!("{i}/15"),
            ])
            .arg("--out")
            .arg(out)
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("shard {i}/15: {points}")));
    }
    let empty: Value =
        serde_json::from_slice(&std::fs::read(shards[14].join("shard.json")).unwrap()).unwrap();
    assert_eq!(empty["points"], serde_json::json!([]));
    assert_eq!(
        empty["shard"],
        serde_json::json!({"index": 14, "count": 15})
    );
    let merged = dir.path().join("merged");
    merge(&shards, &merged).success();
    assert_same_sweep(&whole, &merged);
}

/// The repository, where the documented commands are run from.
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of the first ```sh block after `heading` in docs/sweep.md, unindented.
fn doc_block(heading: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/sweep.md")).unwrap();
    let at = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} in docs/sweep.md"));
    let rest = &doc[at..];
    let open = rest.find("```sh\n").expect("a ```sh block") + "```sh\n".len();
    let close = rest[open..].find("```").expect("the block ends");
    rest[open..open + close]
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The inline code span of docs/sweep.md that starts with `start`.
fn doc_code(start: &str) -> String {
    let doc = std::fs::read_to_string(repo().join("docs/sweep.md")).unwrap();
    let at = doc
        .find(&format!("`{start}"))
        .unwrap_or_else(|| panic!("`{start}...` in docs/sweep.md"));
    let span = &doc[at + 1..];
    span[..span.find('`').unwrap()]
        .replace('\n', " ")
        .replace("   ", " ")
}

/// A shell of the tiny study's settings as the user gives them (the documented
/// `PARAMS`, `SCENARIO`, `SEEDS` and `SETS`, and `STUDY`), with bwsim on PATH ahead of
/// `path_dirs` and nothing a scheduler sets: what the scheduler sets, the stand-in sets.
fn user_shell(shell: &str, study: &Path, path_dirs: &[&Path]) -> Process {
    let mut dirs: Vec<PathBuf> = path_dirs.iter().map(|p| p.to_path_buf()).collect();
    dirs.push(bwsim_path().parent().unwrap().to_path_buf());
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let mut p = Process::new(shell);
    p.current_dir(repo())
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("SCENARIO", SCENARIO)
        .env("PARAMS", PARAMS)
        .env("SETS", SETS)
        .env("SEEDS", "2")
        .env("STUDY", study);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("SLURM_") || k.starts_with("JOB_COMPLETION") || k == "SHARDS" {
            p.env_remove(&*k);
        }
    }
    p
}

fn run_ok(p: &mut Process, what: &str) -> std::process::Output {
    let out = p.output().expect("the shell runs");
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// docs/sweep.md's Slurm steps, run as printed through a stand-in `sbatch` that sets
/// what Slurm sets (tests/fixtures/sbatch-standin.sh): the array of 100 tasks over the
/// tiny grid's 12 points (88 of them empty shards), one of them first interrupted and
/// resumed as a requeued task; the merge through `sbatch --wrap` outside the array; a
/// lost shard re-run alone as the docs say, and merged again.
#[test]
fn the_documented_slurm_steps_run_as_printed() {
    let script = repo().join("deploy/slurm/sweep-array.sh");
    let syntax = Process::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n {}", script.display());

    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let sbatch = bin.join("sbatch");
    std::fs::copy(repo().join("tests/fixtures/sbatch-standin.sh"), &sbatch).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let whole = unsharded(dir.path());
    let study = dir.path().join("study");

    // The steps: the user's `export` line is the settings `user_shell` gives.
    let block = doc_block("**Slurm**");
    assert!(block[0].starts_with("export "), "{block:?}");
    let steps = block[1..].join("\n");
    assert!(steps.contains("sbatch --parsable --array=0-99 deploy/slurm/sweep-array.sh"));
    assert!(steps.contains("--wrap 'deploy/slurm/sweep-array.sh merge'"));

    // Task 0 was interrupted after its point; the array's task 0 resumes it.
    let mut interrupted = user_shell("bash", &study, &[&bin]);
    interrupted.args([
        "-c",
        "bwsim sweep $SCENARIO $PARAMS $SETS --replications $SEEDS --shard 0/100 --stop-after 1 \
         --out $STUDY/shard-0",
    ]);
    assert!(!interrupted.output().unwrap().status.success());
    assert!(study.join(".shard-0.partial").is_dir());

    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut shell = user_shell("bash", &study, &[&bin]);
    shell.env("TMPDIR", &tmp).args(["-e", "-c", &steps]);
    run_ok(&mut shell, "the documented Slurm steps");
    let empty: Value =
        serde_json::from_slice(&std::fs::read(study.join("shard-99/shard.json")).unwrap()).unwrap();
    assert_eq!(empty["points"], serde_json::json!([]));
    assert_same_sweep(&whole, &study.join("merged"));

    // A lost task: the merge names it; re-run alone as documented, it merges again.
    std::fs::remove_dir_all(study.join("shard-17")).unwrap();
    std::fs::remove_dir_all(study.join("merged")).unwrap();
    let merge_line = steps.lines().last().unwrap().to_string();
    let mut merge = user_shell("bash", &study, &[&bin]);
    merge.env("TMPDIR", &tmp).args(["-e", "-c", &merge_line]);
    let out = merge.output().unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("shard(s) 17/100 of 100 not given"), "{said}");
    let rerun = doc_code("SHARDS=100 sbatch --array=17");
    assert_eq!(
        rerun,
        "SHARDS=100 sbatch --array=17 deploy/slurm/sweep-array.sh"
    );
    let mut again = user_shell("bash", &study, &[&bin]);
    again
        .env("TMPDIR", &tmp)
        .args(["-e", "-c", &format!("{rerun}\n{merge_line}")]);
    run_ok(&mut again, "the re-run task and the merge");
    assert_same_sweep(&whole, &study.join("merged"));
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

/// The Kubernetes Job as the docs run it: one pod per index 0..completions, each the
/// container's command with the manifest's env, the `JOB_COMPLETION_INDEX` Kubernetes
/// sets and the study volume (its mount point mapped to a temporary folder); the user
/// sets only the grid (`PARAMS` and its scenario, seeds and sets), as the docs say. Then
/// the documented merge line, in any pod that mounts the volume.
#[test]
fn the_documented_kubernetes_steps_run_as_printed() {
    let path = repo().join("deploy/k8s/sweep-indexed-job.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    // Structure: an Indexed batch/v1 Job whose SHARDS matches its completions.
    let field = |key: &str| -> String {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
            .unwrap_or_else(|| panic!("no {key}: in {}", path.display()))
            .trim()
            .to_string()
    };
    assert_eq!(field("apiVersion"), "batch/v1");
    assert_eq!(field("kind"), "Job");
    assert_eq!(field("completionMode"), "Indexed");
    assert_eq!(field("restartPolicy"), "Never");
    assert_eq!(field("completions"), env_value(&yaml, "SHARDS"));
    assert!(!yaml.contains('\t'), "YAML must not contain tabs");
    let mount = field("mountPath");
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

    let dir = tempfile::tempdir().unwrap();
    let whole = unsharded(dir.path());
    let volume = dir.path().join("volume");
    std::fs::create_dir(&volume).unwrap();
    let completions: usize = field("completions").parse().unwrap();
    let user_set = ["PARAMS", "SCENARIO", "SEEDS", "SETS"];
    for index in 0..completions {
        let mut pod = user_shell("sh", &volume, &[]);
        for var in [
            "BWSIM", "STUDY", "SHARDS", "JOBS", "PARAMS", "SCENARIO", "SEEDS", "SETS",
        ] {
            let value = env_value(&yaml, var);
            if var == "STUDY" {
                assert_eq!(value, mount, "STUDY is the volume's mount point");
            } else if !user_set.contains(&var) {
                pod.env(var, value);
            }
        }
        pod.env("JOB_COMPLETION_INDEX", index.to_string())
            .args(["-c", &command]);
        run_ok(&mut pod, &format!("pod {index}"));
    }
    let merge = doc_code("bwsim sweep merge /study/shard-*");
    assert_eq!(
        merge,
        "bwsim sweep merge /study/shard-* --out /study/merged"
    );
    assert!(
        yaml.contains(&merge),
        "the manifest's comment says the same"
    );
    let in_pod = merge.replace(&mount, &volume.display().to_string());
    run_ok(
        user_shell("sh", &volume, &[]).args(["-c", &in_pod]),
        "the documented merge",
    );
    assert_same_sweep(&whole, &volume.join("merged"));
}
