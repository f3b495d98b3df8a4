//! The comparison run end to end, apart from flags and files: each host's overrides on
//! the scenario ([`super::host_overrides`]), its knob search run through the sweep
//! machinery ([`best_setting`]), and its row ([`HostResult`]).

use std::path::Path;

use super::cost::CostAssumptions;
use super::host::HostProfile;
use super::mapping::{ScenarioKnobs, host_overrides};
use super::search::{self, Candidate};
use super::table::{HostResult, NoResult, Outcome};
use crate::analysis::keys;
use crate::sweep::{
    ProgressMode, ScenarioSimulator, SweepArgs, SweepError, aggregate_table, execute, plan,
};

/// What every host's search shares: the scenario, the user's `--set`s, the searched
/// SPECs, seeds per setting and worker threads.
#[derive(Debug, Clone)]
pub struct SearchPlan<'a> {
    /// The scenario file.
    pub scenario: &'a Path,
    /// The user's `--set`s, applied before each host's own overrides.
    pub sets: &'a [String],
    /// The searched `KEY=SPEC`s.
    pub search: &'a [String],
    /// Seeds per searched setting.
    pub seeds: u32,
    /// Worker threads (None: all cores).
    pub jobs: Option<u32>,
}

/// Every host's row, in the order given: its overrides, its best setting (or why it has
/// none) and the stage times the scenario carried to it.
pub fn compare_hosts(
    plan: &SearchPlan,
    knobs: &ScenarioKnobs,
    hosts: Vec<(String, HostProfile)>,
    costs: &CostAssumptions,
) -> Vec<HostResult> {
    let sim = ScenarioSimulator::new(plan.scenario);
    let mut rows = Vec::new();
    for (file, host) in hosts {
        let mut sets = plan.sets.to_vec();
        sets.extend(host_overrides(&host, knobs));
        let sweep = SweepArgs {
            seeds: plan.seeds as usize,
            jobs: plan.jobs.map(|j| j as usize),
            sets: sets.clone(),
            ..SweepArgs::new(plan.scenario, plan.search.to_vec())
        };
        let outcome = best_setting(&sweep, &sim, host.dram.ram_gib, costs.daily_usd(&host));
        // What the scenario's stage times become on this host (a host it cannot load
        // on says why in its outcome).
        let scaling = crate::scenario::load(plan.scenario, &sets)
            .map(|l| l.summary.host_scaling)
            .unwrap_or_default();
        rows.push(HostResult {
            file,
            host,
            sets,
            outcome,
            scaling,
        });
    }
    rows
}

/// "outer: inner: ...": an error and its causes, as the command line prints a chain.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// Searches one host's settings; the one with the most proofs per day that did not stall
/// and had a steady state (a setting whose measured proofs mostly start together at t = 0
/// times one batch draining: its throughput is no result).
pub fn best_setting(
    sweep: &SweepArgs,
    sim: &ScenarioSimulator,
    ram_gib: f64,
    daily_usd: f64,
) -> Result<Outcome, NoResult> {
    // The whole chain of causes: "cannot load X" alone dropped why (too little RAM, too
    // few cores for a stage).
    let cannot_run = |e: SweepError| NoResult::CannotRun { chain: chain(&e) };
    let plan = plan(sweep, sim).map_err(cannot_run)?;
    let runs = execute(&plan, sim, ProgressMode::Hidden, &[], &|_| Ok(())).map_err(cannot_run)?;
    let table = aggregate_table(&plan, &runs);
    let ci = |r: usize, key: &str| table.stat(r, key).and_then(|s| s.ci95);
    // Rows are in grid order, as the runs they aggregate.
    let candidates: Vec<Candidate> = (0..table.rows.len())
        .map(|r| Candidate {
            stalled: table.rows[r].stalled > 0,
            steady: runs[r].reports.iter().all(|s| s.steady_state.is_reached()),
            jobs_per_hour: table.stat(r, keys::JOBS_PER_HOUR).map(|s| s.mean),
        })
        .collect();
    let best = search::best(&candidates).ok_or(NoResult::NoSteadySetting)?;
    let (r, jobs_per_hour) = best;
    let row = &table.rows[r];
    let stat = |k: &str| table.stat(r, k).map(|s| s.mean);
    let proofs_per_day = jobs_per_hour * 24.0;
    let reserved = ram_gib - stat("ram.capacity_gib").unwrap_or(ram_gib);
    Ok(Outcome {
        proofs_per_day,
        proofs_per_day_ci95: ci(r, keys::JOBS_PER_HOUR).map(|h| h * 24.0),
        seconds_per_proof: stat(keys::SECONDS_PER_JOB).unwrap_or(f64::NAN),
        seconds_per_proof_ci95: ci(r, keys::SECONDS_PER_JOB),
        seeds: row.seeds,
        best: table
            .params
            .iter()
            .zip(&row.values)
            .map(|(k, v)| format!("{}={v}", k.trim_start_matches("params.")))
            .collect(),
        bottleneck: row.bottleneck.clone(),
        ram_needed_gib: stat("ram.peak_gib").unwrap_or(0.0) + reserved.max(0.0),
        daily_usd,
        usd_per_proof: daily_usd / proofs_per_day,
        points: table.rows.len(),
        at_search_edge: plan
            .grid
            .params
            .iter()
            .zip(&row.values)
            .any(|(p, v)| crate::sweep::value::is_top_of_range(&p.values, v)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn demo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/demo.toml")
    }

    fn sweep(search: &str, seeds: usize) -> SweepArgs {
        SweepArgs {
            seeds,
            jobs: Some(1),
            sets: vec!["arrivals.jobs=60".into(), "arrivals.warmup_jobs=10".into()],
            ..SweepArgs::new(demo(), vec![search.into()])
        }
    }

    #[test]
    fn the_best_setting_is_a_searched_value_with_its_interval_and_price() {
        let sim = ScenarioSimulator::new(demo());
        let o = best_setting(&sweep("params.concurrency=1..4", 2), &sim, 128.0, 10.0).unwrap();
        assert_eq!(o.points, 4);
        assert_eq!(o.seeds, 2);
        let value: i64 = o.best[0]
            .strip_prefix("concurrency=")
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=4).contains(&value), "{:?}", o.best);
        assert!(o.proofs_per_day > 0.0 && o.proofs_per_day_ci95.is_some());
        assert!((o.usd_per_proof - 10.0 / o.proofs_per_day).abs() < 1e-12);
        assert!((o.seconds_per_proof * o.proofs_per_day / 86_400.0 - 1.0).abs() < 0.1);
        assert_eq!(o.at_search_edge, value == 4);
    }

    #[test]
    fn a_host_the_scenario_cannot_load_on_says_why_with_its_causes() {
        let sim = ScenarioSimulator::new(demo());
        let mut args = sweep("params.concurrency=1..2", 1);
        args.sets.push("hardware.host_ram_gib=0.001".into());
        let e = best_setting(&args, &sim, 0.001, 1.0).unwrap_err();
        let NoResult::CannotRun { chain } = e else {
            panic!("{e:?}")
        };
        assert!(chain.contains("host_ram"), "{chain}");
        assert!(chain.contains(": "), "the causes are chained: {chain}");
    }
}
