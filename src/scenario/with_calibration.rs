//! A scenario on the one host a calibration file describes (`--calibration FILE`).
//!
//! The file is the host: every key of [`HOST_KEYS`] comes from it, or, where it lacks
//! one, takes the typical value the scenario layer gives an absent key (a key with none,
//! such as the DRAM capacity, is an error naming the file and the key). Never from a file
//! the scenario includes: the scenario's own host keys and its includes' are set aside
//! first. The scenario's work stays the scenario's: its workload, arrivals, locks, pools,
//! host RAM, `[params]` knobs, and host keys calibrate never writes (a GPU's
//! `kernel_speed`, a write-fraction axis).
//!
//! The calibration's measured `[params]` ([`is_measured_param`]) follow the same rule:
//! the file's value where it has one. Where it has none, a value the scenario file states
//! itself is kept and named in the notes; one the scenario took from an included file is
//! dropped, and a scenario that uses it is refused, naming the key and both files (give
//! it with `--set params.NAME=VALUE`, which is then kept and named too).
//!
//! [`CalibrationUse`] lists what the run took for each key the file lacks; `replay` and
//! `validate` print it and record it in replay.json / validate.json.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use super::error::{ErrorKind, Loc, ScenarioError, join_key};
use super::host_keys::{HOST_KEYS, SCENARIO_HARDWARE_KEYS, WhenAbsent, is_measured_param};
use super::include::{self, Document, remove_prefix};
use super::rules::Rules;
use super::{Limits, Loaded};

/// What `--calibration` gave a scenario: the file, and each key it lacks with what the
/// run took instead.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationUse {
    /// The calibration file.
    pub file: PathBuf,
    /// Keys the file lacks (host keys and measured `[params]`), in [`HOST_KEYS`] order.
    pub missing: Vec<MissingKey>,
}

/// A key a calibration file lacks, and what the run took for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingKey {
    /// Dotted key (`hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent`,
    /// `params.msm_2p24_s`).
    pub key: String,
    /// What the run took instead (a typical value, the scenario's own, a `--set`).
    pub took: String,
}

impl CalibrationUse {
    /// The note a command prints, one key a line (None when the file lacks nothing).
    pub fn note(&self) -> Option<String> {
        if self.missing.is_empty() {
            return None;
        }
        let n = self.missing.len();
        let mut s = format!(
            "note: {} lacks {n} key{} of the host it describes; {} the value below, not one \
             from a file the scenario includes:",
            self.file.display(),
            if n == 1 { "" } else { "s" },
            if n == 1 { "it takes" } else { "they take" },
        );
        for m in &self.missing {
            s.push_str(&format!("\n  {} = {}", m.key, m.took));
        }
        Some(s)
    }
}

/// Loads the scenario file `scenario` on the host `calibration` describes, applying
/// `sets` after both (see the module's rules).
pub fn load_with_calibration(
    scenario: &Path,
    calibration: &Path,
    sets: &[String],
) -> Result<Loaded, ScenarioError> {
    let doc = include::load_file(scenario)?;
    with_calibration(doc, scenario, calibration, sets)
}

/// [`load_with_calibration`] for a scenario given as text, as if it were the file
/// `origin`.
pub fn load_str_with_calibration(
    text: &str,
    origin: &Path,
    calibration: &Path,
    sets: &[String],
) -> Result<Loaded, ScenarioError> {
    let doc = include::load_str(text, origin)?;
    with_calibration(doc, origin, calibration, sets)
}

fn with_calibration(
    mut doc: Document,
    root: &Path,
    calibration: &Path,
    sets: &[String],
) -> Result<Loaded, ScenarioError> {
    let used = take_host(&mut doc, root, calibration, sets)?;
    let mut loaded = super::finish(doc, root, sets, &Limits::default())?;
    loaded.summary.calibration = Some(used);
    Ok(loaded)
}

