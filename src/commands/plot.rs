//! `bwsim plot sweep.csv [--out DIR]`: redraw a saved sweep's plots without simulating.

use std::path::{Path, PathBuf};

use super::error::{InputError, Result};
use crate::cli::PlotCli;
use crate::output::{check_dir_target, print_stdout};
use crate::sweep::csv;
use crate::sweep::knee::{self, KNEE_TOLERANCE};

/// Runs `bwsim plot`.
pub fn plot(args: PlotCli) -> Result<()> {
    plot_command(&args.csv, args.out.as_deref()).map(drop)
}

/// Redraws the plots of a saved sweep (into the CSV's folder by default), prints the
/// knee and the files; returns the files written.
pub fn plot_command(csv_path: &Path, out: Option<&Path>) -> Result<Vec<PathBuf>> {
    let input = |problem: String| InputError::new(problem).file(csv_path);
    let text = crate::input_file::read_text(csv_path, crate::input_file::MAX_CSV_BYTES)
        .map_err(|e| input(format!("cannot read: {e}")))?;
    let table = csv::from_csv(&text).map_err(|e| e.file(csv_path))?;
    if table.rows.is_empty() {
        return Err(input("no rows".into()).into());
    }
    if let Some(why) = crate::plot::too_many_series(&table) {
        return Err(input(format!("cannot chart {why}")).into());
    }
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => csv_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    check_dir_target(&dir)?;
    let files = crate::plot::sweep_plots(&table, &dir)?;
    if let Some(w) = knee::few_seeds_warning(&table) {
        eprintln!("warning: {w}");
    }
    let mut text = String::new();
    for k in knee::find_knees(&table, KNEE_TOLERANCE) {
        text.push_str(&knee::describe(&table, &k, KNEE_TOLERANCE));
        text.push('\n');
    }
    for f in &files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    print_stdout(&text)?;
    Ok(files)
}
