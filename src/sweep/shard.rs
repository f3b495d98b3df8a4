//! Sharded sweeps: `--shard I/N` runs a deterministic slice of the grid and records its
//! point runs in `shard.json`; [`merge`] checks that a set of shard files are the slices
//! of one sweep, each present once, and puts their points back in grid order so that the
//! merged sweep writes the same bytes as a sweep on one machine.
//!
//! Point `k` of the grid belongs to shard `k mod N` (round robin, so every shard gets a
//! share of the cheap and the expensive points). Seeds are those of the full grid, so a
//! point's results do not depend on how the grid was cut. N may exceed the grid's points
//! (a cluster job sized once for many grids): the shards past them run no point and
//! write a valid, empty shard file, which the merge takes like any other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grid::{Grid, Point};
use super::seeds::point_seeds;
use super::spec_error::SpecError;
use crate::input_file::InputError;
use crate::output::{OutputError, write_atomic};

/// The file a shard writes into its output folder.
pub const SHARD_FILE: &str = "shard.json";

/// The most shards a sweep may be cut into: as many as the largest grid has points
/// ([`super::grid::MAX_POINTS`]). A bound, so that a shard count read from a file sizes
/// nothing and names a merge that can be given.
pub const MAX_SHARDS: usize = super::grid::MAX_POINTS as usize;

/// What a shard file says it is (checked on merge).
pub const SHARD_FORMAT: &str = "bwsim-sweep-shard/1";

/// `--shard I/N`: slice `index` (0-based, as Slurm's array task id and Kubernetes'
/// completion index are) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSpec {
    /// This shard, 0..count.
    pub index: usize,
    /// How many shards the grid is cut into.
    pub count: usize,
}

impl ShardSpec {
    /// Parses `I/N` with 0 <= I < N.
    pub fn parse(text: &str) -> Result<ShardSpec, SpecError> {
        let bad = |problem: &str| SpecError::Shard {
            arg: text.to_string(),
            problem: problem.to_string(),
        };
        let (i, n) = text.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| bad("I is not a whole number"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a whole number"))?;
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad("I must be below N"));
        }
        Ok(ShardSpec { index, count })
    }

    /// True when grid point `index` belongs to this shard.
    pub fn contains(&self, index: usize) -> bool {
        index % self.count == self.index
    }

    /// The grid points of this shard, in grid order.
    pub fn points(&self, grid: &Grid) -> Vec<Point> {
        grid.points()
            .into_iter()
            .filter(|p| self.contains(p.index))
            .collect()
    }
}

impl std::fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What must agree between the shards of one sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepIdentity {
    /// Scenario name.
    pub scenario: String,
    /// Hash of the bytes of the scenario and every file it includes
    /// ([`crate::scenario::fingerprint`]), so shards run on different machines are
    /// known to have simulated the same model whatever the path.
    pub scenario_hash: String,
    /// `--param` arguments, in order.
    pub params: Vec<String>,
    /// `--set` arguments applied at every point.
    pub sets: Vec<String>,
    /// Base of the per-point seeds.
    pub base_seed: u64,
    /// Seeds per point.
    pub seeds_per_point: usize,
    /// N of `--shard I/N`.
    pub shards: usize,
}

/// One point's runs as stored in a shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardPoint {
    /// The point's index in the whole grid.
    pub index: usize,
    /// The seed of each replicate.
    pub seeds: Vec<u64>,
    /// The report of each replicate.
    pub reports: Vec<Value>,
}

/// The contents of `shard.json`: everything the merge needs to rebuild the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    /// [`SHARD_FORMAT`].
    pub format: String,
    /// Which slice this is.
    pub shard: ShardSpec,
    /// The sweep it is a slice of.
    pub sweep: SweepIdentity,
    /// The scenario file as given to this shard (sweep.json quotes the first shard's).
    pub scenario_path: String,
    /// Worker threads (timing only).
    pub jobs: usize,
    /// Wall-clock seconds of its simulations (timing only).
    pub wall_s: f64,
    /// Its points, in grid order.
    pub points: Vec<ShardPoint>,
}

impl ShardFile {
    /// Writes it as `shard.json` (one line of JSON) into `dir`; the file's path.
    pub fn write_into(&self, dir: &Path) -> Result<PathBuf, OutputError> {
        let path = dir.join(SHARD_FILE);
        let text = serde_json::to_string(self).expect("a shard file serializes");
        write_atomic(&path, format!("{text}\n").as_bytes())?;
        Ok(path)
    }

