//! `bwsim compare SCENARIO --host FILE...`: for each host profile, map it onto the
//! scenario ([`crate::compare::host_overrides`]), search the scenario's concurrency knobs
//! with the sweep machinery for the setting with the most proofs per day, price a proof,
//! then print the Markdown table (or JSON), name the cheapest fleet for
//! `--target-proofs-per-day`, and draw the chart (`--plot`).

use std::path::{Path, PathBuf};

use super::error::Result;
use crate::cli::{CompareArgs, Format};
use crate::compare::assumptions::assumptions;
use crate::compare::runner::{SearchPlan, compare_hosts};
use crate::compare::search::{check_search, default_search};
use crate::compare::table::{markdown, to_json};
use crate::compare::{
    CompareInputError, CostAssumptions, HostResult, ScenarioKnobs, cheapest_for_target, load_host,
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
    check_search(&args.scenario, &args.sets, &search, args.seeds)?;
    let plan = SearchPlan {
        scenario: &args.scenario,
        sets: &args.sets,
        search: &search,
        seeds: args.seeds,
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
