//! The committed evidence, as its manifest lists it: each boot a GPU host was measured
//! on (its calibration's raw measurements, the calls whose replays ran on it) and how to
//! re-run each replay's scenario.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::AccuracyError;

/// The manifest (`docs/accuracy/evidence.toml`), paths resolved.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// Each boot, in the manifest's order.
    pub boots: Vec<Boot>,
    /// Raw calibrations whose spread between boots sets the host keys' spreads (every
    /// boot's among them).
    pub spread_calibrations: Vec<(String, PathBuf)>,
    scenarios: BTreeMap<String, PathBuf>,
    legacy_sets: BTreeMap<String, Vec<String>>,
}

/// One boot of a GPU host.
#[derive(Debug, Clone)]
pub struct Boot {
    /// Its name in tables (e.g. `h200-run8`).
    pub name: String,
    /// The accuracy run it belongs to (leave-one-run-out leaves out all its boots).
    pub run: String,
    /// The host type: `H100` or `H200` (the VM's GPU).
    pub card: String,
    /// Its calibration's raw measurements (`calibrate --json`).
    pub calibration: PathBuf,
    /// The calls' folders: each subfolder with a `replay.json` is one replay.
    pub calls: Vec<PathBuf>,
    /// Judged, not fitted: its points are predicted and judged against the error models
    /// fitted without it, and its profile carries no other boot's stage times. A new
    /// run's pre-registered test, before it joins the evidence.
    pub held_out: bool,
}

/// One replay: a scenario measured point by point on one boot.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Index of its boot in [`Evidence::boots`].
    pub boot: usize,
    /// Its folder.
    pub dir: PathBuf,
    /// The shape: the folder's name without its repeat suffix (`chase-page-r2` ->
    /// `chase-page`).
    pub shape: String,
    /// The scenario file.
    pub scenario: PathBuf,
    /// The `--set` flags it ran with.
    pub sets: Vec<String>,
    pub points: Vec<MeasuredPoint>,
    /// What the replay's own probes measured of the boot before it ran.
    pub probes: Probes,
    /// The CPU stages it sized to run their stated time alone on the boot, with that time.
    pub sized: Vec<(String, f64)>,
}

/// The replay harness's probes of a boot's CPU: what its stage sizing rested on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probes {
    /// One thread's streaming DRAM bandwidth, GB/s.
    pub stream_gbps: f64,
    /// One dependent DRAM load (a pointer chase step), ns.
    pub chase_ns: f64,
    /// One core's arithmetic rate, iterations per second.
    pub compute_per_s: f64,
}

