//! The comparison as a purchase proposal reads it: one Markdown row per host (proofs/day,
//! s/proof, best concurrency, bottleneck, RAM needed, $/proof), the cheapest fleet for a
//! target, and the assumptions under the table; the same as JSON.

use serde::Serialize;
use serde_json::{Value, json};

use super::cost::{CostAssumptions, Target};
use super::host::HostProfile;
use crate::analysis::interval::{Summary, distinct};
use crate::scenario::host_scaling::{ScaledStage, StageWork};

/// The best setting found for one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Proofs per day at the best setting (mean over its seeds).
    pub proofs_per_day: f64,
    /// Half-width of its 95% interval; `None` with one seed.
    pub proofs_per_day_ci95: Option<f64>,
    /// Seconds per proof (steady state, mean over its seeds).
    pub seconds_per_proof: f64,
    /// Half-width of its 95% interval; `None` with one seed.
    pub seconds_per_proof_ci95: Option<f64>,
    /// Seeds the best setting was run on.
    pub seeds: usize,
    /// The searched knobs at their best values, `KEY=VALUE`.
    pub best: Vec<String>,
    /// The limiting resource there.
    pub bottleneck: String,
    /// Host RAM the run needs, GiB: the modelled peak plus what the scenario reserves.
    pub ram_needed_gib: f64,
    /// US dollars per day of the host.
    pub daily_usd: f64,
    /// US dollars per proof.
    pub usd_per_proof: f64,
    /// Settings searched.
    pub points: usize,
    /// The best setting is the largest value searched of some knob: more might be better.
    pub at_search_edge: bool,
}

impl Outcome {
    /// Proofs per day with its interval.
    pub fn proofs_per_day_summary(&self) -> Summary {
        Summary {
            n: self.seeds,
            mean: self.proofs_per_day,
            ci95: self.proofs_per_day_ci95,
        }
    }

