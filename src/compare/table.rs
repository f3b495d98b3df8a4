//! The comparison as a purchase proposal reads it: one Markdown row per host (proofs/day,
//! s/proof, best concurrency, bottleneck, RAM needed, $/proof), the cheapest fleet for a
//! target, and the assumptions under the table; the same as JSON.

use serde::Serialize;
use serde_json::{Value, json};

use super::cost::{CostAssumptions, Target};
use super::host::HostProfile;
use crate::analysis::interval::{Summary, distinct};
use crate::analysis::prediction::PredictionInterval;
use crate::analysis::throughput::{JobName, Throughput, cell};
use crate::scenario::host_scaling::{ScaledStage, StageWork};

/// Which setting a host's search named, and what else it found as good.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The named setting: the smallest inside the best's interval, `KEY=VALUE`.
    pub best: Vec<String>,
    /// The setting with the highest mean.
    pub best_mean: Vec<String>,
    /// Every setting inside the best's interval, smallest first.
    pub plateau: Vec<Vec<String>>,
    /// Settings searched.
    pub points: usize,
    /// The named setting is the largest value searched of some knob: more might be better.
    pub at_search_edge: bool,
}

/// The setting named for one host and its numbers there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Seconds per proof and proofs per day with their intervals, as every report says
    /// them (JSON: `throughput`).
    #[serde(serialize_with = "throughput_json")]
    pub throughput: Throughput,
    /// Proofs per day at the named setting (mean over its seeds).
    pub proofs_per_day: f64,
    /// Half-width of its 95% interval; `None` with one seed.
    pub proofs_per_day_ci95: Option<f64>,
    /// Seconds per proof (steady state, mean over its seeds).
    pub seconds_per_proof: f64,
    /// Half-width of its 95% interval; `None` with one seed.
    pub seconds_per_proof_ci95: Option<f64>,
    /// Seeds the setting was run on.
    pub seeds: usize,
    /// What was named and what else is as good.
    #[serde(flatten)]
    pub setting: Setting,
    /// What limits throughput there.
    #[serde(flatten)]
    pub bottleneck: Bottleneck,
    /// Host RAM the run needs, GiB: the modelled peak plus what the scenario reserves.
    pub ram_needed_gib: f64,
    /// US dollars per day of the host.
    pub daily_usd: f64,
    /// US dollars per proof.
    pub usd_per_proof: f64,
    /// Half-width of its 95% interval (from the proofs per day's, to first order).
    pub usd_per_proof_ci95: Option<f64>,
    /// What the host will do at the named setting: the 95% prediction interval, or why
    /// there is none (JSON: `prediction`, and `prediction_error`).
    #[serde(serialize_with = "prediction_json")]
    pub prediction: Result<PredictionInterval, String>,
}

/// What limits a host at its named setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bottleneck {
    /// The what-if step that buys most there, as `run` names it ("GPUs +1 saves 6.1%"), or
    /// why the steps did not run (JSON: `bottleneck`, or `bottleneck_error`).
    #[serde(rename = "bottleneck", serialize_with = "steps_json")]
    pub by_steps: Result<String, String>,
    /// The busiest resource there, most common over the seeds (JSON: `busiest`).
    pub busiest: String,
}

impl Bottleneck {
    /// The table's cell: the step, or the busiest resource when the steps failed.
    pub fn cell(&self) -> String {
        match &self.by_steps {
            Ok(step) => step.clone(),
            Err(_) => format!("busiest: {}", self.busiest),
        }
    }
}

fn steps_json<S: serde::Serializer>(b: &Result<String, String>, s: S) -> Result<S::Ok, S::Error> {
    or_error(b.as_ref().map(|step| json!(step)), s)
}

fn prediction_json<S: serde::Serializer>(
    p: &Result<PredictionInterval, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    or_error(
        p.as_ref()
            .map(crate::analysis::report::json::prediction_json),
        s,
    )
}

/// A result as JSON: its value, or `{"error": why}`.
fn or_error<S: serde::Serializer>(r: Result<Value, &String>, s: S) -> Result<S::Ok, S::Error> {
    r.unwrap_or_else(|why| json!({ "error": why })).serialize(s)
}