/// One measured point of a replay.
#[derive(Debug, Clone)]
pub struct MeasuredPoint {
    /// Its x (workers, proofs in flight).
    pub x: f64,
    /// The point's own `--set` flags.
    pub sets: Vec<String>,
    /// Seconds per job of each measured run.
    pub runs: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestSpec {
    scenarios: BTreeMap<String, String>,
    #[serde(default)]
    legacy_sets: BTreeMap<String, Vec<String>>,
    spread: SpreadSpec,
    boot: Vec<BootSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpreadSpec {
    calibrations: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BootSpec {
    name: String,
    run: String,
    card: String,
    calibration: String,
    calls: Vec<String>,
    #[serde(default)]
    held_out: bool,
}

impl Evidence {
    /// Reads the manifest at `path`: its evidence paths are relative to its folder, its
    /// scenarios to `repo`.
    pub fn read(path: &Path, repo: &Path) -> Result<Self, AccuracyError> {
        let text = crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES)
            .map_err(|e| AccuracyError::file(path, format!("cannot read it: {e}")))?;
        let spec: ManifestSpec =
            toml::from_str(&text).map_err(|e| AccuracyError::file(path, e.to_string()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let boots = (spec.boot.into_iter())
            .map(|b| Boot {
                name: b.name,
                run: b.run,
                card: b.card,
                calibration: base.join(b.calibration),
                calls: b.calls.iter().map(|c| base.join(c)).collect(),
                held_out: b.held_out,
            })
            .collect();
        Ok(Self {
            boots,
            spread_calibrations: (spec.spread.calibrations.iter())
                .map(|c| (c.clone(), base.join(c)))
                .collect(),
            scenarios: (spec.scenarios.into_iter())
                .map(|(k, v)| (k, repo.join(v)))
                .collect(),
            legacy_sets: spec.legacy_sets,
        })
    }

    /// Every replay of every boot, folders in name order.
    pub fn replays(&self) -> Result<Vec<Replay>, AccuracyError> {
        let mut out = Vec::new();
        for (b, boot) in self.boots.iter().enumerate() {
            for call in &boot.calls {
                let entries = std::fs::read_dir(call)
                    .map_err(|e| AccuracyError::file(call, format!("cannot list it: {e}")))?;
                let mut dirs: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| kept(&p.join("replay.json")).is_some())
                    .collect();
                dirs.sort();
                for dir in dirs {
                    out.push(self.replay(b, &dir)?);
                }
            }
        }
        Ok(out)
    }

    fn replay(&self, boot: usize, dir: &Path) -> Result<Replay, AccuracyError> {
        let path = dir.join("replay.json");
        let text = read_kept(&path)?;
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| AccuracyError::file(&path, e.to_string()))?;
        let bad = |key: &str| AccuracyError::file(&path, format!("{key}: missing or malformed"));
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let shape = match name.rsplit_once("-r") {
            Some((s, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => s,
            _ => name,
        }
        .to_string();
        let scenario_name = doc["scenario"].as_str().ok_or_else(|| bad("scenario"))?;
        let scenario = (self.scenarios.get(scenario_name).cloned()).ok_or_else(|| {
            AccuracyError::file(
                &path,
                format!("scenario {scenario_name:?} is not in the manifest's [scenarios]"),
            )
        })?;
        let sets = match doc.get("overrides") {
            Some(v) if !v.is_null() => {
                serde_json::from_value(v.clone()).map_err(|_| bad("overrides"))?
            }
            _ => self.legacy_sets.get(&shape).cloned().unwrap_or_default(),
        };
        let mut points = Vec::new();
        for (i, p) in (doc["points"].as_array().ok_or_else(|| bad("points"))?)
            .iter()
            .enumerate()
        {
            let at = |k: &str| format!("points[{i}].{k}");
            let runs: Vec<f64> = (p["measured"]["runs"].as_array())
                .ok_or_else(|| bad(&at("measured.runs")))?
                .iter()
                .map(|r| r["seconds_per_job"].as_f64())
                .collect::<Option<_>>()
                .filter(|v: &Vec<f64>| !v.is_empty() && v.iter().all(|x| *x > 0.0))
                .ok_or_else(|| bad(&at("measured.runs[].seconds_per_job")))?;
            points.push(MeasuredPoint {
                x: p["x"].as_f64().ok_or_else(|| bad(&at("x")))?,
                sets: serde_json::from_value(p["sets"].clone()).map_err(|_| bad(&at("sets")))?,
                runs,
            });
        }
        let host = &doc["host"];
        let one_thread = (host["stream_gbps_per_thread"].as_array())
            .and_then(|a| a.first())
            .and_then(|p| p[1].as_f64());
        let probes = Probes {
            stream_gbps: one_thread.ok_or_else(|| bad("host.stream_gbps_per_thread"))?,
            chase_ns: (host["chase_ns_per_step"].as_f64())
                .ok_or_else(|| bad("host.chase_ns_per_step"))?,
            compute_per_s: (host["compute_iters_per_s"].as_f64())
                .ok_or_else(|| bad("host.compute_iters_per_s"))?,
        };
        let sized = (host["stage_sizing"].as_array())
            .ok_or_else(|| bad("host.stage_sizing"))?
            .iter()
            .map(|s| Some((s["stage"].as_str()?.to_string(), s["stated_s"].as_f64()?)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("host.stage_sizing[].stage, stated_s"))?;
        Ok(Replay {
            boot,
            dir: dir.to_path_buf(),
            shape,
            scenario,
            sets,
            points,
            probes,
            sized,
        })
    }
}

/// Where a run file is: as named, or gzipped beside (`NAME.gz`, as `runs/` keeps JSON
/// and TOML); None when neither is there.
pub fn kept(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let mut gz = path.as_os_str().to_owned();
    gz.push(".gz");
    let gz = PathBuf::from(gz);
    gz.is_file().then_some(gz)
}

/// A run file's text, gzipped or not (see [`kept`]), at most
/// [`crate::input_file::MAX_JSON_BYTES`] of it.
pub fn read_kept(path: &Path) -> Result<String, AccuracyError> {
    use std::io::Read as _;
    let found =
        kept(path).ok_or_else(|| AccuracyError::file(path, "neither it nor NAME.gz is there"))?;
    if found == path {
        return crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES)
            .map_err(|e| AccuracyError::file(path, format!("cannot read it: {e}")));
    }
    let file = std::fs::File::open(&found)
        .map_err(|e| AccuracyError::file(&found, format!("cannot read it: {e}")))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .take(crate::input_file::MAX_JSON_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| AccuracyError::file(&found, format!("not gzipped text: {e}")))?;
    Ok(text)
}
