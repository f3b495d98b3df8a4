//! Scenario loading as a specification: broken scenarios give errors (never panics) that
//! name the file, the key and the problem; valid ones build the expected model.

use std::path::{Path, PathBuf};

use bwsim::model::{ArrivalKind, Duration, HoldResource, RateTarget};
use bwsim::scenario::{ErrorKind, ScenarioError, load, load_str};

/// A small valid scenario; the error table edits it.
const BASE: &str = r#"
[hardware]
cpu_cores = 8
host_ram_gib = 64

[hardware.dram]
capacity_gbps = 100

[hardware.gpu]
vram_gib = 24
pcie_h2d_gbps = 25
pcie_d2h_gbps = 20

[hardware.locks]
gpu_mutex = { capacity = 1, per_gpu = true }

[[workload.stages]]
name = "synth"
duration_s = 1.0
cores = 4

[[workload.stages]]
name = "spmv"
after = ["synth"]
duration_s = 0.5
cores = 2

[arrivals]
kind = "closed"
concurrency = 2
jobs = 10
"#;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Writes `files` into a fresh directory and loads the first one.
fn load_files(
    files: &[(&str, &str)],
    sets: &[&str],
) -> (
    tempfile::TempDir,
    Result<bwsim::scenario::Loaded, ScenarioError>,
) {
    let d = dir();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let r = load(&d.path().join(files[0].0), &sets);
    (d, r)
}

fn err_of(text: &str, sets: &[&str]) -> ScenarioError {
    let (_d, r) = load_files(&[("s.toml", text)], sets);
    match r {
        Ok(_) => panic!("expected an error for:\n{text}\nwith sets {sets:?}"),
        Err(e) => e,
    }
}

struct Case {
    what: &'static str,
    text: String,
    sets: &'static [&'static str],
    kind: ErrorKind,
    key: &'static str,
    problem: &'static str,
}

fn replace(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE lacks {from:?}");
    BASE.replacen(from, to, 1)
}