/// Sets the scenario's host keys aside and merges the calibration's over what is left.
fn take_host(
    doc: &mut Document,
    root: &Path,
    calibration: &Path,
    sets: &[String],
) -> Result<CalibrationUse, ScenarioError> {
    let cal = include::load_file(calibration)?;
    check_shape(&cal, calibration)?;
    let set_keys: Vec<&str> = (sets.iter())
        .filter_map(|s| s.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    let given = |path: &str| {
        set_keys.iter().any(|k| {
            k.strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    };
    let rules = (doc.table.get("rules").and_then(Value::as_str))
        .and_then(Rules::parse)
        .unwrap_or_default();
    let runs_on_gpu = uses_gpu(&doc.table);
    let mut missing = Vec::new();
    let no_table = Table::new();
    for k in HOST_KEYS {
        let parent = k.path.rsplit_once('.').map_or("hardware", |(p, _)| p);
        let holder = match table_at(&cal.table, parent) {
            Some(t) => t,
            None if parent == "hardware" => &no_table,
            // Its table is absent: the table's own entry says so.
            None => continue,
        };
        if lookup(&cal.table, k.path).is_some() || given(k.path) || !(k.read_when)(holder) {
            continue;
        }
        match k.when_absent {
            WhenAbsent::Required if k.path == "hardware.gpu" && !runs_on_gpu => {}
            WhenAbsent::Required => return Err(required(k.path, calibration, root, &cal)),
            WhenAbsent::Typical(took) => missing.push(MissingKey {
                key: k.path.into(),
                took: took(rules),
            }),
            WhenAbsent::OptIn => {}
        }
    }
    set_host_aside(doc);
    missing.extend(measured_params(doc, &cal, root, calibration, &given)?);
    include::merge(doc, cal);
    Ok(CalibrationUse {
        file: calibration.to_path_buf(),
        missing,
    })
}

/// Whether the scenario's work needs a GPU: a kernel stage, a transfer, VRAM held or a
/// per-GPU lock (a value given through a knob counts as set).
fn uses_gpu(doc: &Table) -> bool {
    let set = |v: Option<&Value>| v.is_some_and(|v| v.as_bool() != Some(false));
    let stages = lookup(doc, "workload.stages").and_then(Value::as_array);
    let stage_needs = |s: &Value| {
        set(s.get("gpu_kernel"))
            || s.get("transfer").is_some()
            || (s.get("holds").and_then(Value::as_array)).is_some_and(|h| {
                (h.iter()).any(|h| h.get("resource").and_then(Value::as_str) == Some("vram"))
            })
    };
    let locks = table_at(doc, "hardware.locks");
    stages.is_some_and(|s| s.iter().any(stage_needs))
        || locks.is_some_and(|l| l.values().any(|l| set(l.get("per_gpu"))))
}

/// Removes every key of [`HOST_KEYS`] from the scenario, then the tables of the list
/// that are left empty (an empty `[hardware.gpu]` would still be one GPU).
fn set_host_aside(doc: &mut Document) {
    for k in HOST_KEYS.iter().filter(|k| !k.table) {
        remove(&mut doc.table, k.path);
        remove_prefix(&mut doc.locs, k.path);
    }
    // Deepest first: the list puts every table before its keys.
    for k in HOST_KEYS.iter().rev().filter(|k| k.table) {
        if table_at(&doc.table, k.path).is_some_and(Table::is_empty) {
            remove(&mut doc.table, k.path);
            remove_prefix(&mut doc.locs, k.path);
        }
    }
}

/// The calibration's measured `[params]` the file lacks: kept from the scenario file
/// itself (or a `--set`) and noted, dropped when an included file gave them, and refused
/// when the scenario then uses one.
fn measured_params(
    doc: &mut Document,
    cal: &Document,
    root: &Path,
    calibration: &Path,
    given: &dyn Fn(&str) -> bool,
) -> Result<Vec<MissingKey>, ScenarioError> {
    let in_cal = |name: &str| table_at(&cal.table, "params").is_some_and(|p| p.contains_key(name));
    let declared: Vec<String> = table_at(&doc.table, "params")
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut notes = Vec::new();
    let mut dropped = Vec::new();
    for name in declared
        .iter()
        .filter(|n| is_measured_param(n) && !in_cal(n))
    {
        let key = join_key("params", name);
        let from = match doc.locs.get(&key) {
            Some(Loc::File { file, .. }) => Some(file.clone()),
            _ => None,
        };
        if given(&key) {
            notes.push(MissingKey {
                key,
                took: "the --set value".into(),
            });
        } else if from.as_deref() == Some(root) {
            let value = (lookup(&doc.table, &key))
                .map(|v| v.get("default").unwrap_or(v).to_string())
                .unwrap_or_default();
            notes.push(MissingKey {
                key,
                took: format!("{value}, the scenario's own ({})", root.display()),
            });
        } else {
            remove(&mut doc.table, &key);
            remove_prefix(&mut doc.locs, &key);
            dropped.push((name.clone(), from));
        }
    }
    let used: BTreeSet<String> = super::params::referenced(&doc.table);
    for (name, from) in dropped {
        if used.contains(&name) {
            let from = from.map_or("an included file".into(), |f| f.display().to_string());
            return Err(ScenarioError {
                kind: ErrorKind::MissingKey,
                file: calibration.to_path_buf(),
                line_col: None,
                set: None,
                key: join_key("params", &name),
                message: format!(
                    "missing; {} uses ${name}, which it took from {from}, another host's \
                     measurement (--calibration replaces it): use a calibration that \
                     measured it (bwsim calibrate writes it) or give it with --set \
                     params.{name}=VALUE",
                    root.display()
                ),
            });
        }
    }
    Ok(notes)
}

/// A key of [`HOST_KEYS`] with no typical value that the calibration lacks.
fn required(path: &str, calibration: &Path, root: &Path, cal: &Document) -> ScenarioError {
    let message = if path == "hardware.gpu" {
        format!(
            "missing; {} runs on a GPU (kernels, transfers, VRAM or per-GPU locks) and --calibration describes the \
             whole host: calibrate on the GPU host so that the file has [hardware.gpu] (or \
             give its keys with --set)",
            root.display()
        )
    } else {
        "missing; --calibration describes the whole host and this key has no typical \
         value (bwsim calibrate writes it)"
            .to_string()
    };
    // The table that should hold it, where the file has one.
    let parent = path.rsplit_once('.').map_or(path, |(p, _)| p);
    ScenarioError {
        kind: ErrorKind::MissingKey,
        file: calibration.to_path_buf(),
        line_col: line_col(cal, parent),
        set: None,
        key: path.into(),
        message,
    }
}

/// Refuses a calibration file that holds more than a host: an include, a scenario's
/// tables, its work inside `[hardware]`, or `[params]` that are not measurements.
fn check_shape(cal: &Document, file: &Path) -> Result<(), ScenarioError> {
    let refuse = |key: &str, kind: ErrorKind, message: String| ScenarioError {
        kind,
        file: file.to_path_buf(),
        line_col: line_col(cal, key),
        set: None,
        key: key.into(),
        message,
    };
    const HOLDS: &str = "a calibration file holds what bwsim calibrate writes: [hardware] \
                         (the host), [params] (its measured values) and [calibration]";
    if cal.files.len() > 1 {
        return Err(refuse(
            "include",
            ErrorKind::Include,
            format!("{HOLDS}, and includes no other file"),
        ));
    }
    for k in cal.table.keys() {
        if !["hardware", "params", "calibration"].contains(&k.as_str()) {
            return Err(refuse(
                k,
                ErrorKind::UnknownKey,
                format!("{HOLDS}; `{k}` belongs in the scenario"),
            ));
        }
    }
    for k in SCENARIO_HARDWARE_KEYS {
        if lookup(&cal.table, k).is_some() {
            return Err(refuse(
                k,
                ErrorKind::UnknownKey,
                format!("the scenario's work, not the host's; {HOLDS}"),
            ));
        }
    }
    let params = table_at(&cal.table, "params");
    if let Some(name) = params.and_then(|p| p.keys().find(|n| !is_measured_param(n))) {
        return Err(refuse(
            &join_key("params", name),
            ErrorKind::Param,
            "not a value bwsim calibrate measures (kernel times and fits, a thread's DRAM \
             rate, latencies, copies' latency shares); a scenario's own knobs stay in the \
             scenario"
                .into(),
        ));
    }
    Ok(())
}

fn line_col(doc: &Document, key: &str) -> Option<(u32, u32)> {
    match doc.locs.get(key) {
        Some(Loc::File { line, col, .. }) => Some((*line, *col)),
        _ => None,
    }
}

/// The value at dotted `path` (plain keys, no indices).
fn lookup<'a>(t: &'a Table, path: &str) -> Option<&'a Value> {
    let (head, rest) = match path.rsplit_once('.') {
        Some((head, last)) => (table_at(t, head)?, last),
        None => (t, path),
    };
    head.get(rest)
}

/// The table at dotted `path`, if it is one.
fn table_at<'a>(t: &'a Table, path: &str) -> Option<&'a Table> {
    path.split('.')
        .try_fold(t, |t, k| t.get(k).and_then(Value::as_table))
}

