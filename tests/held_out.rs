//! A held-out boot is judged, not fitted: its points are predicted with stage times
//! carried from the fitted boots only, and nothing it measured reaches the error models
//! or the other boots' points. Checked on a small manifest of committed runs: one fitted
//! boot per host type and run 14's boot held out.

use std::path::Path;

use bwsim::accuracy::evidence::Evidence;
use bwsim::accuracy::study::{self, Scope};

/// The manifest, its evidence paths absolute (it is written outside the tree).
fn manifest(held_out: bool) -> String {
    let runs = std::env::current_dir().unwrap().join("runs");
    let runs = runs.display();
    let full = std::fs::read_to_string("runs/evidence.toml").unwrap();
    let head = full.split("[[boot]]").next().unwrap();
    let mut m = (head.replace("    \"accuracy/", &format!("    \"{runs}/accuracy/")))
        .replace("    \"calibrate/", &format!("    \"{runs}/calibrate/"));
    for (name, run, card, cal, call) in [
        (
            "h200-run11",
            "11",
            "H200",
            "accuracy/h200-run11/calibration-boot1-raw.json",
            "accuracy/h200-run11/c2",
        ),
        (
            "h100-run13b",
            "13",
            "H100",
            "accuracy/h100-run13/c3/calibration-raw.json",
            "accuracy/h100-run13/c3",
        ),
    ] {
        m += &format!(
            "[[boot]]\nname = \"{name}\"\nrun = \"{run}\"\ncard = \"{card}\"\ncalibration = \"{runs}/{cal}\"\ncalls = [\"{runs}/{call}\"]\n\n"
        );
    }
    if held_out {
        m += &format!(
            "[[boot]]\nname = \"h100-run14\"\nrun = \"14\"\ncard = \"H100\"\ncalibration = \"{runs}/accuracy/h100-run14/calibration-raw.json\"\ncalls = [\"{runs}/accuracy/h100-run14\"]\nheld_out = true\n"
        );
    }
    m
}

fn study_of(held_out: bool) -> study::Study {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("evidence.toml");
    std::fs::write(&path, manifest(held_out)).unwrap();
    let evidence = Evidence::read(&path, Path::new("."));
    let scope = Scope {
        matrix: true,
        typical: false,
    };
    study::run(evidence.unwrap(), scope, scratch.path()).unwrap()
}

#[test]
fn a_held_out_boot_is_judged_and_not_fitted() {
    let with = study_of(true);
    let without = study_of(false);
    let h = &with.held_out;
    assert!(!h.points.own.is_empty() && h.points.own.iter().all(|r| r.boot == "h100-run14"));
    // Carried from each fitted boot, never from itself.
    assert_eq!(h.points.moved.len(), 2 * h.points.own.len());
    assert!(h.points.moved.iter().all(|r| r.profile != "h100-run14"));
    // Nothing of it among the fitted points, as target or as profile.
    for r in with.points.own.iter().chain(&with.points.moved) {
        assert!(r.boot != "h100-run14" && r.profile != "h100-run14", "{r:?}");
    }
    assert_eq!(with.points.own.len(), without.points.own.len());
    assert_eq!(with.points.moved.len(), without.points.moved.len());
    // The error models are the ones fitted without it.
    assert_eq!(with.calibrated.error, without.calibrated.error);
    assert_eq!(
        with.calibrated_stages_moved.as_ref().map(|f| f.error),
        without.calibrated_stages_moved.as_ref().map(|f| f.error)
    );
    assert!(without.held_out.points.own.is_empty());
}
