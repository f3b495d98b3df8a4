//! `points.jsonl`, in a sweep's staging folder only: one line per finished point (its
//! index, seeds and reports), each written with one write, so an interruption cuts at
//! most the last line. A resume reads the finished points back and cuts that line off
//! before new lines are appended, so an attempt interrupted twice loses nothing it had
//! saved. The journal is removed when the sweep completes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::error::SweepError;
use super::manifest::cannot_resume;
use super::runner::PointRun;
use super::seed_report::SeedReport;
use super::seeds::point_seeds;
use super::session::SweepPlan;
use crate::input_file::InputError;
use crate::output::{OutputError, test_kill, test_kill_due};

/// The journal's file name.
pub const JOURNAL: &str = "points.jsonl";

/// The finished points of a sweep, by grid index (None: still to run).
pub type Finished = Vec<Option<Vec<SeedReport>>>;

/// The journal open for appending; shared by the worker threads.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

impl Journal {
    /// Opens (or creates) the journal at `path` for appending.
    pub fn open(path: &Path) -> Result<Journal, OutputError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| OutputError::Io {
                path: path.to_path_buf(),
                source: e,
            })?;
        Ok(Journal {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Appends a finished point as one line, with one write (the test hooks `journal`
    /// and `point` interrupt it halfway through the line and after it).
    pub fn save(&self, run: &PointRun) -> Result<(), SweepError> {
        let reports: Vec<&Value> = run.reports.iter().map(|r| &r.json).collect();
        let line = json!({"index": run.point.index, "seeds": run.seeds, "reports": reports});
        let line = format!("{line}\n");
        let mut f = self.file.lock().expect("journal lock");
        if test_kill_due("journal") {
            let _ = f.write_all(&line.as_bytes()[..line.len() / 2]);
            test_kill();
        }
        f.write_all(line.as_bytes())
            .and_then(|()| f.flush())
            .map_err(|e| OutputError::Io {
                path: self.path.clone(),
                source: e,
            })?;
        drop(f);
        if test_kill_due("point") {
            test_kill();
        }
        Ok(())
    }
}

/// The points an interrupted attempt finished. A last line cut short by the interruption
/// is cut off the file (that point runs again), so that the lines appended next start on
/// a line of their own: an attempt interrupted twice loses nothing it had saved.
pub fn read_journal(path: &Path, plan: &SweepPlan) -> Result<Finished, InputError> {
    let mut finished = vec![None; plan.grid.len()];
    let text = match crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(finished),
        Err(e) => return Err(cannot_resume(e.to_string()).file(path)),
    };
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| {
                f.set_len(whole as u64)?;
                f.sync_all()
            })
            .map_err(|e| {
                cannot_resume(format!(
                    "cannot cut off the line an interruption left unfinished: {e}"
                ))
                .file(path)
            })?;
    }
    for (i, line) in text[..whole].lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Err(cannot_resume(format!("line {} is damaged", i + 1)).file(path));
        };
        let bad = || cannot_resume(format!("line {} is not a sweep point", i + 1)).file(path);
        let index = v["index"].as_u64().ok_or_else(bad)? as usize;
        let seeds: Vec<u64> = serde_json::from_value(v["seeds"].clone()).map_err(|_| bad())?;
        let reports: Vec<Value> =
            serde_json::from_value(v["reports"].clone()).map_err(|_| bad())?;
        if index >= finished.len()
            || seeds != point_seeds(plan.opts.base_seed, index, plan.opts.seeds)
            || reports.len() != seeds.len()
        {
            return Err(bad());
        }
        let reports = (reports.into_iter())
            .map(SeedReport::from_json)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad())?;
        finished[index] = Some(reports);
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::Report;
    use crate::sweep::{Grid, Point, RunOptions, ScenarioInfo, parse_param};

    fn plan() -> SweepPlan {
        SweepPlan {
            grid: Grid::new(vec![parse_param("a=1..3").unwrap()]).unwrap(),
            info: ScenarioInfo {
                name: "s".into(),
                seed: 7,
            },
            opts: RunOptions {
                seeds: 2,
                base_seed: 7,
                jobs: 1,
                base_sets: Vec::new(),
            },
            shard: None,
        }
    }

    fn run(plan: &SweepPlan, index: usize) -> PointRun {
        let seeds = point_seeds(7, index, 2);
        let point: Point = plan.grid.points()[index].clone();
        PointRun {
            reports: (seeds.iter())
                .map(|&s| SeedReport::from(&Report::empty("s", s)))
                .collect(),
            sets: plan.grid.sets(&point),
            seeds,
            point,
        }
    }

    #[test]
    fn saved_points_read_back_and_a_cut_line_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL);
        let plan = plan();
        let journal = Journal::open(&path).unwrap();
        journal.save(&run(&plan, 2)).unwrap();
        journal.save(&run(&plan, 0)).unwrap();
        drop(journal);
        // An interruption in the middle of a third line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"index\": 1, \"se").unwrap();
        drop(f);
        let finished = read_journal(&path, &plan).unwrap();
        let done: Vec<bool> = finished.iter().map(Option::is_some).collect();
        assert_eq!(done, [true, false, true]);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with('\n'));
        // Appending after the cut starts a line of its own.
        Journal::open(&path).unwrap().save(&run(&plan, 1)).unwrap();
        let finished = read_journal(&path, &plan).unwrap();
        assert!(finished.iter().all(Option::is_some));
    }

    #[test]
    fn no_journal_is_no_finished_point() {
        let dir = tempfile::tempdir().unwrap();
        let finished = read_journal(&dir.path().join(JOURNAL), &plan()).unwrap();
        assert_eq!(finished.len(), 3);
        assert!(finished.iter().all(Option::is_none));
    }

    #[test]
    fn a_damaged_or_foreign_line_cannot_be_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL);
        let plan = plan();
        let cases = [
            ("not json\n", "line 1 is damaged"),
            (
                "{\"index\": 9, \"seeds\": [], \"reports\": []}\n",
                "not a sweep point",
            ),
            (
                "{\"index\": 0, \"seeds\": [1, 2], \"reports\": [{}, {}]}\n",
                "not a sweep point",
            ),
        ];
        for (text, want) in cases {
            std::fs::write(&path, text).unwrap();
            let e = read_journal(&path, &plan).unwrap_err();
            assert_eq!(e.action, Some("cannot resume"));
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
