//! Issue 12's output defects, one regression test each, through the binary: outputs that
//! are not regular files are refused (never replaced, never written through), sweep
//! folders are whole, unique and resumable, locations are checked before any work, a
//! closed pipe or full disk never panics, and stalled sweep points are not successes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bwsim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bwsim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/demo.toml")
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    bwsim().args(args).output().expect("bwsim runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2, a message naming `path`, nothing on stdout (refused before any work).
fn assert_refused(o: &Output, path: &Path, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(&path.display().to_string()), "{what}: {err}");
    assert!(o.stdout.is_empty(), "{what}: stdout not empty");
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
#[test]
fn defect_1_fifo_symlink_or_device_output_is_refused() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("trace.fifo");
    mkfifo(&fifo);
    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--trace".as_ref(),
        fifo.as_os_str(),
    ]);
    assert_refused(&o, &fifo, "FIFO");
    // What it is, what was wanted, and what to give instead.
    assert!(
        stderr(&o).contains("is a FIFO, not a regular file; give a new path, or a path that is already a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(
        fifo.metadata().unwrap().file_type().is_fifo(),
        "FIFO replaced"
    );

    let real = d.path().join("real.log");
    std::fs::write(&real, "keep me").unwrap();
    let link = d.path().join("link.log");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--timeline-log".as_ref(),
        link.as_os_str(),
    ]);
    assert_refused(&o, &link, "symlink");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep me");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());

    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--trace".as_ref(),
        "/dev/null".as_ref(),
    ]);
    assert_refused(&o, Path::new("/dev/null"), "device");
    assert!(
        Path::new("/dev/null")
            .metadata()
            .unwrap()
            .file_type()
            .is_char_device()
    );

    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--trace".as_ref(),
        d.path().as_os_str(),
    ]);
    assert_refused(&o, d.path(), "folder where a file is expected");

    let out_link = d.path().join("out-link");
    std::os::unix::fs::symlink(d.path(), &out_link).unwrap();
    let o = run(&[
        "sweep".as_ref(),
        demo().as_os_str(),
        "--param".as_ref(),
        "params.concurrency=1,2".as_ref(),
        "--out".as_ref(),
        out_link.as_os_str(),
    ]);
    assert_refused(&o, &out_link, "symlinked --out");
}

