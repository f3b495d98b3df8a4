//! The study end to end: calibrations fitted again, spreads measured, every committed
//! point predicted under the calibrations asked for, and the error models fitted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::prediction::HostKnowledge;
use crate::model::Hardware;
use crate::prediction::HostSpread;

use super::AccuracyError;
use super::evidence::{Evidence, Probes, Replay};
use super::fit::{self, Fitted, Row};
use super::moved::{BootProfile, CoreMemory, Leans, median_probes, stage_factor};
use super::predict::{predict, predict_once};
use super::spreads;

/// Which predictions to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// Every boot's points with stage times profiled on every other boot too (the
    /// transfer matrix), not only with their own.
    pub matrix: bool,
    /// The points with typical values (no calibration) too.
    pub typical: bool,
}

/// What the study found.
#[derive(Debug, Clone)]
pub struct Study {
    pub evidence: Evidence,
    /// Each boot's name and card.
    pub boots: Vec<(String, String)>,
    /// The host keys' spreads between boots, and the typical values'.
    pub spread: HostSpread,
    pub typical_spread: HostSpread,
    /// Each key's values, by (key, card).
    pub key_values: BTreeMap<(crate::prediction::HostKey, String), Vec<f64>>,
    /// The fitted boots' points, each way of knowing the host.
    pub points: Points,
    /// The error model of each way of knowing the host, fitted on its rows, and its
    /// intervals left out by run.
    pub calibrated: Fitted,
    pub calibrated_stages_moved: Option<Fitted>,
    pub typical_fit: Option<Fitted>,
    pub typical_stages_moved: Option<Fitted>,
    /// The calibrated error model (stage times not moved) on the moved rows: what a
    /// planner who forgot the move would be told.
    pub moved_under_own_model: Option<Fitted>,
    /// The stage factors the transfer gave, by what the stage leans on: (lean, log sd,
    /// smallest, largest).
    pub stage_factors: Vec<(Leans, f64, f64, f64)>,
    /// The held-out boots' points (none fitted), each way of knowing the host, and the
    /// stage factors their transfer gave.
    pub held_out: HeldOut,
}

/// Every predicted point, by how its host was known.
#[derive(Debug, Clone, Default)]
pub struct Points {
    /// Under its own boot's calibration, stage times as its boot ran them.
    pub own: Vec<Row>,
    /// Under its own boot's calibration, stage times profiled on each other boot and
    /// carried by host scaling (empty unless asked).
    pub moved: Vec<Row>,
    /// With typical values (empty unless asked), stage times its own...
    pub typical: Vec<Row>,
    /// ... and profiled on each other boot (empty unless the matrix is asked too).
    pub typical_moved: Vec<Row>,
}

impl Points {
    /// The rows of a host known as `k`.
    pub fn rows(&self, k: HostKnowledge) -> &[Row] {
        match k {
            HostKnowledge::Calibrated => &self.own,
            HostKnowledge::CalibratedStagesMoved => &self.moved,
            HostKnowledge::Typical => &self.typical,
            HostKnowledge::TypicalStagesMoved => &self.typical_moved,
        }
    }

    fn rows_mut(&mut self, k: HostKnowledge) -> &mut Vec<Row> {
        match k {
            HostKnowledge::Calibrated => &mut self.own,
            HostKnowledge::CalibratedStagesMoved => &mut self.moved,
            HostKnowledge::Typical => &mut self.typical,
            HostKnowledge::TypicalStagesMoved => &mut self.typical_moved,
        }
    }
}

/// The points of the boots the manifest holds out: predicted as the others are, their
/// stage times carried from the fitted boots only, and judged against the error models
/// fitted without them.
#[derive(Debug, Clone, Default)]
pub struct HeldOut {
    pub points: Points,
    pub stage_factors: Vec<(Leans, f64, f64, f64)>,
}

/// A point group: the repeats of one point of one shape on one boot, pooled.
struct Group {
    boot: usize,
    shape: String,
    scenario: PathBuf,
    sets: Vec<String>,
    x: f64,
    runs: Vec<f64>,
    /// The probes of the replays pooled in it.
    probes: Vec<Probes>,
    /// Its CPU stages sized alone, with their stated times.
    sized: Vec<(String, f64)>,
}

/// Pools the repeats: the points of the replays of one shape on one boot with the same
/// flags.
fn groups(replays: &[Replay]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for r in replays {
        for p in &r.points {
            let mut sets = r.sets.clone();
            sets.extend(p.sets.iter().cloned());
            match (out.iter_mut()).find(|g| {
                g.boot == r.boot && g.shape == r.shape && g.sets == sets && g.scenario == r.scenario
            }) {
                Some(g) => {
                    g.runs.extend(p.runs.iter().copied());
                    g.probes.push(r.probes);
                }
                None => out.push(Group {
                    boot: r.boot,
                    shape: r.shape.clone(),
                    scenario: r.scenario.clone(),
                    sets,
                    x: p.x,
                    runs: p.runs.clone(),
                    probes: vec![r.probes],
                    sized: r.sized.clone(),
                }),
            }
        }
    }
    out
}

