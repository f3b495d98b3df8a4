//! A sweep killed again and again, at random points (while computing, in the middle of a
//! journal line, while a chart is half-written, or from outside at a random moment), and
//! resumed after each kill, ends byte-identical to the same sweep run without a stop:
//! every file the same bytes (sweep.json but for its timing). No assertion on time.
//!
//! Kills inside bwsim use its test hook (`BWSIM_TEST_KILL=SITE:N`: SIGKILL itself the
//! N-th time it reaches SITE), so each lands exactly where it was meant to; the outside
//! kill is a plain SIGKILL after a random delay.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use serde_json::Value;

const SCENARIO: &str = "scenarios/demo.toml";

fn sweep_cmd(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bwsim"));
    c.current_dir(cwd)
        .arg("sweep")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(SCENARIO))
        .args(["--param", "params.concurrency=1..4"])
        .args(["--param", "params.dram_channels=2,4"])
        .args([
            "--set",
            "arrivals.jobs=30",
            "--replications",
            "2",
            "--jobs",
            "2",
        ])
        .args(["--out", "sweep"])
        .env_remove("BWSIM_TEST_KILL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn resume_cmd(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bwsim"));
    c.current_dir(cwd)
        .args(["sweep", "--resume", "sweep"])
        .env_remove("BWSIM_TEST_KILL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Every file of a finished sweep folder by name; sweep.json without its timing.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let mut bytes = std::fs::read(e.path()).unwrap();
        if name == "sweep.json" {
            let mut v: Value = serde_json::from_slice(&bytes).unwrap();
            v.as_object_mut().unwrap().remove("timing");
            bytes = v.to_string().into_bytes();
        }
        out.insert(name, bytes);
    }
    out
}

/// What an attempt was, for the failure message.
#[derive(Debug)]
enum Kill {
    At(&'static str, usize),
    Outside(Duration),
    None,
}

#[test]
fn a_sweep_killed_at_random_points_and_resumed_ends_byte_identical() {
    let whole = tempfile::tempdir().unwrap();
    let o = sweep_cmd(whole.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected = contents(&whole.path().join("sweep"));

    for seed in [1u64, 2, 3] {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let cwd = tempfile::tempdir().unwrap();
        let target = cwd.path().join("sweep");
        let mut history: Vec<Kill> = Vec::new();
        let mut started = false;
        let mut done = false;
        // Kills while points are computed (after a point is saved, or halfway through
        // its journal line), then, in random order, while the outputs are written (a
        // resume writes 11 files: sweep.csv, sweep.json, 8 charts, the manifest) and
        // from outside; then attempts that run to the end.
        let mut plan: Vec<Kill> = (0..3)
            .map(|_| match rng.gen_range(0..2) {
                0 => Kill::At("point", rng.gen_range(1..=3)),
                _ => Kill::At("journal", rng.gen_range(1..=3)),
            })
            .collect();
        let mut late = vec![
            Kill::At("write", rng.gen_range(1..=11)),
            Kill::At("write", rng.gen_range(1..=11)),
            Kill::Outside(Duration::from_millis(rng.gen_range(20..400))),
        ];
        for i in (1..late.len()).rev() {
            late.swap(i, rng.gen_range(0..=i));
        }
        plan.extend(late);
        plan.reverse();
        for _ in 0..12 {
            let kill = plan.pop().unwrap_or(Kill::None);
            let mut cmd = if started {
                resume_cmd(cwd.path())
            } else {
                sweep_cmd(cwd.path())
            };
            if let Kill::At(site, n) = kill {
                cmd.env("BWSIM_TEST_KILL", format!("{site}:{n}"));
            }
            let mut child = cmd.spawn().unwrap();
            if let Kill::Outside(after) = kill {
                std::thread::sleep(after);
                let _ = child.kill();
            }
            let o = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(!err.contains("panicked"), "{history:?} {kill:?}: {err}");
            history.push(kill);
            // A kill before the staging folder existed leaves nothing to resume.
            started |= bwsim::output::staging_path(&target).exists() || target.exists();
            if o.status.success() || err.contains("finished output folder") {
                done = true;
                break;
            }
            // Killed (or refused): the folder is whole or absent, never half there.
            assert!(
                o.status.code().is_none() || target.join("manifest.json").is_file(),
                "seed {seed}, attempts {history:?}: exit {:?}: {err}",
                o.status.code()
            );
            if target.exists() {
                // A kill that landed after the rename into place.
                done = true;
                break;
            }
        }
        assert!(done, "seed {seed}: never finished: {history:?}");
        // Every attempt but the last was stopped: at least two interruptions.
        assert!(
            history.len() >= 4,
            "seed {seed}: too few kills landed: {history:?}"
        );
        eprintln!("seed {seed}: {history:?}");
        assert!(!bwsim::output::staging_path(&target).exists());
        let got = contents(&target);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "seed {seed}, attempts {history:?}"
        );
        for (name, bytes) in &expected {
            assert!(
                got[name] == *bytes,
                "seed {seed}, attempts {history:?}: {name} differs from the uninterrupted sweep's"
            );
        }
    }
}