#[test]
fn broken_scenarios_name_file_key_and_problem() {
    let cases = vec![
        Case {
            what: "unknown key",
            text: replace("cores = 4", "cores = 4\ncorez = 1"),
            sets: &[],
            kind: ErrorKind::UnknownKey,
            key: "workload.stages[0].corez",
            problem: "unknown key",
        },
        Case {
            what: "unknown top-level table",
            text: format!("{BASE}\n[hardwear]\nx = 1\n"),
            sets: &[],
            kind: ErrorKind::UnknownKey,
            key: "hardwear",
            problem: "allowed here",
        },
        Case {
            what: "wrong type",
            text: replace("cpu_cores = 8", "cpu_cores = \"eight\""),
            sets: &[],
            kind: ErrorKind::Type,
            key: "hardware.cpu_cores",
            problem: "wrong type",
        },
        Case {
            what: "negative duration",
            text: replace("duration_s = 0.5", "duration_s = -1"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].duration_s",
            problem: "-1 is negative; durations must be >= 0 seconds",
        },
        Case {
            what: "zero DRAM capacity",
            text: replace("capacity_gbps = 100", "capacity_gbps = 0"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "hardware.dram.capacity_gbps",
            problem: "must be > 0",
        },
        Case {
            what: "zero DRAM capacity from channels",
            text: replace("capacity_gbps = 100", "channels = 0\nmts = 4800"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "hardware.dram.channels",
            problem: "must be > 0",
        },
        Case {
            what: "more cores than exist",
            text: replace("cores = 4", "cores = 96"),
            sets: &[],
            kind: ErrorKind::Capacity,
            key: "workload.stages[0].cores",
            problem: "needs 96 cores, but the host has 8",
        },
        Case {
            what: "cycle in the DAG",
            text: replace("name = \"synth\"", "name = \"synth\"\nafter = [\"spmv\"]"),
            sets: &[],
            kind: ErrorKind::Cycle,
            key: "after",
            problem: "synth -> spmv -> synth",
        },
        Case {
            what: "after names a missing stage",
            text: replace("after = [\"synth\"]", "after = [\"sinth\"]"),
            sets: &[],
            kind: ErrorKind::Reference,
            key: "workload.stages[1].after[0]",
            problem: "no stage named \"sinth\"",
        },
        Case {
            what: "duplicate stage",
            text: replace("name = \"spmv\"", "name = \"synth\""),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].name",
            problem: "already used",
        },
        Case {
            what: "missing include file",
            text: format!("include = [\"calib.toml\"]\n{BASE}"),
            sets: &[],
            kind: ErrorKind::Include,
            key: "include",
            problem: "\"calib.toml\" not found",
        },
        Case {
            what: "bad --set key",
            text: BASE.to_string(),
            sets: &["arrivals.jobz=5"],
            kind: ErrorKind::UnknownKey,
            key: "--set arrivals.jobz",
            problem: "unknown key",
        },
        Case {
            what: "--set value fails validation like the file",
            text: BASE.to_string(),
            sets: &["arrivals.jobs=0"],
            kind: ErrorKind::Value,
            key: "--set arrivals.jobs",
            problem: "0 jobs",
        },
        Case {
            what: "--set without =",
            text: BASE.to_string(),
            sets: &["arrivals.jobs"],
            kind: ErrorKind::Set,
            key: "--set arrivals.jobs",
            problem: "KEY=VALUE",
        },
        Case {
            what: "unknown param referenced",
            text: replace("jobs = 10", "jobs = \"$njobs\""),
            sets: &[],
            kind: ErrorKind::Param,
            key: "arrivals.jobs",
            problem: "unknown parameter \"njobs\"",
        },
        Case {
            what: "unknown param via --set",
            text: format!("{BASE}\n[params]\nn = {{ default = 1, doc = \"x\" }}\n"),
            sets: &["params.m=3"],
            kind: ErrorKind::Param,
            key: "--set params.m",
            problem: "unknown parameter \"m\"; this scenario declares: n",
        },
        Case {
            what: "bad expression",
            text: format!(
                "{}\n[params]\nn = {{ default = 1 }}\n",
                replace("jobs = 10", "jobs = \"= $n * \"")
            ),
            sets: &[],
            kind: ErrorKind::Param,
            key: "arrivals.jobs",
            problem: "cannot evaluate expression",
        },
        Case {
            what: "warm-up swallows every job",
            text: replace("jobs = 10", "jobs = 10\nwarmup_jobs = 10"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "arrivals.warmup_jobs",
            problem: "must be < jobs",
        },
        Case {
            what: "warm-up share of 100% or more",
            text: BASE.to_string(),
            sets: &["arrivals.warmup_jobs=100%"],
            kind: ErrorKind::Value,
            key: "--set arrivals.warmup_jobs",
            problem: "\"10%\"",
        },
        Case {
            what: "unknown arrival kind",
            text: replace("kind = \"closed\"", "kind = \"open\""),
            sets: &[],
            kind: ErrorKind::Value,
            key: "arrivals.kind",
            problem: "\"closed\", \"poisson\" or \"trace\"",
        },
        Case {
            what: "hold more RAM than the host has",
            text: replace(
                "cores = 2",
                "cores = 2\nholds = [{ resource = \"host_ram\", gib = 100 }]",
            ),
            sets: &[],
            kind: ErrorKind::Capacity,
            key: "workload.stages[1].holds[0]",
            problem: "only",
        },
        Case {
            what: "hold until a stage that runs before",
            text: replace(
                "cores = 2",
                "cores = 2\nholds = [{ resource = \"gpu_mutex\", until = \"synth\" }]",
            ),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].holds[0].until",
            problem: "does not run after",
        },
        Case {
            what: "stage that can never start",
            text: replace(
                "cores = 4",
                "cores = 1\nholds = [{ resource = \"cores\", amount = 7, until = \"spmv\" }]",
            ),
            sets: &[],
            kind: ErrorKind::Capacity,
            key: "workload.stages[1]",
            problem: "\"spmv\" can never start",
        },
        Case {
            what: "every partition's RAM held until a per-job stage",
            text: format!(
                "{}\n[[workload.stages]]\nname = \"finalize\"\nafter = [\"spmv\"]\nper_partition = false\nduration_s = 0.1\n",
                replace("cores = 4", "cores = 4\nholds = [{ resource = \"host_ram\", gib = 14, until = \"finalize\" }]")
                    .replace("[[workload.stages]]\nname = \"synth\"", "[workload]\npartitions = 10\n\n[[workload.stages]]\nname = \"synth\"")
            ),
            sets: &[],
            kind: ErrorKind::Capacity,
            key: "workload.stages[2]",
            problem: "\"finalize\" can never start: together with what earlier stages of the same job still hold (released at or after its end) it needs 140 GiB of host RAM, but there are only 64 GiB",
        },
        Case {
            what: "per-job hold released by a per-partition stage",
            text: replace(
                "cores = 4",
                "cores = 4\nper_partition = false\nholds = [{ resource = \"host_ram\", gib = 1, until = \"spmv\" }]",
            ),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[0].holds[0].until",
            problem: "per-job hold",
        },
        Case {
            what: "pool larger than declared",
            text: format!(
                "{}\n[hardware.pools]\nmsm = 4\n",
                replace("cores = 2", "pool = { name = \"msm\", threads = 8 }")
            ),
            sets: &[],
            kind: ErrorKind::Capacity,
            key: "workload.stages[1].pool.threads",
            problem: "which has 4",
        },
        Case {
            what: "span from an unknown marker",
            text: format!(
                "{BASE}\n[[instrumentation.markers]]\nname = \"A\"\nat = \"synth:start\"\n[[instrumentation.spans]]\nname = \"S\"\nfrom = \"B\"\nto = \"A\"\n"
            ),
            sets: &[],
            kind: ErrorKind::Reference,
            key: "instrumentation.spans[0].from",
            problem: "no marker named \"B\"",
        },
        Case {
            what: "--set index out of range",
            text: BASE.to_string(),
            sets: &["workload.stages[7].cores=1"],
            kind: ErrorKind::Set,
            key: "--set workload.stages[7]",
            problem: "out of range",
        },
        Case {
            what: "unknown lock",
            text: replace(
                "cores = 2",
                "cores = 2\nholds = [{ resource = \"gpu_lock\" }]",
            ),
            sets: &[],
            kind: ErrorKind::Reference,
            key: "workload.stages[1].holds[0].resource",
            problem: "gpu_mutex",
        },
        Case {
            what: "latency fraction above 1",
            text: replace("cores = 2", "cores = 2\nlatency_bound_frac = 1.5"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].latency_bound_frac",
            problem: "0..=1",
        },
        Case {
            what: "compute and latency fractions above 1 together",
            text: replace(
                "cores = 2",
                "cores = 2\nlatency_bound_frac = 0.6\ncompute_bound_frac = 0.6",
            ),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].compute_bound_frac",
            problem: "sums to at most 1",
        },
        Case {
            what: "host thread on an unknown pool",
            text: replace(
                "cores = 2",
                "cores = 2\nhost_thread = { pool = \"cpu\", frac = 0.5 }",
            ),
            sets: &[],
            kind: ErrorKind::Reference,
            key: "workload.stages[1].host_thread.pool",
            problem: "no pool named",
        },
        Case {
            what: "unknown pool sharing",
            text: format!("{BASE}\n[hardware.cpu]\npool_sharing = \"fair\"\n"),
            sets: &[],
            kind: ErrorKind::Value,
            key: "hardware.cpu.pool_sharing",
            problem: "per-thread",
        },
        Case {
            what: "no duration",
            text: replace("duration_s = 0.5\n", ""),
            sets: &[],
            kind: ErrorKind::MissingKey,
            key: "workload.stages[1].duration_s",
            problem: "no duration",
        },
        Case {
            what: "distribution with a wrong field",
            text: replace(
                "duration_s = 0.5",
                "duration = { dist = \"exponential\", mean_s = 1, std_s = 2 }",
            ),
            sets: &[],
            kind: ErrorKind::UnknownKey,
            key: "workload.stages[1].duration.std_s",
            problem: "takes mean_s",
        },
        Case {
            what: "bad unit",
            text: replace("duration_s = 0.5", "duration_s = \"5 GiB\""),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].duration_s",
            problem: "unknown unit",
        },
        Case {
            what: "marker on an unknown stage",
            text: format!(
                "{BASE}\n[[instrumentation.markers]]\nname = \"A\"\nat = \"gpu:start\"\n"
            ),
            sets: &[],
            kind: ErrorKind::Reference,
            key: "instrumentation.markers[0].at",
            problem: "no stage named \"gpu\"",
        },
        Case {
            what: "gpu kernel without a GPU",
            text: replace("cores = 2", "cores = 2\ngpu_kernel = true")
                .replace("[hardware.gpu]", "[hardware.gpu]\ncount = 0")
                .replace("gpu_mutex = { capacity = 1, per_gpu = true }", ""),
            sets: &[],
            kind: ErrorKind::Value,
            key: "workload.stages[1].gpu_kernel",
            problem: "needs a GPU",
        },
        Case {
            what: "TOML syntax error",
            text: replace("cpu_cores = 8", "cpu_cores = = 8"),
            sets: &[],
            kind: ErrorKind::Syntax,
            key: "",
            problem: "TOML syntax error",
        },
    ];
    for c in cases {
        let e = err_of(&c.text, c.sets);
        let msg = e.to_string();
        println!("{:<45} {msg}", c.what);
        assert_eq!(e.kind, c.kind, "{}: kind of {msg}", c.what);
        assert!(msg.contains("s.toml"), "{}: no file in {msg}", c.what);
        assert!(
            msg.contains(c.key),
            "{}: no key {:?} in {msg}",
            c.what,
            c.key
        );
        assert!(
            msg.contains(c.problem),
            "{}: no {:?} in {msg}",
            c.what,
            c.problem
        );
    }
}

