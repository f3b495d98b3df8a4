//! The prediction intervals cover what the hosts did: the committed points
//! (docs/accuracy/points.csv.gz, written by `bwsim accuracy`) fitted again, each run left out,
//! hold 90-99% of the measured points with a median half-width of at most 12% and nine in
//! ten within 20%; the shipped
//! data file holds the error models that fit gives; and today's binary still predicts the
//! committed points it is asked about.

use std::path::Path;

use bwsim::accuracy::evidence::Evidence;
use bwsim::accuracy::fit::{self, Row};
use bwsim::accuracy::points;
use bwsim::accuracy::predict::predict_once;
use bwsim::accuracy::study::refit;
use bwsim::analysis::prediction::HostKnowledge;
use bwsim::prediction::data::intervals;

fn committed() -> Vec<(HostKnowledge, Row)> {
    let text = bwsim::accuracy::evidence::read_kept(Path::new("docs/accuracy/points.csv"))
        .expect("docs/accuracy/points.csv.gz");
    points::read(&text).unwrap_or_else(|e| panic!("docs/accuracy/points.csv.gz: {e}"))
}

fn rows(all: &[(HostKnowledge, Row)], k: HostKnowledge) -> Vec<&Row> {
    all.iter()
        .filter(|(c, _)| *c == k)
        .map(|(_, r)| r)
        .collect()
}

#[test]
fn the_calibrated_interval_covers_90_to_99_percent_left_out_by_run() {
    let all = committed();
    let own = rows(&all, HostKnowledge::Calibrated);
    assert!(own.len() >= 200, "{} points", own.len());
    let runs: std::collections::BTreeSet<&str> = own.iter().map(|r| r.run.as_str()).collect();
    assert!(runs.len() >= 5, "{runs:?}");
    let f = fit::fit(&own);
    let (cov, hw) = (f.coverage(), f.median_half_width());
    assert!((0.90..=0.99).contains(&cov), "coverage {cov}");
    assert!(hw <= 0.12, "median half-width {hw}");
    // No long tail of wide intervals: nine in ten within 20%.
    let mut widths = f.half_width.clone();
    widths.sort_by(f64::total_cmp);
    let p90 = widths[widths.len() * 9 / 10];
    assert!(p90 <= 0.20, "90th percentile half-width {p90}");
    // Both host types are in it, and each alone is covered at least 85%.
    for card in ["H100", "H200"] {
        let idx: Vec<usize> = (0..own.len()).filter(|&i| own[i].card == card).collect();
        assert!(idx.len() >= 30, "{card}: {} points", idx.len());
        let held = idx.iter().filter(|&&i| f.held[i]).count() as f64 / idx.len() as f64;
        assert!(held >= 0.85, "{card}: {held}");
    }
}

#[test]
fn every_way_of_knowing_a_host_is_covered_and_the_shipped_models_are_the_fitted_ones() {
    let all = committed();
    let shipped = intervals();
    for k in HostKnowledge::ALL {
        let r = rows(&all, k);
        assert!(!r.is_empty(), "{}: no points", k.name());
        let f = fit::fit(&r);
        assert!(
            (0.90..=0.99).contains(&f.coverage()),
            "{}: {}",
            k.name(),
            f.coverage()
        );
        let e = &shipped.basis(k).error;
        for (what, a, b) in [
            ("floor", e.floor, f.error.floor),
            ("contention", e.contention, f.error.contention),
            ("weight", e.weight, f.error.weight),
            ("quantile", e.quantile, f.error.quantile),
        ] {
            assert!(
                (a - b).abs() <= 1e-4,
                "{}: data/prediction-intervals.toml has {what} {a}, the committed points fit {b}: run `bwsim accuracy --write-data data/prediction-intervals.toml`",
                k.name()
            );
        }
    }
    // Less knowledge, wider intervals.
    let median = |k| fit::fit(&rows(&all, k)).median_half_width();
    assert!(median(HostKnowledge::Typical) > median(HostKnowledge::Calibrated));
}

#[test]
fn todays_binary_predicts_the_committed_points() {
    let all = committed();
    let evidence = Evidence::read(Path::new("runs/evidence.toml"), Path::new(".")).unwrap();
    let replays = evidence.replays().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // The first replay of the first and the last fitted boot (an H200 and an H100 boot).
    let last = (evidence.boots.iter()).rposition(|b| !b.held_out).unwrap();
    for b in [0, last] {
        let boot = &evidence.boots[b];
        let cal = refit(&boot.calibration, scratch.path(), &boot.name).unwrap();
        let replay = replays.iter().find(|r| r.boot == b).unwrap();
        let point = &replay.points[0];
        let mut sets = replay.sets.clone();
        sets.extend(point.sets.iter().cloned());
        let now = predict_once(&replay.scenario, &cal.path, &sets, 0.0).unwrap();
        let row = rows(&all, HostKnowledge::Calibrated)
            .into_iter()
            .find(|r| r.boot == boot.name && r.shape == replay.shape && r.x == point.x)
            .unwrap_or_else(|| {
                panic!(
                    "{} {} x={} not in points.csv",
                    boot.name, replay.shape, point.x
                )
            });
        let rel = (now.seconds_per_job / row.predicted.seconds_per_job - 1.0).abs();
        assert!(
            rel < 1e-9,
            "{} {} x={}: today {} s/job, points.csv {}: run `bwsim accuracy` again",
            boot.name,
            replay.shape,
            point.x,
            now.seconds_per_job,
            row.predicted.seconds_per_job
        );
    }
}