fn throughput_json<S: serde::Serializer>(t: &Throughput, s: S) -> Result<S::Ok, S::Error> {
    t.to_json().serialize(s)
}

impl Outcome {
    /// The outcome of a named setting: its throughput, the host's cost per day, the
    /// setting, the bottleneck there and the RAM it needs.
    pub fn new(
        throughput: Throughput,
        daily_usd: f64,
        setting: Setting,
        bottleneck: Bottleneck,
        ram_needed_gib: f64,
        prediction: Result<PredictionInterval, String>,
    ) -> Outcome {
        let per_day = throughput.jobs_per_day;
        let spj = throughput.seconds_per_job;
        Outcome {
            proofs_per_day: per_day.mean,
            proofs_per_day_ci95: per_day.ci95,
            seconds_per_proof: spj.mean,
            seconds_per_proof_ci95: spj.ci95,
            seeds: spj.n,
            usd_per_proof: daily_usd / per_day.mean,
            usd_per_proof_ci95: per_day
                .ci95
                .map(|h| daily_usd * h / (per_day.mean * per_day.mean)),
            throughput,
            setting,
            bottleneck,
            ram_needed_gib,
            daily_usd,
            prediction,
        }
    }

    /// Proofs per day's 95% prediction interval as a cell, `1740-2850`, or `-`.
    pub fn prediction_cell(&self) -> String {
        self.prediction
            .as_ref()
            .map_or_else(|_| "-".into(), PredictionInterval::per_day_range)
    }

    /// Proofs per day with its interval.
    pub fn proofs_per_day_summary(&self) -> Summary {
        self.throughput.jobs_per_day
    }

    /// Dollars per proof with its interval.
    pub fn usd_per_proof_summary(&self) -> Summary {
        Summary {
            n: self.seeds,
            mean: self.usd_per_proof,
            ci95: self.usd_per_proof_ci95,
        }
    }
}

/// Why a host has no best setting (its row says "does not run" and this).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoResult {
    /// The scenario does not load on the host (too little RAM, too few cores for a stage)
    /// or a run failed: the whole chain of causes, outermost first.
    #[error("{chain}")]
    CannotRun {
        /// The sweep's error and its causes, "outer: inner: ...".
        chain: String,
    },
    /// Every setting stalled, finished no proof or had no steady state.
    #[error(
        "every setting searched stalled, finished no proof or had no steady state (most \
         proofs starting at once: simulate more jobs than the concurrency)"
    )]
    NoSteadySetting,
}

/// As its message (the JSON's `error` string).
impl Serialize for NoResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One host's row: its profile, the overrides it became, and the result (or why none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostResult {
    /// The host file as given.
    pub file: String,
    /// The profile.
    pub host: HostProfile,
    /// The `--set` overrides it maps to.
    pub sets: Vec<String>,
    /// The best setting, or why the scenario cannot run on the host.
    pub outcome: Result<Outcome, NoResult>,
    /// Stages whose time the scenario carried to this host from where it was measured.
    #[serde(skip)]
    pub scaling: Vec<ScaledStage>,
}

/// One host's stage scaling in a line: "spmv x9.19 (192 threads measured, 16 here), ...".
fn scaling_line(scaling: &[ScaledStage]) -> String {
    if scaling.is_empty() {
        return "as measured".into();
    }
    let parts: Vec<String> = scaling
        .iter()
        .map(|st| {
            let why = match st.work {
                StageWork::Cpu { asked, granted } if asked != granted => {
                    format!("{asked} threads measured, {granted} here")
                }
                StageWork::GpuKernel => "GPU".into(),
                _ => "CPU".into(),
            };
            format!("{} x{:.2} ({why})", st.stage, st.factor())
        })
        .collect();
    parts.join(", ")
}