#[test]
fn errors_in_the_file_carry_a_line_number() {
    let e = err_of(&replace("duration_s = 0.5", "duration_s = -1"), &[]);
    let (line, _) = e.line_col.expect("line known");
    let want = replace("duration_s = 0.5", "duration_s = -1")
        .lines()
        .position(|l| l == "duration_s = -1")
        .unwrap()
        + 1;
    assert_eq!(line as usize, want);
    assert!(e.to_string().contains(&format!("s.toml:{want}:")), "{e}");
}

#[test]
fn malformed_trace_names_csv_line_and_problem() {
    let text = replace(
        "kind = \"closed\"\nconcurrency = 2\njobs = 10",
        "kind = \"trace\"\ntrace = \"arrivals.csv\"",
    );
    let (_d, r) = load_files(
        &[
            ("s.toml", &text),
            ("arrivals.csv", "job,time_s\n1,0.0\n2,0.5\n3,zero\n"),
        ],
        &[],
    );
    let e = r.unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.kind, ErrorKind::Trace);
    assert!(msg.contains("s.toml"), "{msg}");
    assert!(msg.contains("arrivals.trace"), "{msg}");
    assert!(
        msg.contains("arrivals.csv:4: time_s \"zero\" is not a number"),
        "{msg}"
    );
}

