//! Accuracy numbers published in README.md and runs/NOTEBOOK.md re-derive from the run
//! files runs/ keeps (gzipped), with the scripts the notebook cites (runs/tools/). The
//! scripts need python3; where it is missing these tests say so and check nothing (bwsim
//! itself never needs Python).

use std::path::Path;
use std::process::Command;

/// The script's stdout, or None where python3 cannot be run.
fn tool(script: &str, args: &[&str]) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = match Command::new("python3")
        .arg(root.join("runs/tools").join(script))
        .args(args)
        .current_dir(root)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("python3 cannot run ({e}): runs/tools/{script} not checked");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "runs/tools/{script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// `a / b%` -> (a, b).
fn median_max(cell: &str) -> (f64, f64) {
    let (median, max) = cell.trim().trim_end_matches('%').split_once(" / ").unwrap();
    (median.parse().unwrap(), max.parse().unwrap())
}

#[test]
fn run_8s_chase_pinned_table_is_the_notebooks() {
    // NOTEBOOK.md, run 8: "Chase pinned ... is within 0.4 / 2.1% here" (three repeats).
    let dirs: Vec<String> = (1..=3)
        .map(|c| format!("runs/accuracy/h200-run8/c{c}/chase-pin-r{c}"))
        .collect();
    let mut args = vec!["chase-pin"];
    args.extend(dirs.iter().map(String::as_str));
    let Some(table) = tool("table.py", &args) else {
        return;
    };
    assert!(
        table.ends_with("median |error| 0.4%, max 2.1% over 6 points\n"),
        "{table}"
    );
}

#[test]
fn runs_8_to_10_pooled_put_every_shape_within_the_target() {
    // README.md and NOTEBOOK.md: "Averaged per point over runs 8-10, every shape lies
    // within 5% / 10% (0.7-4.3% median, 1.8-7.7% max)".
    let Some(table) = tool(
        "pooled.py",
        &[
            "runs/accuracy/h200-run8",
            "runs/accuracy/h200-run9",
            "runs/accuracy/h200-run10",
        ],
    ) else {
        return;
    };
    let pooled: Vec<(f64, f64)> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| median_max(l.split('|').nth(4).unwrap()))
        .collect();
    assert_eq!(pooled.len(), 9, "nine shapes: {table}");
    let low = |f: fn(&(f64, f64)) -> f64| pooled.iter().map(f).fold(f64::MAX, f64::min);
    let high = |f: fn(&(f64, f64)) -> f64| pooled.iter().map(f).fold(f64::MIN, f64::max);
    assert_eq!((low(|p| p.0), high(|p| p.0)), (0.7, 4.3), "{table}");
    assert_eq!((low(|p| p.1), high(|p| p.1)), (1.8, 7.7), "{table}");
}