/// Removes the value at dotted `path`, if any.
fn remove(t: &mut Table, path: &str) {
    let (head, last) = match path.rsplit_once('.') {
        Some(p) => p,
        None => {
            t.remove(path);
            return;
        }
    };
    let mut at = t;
    for k in head.split('.') {
        match at.get_mut(k).and_then(Value::as_table_mut) {
            Some(next) => at = next,
            None => return,
        }
    }
    at.remove(last);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MemcpyPace;

    /// The host a scenario includes (as the bundled scenarios include the H200 VM's):
    /// an H2D memcpy exponent of 1.78, a D2H staging table, a GPU load curve, and the
    /// kernel fits the stages use.
    const INCLUDED: &str = r#"
[hardware]
cpu_cores = 16
[hardware.dram]
capacity_gbps = 170
latency_curve = [[0.0, 146.0], [1.0, 300.0]]
lines_in_flight_per_thread = 30
[hardware.gpu]
count = 1
vram_gib = 140
pcie_h2d_gbps = 55
pcie_d2h_gbps = 55
pinned_h2d_latency_frac = 0.2
[hardware.gpu.pageable_staging.h2d]
memcpy_gbps = 7.7
memcpy_pace = "latency-bound"
memcpy_latency_exponent = 1.78
[hardware.gpu.pageable_staging.d2h]
memcpy_gbps = 13.6
memcpy_pace = "posted"
[hardware.gpu.cpu_load]
busy_per_cpu = [0.0, 1.0]
kernels = { "msm:20" = [1.0, 1.5] }
[params]
msm_a_ns = { default = 200.0, doc = "fit" }
msm_b_s = { default = 0.01, doc = "fit" }
msm_2p24_s = { default = 0.16, doc = "measured" }
"#;

    /// Another boot's calibration: no exponent, no D2H staging, no load curve, no
    /// MSM at 2^24; a posted H2D memcpy would make the exponent unread.
    const CAL: &str = r#"
[hardware]
cpu_cores = 8
[hardware.dram]
capacity_gbps = 120
latency_curve = [[0.0, 134.0], [1.0, 280.0]]
[hardware.gpu]
count = 1
vram_gib = 80
pcie_h2d_gbps = 50
pcie_d2h_gbps = 51
[hardware.gpu.pageable_staging.h2d]
memcpy_gbps = 6.2
memcpy_pace = "latency-bound"
[params]
msm_a_ns = { default = 220.0, doc = "fit" }
msm_b_s = { default = 0.012, doc = "fit" }
[calibration]
summary = "another boot"
"#;

    /// The scenario: its work, a kernel speed of its own, an MSM sized from the fits.
    const SCENARIO: &str = r#"
include = ["included.toml"]
[hardware]
host_ram_gib = 64
[hardware.locks]
gpu_mutex = { capacity = 1, per_gpu = true }
[hardware.pools]
cpu = 16
[hardware.gpu]
kernel_speed = 2.0
[params]
workers = { default = 4, doc = "jobs in flight" }
[workload.measured_on]
gpu_kernel_speed = 1.0
[[workload.stages]]
name = "upload"
transfer = { dir = "h2d", gb = 0.4, pinned = false }
holds = [{ resource = "gpu_mutex", until = "msm" }]
[[workload.stages]]
name = "msm"
after = ["upload"]
duration_s = "= $msm_a_ns * 1e-9 * 1048576 / 20 + $msm_b_s"
gpu_kernel = true
[arrivals]
kind = "closed"
concurrency = "$workers"
jobs = 10
"#;

    struct Files {
        dir: tempfile::TempDir,
    }

    impl Files {
        fn new(scenario: &str, included: &str, cal: &str) -> Files {
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in [
                ("s.toml", scenario),
                ("included.toml", included),
                ("cal.toml", cal),
            ] {
                std::fs::write(dir.path().join(name), text).unwrap();
            }
            Files { dir }
        }
        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }
        fn load(&self, sets: &[&str]) -> Result<Loaded, ScenarioError> {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            load_with_calibration(&self.path("s.toml"), &self.path("cal.toml"), &sets)
        }
    }

    fn missing(l: &Loaded) -> Vec<(String, String)> {
        let c = l.summary.calibration.as_ref().unwrap();
        (c.missing.iter())
            .map(|m| (m.key.clone(), m.took.clone()))
            .collect()
    }

    fn stage_mean(l: &Loaded, name: &str) -> f64 {
        let s = l.model.workload.stages.iter().find(|s| s.name == name);
        s.unwrap().duration.mean_s()
    }

    #[test]
    fn a_key_the_calibration_lacks_takes_its_typical_value_never_the_included_files() {
        let f = Files::new(SCENARIO, INCLUDED, CAL);
        let l = f.load(&[]).unwrap();
        let hw = &l.model.hardware;
        // The calibration's own keys.
        assert_eq!(hw.cpu_cores, 8);
        assert_eq!(hw.dram.capacity_gbps, 120.0);
        let link = &hw.gpus[0].link;
        assert_eq!((link.h2d_gbps, link.d2h_gbps), (50.0, 51.0));
        let h2d = link.pageable_h2d_staging.as_ref().unwrap();
        assert_eq!(h2d.memcpy_gbps, 6.2);
        // What it lacks: the scenario layer's typical values, not the included file's.
        assert_eq!(h2d.latency_exponent, 1.0);
        assert_eq!(h2d.memcpy_pace, MemcpyPace::LatencyBound);
        assert!(link.pageable_d2h_staging.is_none());
        let typical = Rules::default().copy_latency_frac().pinned_h2d;
        assert_eq!(link.latency_frac.pinned_h2d, typical);
        let lines = hw.dram.sharing.lines_in_flight_per_thread;
        assert_eq!(lines, Rules::default().lines_in_flight_per_thread());
        // Each is named with what it took; keys of absent tables only by their table.
        let m = missing(&l);
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        for k in [
            "hardware.dram.latency_load",
            "hardware.dram.lines_in_flight_per_thread",
            "hardware.gpu.pinned_h2d_latency_frac",
            "hardware.gpu.pageable_staging.h2d.setup_s",
            "hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent",
            "hardware.gpu.pageable_staging.d2h",
            "hardware.gpu.cpu_load",
            "hardware.cpu",
        ] {
            assert!(keys.contains(&k), "{k} not in {keys:?}");
        }
        assert!(
            !keys.iter().any(|k| k.starts_with("hardware.cpu.")),
            "{keys:?}"
        );
        assert!(!keys.iter().any(|k| k.starts_with("hardware.gpu.cpu_load.")));
        let took = |key: &str| m.iter().find(|(k, _)| k == key).unwrap().1.clone();
        assert_eq!(
            took("hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent"),
            "1 (Little's law)"
        );
        assert_eq!(
            took("hardware.gpu.pinned_h2d_latency_frac"),
            typical.to_string()
        );
        // The MSM at 2^24 was the included host's, and nothing uses it: dropped, not noted.
        assert!(!l.params.iter().any(|p| p.name == "msm_2p24_s"));
        assert!(!keys.iter().any(|k| k.starts_with("params.")));
        // The note names the file and every key.
        let note = l.summary.calibration.as_ref().unwrap().note().unwrap();
        assert!(note.contains("cal.toml") && note.contains(&format!("lacks {} keys", m.len())));
    }

    #[test]
    fn the_scenarios_work_stays_the_scenarios() {
        let f = Files::new(SCENARIO, INCLUDED, CAL);
        let l = f.load(&[]).unwrap();
        let hw = &l.model.hardware;
        assert_eq!(hw.host_ram_bytes, 64 << 30);
        assert_eq!(hw.locks[0].name, "gpu_mutex");
        assert_eq!(hw.pools[0].threads, 16.0);
        assert_eq!(
            l.model.arrivals.kind,
            crate::model::ArrivalKind::Closed { concurrency: 4 }
        );
        // The MSM from the calibration's fit, at the scenario's own kernel speed (2x the
        // speed it states its times for).
        let msm = (220.0e-9 * 1048576.0 / 20.0 + 0.012) / 2.0;
        assert!(
            (stage_mean(&l, "msm") - msm).abs() < 1e-12,
            "{}",
            stage_mean(&l, "msm")
        );
    }

    #[test]
    fn a_set_wins_and_is_not_a_missing_key() {
        let f = Files::new(SCENARIO, INCLUDED, CAL);
        let l = f
            .load(&["hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent=1.5"])
            .unwrap();
        let link = &l.model.hardware.gpus[0].link;
        assert_eq!(
            link.pageable_h2d_staging.as_ref().unwrap().latency_exponent,
            1.5
        );
        assert!(!missing(&l).iter().any(|(k, _)| k.ends_with("exponent")));
    }

    #[test]
    fn a_key_the_calibration_does_not_read_is_not_noted() {
        let posted = CAL.replace(
            "memcpy_pace = \"latency-bound\"",
            "memcpy_pace = \"posted\"",
        );
        let f = Files::new(SCENARIO, INCLUDED, &posted);
        let l = f.load(&[]).unwrap();
        assert!(
            !missing(&l).iter().any(|(k, _)| k.contains("h2d.memcpy_")),
            "{:?}",
            missing(&l)
        );
    }

    #[test]
    fn a_key_with_no_typical_value_is_an_error_naming_the_calibration() {
        for (cut, key) in [
            ("capacity_gbps = 120\n", "hardware.dram.capacity_gbps"),
            ("cpu_cores = 8\n", "hardware.cpu_cores"),
            ("vram_gib = 80\n", "hardware.gpu.vram_gib"),
            (
                "memcpy_gbps = 6.2\n",
                "hardware.gpu.pageable_staging.h2d.memcpy_gbps",
            ),
        ] {
            let f = Files::new(SCENARIO, INCLUDED, &CAL.replace(cut, ""));
            let e = f.load(&[]).unwrap_err();
            assert_eq!(
                (e.kind, e.key.as_str()),
                (ErrorKind::MissingKey, key),
                "{e}"
            );
            assert_eq!(e.file, f.path("cal.toml"), "{e}");
            assert!(e.message.contains("no typical value"), "{e}");
        }
        // No GPU in the calibration, a GPU in the scenario.
        let cpu_only = &CAL[..CAL.find("[hardware.gpu]").unwrap()];
        let f = Files::new(SCENARIO, INCLUDED, cpu_only);
        let e = f.load(&[]).unwrap_err();
        assert_eq!(e.key, "hardware.gpu", "{e}");
        assert!(e.to_string().contains("s.toml runs on a GPU"), "{e}");
        // ... which a scenario without one does not need.
        let cpu_work = "include = [\"included.toml\"]\n\
                        [[workload.stages]]\nname = \"x\"\nduration_s = 1\n\
                        [arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 1\n";
        let f = Files::new(cpu_work, INCLUDED, cpu_only);
        let l = f.load(&[]).unwrap();
        assert!(l.model.hardware.gpus.is_empty());
        assert_eq!(l.model.hardware.dram.capacity_gbps, 120.0);
    }

    #[test]
    fn a_measured_param_the_calibration_lacks_is_never_an_included_files() {
        // The scenario uses the included host's MSM at 2^24: refused, naming both files.
        let uses = SCENARIO.replace(
            "duration_s = \"= $msm_a_ns * 1e-9 * 1048576 / 20 + $msm_b_s\"",
            "duration_s = \"$msm_2p24_s\"",
        );
        let f = Files::new(&uses, INCLUDED, CAL);
        let e = f.load(&[]).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.file.clone()),
            ("params.msm_2p24_s", f.path("cal.toml"))
        );
        assert!(
            e.message.contains("included.toml") && e.message.contains("--set"),
            "{e}"
        );
        // Given with --set, it is kept and said.
        let l = f.load(&["params.msm_2p24_s=0.2"]).unwrap();
        assert!((stage_mean(&l, "msm") - 0.1).abs() < 1e-12);
        assert_eq!(
            missing(&l).last().unwrap(),
            &(
                "params.msm_2p24_s".to_string(),
                "the --set value".to_string()
            )
        );
        // Stated by the scenario file itself, it is the scenario's, and said.
        let own = format!(
            "{uses}\n",
        )
        .replace(
            "workers = { default = 4, doc = \"jobs in flight\" }",
            "workers = { default = 4, doc = \"jobs in flight\" }\nmsm_2p24_s = { default = 0.3, doc = \"mine\" }",
        );
        let f = Files::new(&own, INCLUDED, CAL);
        let l = f.load(&[]).unwrap();
        assert!((stage_mean(&l, "msm") - 0.15).abs() < 1e-12);
        let (key, took) = missing(&l).last().unwrap().clone();
        assert_eq!(key, "params.msm_2p24_s");
        assert!(
            took.starts_with("0.3, the scenario's own") && took.contains("s.toml"),
            "{took}"
        );
    }

    #[test]
    fn a_calibration_holding_more_than_a_host_is_refused() {
        let host = &CAL[..CAL.find("[params]").unwrap()];
        for (text, key) in [
            (
                format!("{CAL}[[workload.stages]]\nname = \"x\"\n"),
                "workload",
            ),
            (format!("{CAL}[hardware.locks]\nx = 1\n"), "hardware.locks"),
            (format!("[params]\nworkers = 9\n{host}"), "params.workers"),
            (format!("include = [\"included.toml\"]\n{host}"), "include"),
        ] {
            let f = Files::new(SCENARIO, INCLUDED, &text);
            let e = f.load(&[]).unwrap_err();
            assert_eq!(
                (e.key.as_str(), e.file.clone()),
                (key, f.path("cal.toml")),
                "{e}"
            );
            assert!(e.line_col.is_some(), "{e}");
        }
    }
}
