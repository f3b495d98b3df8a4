//! The comparison run end to end, apart from flags and files: each host's overrides on
//! the scenario ([`super::host_overrides`]), its knob search run through the sweep
//! machinery ([`best_setting`]), and its row ([`HostResult`]).

use std::path::Path;

use super::cost::CostAssumptions;
use super::host::HostProfile;
use super::mapping::{ScenarioKnobs, host_overrides};
use super::search::{self, Candidate};
use super::table::{Bottleneck, HostResult, NoResult, Outcome, Setting};
use crate::sweep::{
    ProgressMode, ScenarioSimulator, SweepArgs, SweepError, aggregate_table, execute, plan,
};

/// What every host's search shares: the scenario, the user's `--set`s, the searched
/// SPECs, replications per setting, their base seed and worker threads.
#[derive(Debug, Clone)]
pub struct SearchPlan<'a> {
    /// The scenario file.
    pub scenario: &'a Path,
    /// The user's `--set`s, applied before each host's own overrides.
    pub sets: &'a [String],
    /// The searched `KEY=SPEC`s.
    pub search: &'a [String],
    /// Replications (seeds) per searched setting.
    pub replications: u32,
    /// Base seed of the per-setting seeds (None: the scenario's).
    pub seed: Option<u64>,
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
            seeds: plan.replications as usize,
            jobs: plan.jobs.map(|j| j as usize),
            sets: sets.clone(),
            seed: plan.seed,
            ..SweepArgs::new(plan.scenario, plan.search.to_vec())
        };
        // The GPU's kernel speed and its uncertainty, where the host file states one.
        let gpu = (host.gpu.kernel_speed).map(|k| (k, host.gpu.kernel_speed_rel_sd));
        let outcome = best_setting(&sweep, &sim, host.dram.ram_gib, costs.daily_usd(&host), gpu);
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

/// Searches one host's settings and names one ([`search::decide`]): the smallest
/// setting whose proofs per day are inside the best's interval, among those that did not
/// stall and had a steady state (a setting whose measured proofs mostly start together
/// at t = 0 times one batch draining: its throughput is no result). Its prediction
/// interval there carries `gpu`'s kernel speed uncertainty (speed, relative sd).
pub fn best_setting(
    sweep: &SweepArgs,
    sim: &ScenarioSimulator,
    ram_gib: f64,
    daily_usd: f64,
    gpu: Option<(f64, f64)>,
) -> Result<Outcome, NoResult> {
    // The whole chain of causes: "cannot load X" alone dropped why (too little RAM, too
    // few cores for a stage).
    let cannot_run = |e: SweepError| NoResult::CannotRun { chain: chain(&e) };
    let plan = plan(sweep, sim).map_err(cannot_run)?;
    let runs = execute(&plan, sim, ProgressMode::Hidden, &[], &|_| Ok(())).map_err(cannot_run)?;
    let table = aggregate_table(&plan, &runs);
    // Rows are in grid order, as the runs they aggregate.
    let candidates: Vec<Candidate> = (0..table.rows.len())
        .map(|r| Candidate {
            values: table.rows[r].values.iter().map(|v| v.as_f64()).collect(),
            stalled: table.rows[r].stalled > 0,
            steady: runs[r].reports.iter().all(|s| s.steady_state.is_reached()),
            per_day: table.throughput(r).map(|t| t.jobs_per_day),
        })
        .collect();
    let decision = search::decide(&candidates).ok_or(NoResult::NoSteadySetting)?;
    let r = decision.chosen;
    let throughput = table.throughput(r).ok_or(NoResult::NoSteadySetting)?;
    let setting = |row: usize| -> Vec<String> {
        (table.params.iter())
            .zip(&table.rows[row].values)
            .map(|(k, v)| format!("{}={v}", k.trim_start_matches("params.")))
            .collect()
    };
    // The scenario as the named setting ran: its prediction, GPU speed and what-if steps.
    let row_sets = crate::sweep::prediction::row_sets(&sweep.sets, &table, r);
    let prediction = crate::sweep::prediction::at_row(&sweep.scenario, &sweep.sets, &table, r)
        .and_then(|p| match gpu {
            Some((speed, rel_sd)) => {
                let sd = super::prediction::kernel_speed_log_sd(
                    &sweep.scenario,
                    &row_sets,
                    speed,
                    rel_sd,
                )?;
                Ok(p.with_gpu_kernel_speed(sd))
            }
            None => Ok(p),
        });
    let bottleneck = Bottleneck {
        by_steps: crate::sweep::prediction::bottleneck_at(&sweep.scenario, &row_sets),
        busiest: table.rows[r].bottleneck.clone(),
    };
    let stat = |k: &str| table.stat(r, k).map(|s| s.mean);
    let reserved = ram_gib - stat("ram.capacity_gib").unwrap_or(ram_gib);
    Ok(Outcome::new(
        throughput,
        daily_usd,
        Setting {
            best: setting(r),
            best_mean: setting(decision.best_mean),
            plateau: decision.plateau.iter().map(|&p| setting(p)).collect(),
            points: table.rows.len(),
            at_search_edge: (plan.grid.params.iter())
                .zip(&table.rows[r].values)
                .any(|(p, v)| crate::sweep::value::is_top_of_range(&p.values, v)),
        },
        bottleneck,
        stat("ram.peak_gib").unwrap_or(0.0) + reserved.max(0.0),
        prediction,
    ))
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
        let o = best_setting(
            &sweep("params.concurrency=1..4", 2),
            &sim,
            128.0,
            10.0,
            None,
        )
        .unwrap();
        assert_eq!(o.setting.points, 4);
        assert_eq!(o.seeds, 2);
        let value: i64 = o.setting.best[0]
            .strip_prefix("concurrency=")
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=4).contains(&value), "{:?}", o.setting.best);
        assert!(o.proofs_per_day > 0.0 && o.proofs_per_day_ci95.is_some());
        // The named setting is on the plateau, which holds the best mean too.
        assert!(
            o.setting.plateau.contains(&o.setting.best)
                && o.setting.plateau.contains(&o.setting.best_mean)
        );
        assert!((o.usd_per_proof - 10.0 / o.proofs_per_day).abs() < 1e-12);
        assert!((o.seconds_per_proof * o.proofs_per_day / 86_400.0 - 1.0).abs() < 0.1);
        assert_eq!(o.setting.at_search_edge, value == 4);
    }

    #[test]
    fn a_host_the_scenario_cannot_load_on_says_why_with_its_causes() {
        let sim = ScenarioSimulator::new(demo());
        let mut args = sweep("params.concurrency=1..2", 1);
        args.sets.push("hardware.host_ram_gib=0.001".into());
        let e = best_setting(&args, &sim, 0.001, 1.0, None).unwrap_err();
        let NoResult::CannotRun { chain } = e else {
            panic!("{e:?}")
        };
        assert!(chain.contains("host_ram"), "{chain}");
        assert!(chain.contains(": "), "the causes are chained: {chain}");
    }
}