#[test]
fn trace_arrivals_default_jobs_to_the_row_count() {
    let text = replace(
        "kind = \"closed\"\nconcurrency = 2\njobs = 10",
        "kind = \"trace\"\ntrace = \"arrivals.csv\"",
    );
    let (_d, r) = load_files(
        &[("s.toml", &text), ("arrivals.csv", "time_s\n0\n0.5\n2\n")],
        &[],
    );
    let m = r.unwrap().model;
    assert_eq!(m.arrivals.jobs, 3);
    assert_eq!(
        m.arrivals.kind,
        ArrivalKind::Trace {
            times_s: vec![0.0, 0.5, 2.0]
        }
    );
}

#[test]
fn include_cycle_is_an_error() {
    let (_d, r) = load_files(
        &[
            ("a.toml", "include = [\"b.toml\"]\n"),
            ("b.toml", "include = [\"a.toml\"]\n"),
        ],
        &[],
    );
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cycle);
    assert!(e.to_string().contains("include cycle"), "{e}");
}

#[test]
fn includes_merge_in_order_with_the_including_file_last() {
    let calib =
        "[hardware]\ncpu_cores = 64\nhost_ram_gib = 512\n[hardware.dram]\ncapacity_gbps = 300\n";
    let later = "[hardware.dram]\ncapacity_gbps = 250\n";
    let main = replace(
        "[hardware]\ncpu_cores = 8\nhost_ram_gib = 64\n\n[hardware.dram]\ncapacity_gbps = 100\n",
        "[hardware]\nhost_ram_gib = 128\n",
    );
    let main = format!("include = [\"calib.toml\", \"later.toml\"]\n{main}");
    let (_d, r) = load_files(
        &[
            ("s.toml", &main),
            ("calib.toml", calib),
            ("later.toml", later),
        ],
        &[],
    );
    let l = r.unwrap();
    let h = &l.model.hardware;
    assert_eq!(h.cpu_cores, 64, "from calib.toml");
    assert_eq!(
        h.dram.capacity_gbps, 250.0,
        "later include overrides earlier"
    );
    assert_eq!(
        h.host_ram_bytes,
        128 << 30,
        "the including file overrides its includes"
    );
    assert_eq!(l.summary.files.len(), 3);
}

