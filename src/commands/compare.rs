//! `bwsim compare SCENARIO --host FILE...`: for each host profile, map it onto the
//! scenario ([`crate::compare::host_overrides`]), search the scenario's concurrency knobs
//! with the sweep machinery for the setting with the most proofs per day, price a proof,
//! then print the Markdown table (or JSON), name the cheapest fleet for
//! `--target-proofs-per-day`, and draw the chart (`--plot`).

use std::path::{Path, PathBuf};

use super::error::Result;
use crate::cli::{CompareArgs, Format};
use crate::compare::search::{self, Candidate, default_search};
use crate::compare::table::{markdown, to_json};
use crate::compare::{
    CompareInputError, CostAssumptions, HostResult, NoResult, Outcome, ScenarioKnobs,
    cheapest_for_target, host_overrides, load_host,
};
use crate::output::{Output, OutputKind, check_outputs, print_stdout};
use crate::plot::compare::{CompareChart, HostBar};
use crate::sweep::{ProgressMode, ScenarioSimulator, SweepArgs, aggregate_table, execute, plan};

/// Runs `bwsim compare`.
pub fn compare(args: CompareArgs) -> Result<()> {
    let costs = CostAssumptions {
        amortise_years: args.amortise_years,
        power_price_per_kwh: args.power_price_per_kwh,
    };
    if !(costs.amortise_years.is_finite() && costs.amortise_years > 0.0) {
        return Err(
            CompareInputError::new("--amortise-years", "give a number of years > 0").into(),
        );
    }
    if !(costs.power_price_per_kwh.is_finite() && costs.power_price_per_kwh >= 0.0) {
        return Err(CompareInputError::new("--power-price-per-kwh", "give a price >= 0").into());
    }
    if let Some(t) = args.target_proofs_per_day
        && !(t.is_finite() && t > 0.0)
    {
        return Err(CompareInputError::new("--target-proofs-per-day", "give a number > 0").into());
    }
    let hosts = args
        .hosts
        .iter()
        .map(|f| load_host(f))
        .collect::<Result<Vec<_>, _>>()?;
    let base = crate::scenario::load(&args.scenario, &args.sets)?;
    // Before any simulation: the chart (both formats) may be written, and over no input.
    if let Some(p) = &args.plot {
        let mut inputs = super::scenario_inputs(&base.summary);
        inputs.extend((args.hosts.iter()).map(|h| ("a --host profile".to_string(), h.clone())));
        check_outputs(&[Output::new("--plot", p, OutputKind::Chart)], &inputs)?;
    }
    let knobs = ScenarioKnobs {
        params: base.params.iter().map(|p| p.name.clone()).collect(),
        pools: base
            .model
            .hardware
            .pools
            .iter()
            .map(|p| p.name.clone())
            .collect(),
        cpu_pool_stages: cpu_pool_stages(&base.model),
        smt_yield: base
            .model
            .hardware
            .pools
            .iter()
            .find_map(|p| p.cpu.as_ref().map(|c| c.smt_yield)),
        measured_on: base.summary.measured_on.is_some(),
    };
    let search = if args.search.is_empty() {
        default_search(&base.params)?
    } else {
        args.search.clone()
    };
    check_search(&args.scenario, &args.sets, &search, args.seeds)?;
    let sim = ScenarioSimulator::new(&args.scenario);
    let mut rows = Vec::new();
    for (file, host) in args.hosts.iter().zip(hosts) {
        let mut sets = args.sets.clone();
        sets.extend(host_overrides(&host, &knobs));
        let sweep = SweepArgs {
            seeds: args.seeds as usize,
            jobs: args.jobs.map(|j| j as usize),
            sets: sets.clone(),
            ..SweepArgs::new(&args.scenario, search.clone())
        };
        let outcome = best_setting(&sweep, &sim, host.dram.ram_gib, costs.daily_usd(&host));
        // What the scenario's stage times become on this host (a host it cannot load
        // on says why in its outcome).
        let scaling = crate::scenario::load(&args.scenario, &sets)
            .map(|l| l.summary.host_scaling)
            .unwrap_or_default();
        rows.push(HostResult {
            file: file.display().to_string(),
            host,
            sets,
            outcome,
            scaling,
        });
    }
    let per_host: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| match &r.outcome {
            Ok(o) => (o.proofs_per_day, o.daily_usd),
            Err(_) => (0.0, f64::INFINITY),
        })
        .collect();
    let target = args
        .target_proofs_per_day
        .and_then(|t| cheapest_for_target(t, &per_host));
    let name = base.model.name.clone();
    let notes = assumptions(
        &args.scenario,
        base.summary.measured_on.as_deref(),
        &search,
        args.seeds,
    );
    if let Some(p) = &args.plot {
        draw(&name, &rows, p)?;
    }
    let text = match args.format {
        Format::Text => markdown(
            &name,
            &rows,
            target.as_ref(),
            args.target_proofs_per_day,
            &costs,
            &notes,
        ),
        Format::Json => {
            let doc = to_json(
                &name,
                &rows,
                target.as_ref(),
                args.target_proofs_per_day,
                &costs,
                &notes,
            );
            format!("{doc:#}\n")
        }
    };
    print_stdout(&text)?;
    Ok(())
}