/// Everything the comparison says: the scenario and its word for a job, each host's
/// row, the target fleet, the money assumptions, what of the host model the scenario
/// keeps on every host, and the notes.
#[derive(Debug, Clone, Copy)]
pub struct Comparison<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// What a job is called (a proof, for the C2 scenarios).
    pub job: &'a JobName,
    /// One row per host, in the order given.
    pub rows: &'a [HostResult],
    /// The cheapest fleet for the target, when one reaches it.
    pub target: Option<&'a Target>,
    /// The target asked for (`--target-proofs-per-day`).
    pub target_asked: Option<f64>,
    /// Amortisation and power price.
    pub costs: &'a CostAssumptions,
    /// The host model the scenario keeps on every host ([`super::kept::kept_host_model`]).
    pub kept: &'a [String],
    /// The notes under the table ([`super::assumptions::assumptions`]).
    pub assumptions: &'a [String],
}

impl Comparison<'_> {
    /// The Markdown table, the ranking, the target line (if any), the footnotes, the
    /// host model kept and the assumptions.
    pub fn markdown(&self) -> String {
        let (job, rows) = (self.job, self.rows);
        let mut s = format!("Scenario `{}`, best setting per host:\n\n", self.scenario);
        s.push_str(&format!(
            "| host | CPU | DRAM GB/s | GPUs | {}, 95% prediction | {}, seeds | {} | best setting | bottleneck | RAM needed (GiB) | $/{} |\n",
            job.per_day(),
            job.per_day(),
            job.seconds_per(),
            job.singular()
        ));
        s.push_str("|---|---|---:|---|---:|---:|---:|---|---|---:|---:|\n");
        for r in rows {
            let h = &r.host;
            let gpus = format!(
                "{} x {} (PCIe {}.0)",
                h.gpu.count, h.gpu.model, h.gpu.pcie_gen
            );
            let cpu = format!("{}C/{}T", h.cpu.cores, h.cpu.threads);
            match &r.outcome {
                Ok(o) => {
                    let mut marks = String::new();
                    if o.setting.at_search_edge {
                        marks.push_str(" *");
                    }
                    if o.setting.plateau.len() > 1 {
                        marks.push_str(" †");
                    }
                    s.push_str(&format!(
                        "| {} | {cpu} | {:.0} | {gpus} | {} | {} | {} | {}{marks} | {} | {:.0} | {} |\n",
                        h.name,
                        h.dram_gbps(),
                        o.prediction_cell(),
                        o.throughput.per_day_cell(),
                        o.throughput.seconds_cell(),
                        o.setting.best.join(", "),
                        o.bottleneck.cell(),
                        o.ram_needed_gib,
                        money(&o.usd_per_proof_summary())
                    ));
                }
                Err(why) => s.push_str(&format!(
                    "| {} | {cpu} | {:.0} | {gpus} | - | - | - | - | does not run: {} | - | - |\n",
                    h.name,
                    h.dram_gbps(),
                    why.to_string().replace('|', "/").replace('\n', " ")
                )),
            }
        }
        if let Some(line) = ranking_line(rows, job) {
            s.push('\n');
            s.push_str(&line);
        }
        if let Some(asked) = self.target_asked {
            s.push('\n');
            s.push_str(&self.target_line(asked));
        }
        let outcomes = || {
            rows.iter()
                .filter_map(|r| Some((r, r.outcome.as_ref().ok()?)))
        };
        if outcomes().any(|(_, o)| o.setting.at_search_edge) {
            s.push_str(
                "\n\\* the best setting is the largest value searched: widen the search (`--search`) to see whether more is better still.\n",
            );
        }
        if outcomes().any(|(_, o)| o.setting.plateau.len() > 1) {
            s.push_str(
                "\n† a plateau: these settings are as good as the best (inside the 95% \
                 interval of the difference from the highest mean); the smallest is named, \
                 as `sweep` names its knee:\n",
            );
            for (r, o) in outcomes().filter(|(_, o)| o.setting.plateau.len() > 1) {
                s.push_str(&format!(
                    "- {}: {} (highest mean at {})\n",
                    r.host.name,
                    plateau_text(&o.setting.plateau),
                    o.setting.best_mean.join(", ")
                ));
            }
        }
        s.push_str("\nStage times on each host (scaled from where the scenario measured them):\n");
        for r in rows {
            s.push_str(&format!(
                "- {}: {}\n",
                r.host.name,
                scaling_line(&r.scaling)
            ));
        }
        if !self.kept.is_empty() {
            s.push_str(&format!(
                "\nWhat `{}` keeps on every host (a host file does not set it; another \
                 scenario that says it differently gives the same host another answer):\n",
                self.scenario
            ));
            for k in self.kept {
                s.push_str(&format!("- {k}\n"));
            }
        }
        s.push_str("\nAssumptions:\n");
        s.push_str(&format!(
            "- $/{} = (price / ({} years x 365 days) + power_w x 24 h x ${}/kWh) / {} per day; a rented host: hourly rent x 24 / {} per day.\n",
            job.singular(),
            self.costs.amortise_years,
            self.costs.power_price_per_kwh,
            job.plural(),
            job.plural()
        ));
        for a in self.assumptions {
            s.push_str(&format!("- {a}\n"));
        }
        s
    }

    fn target_line(&self, asked: f64) -> String {
        let (job, rows) = (self.job, self.rows);
        match self.target {
            Some(t) => {
                let r = &rows[t.host];
                let best = (r.outcome.as_ref())
                    .map(|o| o.setting.best.join(", "))
                    .unwrap_or_default();
                format!(
                    "Cheapest way to {asked:.0} {unit}: {} x {} ({best}): {:.0} {unit} for ${}/day (${}/{}).\n",
                    t.count,
                    r.host.name,
                    t.total_proofs_per_day,
                    plain_money(t.daily_usd),
                    plain_money(t.daily_usd / t.total_proofs_per_day),
                    job.singular(),
                    unit = job.per_day(),
                )
            }
            None if rows.iter().any(|r| r.outcome.is_ok()) => format!(
                "No fleet reaches {asked:.0} {}: each host that runs would need more than {} \
                 machines.\n",
                job.per_day(),
                super::cost::MAX_FLEET
            ),
            None => format!("No host reaches {asked:.0} {} (none ran).\n", job.per_day()),
        }
    }

    /// The comparison as JSON.
    pub fn to_json(&self) -> Value {
        let rows = self.rows;
        let hosts: Vec<Value> = rows
            .iter()
            .map(|r| {
                let mut v = json!({
                    "name": r.host.name,
                    "file": r.file,
                    "profile": r.host,
                    "dram_gbps": r.host.dram_gbps(),
                    "pcie_gbps": r.host.pcie_gbps(),
                    "sets": r.sets,
                    "stage_scaling": r.scaling.iter().map(|st| json!({
                        "stage": st.stage,
                        "measured_s": st.measured_s,
                        "here_s": st.here_s,
                        "factor": st.factor(),
                        "why": st.to_string(),
                    })).collect::<Vec<_>>(),
                });
                match &r.outcome {
                    Ok(o) => v["result"] = json!(o),
                    Err(why) => v["error"] = json!(why),
                }
                v
            })
            .collect();
        let ranking: Vec<Value> = ranking(rows)
            .into_iter()
            .map(|(i, r)| {
                json!({
                    "host": rows[i].host.name,
                    "resolved_against_next": r.map(|r| r != Resolved::No),
                    "resolved_by_prediction_against_next": r.map(|r| r == Resolved::ByPrediction),
                })
            })
            .collect();
        json!({
            "scenario": self.scenario,
            "job_name": self.job.singular(),
            "ranking": ranking,
            "amortise_years": self.costs.amortise_years,
            "power_price_per_kwh": self.costs.power_price_per_kwh,
            "hosts": hosts,
            "target": self.target_asked.map(|asked| json!({
                "proofs_per_day": asked,
                "cheapest": self.target.map(|t| json!({
                    "host": rows[t.host].host.name,
                    "count": t.count,
                    "total_proofs_per_day": t.total_proofs_per_day,
                    "daily_usd": t.daily_usd,
                })),
            })),
            "kept_host_model": self.kept,
            "assumptions": self.assumptions,
        })
    }
}