#[test]
fn errors_in_an_included_file_name_that_file() {
    let calib = "[hardware.dram]\ncapacity_gbps = -5\n";
    let main = format!(
        "include = [\"calib.toml\"]\n{}",
        replace("capacity_gbps = 100\n", "")
    );
    let (_d, r) = load_files(&[("s.toml", &main), ("calib.toml", calib)], &[]);
    let msg = r.unwrap_err().to_string();
    assert!(
        msg.contains("calib.toml:2:1: hardware.dram.capacity_gbps: -5 is negative"),
        "{msg}"
    );
}

#[test]
fn set_changes_values_by_index_and_by_stage_name() {
    let (_d, r) = load_files(
        &[("s.toml", BASE)],
        &[
            "arrivals.jobs=1000",
            "workload.stages.spmv.duration_s=\"250 ms\"",
            "workload.stages[0].cores=6",
            "arrivals.kind=poisson",
            "arrivals.rate_per_s=2.5",
        ],
    );
    let l = r.unwrap();
    let m = &l.model;
    assert_eq!(m.arrivals.jobs, 1000);
    assert_eq!(m.workload.stages[1].duration, Duration::Fixed(0.25));
    assert_eq!(m.workload.stages[0].holds[0].amount, 6);
    assert_eq!(m.arrivals.kind, ArrivalKind::Poisson { rate_per_s: 2.5 });
    assert!(
        l.summary.warnings.iter().any(|w| w.contains("concurrency")),
        "{:?}",
        l.summary.warnings
    );
}

#[test]
fn params_substitute_whole_values_and_expressions() {
    let text = format!(
        "{}\n[params]\nsynth_cores = {{ default = 4, doc = \"cores per synthesis\" }}\nch = {{ default = 8, doc = \"DRAM channels\" }}\nscale = {{ default = \"= $ch / 4\", doc = \"derived\" }}\n",
        replace("cores = 4", "cores = \"$synth_cores\"")
            .replace(
                "capacity_gbps = 100",
                "capacity_gbps = \"= $ch * 4800 * 8 / 1000 * 0.75\""
            )
            .replace("duration_s = 0.5", "duration_s = \"= 0.25 * $scale\"")
    );
    let l = load_str(&text, Path::new("p.toml"), &[]).unwrap();
    assert_eq!(l.model.workload.stages[0].holds[0].amount, 4);
    assert!((l.model.hardware.dram.capacity_gbps - 230.4).abs() < 1e-9);
    assert_eq!(l.model.workload.stages[1].duration, Duration::Fixed(0.5));

    let l = load_str(
        &text,
        Path::new("p.toml"),
        &["params.synth_cores=6".into(), "params.ch=4".into()],
    )
    .unwrap();
    assert_eq!(l.model.workload.stages[0].holds[0].amount, 6);
    assert!((l.model.hardware.dram.capacity_gbps - 115.2).abs() < 1e-9);
    assert_eq!(l.model.workload.stages[1].duration, Duration::Fixed(0.25));
    let p = l.params.iter().find(|p| p.name == "synth_cores").unwrap();
    assert_eq!(p.default, toml::Value::Integer(4));
    assert_eq!(p.value, toml::Value::Integer(6));
    assert_eq!(p.doc, "cores per synthesis");
    let s = l.summary();
    assert!(
        s.contains("synth_cores = 6 (default 4)  cores per synthesis"),
        "{s}"
    );

    // A --set of a param with the wrong type is refused.
    let e = load_str(&text, Path::new("p.toml"), &["params.ch=true".into()]).unwrap_err();
    assert!(e.to_string().contains("--set params.ch"), "{e}");
}

#[test]
fn stages_are_sorted_topologically() {
    let text = replace(
        "[[workload.stages]]\nname = \"synth\"",
        "[[workload.stages]]\nname = \"last\"\nafter = [\"spmv\"]\nduration_s = 1\n\n[[workload.stages]]\nname = \"synth\"",
    );
    let m = load_str(&text, Path::new("t.toml"), &[]).unwrap().model;
    let names: Vec<&str> = m.workload.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["synth", "spmv", "last"]);
    assert_eq!(m.workload.stages[1].after, vec![0]);
    assert_eq!(m.workload.stages[2].after, vec![1]);
}