/// A calibration fitted again: its file, the host it gives, its card (the GPU's model:
/// `H100`, `H200`, else the GPU's name) and what it says of one core's memory.
pub struct Refitted {
    pub path: PathBuf,
    pub host: Hardware,
    pub card: String,
    pub memory: CoreMemory,
}

/// Fits `raw` (a calibration's raw measurements) again and writes the calibration into
/// `dir` as `name.toml`.
pub fn refit(raw: &Path, dir: &Path, name: &str) -> Result<Refitted, AccuracyError> {
    let json = super::evidence::read_kept(raw)?;
    let (m, _, text) = crate::calibrate::command::refit(raw, &json)
        .map_err(|e| AccuracyError::file(raw, e.to_string()))?;
    let host = spreads::host_of_text(&text, dir, name)?;
    let gpu = m.gpu.map(|g| g.name).unwrap_or_else(|| "no GPU".into());
    let card = ["H100", "H200"]
        .into_iter()
        .find(|c| gpu.contains(c))
        .map_or(gpu.clone(), str::to_string);
    Ok(Refitted {
        path: dir.join(format!("{name}.toml")),
        host,
        card,
        memory: CoreMemory::of_calibration(&text, raw)?,
    })
}

/// One prediction to make: a group, the calibration (None: typical values) and the
/// boot its stage times were profiled on.
#[derive(Debug, Clone, Copy)]
struct Job {
    group: usize,
    calibrated: bool,
    profile: usize,
}

/// The `--set`s of a group's carried stage times, and each stage's factor.
type MovedStages = (Vec<String>, Vec<(Leans, f64)>);

/// The `--set`s that give `group`'s stages the times profiled on `profile` carried to
/// its boot, and the factors.
fn moved_stages(group: &Group, profiles: &[BootProfile], profile: usize) -> Option<MovedStages> {
    if profile == group.boot {
        return Some((Vec::new(), Vec::new()));
    }
    let probes = median_probes(&group.probes)?;
    let (mut sets, mut factors) = (Vec::new(), Vec::new());
    for (stage, stated) in &group.sized {
        let leans = Leans::of_stage(stage);
        let f = stage_factor(leans, &probes, &profiles[profile], &profiles[group.boot]);
        sets.push(format!("workload.stages.{stage}.duration_s={}", stated * f));
        factors.push((leans, f));
    }
    Some((sets, factors))
}