/// The settings of a plateau, compactly: one knob's values listed after its name
/// ("synthesis_concurrency = 13, 15, 17"), several knobs' settings one by one.
fn plateau_text(plateau: &[Vec<String>]) -> String {
    let one_knob = plateau.iter().all(|s| s.len() == 1);
    let name = |s: &str| {
        s.split_once('=')
            .map(|(k, v)| (k.to_string(), v.to_string()))
    };
    if one_knob && let Some((knob, _)) = plateau.first().and_then(|s| name(&s[0])) {
        let values: Vec<String> = (plateau.iter())
            .filter_map(|s| name(&s[0]).map(|(_, v)| v))
            .collect();
        return format!("{knob} = {}", values.join(", "));
    }
    (plateau.iter())
        .map(|s| s.join(", "))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Dollars with the precision their interval allows (without one, at 4 significant
/// digits).
fn money(usd: &Summary) -> String {
    cell(usd)
}

/// Dollars without an interval: cents above a dollar, else 4 significant digits.
fn plain_money(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        crate::analysis::throughput::significant(v)
    }
}

/// How far a host is told apart from the next in the ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// By their prediction intervals: what the hosts will do differs.
    ByPrediction,
    /// By the seeds alone: the simulation tells them apart, the model's error does not.
    BySeedsOnly,
    /// Not even by the seeds.
    No,
}