    /// Reads the `shard.json` of a folder written by `bwsim sweep --shard I/N`.
    pub fn read_from(dir: &Path) -> Result<ShardFile, InputError> {
        let path = dir.join(SHARD_FILE);
        let text = crate::input_file::read_text(&path, crate::input_file::MAX_JSON_BYTES).map_err(
            |e| {
                merge_error(format!("cannot read ({e})"))
                    .file(&path)
                    .allowed("give the folders written by `bwsim sweep --shard I/N`")
            },
        )?;
        serde_json::from_str(&text).map_err(|e| {
            merge_error(format!(
                "not a shard file written by `bwsim sweep --shard`: {e}"
            ))
            .file(&path)
        })
    }
}

/// Shards that cannot be merged: the user's input.
pub fn merge_error(problem: impl Into<String>) -> InputError {
    InputError::new(problem).action("sweep merge")
}

/// Checks that `shards` (each named by `names[i]` in errors) are the N slices of one
/// sweep, each once, and returns every point's reports in grid order.
pub fn merge(
    shards: &[ShardFile],
    names: &[String],
    grid: &Grid,
) -> Result<Vec<Vec<Value>>, InputError> {
    let Some(first) = shards.first() else {
        return Err(merge_error("give the shard folders to merge"));
    };
    for (s, name) in shards.iter().zip(names) {
        if s.format != SHARD_FORMAT {
            return Err(
                merge_error(format!("format '{}', expected '{SHARD_FORMAT}'", s.format)).file(name),
            );
        }
        if s.sweep != first.sweep {
            return Err(merge_error(format!(
                "{name} is a shard of another sweep than {}: {}",
                names[0],
                identity_difference(&first.sweep, &s.sweep)
            )));
        }
    }
    // N comes from a file: bounded before anything is sized by it, and only the shards
    // given are stored (never one slot per possible shard).
    let count = first.sweep.shards;
    if count == 0 || count > MAX_SHARDS {
        return Err(merge_error(format!(
            "{}: a sweep of {count} shards; N of --shard I/N is between 1 and {MAX_SHARDS}",
            names[0],
        )));
    }
    let mut seen_shard: BTreeMap<usize, &str> = BTreeMap::new();
    for (s, name) in shards.iter().zip(names) {
        if s.shard.count != count || s.shard.index >= count {
            return Err(merge_error(format!(
                "{name}: shard {} does not belong to a sweep of {count} shards",
                s.shard
            )));
        }
        if let Some(other) = seen_shard.insert(s.shard.index, name) {
            return Err(merge_error(format!(
                "shard {} is given twice ({other} and {name})",
                s.shard
            )));
        }
    }
    if seen_shard.len() < count {
        // The first few absent shards (at most as many as were given, plus 8).
        let absent: Vec<String> = (0..count)
            .filter(|i| !seen_shard.contains_key(i))
            .take(8)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let more = count - seen_shard.len() - absent.len();
        return Err(merge_error(format!(
            "shard(s) {}{} of {count} not given; a merge needs every shard",
            absent.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    let mut slots: Vec<Option<Vec<Value>>> = vec![None; grid.len()];
    for (s, name) in shards.iter().zip(names) {
        for p in &s.points {
            // Numbered from 1, as elsewhere; the index comes from a file (may be usize::MAX).
            let bad = |what: &str| {
                merge_error(format!("point {} {what}", p.index.saturating_add(1))).file(name)
            };
            if p.index >= grid.len() {
                return Err(bad("is outside the grid"));
            }
            if !s.shard.contains(p.index) {
                return Err(bad(&format!("does not belong to shard {}", s.shard)));
            }
            if slots[p.index].is_some() {
                return Err(bad("appears twice"));
            }
            let seeds = point_seeds(first.sweep.base_seed, p.index, first.sweep.seeds_per_point);
            if p.seeds != seeds || p.reports.len() != seeds.len() {
                return Err(bad("has other seeds than the sweep gives it"));
            }
            slots[p.index] = Some(p.reports.clone());
        }
    }
    let missing: Vec<usize> = (0..grid.len()).filter(|&i| slots[i].is_none()).collect();
    if let Some(&i) = missing.first() {
        return Err(merge_error(format!(
            "{} of {} points are missing (first: point {} of shard {}/{count}); was a shard \
             cut short?",
            missing.len(),
            grid.len(),
            i + 1,
            i % count
        )));
    }
    Ok(slots.into_iter().flatten().collect())
}

/// Checks what a shard file holds, not only how it is labelled: its identity is within
/// the limits a sweep accepts and every report is a run report of the seed it is filed
/// under. `name` (the file) and the field are named in the error.
pub fn validate(file: &ShardFile, name: &str, grid: &Grid) -> Result<(), InputError> {
    let bad = |field: String, why: &str| merge_error(why).file(name).key(field);
    grid.check_runs(file.sweep.seeds_per_point)
        .map_err(|e| bad("sweep.seeds_per_point".into(), &e.to_string()))?;
    if file.sweep.seeds_per_point == 0 {
        return Err(bad(
            "sweep.seeds_per_point".into(),
            "is 0; a sweep has at least one seed per point",
        ));
    }
    if !(file.wall_s.is_finite() && file.wall_s >= 0.0) {
        return Err(bad("wall_s".into(), "is not a number of seconds >= 0"));
    }
    if file.points.len() > grid.len() {
        return Err(bad(
            "points".into(),
            &format!(
                "holds {} points, more than the grid's {}",
                file.points.len(),
                grid.len()
            ),
        ));
    }
    for (i, p) in file.points.iter().enumerate() {
        if p.reports.len() != p.seeds.len() {
            return Err(bad(
                format!("points[{i}]"),
                &format!("{} reports for {} seeds", p.reports.len(), p.seeds.len()),
            ));
        }
        for (j, r) in p.reports.iter().enumerate() {
            let field = format!("points[{i}].reports[{j}]");
            check_report(r, p.seeds.get(j).copied(), &file.sweep.scenario)
                .map_err(|why| bad(field, &why.problem))?;
        }
    }
    Ok(())
}

/// A run report as `bwsim run --format json` writes it: an object naming the scenario and
/// the seed, with whole-number job counts, numeric (or null) rates and notes of text. The
/// error says what is wrong, for the caller to place.
pub fn check_report(r: &Value, seed: Option<u64>, scenario: &str) -> Result<(), InputError> {
    let not = |problem: String| Err(InputError::new(problem));
    let Some(o) = r.as_object() else {
        return not(format!(
            "is {}, not a run report (a JSON object)",
            json_kind(r)
        ));
    };
    match o.get("scenario").and_then(Value::as_str) {
        Some(s) if s == scenario => {}
        Some(s) => return not(format!("scenario is '{s}', not '{scenario}'")),
        None => return not("has no scenario name; not a run report".into()),
    }
    match (o.get("seed").and_then(Value::as_u64), seed) {
        (Some(a), Some(b)) if a == b => {}
        (Some(a), Some(b)) => return not(format!("seed is {a}, but the point's seed is {b}")),
        _ => return not("has no seed (a whole number); not a run report".into()),
    }
    for key in ["jobs_completed", "jobs_measured"] {
        if o.get(key).and_then(Value::as_u64).is_none() {
            return not(format!("{key} is missing or not a whole number >= 0"));
        }
    }
    for key in ["sim_time_s", "seconds_per_job", "jobs_per_hour"] {
        match o.get(key) {
            Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= 0.0) => {}
            _ => return not(format!("{key} is missing or not a number >= 0 (or null)")),
        }
    }
    if !o.get("stages").is_some_and(Value::is_object) {
        return not("stages is missing or not an object".into());
    }
    if let Err(e) = super::seed_report::notes_of(r) {
        return not(e.to_string());
    }
    Ok(())
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first field in which two sweep identities differ, for the error message.
fn identity_difference(a: &SweepIdentity, b: &SweepIdentity) -> String {
    if a.scenario != b.scenario {
        format!("scenario '{}' vs '{}'", a.scenario, b.scenario)
    } else if a.scenario_hash != b.scenario_hash {
        "the scenario files (or their includes) differ in content".into()
    } else if a.params != b.params {
        format!("--param {:?} vs {:?}", a.params, b.params)
    } else if a.sets != b.sets {
        format!("--set {:?} vs {:?}", a.sets, b.sets)
    } else if a.base_seed != b.base_seed {
        format!("base seed {} vs {}", a.base_seed, b.base_seed)
    } else if a.seeds_per_point != b.seeds_per_point {
        format!(
            "--replications {} vs {}",
            a.seeds_per_point, b.seeds_per_point
        )
    } else {
        format!("N of --shard I/N: {} vs {}", a.shards, b.shards)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::parse_param;

    #[test]
    fn shard_specs_parse_and_reject_nonsense() {
        assert_eq!(
            ShardSpec::parse("2/4").unwrap(),
            ShardSpec { index: 2, count: 4 }
        );
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2"] {
            let e = ShardSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("I/N"), "{bad}: {e}");
        }
    }

    fn grid() -> Grid {
        Grid::new(vec![
            parse_param("a=1..5").unwrap(),
            parse_param("b=1,2,3").unwrap(),
        ])
        .unwrap()
    }

    #[test]
    fn shards_partition_the_grid() {
        let g = grid();
        let mut seen: Vec<usize> = (0..4)
            .flat_map(|i| ShardSpec { index: i, count: 4 }.points(&g))
            .map(|p| p.index)
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..15).collect::<Vec<_>>());
        // More shards than points: the extra shards are empty, not an error.
        let far = ShardSpec {
            index: 20,
            count: 21,
        };
        assert!(far.points(&g).is_empty());
    }

    fn shard(index: usize, count: usize, g: &Grid) -> ShardFile {
        let spec = ShardSpec { index, count };
        ShardFile {
            format: SHARD_FORMAT.into(),
            shard: spec,
            sweep: SweepIdentity {
                scenario: "s".into(),
                scenario_hash: "h".into(),
                params: vec!["a=1..5".into(), "b=1,2,3".into()],
                sets: vec![],
                base_seed: 7,
                seeds_per_point: 2,
                shards: count,
            },
            scenario_path: "s.toml".into(),
            jobs: 1,
            wall_s: 0.0,
            points: spec
                .points(g)
                .iter()
                .map(|p| ShardPoint {
                    index: p.index,
                    seeds: point_seeds(7, p.index, 2),
                    reports: vec![Value::from(p.index), Value::from(p.index + 100)],
                })
                .collect(),
        }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("dir{i}")).collect()
    }

    #[test]
    fn merge_restores_grid_order_and_names_what_is_wrong() {
        let g = grid();
        let all: Vec<ShardFile> = (0..3).rev().map(|i| shard(i, 3, &g)).collect();
        let merged = merge(&all, &names(3), &g).unwrap();
        assert_eq!(merged.len(), 15);
        for (i, r) in merged.iter().enumerate() {
            assert_eq!(r[0], Value::from(i));
        }
        let err = |files: &[ShardFile]| {
            let e = merge(files, &names(files.len()), &g).unwrap_err();
            assert_eq!(e.action, Some("sweep merge"));
            e.to_string()
        };
        assert!(err(&all[..2]).contains("shard(s) 0/3 of 3 not given"));
        assert!(err(&[all[0].clone(), all[0].clone()]).contains("given twice"));
        let mut other = all.clone();
        other[1].sweep.scenario_hash = "x".into();
        assert!(err(&other).contains("differ in content"));
        let mut other = all.clone();
        other[2].sweep.seeds_per_point = 3;
        assert!(err(&other).contains("--replications 2 vs 3"));
        let mut cut = all.clone();
        cut[0].points.pop();
        assert!(err(&cut).contains("1 of 15 points are missing"));
        let mut wrong = all.clone();
        wrong[0].points[0].seeds[0] ^= 1;
        assert!(err(&wrong).contains("other seeds"));
        let mut fmt = all;
        fmt[0].format = "nope".into();
        assert!(err(&fmt).contains("expected 'bwsim-sweep-shard/1'"));
    }

    #[test]
    fn more_shards_than_points_merge_with_their_empty_slices() {
        let g = grid();
        let all: Vec<ShardFile> = (0..20).map(|i| shard(i, 20, &g)).collect();
        assert!(all[15..].iter().all(|s| s.points.is_empty()));
        let merged = merge(&all, &names(20), &g).unwrap();
        let order: Vec<Value> = merged.iter().map(|r| r[0].clone()).collect();
        assert_eq!(order, (0..15).map(Value::from).collect::<Vec<_>>());
        // An empty shard is still a shard the merge needs.
        let e = merge(&all[..19], &names(19), &g).unwrap_err().to_string();
        assert!(e.contains("shard(s) 19/20 of 20 not given"), "{e}");
        // A count no sweep can have is refused before anything is sized by it.
        let mut huge = shard(0, 3, &g);
        huge.sweep.shards = MAX_SHARDS + 1;
        huge.shard.count = MAX_SHARDS + 1;
        let e = merge(&[huge], &names(1), &g).unwrap_err().to_string();
        assert!(e.contains("between 1 and 100000"), "{e}");
    }
}