    fn seconds_per_proof_summary(&self) -> Summary {
        Summary {
            n: self.seeds,
            mean: self.seconds_per_proof,
            ci95: self.seconds_per_proof_ci95,
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

fn money(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The Markdown table, the target line (if any) and the assumptions.
pub fn markdown(
    scenario: &str,
    rows: &[HostResult],
    target: Option<&Target>,
    target_asked: Option<f64>,
    costs: &CostAssumptions,
    assumptions: &[String],
) -> String {
    let mut s = format!("Scenario `{scenario}`, best setting per host:\n\n");
    s.push_str("| host | CPU | DRAM GB/s | GPUs | proofs/day | s/proof | best setting | bottleneck | RAM needed (GiB) | $/proof |\n");
    s.push_str("|---|---|---:|---|---:|---:|---|---|---:|---:|\n");
    for r in rows {
        let h = &r.host;
        let gpus = format!(
            "{} x {} (PCIe {}.0)",
            h.gpu.count, h.gpu.model, h.gpu.pcie_gen
        );
        let cpu = format!("{}C/{}T", h.cpu.cores, h.cpu.threads);
        match &r.outcome {
            Ok(o) => s.push_str(&format!(
                "| {} | {cpu} | {:.0} | {gpus} | {} | {} | {} | {} | {:.0} | {} |\n",
                h.name,
                h.dram_gbps(),
                o.proofs_per_day_summary().display(0),
                o.seconds_per_proof_summary().display(1),
                o.best.join(", ") + if o.at_search_edge { " *" } else { "" },
                o.bottleneck,
                o.ram_needed_gib,
                money(o.usd_per_proof)
            )),
            Err(why) => s.push_str(&format!(
                "| {} | {cpu} | {:.0} | {gpus} | - | - | - | does not run: {} | - | - |\n",
                h.name,
                h.dram_gbps(),
                why.to_string().replace('|', "/").replace('\n', " ")
            )),
        }
    }
    if let Some(line) = ranking_line(rows) {
        s.push('\n');
        s.push_str(&line);
    }
    if let Some(asked) = target_asked {
        s.push('\n');
        match target {
            Some(t) => {
                let r = &rows[t.host];
                let best = r
                    .outcome
                    .as_ref()
                    .map(|o| o.best.join(", "))
                    .unwrap_or_default();
                s.push_str(&format!(
                    "Cheapest way to {asked:.0} proofs/day: {} x {} ({best}): {:.0} proofs/day for ${}/day (${}/proof).\n",
                    t.count,
                    r.host.name,
                    t.total_proofs_per_day,
                    money(t.daily_usd),
                    money(t.daily_usd / t.total_proofs_per_day)
                ));
            }
            None if rows.iter().any(|r| r.outcome.is_ok()) => s.push_str(&format!(
                "No fleet reaches {asked:.0} proofs/day: each host that runs would need more \
                 than {} machines.\n",
                super::cost::MAX_FLEET
            )),
            None => s.push_str(&format!(
                "No host reaches {asked:.0} proofs/day (none ran).\n"
            )),
        }
    }
    if rows
        .iter()
        .any(|r| r.outcome.as_ref().is_ok_and(|o| o.at_search_edge))
    {
        s.push_str(
            "\n\\* the best setting is the largest value searched: widen the search (`--search`) to see whether more is better still.\n",
        );
    }
    s.push_str("\nStage times on each host (scaled from where the scenario measured them):\n");
    for r in rows {
        s.push_str(&format!(
            "- {}: {}\n",
            r.host.name,
            scaling_line(&r.scaling)
        ));
    }
    s.push_str("\nAssumptions:\n");
    s.push_str(&format!(
        "- $/proof = (price / ({} years x 365 days) + power_w x 24 h x ${}/kWh) / proofs per day; a rented host: hourly rent x 24 / proofs per day.\n",
        costs.amortise_years, costs.power_price_per_kwh
    ));
    for a in assumptions {
        s.push_str(&format!("- {a}\n"));
    }
    s
}

/// The hosts that ran, most proofs per day first, each with whether it is told apart
/// from the next (their intervals' difference excludes 0).
pub fn ranking(rows: &[HostResult]) -> Vec<(usize, Option<bool>)> {
    let mut ok: Vec<(usize, &Outcome)> = (rows.iter().enumerate())
        .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|o| (i, o)))
        .collect();
    ok.sort_by(|a, b| b.1.proofs_per_day.total_cmp(&a.1.proofs_per_day));
    (0..ok.len())
        .map(|k| {
            let next = ok.get(k + 1).map(|(_, n)| {
                distinct(
                    &ok[k].1.proofs_per_day_summary(),
                    &n.proofs_per_day_summary(),
                )
            });
            (ok[k].0, next)
        })
        .collect()
}

/// `Ranking by proofs/day: a > b ~ c (not resolved) > d`, or `None` for fewer than two
/// hosts that ran.
fn ranking_line(rows: &[HostResult]) -> Option<String> {
    let order = ranking(rows);
    if order.len() < 2 {
        return None;
    }
    let mut line = String::from("Ranking by proofs/day (95% intervals): ");
    let mut unresolved = Vec::new();
    for &(i, resolved) in &order {
        line.push_str(&rows[i].host.name);
        match resolved {
            Some(true) => line.push_str(" > "),
            Some(false) => {
                line.push_str(" ~ ");
                unresolved.push(i);
            }
            None => {}
        }
    }
    line.push_str(".\n");
    if !unresolved.is_empty() {
        let pairs: Vec<String> = (order.windows(2))
            .filter(|w| w[0].1 == Some(false))
            .map(|w| format!("{} and {}", rows[w[0].0].host.name, rows[w[1].0].host.name))
            .collect();
        line.push_str(&format!(
            "`~`: not resolved, the difference is within the noise of the seeds ({}); \
             more `--seeds` narrow the intervals.\n",
            pairs.join("; ")
        ));
    }
    Some(line)
}

/// The comparison as JSON.
pub fn to_json(
    scenario: &str,
    rows: &[HostResult],
    target: Option<&Target>,
    target_asked: Option<f64>,
    costs: &CostAssumptions,
    assumptions: &[String],
) -> Value {
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
        .map(|(i, resolved)| json!({"host": rows[i].host.name, "resolved_against_next": resolved}))
        .collect();
    json!({
        "scenario": scenario,
        "ranking": ranking,
        "amortise_years": costs.amortise_years,
        "power_price_per_kwh": costs.power_price_per_kwh,
        "hosts": hosts,
        "target": target_asked.map(|asked| json!({
            "proofs_per_day": asked,
            "cheapest": target.map(|t| json!({
                "host": rows[t.host].host.name,
                "count": t.count,
                "total_proofs_per_day": t.total_proofs_per_day,
                "daily_usd": t.daily_usd,
            })),
        })),
        "assumptions": assumptions,
    })
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