/// The hosts that ran, most proofs per day first, each with how far it is told apart
/// from the next.
pub fn ranking(rows: &[HostResult]) -> Vec<(usize, Option<Resolved>)> {
    let mut ok: Vec<(usize, &Outcome)> = (rows.iter().enumerate())
        .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|o| (i, o)))
        .collect();
    ok.sort_by(|a, b| b.1.proofs_per_day.total_cmp(&a.1.proofs_per_day));
    (0..ok.len())
        .map(|k| {
            let next = ok.get(k + 1).map(|(_, n)| {
                let a = ok[k].1;
                let by_prediction = match (&a.prediction, &n.prediction) {
                    (Ok(pa), Ok(pb)) => super::prediction::resolved(pa, pb),
                    _ => false,
                };
                if by_prediction {
                    Resolved::ByPrediction
                } else if distinct(&a.proofs_per_day_summary(), &n.proofs_per_day_summary()) {
                    Resolved::BySeedsOnly
                } else {
                    Resolved::No
                }
            });
            (ok[k].0, next)
        })
        .collect()
}

/// `Ranking by proofs/day: a > b ~ c > d` (`>`: told apart by the prediction
/// intervals), with what `~` means for each pair, or `None` for fewer than two hosts
/// that ran.
fn ranking_line(rows: &[HostResult], job: &JobName) -> Option<String> {
    let order = ranking(rows);
    if order.len() < 2 {
        return None;
    }
    let mut line = format!("Ranking by {} (95% prediction intervals): ", job.per_day());
    for &(i, resolved) in &order {
        line.push_str(&rows[i].host.name);
        match resolved {
            Some(Resolved::ByPrediction) => line.push_str(" > "),
            Some(_) => line.push_str(" ~ "),
            None => {}
        }
    }
    line.push_str(".\n");
    let pairs = |want: Resolved| -> Vec<String> {
        (order.windows(2))
            .filter(|w| w[0].1 == Some(want))
            .map(|w| format!("{} and {}", rows[w[0].0].host.name, rows[w[1].0].host.name))
            .collect()
    };
    let (seeds_only, neither) = (pairs(Resolved::BySeedsOnly), pairs(Resolved::No));
    if !seeds_only.is_empty() || !neither.is_empty() {
        line.push_str("`~`: not resolved by the prediction intervals (each host's own, treated as independent): ");
        let mut parts = Vec::new();
        if !seeds_only.is_empty() {
            parts.push(format!(
                "{} differ beyond the seeds' noise but within the model's error, so the hosts may not",
                seeds_only.join("; ")
            ));
        }
        if !neither.is_empty() {
            parts.push(format!(
                "{} are within the seeds' noise too (more `--replications` narrow that part only)",
                neither.join("; ")
            ));
        }
        line.push_str(&parts.join("; "));
        line.push_str(".\n");
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_result_is_its_message_in_json() {
        let why = NoResult::CannotRun {
            chain: "cannot load s.toml: host_ram_gib: too little RAM".into(),
        };
        assert_eq!(json!(why), json!(why.to_string()));
        let none = json!(NoResult::NoSteadySetting);
        assert!(
            none.as_str()
                .unwrap()
                .starts_with("every setting searched stalled")
        );
    }
}
