//! `bwsim compare SCENARIO --host FILE...`: for each host profile, map it onto the
//! scenario ([`crate::compare::host_overrides`]), search the scenario's concurrency knobs
//! with the sweep machinery for the setting with the most proofs per day, price a proof,
//! then print the Markdown table (or JSON), name the cheapest fleet for
//! `--target-proofs-per-day`, and draw the chart (`--plot`).

use std::path::{Path, PathBuf};

use super::error::Result;
use crate::analysis::throughput::JobName;
use crate::cli::{CompareArgs, Format};
use crate::compare::assumptions::assumptions;
use crate::compare::kept::kept_host_model;
use crate::compare::runner::{SearchPlan, compare_hosts};
use crate::compare::search::{check_search, default_search};
use crate::compare::{
    CompareInputError, Comparison, CostAssumptions, ScenarioKnobs, cheapest_for_target, load_host,
};
use crate::output::{Output, OutputKind, check_outputs, print_stdout};
use crate::plot::compare::{CompareChart, HostBar};

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
    let (replications, note) = crate::cli::replications(args.replications, args.seeds, "--seeds");
    if let Some(note) = note {
        eprintln!("warning: {note}");
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
    let knobs = ScenarioKnobs::of(&base);
    let search = if args.search.is_empty() {
        default_search(&base.params)?
    } else {
        args.search.clone()
    };
    check_search(&args.scenario, &args.sets, &search, replications)?;
    // A --set or searched key that another key overrides changes nothing on any host.
    for (set, why) in base.no_effect_of(&args.sets) {
        eprintln!("warning: --set {set}: {why}");
    }
    let searched =
        crate::sweep::no_effect::swept_without_effect(&args.scenario, &args.sets, &search);
    for (spec, why) in searched {
        eprintln!("warning: --search {spec}: {why}: every setting runs the same scenario");
    }
    let plan = SearchPlan {
        scenario: &args.scenario,
        sets: &args.sets,
        search: &search,
        replications,
        seed: args.seed,
        jobs: args.jobs,
    };
    let files = args.hosts.iter().map(|f| f.display().to_string());
    let rows = compare_hosts(&plan, &knobs, files.zip(hosts).collect(), &costs);
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
    let job = JobName::new(base.model.workload.job_name.clone());
    let notes = assumptions(
        &args.scenario,
        base.summary.measured_on.as_deref(),
        &search,
        replications,
        &job,
    );
    let kept = kept_host_model(&base.model);
    let comparison = Comparison {
        scenario: &name,
        job: &job,
        rows: &rows,
        target: target.as_ref(),
        target_asked: args.target_proofs_per_day,
        costs: &costs,
        kept: &kept,
        assumptions: &notes,
    };
    if let Some(p) = &args.plot {
        draw(&comparison, p)?;
    }
    let text = match args.format {
        Format::Text => comparison.markdown(),
        Format::Json => format!("{:#}\n", comparison.to_json()),
    };
    print_stdout(&text)?;
    Ok(())
}

fn draw(c: &Comparison, file: &Path) -> Result<Vec<PathBuf>> {
    let bars: Vec<HostBar> = (c.rows.iter())
        .map(|r| match &r.outcome {
            Ok(o) => HostBar {
                label: format!("{} ({})", r.host.name, o.setting.best.join(", ")),
                name: r.host.name.clone(),
                per_day: Some(o.proofs_per_day_summary()),
                per_day_prediction: (o.prediction.as_ref().ok()).map(|p| {
                    let (lo, _, hi) = p.jobs_per_day();
                    (lo, hi)
                }),
                usd_per_job: Some(o.usd_per_proof_summary()),
            },
            Err(_) => HostBar {
                label: format!("{} (does not run)", r.host.name),
                name: r.host.name.clone(),
                per_day: None,
                per_day_prediction: None,
                usd_per_job: None,
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
            scenario: c.scenario,
            job: c.job,
            hosts: &bars,
        },
        &dir,
        &stem,
    )?)
}