fn transfer_stage(spec: &str) -> bwsim::model::Stage {
    let text =
        replace("cores = 2", &format!("transfer = {spec}")).replace("duration_s = 0.5\n", "");
    let m = load_str(&text, Path::new("t.toml"), &[]).unwrap().model;
    m.workload.stages[1].clone()
}

fn demand(s: &bwsim::model::Stage, t: RateTarget) -> f64 {
    s.demands
        .iter()
        .filter(|d| d.target == t)
        .map(|d| d.amount)
        .sum()
}

#[test]
fn pinned_transfer_derives_duration_and_demands() {
    // 5 GB at 25 GB/s pinned: 0.2 s; PCIe 25 GB/s; DRAM 25 x h2d factor 1.
    let s = transfer_stage("{ dir = \"h2d\", gb = 5, pinned = true }");
    assert_eq!(s.duration, Duration::Fixed(0.2));
    assert_eq!(demand(&s, RateTarget::PcieH2d), 25.0);
    assert_eq!(demand(&s, RateTarget::Dram), 25.0);
    assert!(s.holds.is_empty());
}

#[test]
fn pageable_transfer_crosses_dram_twice_and_holds_a_core() {
    // 2 GB d2h pageable at 20/4 = 5 GB/s: 0.4 s; DRAM 5 x (1 + 2) = 15 GB/s; one core.
    let s = transfer_stage("{ dir = \"d2h\", gb = 2, pinned = false }");
    assert_eq!(s.duration, Duration::Fixed(0.4));
    assert_eq!(demand(&s, RateTarget::PcieD2h), 5.0);
    assert_eq!(demand(&s, RateTarget::Dram), 15.0);
    assert_eq!(s.holds.len(), 1);
    assert_eq!(s.holds[0].resource, HoldResource::Cores);
    assert_eq!(s.holds[0].amount, 1);
}

/// [`transfer_stage`] on a link with pageable D2H staging `table`.
fn staged_transfer_stage(table: &str, spec: &str) -> bwsim::model::Stage {
    let text = replace("cores = 2", &format!("transfer = {spec}"))
        .replace("duration_s = 0.5\n", "")
        .replace(
            "pcie_d2h_gbps = 20\n",
            &format!("pcie_d2h_gbps = 20\n[hardware.gpu.pageable_staging.d2h]\n{table}\n"),
        );
    let l = load_str(&text, Path::new("t.toml"), &[]).unwrap();
    // `check` says the copies are staged.
    assert!(
        l.summary().contains("pageable d2h staged: setup"),
        "{}",
        l.summary()
    );
    l.model.workload.stages[1].clone()
}

#[test]
fn staged_pageable_transfer_takes_setup_plus_bytes_at_the_slower_half() {
    // Memcpy 8 GB/s behind the 20 GB/s link: 2 GB in 0.05 + 0.25 = 0.3 s, drawing its
    // bytes over the whole call: 2 / 0.3 GB/s of the link, x (1 + 2) of DRAM; one core.
    let s = staged_transfer_stage(
        "setup_s = \"50 ms\"\nmemcpy_gbps = 8",
        "{ dir = \"d2h\", gb = 2, pinned = false }",
    );
    assert_eq!(s.duration, Duration::Fixed(0.05 + 2.0 / 8.0));
    let rate = 2.0 / (0.05 + 2.0 / 8.0);
    assert_eq!(demand(&s, RateTarget::PcieD2h), rate);
    assert!((demand(&s, RateTarget::Dram) - 3.0 * rate).abs() < 1e-12);
    let st = s.staged_copy.unwrap();
    assert!((st.setup_frac - 0.05 / 0.3).abs() < 1e-12);
    assert!((st.memcpy_headroom - 1.0).abs() < 1e-9);
    assert_eq!(st.memcpy_pace, bwsim::model::MemcpyPace::LatencyBound);
    assert_eq!(s.holds.len(), 1);
    // A memcpy faster than the link: the DMA sets the pace (20 GB/s, headroom 2).
    let s = staged_transfer_stage(
        "memcpy_gbps = 40\nmemcpy_pace = \"posted\"",
        "{ dir = \"d2h\", gb = 2, pinned = false }",
    );
    assert_eq!(s.duration, Duration::Fixed(0.1));
    assert_eq!(s.staged_copy.unwrap().memcpy_headroom, 2.0);
    // Pinned copies and the other direction are not staged.
    let s = staged_transfer_stage(
        "memcpy_gbps = 8",
        "{ dir = \"h2d\", gb = 5, pinned = false }",
    );
    assert_eq!((s.staged_copy, s.duration), (None, Duration::Fixed(0.8)));
}

