//! `bwsim accuracy`: the study of the committed evidence ([`crate::accuracy`]), its
//! tables written to `--out` and, with `--write-data`, the prediction intervals' data.

use super::error::Result;
use crate::accuracy::evidence::Evidence;
use crate::accuracy::study::{self, Scope};
use crate::accuracy::{points, tables};
use crate::cli::AccuracyArgs;
use crate::output::{Output, OutputKind, check_outputs, print_stdout, write_atomic};

/// Runs the study and writes what it found.
pub fn accuracy(args: AccuracyArgs) -> Result<()> {
    let mut outputs = vec![
        Output::new("--out", &args.out, OutputKind::File),
        Output::new("--points", &args.points, OutputKind::File),
    ];
    if let Some(d) = &args.write_data {
        outputs.push(Output::new("--write-data", d, OutputKind::File));
    }
    check_outputs(&outputs, &[])?;
    let evidence = Evidence::read(&args.evidence, &args.repo)?;
    let scratch = tempfile::tempdir().map_err(|e| crate::accuracy::AccuracyError::File {
        file: std::env::temp_dir(),
        problem: format!("cannot make a scratch folder: {e}"),
    })?;
    let scope = Scope {
        matrix: !args.own_only,
        typical: !args.no_typical,
    };
    let s = study::run(evidence, scope, scratch.path())?;
    let command = "bwsim accuracy --write-data data/prediction-intervals.toml";
    write_atomic(&args.out, tables::coverage_page(&s, command).as_bytes())?;
    write_atomic(
        &args.points,
        &points::encode(&args.points, &points::write(&s)),
    )?;
    if let Some(d) = &args.write_data {
        write_atomic(d, tables::data_file(&s, command).as_bytes())?;
    }
    print_stdout(&format!(
        "{} points on {} boots: the 95% interval held {:.1}% left out by run (median half-width {:.1}%); wrote {}\n",
        s.points.own.len(),
        s.boots.len(),
        s.calibrated.coverage() * 100.0,
        s.calibrated.median_half_width() * 100.0,
        args.out.display()
    ))?;
    Ok(())
}