/// Runs the study on `evidence`, writing scratch files into `scratch`.
pub fn run(evidence: Evidence, scope: Scope, scratch: &Path) -> Result<Study, AccuracyError> {
    // The spreads, from every calibration listed.
    let mut hosts = Vec::new();
    for (i, (_, raw)) in evidence.spread_calibrations.iter().enumerate() {
        let r = refit(raw, scratch, &format!("spread-{i}"))?;
        hosts.push((r.card, r.host));
    }
    let (spread, key_values) = spreads::measure(&hosts);
    let typical_spread = spreads::typical(&spread);
    let replays = evidence.replays()?;
    // Each boot's own calibration, and what its replays' probes saw.
    let mut calibrations = Vec::new();
    let mut profiles = Vec::new();
    for (b, boot) in evidence.boots.iter().enumerate() {
        let r = refit(&boot.calibration, scratch, &boot.name)?;
        let probes: Vec<Probes> = (replays.iter())
            .filter(|p| p.boot == b)
            .map(|p| p.probes)
            .collect();
        let probes = median_probes(&probes)
            .ok_or_else(|| AccuracyError::file(&boot.calibration, "its boot has no replay"))?;
        profiles.push(BootProfile {
            probes,
            memory: r.memory,
        });
        calibrations.push(r.path);
    }
    let typical_cal = scratch.join("typical.toml");
    std::fs::write(
        &typical_cal,
        "[calibration]\nsummary = \"typical values: no host key measured\"\n",
    )
    .map_err(|e| AccuracyError::file(&typical_cal, e.to_string()))?;
    let groups = groups(&replays);
    // The points as their boots ran them, with the host keys' spread carried through the
    // engine; the moved ones reuse that spread (it is the calibration's, not the stages').
    let mut base_jobs: Vec<Job> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let job = |calibrated| Job {
            group: g,
            calibrated,
            profile: group.boot,
        };
        base_jobs.push(job(true));
        if scope.typical {
            base_jobs.push(job(false));
        }
    }
    let predict_job = |job: &Job, host_log_sd: Option<f64>| -> Result<Option<Row>, AccuracyError> {
        let group = &groups[job.group];
        let Some((stage_sets, _)) = moved_stages(group, &profiles, job.profile) else {
            return Ok(None);
        };
        let (path, spread) = if job.calibrated {
            (&calibrations[group.boot], &spread)
        } else {
            (&typical_cal, &typical_spread)
        };
        let mut sets = group.sets.clone();
        sets.extend(stage_sets);
        let predicted = match host_log_sd {
            None => predict(&group.scenario, path, &sets, spread)?,
            Some(sd) => predict_once(&group.scenario, path, &sets, sd)?,
        };
        let boot = &evidence.boots[group.boot];
        let profile = &evidence.boots[job.profile];
        Ok(Some(Row {
            run: boot.run.clone(),
            boot: boot.name.clone(),
            card: boot.card.clone(),
            calibration: if job.calibrated {
                boot.name.clone()
            } else {
                "typical".to_string()
            },
            profile: profile.name.clone(),
            profile_card: profile.card.clone(),
            shape: group.shape.clone(),
            x: group.x,
            measured: group.runs.iter().sum::<f64>() / group.runs.len() as f64,
            runs: group.runs.len(),
            predicted,
        }))
    };
    let base: Vec<(Job, Row)> = (base_jobs.par_iter())
        .map(|j| Ok(predict_job(j, None)?.map(|r| (*j, r))))
        .collect::<Result<Vec<_>, AccuracyError>>()?
        .into_iter()
        .flatten()
        .collect();
    let held_out = |job: &Job| evidence.boots[groups[job.group].boot].held_out;
    let mut moved_jobs: Vec<(Job, f64)> = Vec::new();
    if scope.matrix {
        for (job, row) in &base {
            // A held-out boot's profile carries no stage times: nothing it measured
            // reaches the fitted points.
            let profiles = (0..evidence.boots.len())
                .filter(|p| *p != job.profile && !evidence.boots[*p].held_out);
            for p in profiles {
                let moved = Job { profile: p, ..*job };
                moved_jobs.push((moved, row.predicted.host_log_sd));
            }
        }
    }
    let moved: Vec<(Job, Row)> = (moved_jobs.par_iter())
        .map(|(j, sd)| Ok(predict_job(j, Some(*sd))?.map(|r| (*j, r))))
        .collect::<Result<Vec<_>, AccuracyError>>()?
        .into_iter()
        .flatten()
        .collect();
    let stage_factors = |held: bool| {
        let mut factors: BTreeMap<&'static str, (Leans, Vec<f64>)> = BTreeMap::new();
        for (job, _) in (moved.iter()).filter(|(j, _)| j.calibrated && held_out(j) == held) {
            let group = &groups[job.group];
            for (leans, f) in moved_stages(group, &profiles, job.profile)
                .map(|m| m.1)
                .unwrap_or_default()
            {
                factors
                    .entry(leans.name())
                    .or_insert((leans, Vec::new()))
                    .1
                    .push(f.ln());
            }
        }
        (factors.into_values())
            .map(|(leans, logs)| {
                let (lo, hi) = logs
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                        (a.min(*x), b.max(*x))
                    });
                (leans, spreads::sample_sd(&logs), lo.exp(), hi.exp())
            })
            .collect::<Vec<_>>()
    };
    let (fitted_factors, held_out_factors) = (stage_factors(false), stage_factors(true));
    let (mut points, mut held_points) = (Points::default(), Points::default());
    for (stages_moved, rows) in [(false, base), (true, moved)] {
        for (j, r) in rows {
            let to = if held_out(&j) {
                &mut held_points
            } else {
                &mut points
            };
            to.rows_mut(HostKnowledge::of(j.calibrated, stages_moved))
                .push(r);
        }
    }
    fn refs(rows: &[Row]) -> Vec<&Row> {
        rows.iter().collect()
    }
    let fit_some = |k| {
        let rows = points.rows(k);
        (!rows.is_empty()).then(|| fit::fit(&refs(rows)))
    };
    let calibrated = fit::fit(&refs(&points.own));
    let moved_under_own_model =
        (!points.moved.is_empty()).then(|| fit::apply(&refs(&points.moved), &calibrated.error));
    Ok(Study {
        boots: (evidence.boots.iter())
            .map(|b| (b.name.clone(), b.card.clone()))
            .collect(),
        evidence,
        spread,
        typical_spread,
        key_values,
        calibrated_stages_moved: fit_some(HostKnowledge::CalibratedStagesMoved),
        typical_fit: fit_some(HostKnowledge::Typical),
        typical_stages_moved: fit_some(HostKnowledge::TypicalStagesMoved),
        moved_under_own_model,
        stage_factors: fitted_factors,
        held_out: HeldOut {
            points: held_points,
            stage_factors: held_out_factors,
        },
        points,
        calibrated,
    })
}

impl Study {
    /// The fitted error model of a host known as `k` (the calibrated one where the study
    /// did not make that case's points).
    pub fn fitted(&self, k: HostKnowledge) -> &Fitted {
        let case = match k {
            HostKnowledge::Calibrated => None,
            HostKnowledge::CalibratedStagesMoved => self.calibrated_stages_moved.as_ref(),
            HostKnowledge::Typical => self.typical_fit.as_ref(),
            HostKnowledge::TypicalStagesMoved => self.typical_stages_moved.as_ref(),
        };
        case.unwrap_or(&self.calibrated)
    }

    /// The rows behind `k`'s error model.
    pub fn rows(&self, k: HostKnowledge) -> &[Row] {
        self.points.rows(k)
    }
}