#[test]
fn bad_staging_tables_name_the_key_and_what_is_allowed() {
    let err = |table: &str| {
        let text = replace(
            "pcie_d2h_gbps = 20\n",
            &format!("pcie_d2h_gbps = 20\n[hardware.gpu.pageable_staging.h2d]\n{table}\n"),
        );
        err_of(&text, &[]).to_string()
    };
    let e = err("setup_s = 0.001");
    assert!(
        e.contains("hardware.gpu.pageable_staging.h2d.memcpy_gbps") && e.contains("missing"),
        "{e}"
    );
    let e = err("memcpy_gbps = 0");
    assert!(e.contains("memcpy_gbps") && e.contains("> 0"), "{e}");
    let e = err("memcpy_gbps = 8\nsetup_s = -1");
    assert!(e.contains("setup_s") && e.contains(">= 0"), "{e}");
    let e = err("memcpy_gbps = 8\nmemcpy_pace = \"fast\"");
    assert!(
        e.contains("memcpy_pace") && e.contains("latency-bound") && e.contains("posted"),
        "{e}"
    );
    let e = err("memcpy_gbps = 8\nlines = 3");
    assert!(e.contains("pageable_staging.h2d.lines"), "{e}");
}

#[test]
fn dram_bytes_become_a_rate_over_the_standalone_mean() {
    let text = replace("cores = 2", "cores = 2\ndram_gb = 10");
    let m = load_str(&text, Path::new("t.toml"), &[]).unwrap().model;
    assert_eq!(demand(&m.workload.stages[1], RateTarget::Dram), 20.0);
}

#[test]
fn mangled_scenarios_never_panic() {
    // Every prefix of the demo (cut mid-key, mid-string, mid-table) and a few byte
    // substitutions must give Ok or an Err, never a panic.
    let demo = std::fs::read_to_string(scenario_dir().join("demo.toml")).unwrap();
    let origin = scenario_dir().join("demo.toml");
    let cuts: Vec<usize> = (0..demo.len())
        .step_by(11)
        .filter(|&i| demo.is_char_boundary(i))
        .collect();
    for i in cuts {
        let _ = load_str(&demo[..i], &origin, &[]);
    }
    for (i, _) in demo.char_indices().step_by(17) {
        for rep in ["0", "-", "\"", "[", "$", "=", "x"] {
            let mut t = demo.clone();
            let end = i + demo[i..].chars().next().map_or(0, char::len_utf8);
            t.replace_range(i..end, rep);
            let _ = load_str(&t, &origin, &[]);
        }
    }
    for set in [
        "",
        "=",
        "a",
        ".=1",
        "[0]=1",
        "workload.stages[0][1]=2",
        "workload.stages.x.y=1",
        "seed=-1",
        "params=3",
        "hardware=1",
        "hardware.cpu_cores.x=1",
    ] {
        let _ = load_str(&demo, &origin, &[set.to_string()]);
    }
}

const MINIMAL: &str = r#"
[hardware]
cpu_cores = 16
[hardware.locks]
server = 16
[[workload.stages]]
name = "service"
duration = { dist = "exponential", mean_s = 1.0 }
holds = [{ resource = "server" }]
[arrivals]
kind = "poisson"
rate_per_s = 14.4
jobs = 1000
"#;

#[test]
fn dram_and_host_ram_are_optional_until_used() {
    let m = load_str(MINIMAL, Path::new("m.toml"), &[]).unwrap().model;
    assert_eq!(m.hardware.host_ram_bytes, bwsim::scenario::UNLIMITED_RAM);
    assert_eq!(
        m.hardware.dram.capacity_gbps,
        bwsim::scenario::UNLIMITED_DRAM
    );
    assert!(m.hardware.gpus.is_empty());
    assert_eq!(m.name, "m");
    assert_eq!(m.seed, 1);

    let e = load_str(
        MINIMAL,
        Path::new("m.toml"),
        &["workload.stages[0].dram_gbps=5".into()],
    )
    .unwrap_err();
    assert!(e.to_string().contains("--set workload.stages[0].dram_gbps: stage \"service\" uses DRAM, but the host's DRAM is not declared"), "{e}");
    let e = load_str(
        MINIMAL,
        Path::new("m.toml"),
        &["workload.stages[0].holds[0]={ resource = \"host_ram\", gib = 1 }".into()],
    )
    .unwrap_err();
    assert!(e.to_string().contains("hardware.host_ram_gib"), "{e}");
}