fn sweep_args<'a>(extra: &'a [&'a std::ffi::OsStr]) -> Vec<&'a std::ffi::OsStr> {
    let mut v: Vec<&std::ffi::OsStr> = vec![
        "sweep".as_ref(),
        "scenarios/demo.toml".as_ref(),
        "--param".as_ref(),
        "params.concurrency=1..6".as_ref(),
        "--set".as_ref(),
        "arrivals.jobs=30".as_ref(),
        "--replications".as_ref(),
        "2".as_ref(),
        "--jobs".as_ref(),
        "1".as_ref(),
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn defect_5_sweep_folders_are_whole_unique_and_resumable() {
    let d = tempfile::tempdir().unwrap();
    let whole = d.path().join("whole");
    let o = run(&sweep_args(&["--out".as_ref(), whole.as_os_str()]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let manifest = std::fs::read_to_string(whole.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"complete\"") && manifest.contains("sweep.csv"));

    // A second sweep to the same --out is refused and leaves the first one alone.
    let before = std::fs::read(whole.join("sweep.csv")).unwrap();
    let o = run(&sweep_args(&["--out".as_ref(), whole.as_os_str()]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    assert_eq!(std::fs::read(whole.join("sweep.csv")).unwrap(), before);

    // Interrupted after 2 points: no output folder, a clearly named staging folder.
    let resumed = d.path().join("resumed");
    let o = run(&sweep_args(&[
        "--out".as_ref(),
        resumed.as_os_str(),
        "--stop-after".as_ref(),
        "2".as_ref(),
    ]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
    assert!(!resumed.exists());
    let staging = d.path().join(".resumed.partial");
    assert!(staging.join("points.jsonl").exists());
    let o = run(&["sweep".as_ref(), "--resume".as_ref(), resumed.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!staging.exists());
    assert_eq!(std::fs::read(resumed.join("sweep.csv")).unwrap(), before);

    // Two default folders in the same second are different folders.
    let cwd = tempfile::tempdir().unwrap();
    let scenario = demo();
    let default_sweep = || {
        let o = bwsim()
            .current_dir(cwd.path())
            .args([
                "sweep".as_ref(),
                scenario.as_os_str(),
                "--param".as_ref(),
                "params.concurrency=1,2".as_ref(),
                "--set".as_ref(),
                "arrivals.jobs=10".as_ref(),
                "--replications".as_ref(),
                "1".as_ref(),
            ] as [&std::ffi::OsStr; 8])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    default_sweep();
    default_sweep();
    let runs: Vec<_> = std::fs::read_dir(cwd.path().join("output/demo"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for r in runs {
        assert!(r.join("sweep.csv").exists() && r.join("manifest.json").exists());
    }
}

#[test]
fn defect_6_output_locations_are_checked_before_simulating() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("trace.json");
    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--trace".as_ref(),
        under_file.as_os_str(),
    ]);
    assert_refused(&o, &file, "run --trace under a file");
    let o = run(&[
        "run".as_ref(),
        demo().as_os_str(),
        "--plot".as_ref(),
        file.as_os_str(),
    ]);
    assert_refused(&o, &file, "run --plot at a file");
    let o = run(&sweep_args(&["--out".as_ref(), file.as_os_str()]));
    assert_refused(&o, &file, "sweep --out at a file");
    let o = run(&[
        "calibrate".as_ref(),
        "--mode".as_ref(),
        "tiny".as_ref(),
        "--no-gpu".as_ref(),
        "--out".as_ref(),
        under_file.as_os_str(),
    ]);
    assert_refused(&o, &file, "calibrate --out under a file");
    let o = run(&[
        "validate".as_ref(),
        "--calibration".as_ref(),
        "/nonexistent.toml".as_ref(),
        "--out-dir".as_ref(),
        file.as_os_str(),
    ]);
    assert_refused(&o, &file, "validate --out-dir at a file");
}

#[cfg(unix)]
#[test]
fn defect_8_closed_pipe_or_full_disk_never_panics() {
    // A reader that goes away at once: bwsim ends quietly (SIGPIPE), never exit 101.
    let mut child = bwsim()
        .args(["run", "scenarios/demo.toml", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_ne!(o.status.code(), Some(101), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));

    // A full disk: a message and exit 1, in every command that prints.
    let d = tempfile::tempdir().unwrap();
    let sweep_out = d.path().join("s");
    let csv = d.path().join("s/sweep.csv");
    let out_flag: [&std::ffi::OsStr; 2] = ["--out".as_ref(), sweep_out.as_os_str()];
    let cases: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec!["run".as_ref(), "scenarios/demo.toml".as_ref()],
        vec!["check".as_ref(), "scenarios/demo.toml".as_ref()],
        sweep_args(&out_flag),
        vec!["plot".as_ref(), csv.as_os_str()],
    ];
    for args in cases {
        let o = bwsim()
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("<stdout>") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

const DEADLOCK: &str = r#"seed = 3
[hardware]
cpu_cores = 8
host_ram_gib = 100

[workload]
partitions = 2

[[workload.stages]]
name = "prep"
duration = { dist = "exponential", mean_s = 1.0 }
cores = 1

[[workload.stages]]
name = "synth"
after = ["prep"]
duration_s = 1.0
cores = 1
holds = [{ resource = "host_ram", gib = 40, until = "finalize" }]

[[workload.stages]]
name = "finalize"
after = ["synth"]
per_partition = false
duration_s = 0.1

[arrivals]
kind = "closed"
concurrency = 1
jobs = 20
"#;

#[test]
fn defect_4_stalled_sweep_points_are_flagged_and_exit_1() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("deadlock.toml");
    std::fs::write(&file, DEADLOCK).unwrap();
    let out = d.path().join("sweep");
    let o = run(&[
        "sweep".as_ref(),
        file.as_os_str(),
        "--param".as_ref(),
        "arrivals.concurrency=1,2".as_ref(),
        "--replications".as_ref(),
        "2".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("warning: sweep point 2") && err.contains("stalled"),
        "{err}"
    );
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "stalled").unwrap();
    let stalled: Vec<String> = lines
        .map(|l| l.split(',').nth(col).unwrap().to_string())
        .collect();
    assert_eq!(stalled, ["0", "2"]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["points"][1]["stalled"], 2);
}