/// Stages drawing threads of the pool named `cpu`, with how many.
fn cpu_pool_stages(model: &crate::model::Model) -> Vec<(String, f64)> {
    let Some(cpu) = model.hardware.pools.iter().position(|p| p.name == "cpu") else {
        return Vec::new();
    };
    model
        .workload
        .stages
        .iter()
        .filter_map(|s| {
            s.demands
                .iter()
                .find(|d| d.target == crate::model::RateTarget::Pool(cpu))
                .map(|d| (s.name.clone(), d.amount))
        })
        .collect()
}

/// Refuses a `--search` that no host could run: a SPEC that does not parse, or a key the
/// scenario does not have or a value of the wrong type for it (tried at each key's first
/// value on the scenario as given). Without this each host's row read "does not run" and
/// the exit status was 0. Value errors stay per host: a host's overrides may make a value
/// fit that the scenario as given refuses.
fn check_search(scenario: &Path, sets: &[String], search: &[String], seeds: u32) -> Result<()> {
    use crate::scenario::ErrorKind;
    // The sweep's messages name its own flag; here the SPECs came from --search.
    let search_err = |arg: &str, e: &dyn std::fmt::Display| {
        let msg = e.to_string().replace("--param", "--search");
        CompareInputError::new("--search", format!("{arg}: {msg}"))
    };
    let mut params = Vec::new();
    for arg in search {
        let param = crate::sweep::parse_param(arg).map_err(|e| search_err(arg, &e))?;
        params.push(param);
    }
    // The grid as a whole: a key searched twice, or more settings (x --seeds) than a
    // sweep runs, is the flags' fault, not each host's ("does not run" on every row).
    let all = search.join(" ");
    let grid = crate::sweep::Grid::new(params).map_err(|e| search_err(&all, &e))?;
    grid.check_runs(seeds as usize)
        .map_err(|e| search_err(&all, &e))?;
    for (arg, param) in search.iter().zip(&grid.params) {
        let Some(first) = param.values.first() else {
            continue;
        };
        let mut tried = sets.to_vec();
        tried.push(format!("{}={first}", param.key));
        match crate::scenario::load(scenario, &tried) {
            Err(e)
                if matches!(
                    e.kind,
                    ErrorKind::UnknownKey | ErrorKind::Type | ErrorKind::Set | ErrorKind::Param
                ) =>
            {
                return Err(CompareInputError::new("--search", format!("{arg}: {e}")).into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Searches one host's settings; the one with the most proofs per day that did not stall
/// and had a steady state (a setting whose measured proofs mostly start together at t = 0
/// times one batch draining: its throughput is no result).
fn best_setting(
    sweep: &SweepArgs,
    sim: &ScenarioSimulator,
    ram_gib: f64,
    daily_usd: f64,
) -> std::result::Result<Outcome, NoResult> {
    // The whole chain of causes: "cannot load X" alone dropped why (too little RAM, too
    // few cores for a stage).
    let chain = |e: crate::sweep::SweepError| NoResult::CannotRun {
        chain: format!("{:#}", anyhow::Error::from(e)),
    };
    let plan = plan(sweep, sim).map_err(chain)?;
    let runs = execute(&plan, sim, ProgressMode::Hidden, &[], &|_| Ok(())).map_err(chain)?;
    let table = aggregate_table(&plan, &runs);
    let ci = |r: usize, key: &str| table.stat(r, key).and_then(|s| s.ci95);
    // Rows are in grid order, as the runs they aggregate.
    let candidates: Vec<Candidate> = (0..table.rows.len())
        .map(|r| Candidate {
            stalled: table.rows[r].stalled > 0,
            steady: runs[r].reports.iter().all(|s| s.steady_state.is_reached()),
            jobs_per_hour: table
                .stat(r, crate::analysis::keys::JOBS_PER_HOUR)
                .map(|s| s.mean),
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
        proofs_per_day_ci95: ci(r, crate::analysis::keys::JOBS_PER_HOUR).map(|h| h * 24.0),
        seconds_per_proof: stat(crate::analysis::keys::SECONDS_PER_JOB).unwrap_or(f64::NAN),
        seconds_per_proof_ci95: ci(r, crate::analysis::keys::SECONDS_PER_JOB),
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

fn assumptions(
    scenario: &Path,
    measured_on: Option<&str>,
    search: &[String],
    seeds: u32,
) -> Vec<String> {
    let work = match measured_on {
        Some(host) => format!(
            "Stage times are those {} states it measured{}; on each host a CPU stage's time \
             scales by the work rate it gets there (threads x per-thread throughput (SMT, \
             all-core clock) x one core's speed), its DRAM-latency share by the threads alone, \
             and a GPU kernel's by the GPU's kernel speed (listed per host above). Transfers \
             take the host's link; the latency curve, DMA factors and staging stay the \
             scenario's.",
            scenario.display(),
            if host.is_empty() {
                String::new()
            } else {
                format!(" on {host}")
            }
        ),
        None => format!(
            "A host profile changes the machine, not the work: {} does not say where its \
             stage times were measured ([workload.measured_on]), so they are kept on every \
             host; another GPU model counts by number, memory and PCIe link only, and a \
             stage asking for more threads of the cpu pool than a host has is given the \
             host's threads with its time unchanged (optimistic for smaller hosts).",
            scenario.display()
        ),
    };
    vec![
        work,
        format!(
            "DRAM GB/s = channels x MT/s x 8 B x efficiency ({} unless the host file says), \
             or the host's measured figure; PCIe GB/s per direction = lanes x lane rate x {} \
             unless measured.",
            crate::compare::host::DEFAULT_DRAM_EFFICIENCY,
            crate::compare::host::DEFAULT_PCIE_EFFICIENCY
        ),
        format!(
            "Best setting: the most simulated proofs/day over {} ({seeds} seed(s) per \
             setting; proofs/day and s/proof are their mean ± a 95% Student t interval); \
             settings that stalled, or whose measured proofs mostly started together at \
             t = 0 (no steady state), are not results. The best of many noisy settings \
             leans optimistic: neighbouring settings inside its interval are as good.",
            search.join(" x ")
        ),
        "Each host gets its own cores, threads per core, SMT yield (the host file's, else \
         the scenario's capped at threads per core), all-core curve (from its boost and \
         all-core clocks) and core speed where the host file gives them; a key it leaves \
         out keeps the scenario's."
            .into(),
        "RAM needed: the modelled peak host RAM at the best setting plus what the scenario \
         keeps resident (host RAM minus the RAM it leaves to jobs)."
            .into(),
        "Prices and power: from each host file, which cites its sources and marks estimates."
            .into(),
    ]
}

fn draw(scenario: &str, rows: &[HostResult], file: &Path) -> Result<Vec<PathBuf>> {
    let bars: Vec<HostBar> = rows
        .iter()
        .map(|r| match &r.outcome {
            Ok(o) => HostBar {
                label: format!("{} ({})", r.host.name, o.best.join(", ")),
                proofs_per_day: Some(o.proofs_per_day),
                usd_per_proof: Some(o.usd_per_proof),
            },
            Err(_) => HostBar {
                label: format!("{} (does not run)", r.host.name),
                proofs_per_day: None,
                usd_per_proof: None,
            },
        })
        .collect();
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = file
        .file_stem()
        .map_or_else(|| "compare".into(), |s| s.to_string_lossy().into_owned());
    Ok(crate::plot::render(
        &CompareChart {
            scenario,
            hosts: &bars,
        },
        &dir,
        &stem,
    )?)
}