#[test]
fn calibration_files_with_provenance_and_params_can_be_included() {
    let calib = r#"
# written by bwsim calibrate
[hardware]
cpu_cores = 96
[hardware.dram]
capacity_gbps = 280.5
latency_curve = [[0.0, 110.0], [0.9, 260.0]]
[params]
msm_2p26_s = { default = 0.35, doc = "G1 MSM of 2^26 points, s (model)" }
[calibration]
summary = "96 cores, 8 x DDR5"
fitted = { capacity_gbps = 280.5, notes = ["=not an expression", "$not a param"] }
"#;
    let main = MINIMAL.replace(
        "duration = { dist = \"exponential\", mean_s = 1.0 }",
        "duration_s = \"$msm_2p26_s\"\ndram_gbps = 10",
    );
    let main = format!(
        "include = [\"calibration.toml\"]\n{}",
        main.replace("cpu_cores = 16\n", "")
    );
    let (_d, r) = load_files(
        &[("s.toml", &main), ("calibration.toml", calib)],
        &["params.msm_2p26_s=0.5"],
    );
    let l = r.unwrap();
    assert_eq!(l.model.hardware.cpu_cores, 96);
    assert_eq!(l.model.hardware.dram.capacity_gbps, 280.5);
    assert_eq!(l.model.workload.stages[0].duration, Duration::Fixed(0.5));
    assert!(
        l.summary().contains("msm_2p26_s = 0.5 (default 0.35)"),
        "{}",
        l.summary()
    );
}

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

#[test]
fn bundled_scenarios_load() {
    let mut files = vec![scenario_dir().join("demo.toml")];
    for e in std::fs::read_dir(scenario_dir().join("oracles")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            files.push(p);
        }
    }
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let l = load(&f, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!l.summary().is_empty());
        // The model's contract: `after` points to earlier stages, holds end at the holder or later.
        for (i, s) in l.model.workload.stages.iter().enumerate() {
            assert!(
                s.after.iter().all(|&a| a < i),
                "{}: {}",
                f.display(),
                s.name
            );
            assert!(
                s.holds.iter().all(|h| h.until >= i),
                "{}: {}",
                f.display(),
                s.name
            );
        }
        // --set arrivals.jobs works on every scenario
        let l = load(&f, &["arrivals.jobs=1000".into()]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.model.arrivals.jobs, 1000);
        assert!(l.model.arrivals.warmup_jobs < 1000);
    }
}

#[test]
fn demo_builds_the_documented_model() {
    let l = load(&scenario_dir().join("demo.toml"), &[]).unwrap();
    let m = &l.model;
    assert_eq!(m.workload.partitions, 2);
    assert_eq!(m.arrivals.kind, ArrivalKind::Closed { concurrency: 4 });
    let upload = &m.workload.stages[m.stage_id("upload").unwrap()];
    assert_eq!(upload.duration, Duration::Fixed(0.01));
    let gpu = &m.workload.stages[m.stage_id("gpu").unwrap()];
    assert!(gpu.gpu_kernel);
    assert_eq!(m.instrumentation.spans.len(), 1);
    assert!((m.hardware.dram.capacity_gbps - 107.52).abs() < 1e-9);
    assert_eq!(m.arrivals.warmup_jobs, 20);
}

/// A RAM shortfall names the knob the user turns (`params.host_ram_gib`), not only the
/// hardware key it feeds.
#[test]
fn a_ram_shortfall_names_the_knob_behind_the_hardware_key() {
    let err = bwsim::scenario::load(
        std::path::Path::new("scenarios/c2-32g-cuzk.toml"),
        &["params.host_ram_gib=80".to_string()],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hardware.host_ram_gib = the expression")
            && err.contains("change params.host_ram_gib"),
        "{err}"
    );
}
