//! The study as Markdown (`docs/accuracy/coverage.md`) and as the data file the
//! prediction intervals read (`data/prediction-intervals.toml`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::analysis::prediction::{ErrorModel, HostKnowledge};
use crate::prediction::{HostKey, HostSpread};

use super::fit::{self, Fitted, Row, median};
use super::moved::Leans;
use super::study::Study;

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Points, held share, median half-width, median and 95th-percentile |error| of the
/// `rows` (fitted as `f`) that `pick` keeps, as a table row's cells.
fn cells(rows: &[Row], f: &Fitted, pick: impl Fn(&Row) -> bool) -> String {
    let idx: Vec<usize> = (0..rows.len()).filter(|&i| pick(&rows[i])).collect();
    let sub = Fitted {
        error: f.error,
        held: idx.iter().map(|&i| f.held[i]).collect(),
        half_width: idx.iter().map(|&i| f.half_width[i]).collect(),
    };
    let (rows, f) = (idx.iter().map(|&i| &rows[i]).collect::<Vec<_>>(), &sub);
    let mut err: Vec<f64> = rows.iter().map(|r| r.error().abs()).collect();
    err.sort_by(f64::total_cmp);
    let p95 = err
        .get(((err.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(f64::NAN);
    format!(
        "{} | {} | {} | {} | {}",
        rows.len(),
        pct(f.coverage()),
        pct(f.median_half_width()),
        pct(median(&err)),
        pct(p95)
    )
}

fn model_line(e: &ErrorModel) -> String {
    format!(
        "floor {:.2}, contention {:.2} per ln(contention stretch), host-key weight {:.1}, quantile {:.2}",
        e.floor, e.contention, e.weight, e.quantile
    )
}

/// The whole page.
pub fn coverage_page(s: &Study, command: &str) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "# Coverage of the prediction intervals, and transfer between boots\n"
    );
    let _ = writeln!(
        w,
        "Written by `{command}` from the committed evidence ({} boots, {} points pooled over their repeats); do not edit by hand. Every point is predicted again by today's model with its calibration fitted again from its raw measurements. Each interval is the 95% prediction interval `bwsim run` would print for it, its quantile fitted without the point's own run (leave-one-run-out).\n",
        s.boots.len(),
        s.points.own.len()
    );
    let _ = writeln!(w, "## Summary\n");
    let _ = writeln!(
        w,
        "| case | points | held by the 95% interval | median half-width | median \\|error\\| | 95th pct \\|error\\| |"
    );
    let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|");
    let all = |_: &Row| true;
    let _ = writeln!(
        w,
        "| calibrated, stage times its own | {} |",
        cells(&s.points.own, &s.calibrated, all)
    );
    let same = |r: &Row| r.card == r.profile_card;
    if let Some(f) = &s.calibrated_stages_moved {
        for (what, pick) in [
            ("profiled on another boot of the same host type", true),
            ("profiled on the other host type (H100 <-> H200)", false),
        ] {
            let _ = writeln!(
                w,
                "| calibrated, stage times {what} | {} |",
                cells(&s.points.moved, f, |r| same(r) == pick)
            );
        }
    }
    if let Some(f) = &s.moved_under_own_model {
        let _ = writeln!(
            w,
            "| the same, any other boot, under the calibrated error model (stages not moved) | {} |",
            cells(&s.points.moved, f, all)
        );
    }
    if let Some(f) = &s.typical_fit {
        let _ = writeln!(
            w,
            "| typical values (no calibration), stage times its own | {} |",
            cells(&s.points.typical, f, all)
        );
    }
    if let Some(f) = &s.typical_stages_moved {
        let _ = writeln!(
            w,
            "| typical values, stage times profiled on another boot | {} |",
            cells(&s.points.typical_moved, f, all)
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "Error models (`data/prediction-intervals.toml`):\n");
    for k in HostKnowledge::ALL {
        if !s.rows(k).is_empty() {
            let _ = writeln!(w, "- {}: {}", k.name(), model_line(&s.fitted(k).error));
        }
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "## Per run and shape, own boot's calibration\n");
    let _ = writeln!(
        w,
        "| run | boot | card | shape | points | held | median half-width | median \\|error\\| | max \\|error\\| |"
    );
    let _ = writeln!(w, "|---|---|---|---|---:|---:|---:|---:|---:|");
    let mut groups: BTreeMap<(String, String, String), Vec<usize>> = BTreeMap::new();
    for (i, r) in s.points.own.iter().enumerate() {
        groups
            .entry((r.run.clone(), r.boot.clone(), r.shape.clone()))
            .or_default()
            .push(i);
    }
    for ((run, boot, shape), idx) in &groups {
        let held = idx.iter().filter(|&&i| s.calibrated.held[i]).count();
        let hw: Vec<f64> = idx.iter().map(|&i| s.calibrated.half_width[i]).collect();
        let err: Vec<f64> = idx.iter().map(|&i| s.points.own[i].error().abs()).collect();
        let _ = writeln!(
            w,
            "| {run} | {boot} | {} | {shape} | {} | {held}/{} | {} | {} | {} |",
            s.points.own[idx[0]].card,
            idx.len(),
            idx.len(),
            pct(median(&hw)),
            pct(median(&err)),
            pct(err.iter().copied().fold(0.0, f64::max))
        );
    }
    if !s.points.moved.is_empty() {
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "## Transfer matrix: median |error| of each boot's points (rows, each under its own calibration) with stage times profiled on each boot (columns)\n"
        );
        // The fitted boots: a held-out one carries no stage times and has its own section.
        let fitted: Vec<&(String, String)> = (s.boots.iter().zip(&s.evidence.boots))
            .filter(|(_, b)| !b.held_out)
            .map(|(n, _)| n)
            .collect();
        let names: Vec<&String> = fitted.iter().map(|b| &b.0).collect();
        let _ = write!(w, "| measured on \\ profiled on |");
        for n in &names {
            let _ = write!(w, " {n} |");
        }
        let _ = writeln!(w);
        let _ = writeln!(w, "|---|{}", "---:|".repeat(names.len()));
        for (b, card) in fitted {
            let _ = write!(w, "| {b} ({card}) |");
            for p in &names {
                let err: Vec<f64> = (s.points.own.iter().chain(&s.points.moved))
                    .filter(|r| &r.boot == b && &r.profile == *p)
                    .map(|r| r.error().abs())
                    .collect();
                let _ = write!(w, " {} |", pct(median(&err)));
            }
            let _ = writeln!(w);
        }
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "How far the carried stage times landed from the times the measured boot ran (the factor's log standard deviation, smallest and largest factor), by what the stage leans on:\n"
        );
        stage_factor_table(w, &s.stage_factors);
    }
    held_out_section(w, s);
    let _ = writeln!(w);
    let _ = writeln!(w, "## The host keys' spreads between boots\n");
    let _ = writeln!(w, "{}\n", s.spread.basis);
    let _ = writeln!(
        w,
        "| key | spread used | per card: boots, median, min..max |"
    );
    let _ = writeln!(w, "|---|---:|---|");
    for sp in &s.spread.spreads {
        let per_card: Vec<String> = (s.key_values.iter())
            .filter(|((k, _), _)| *k == sp.key)
            .map(|((_, card), v)| {
                let shown: Vec<f64> = if sp.key == HostKey::MemcpyExponent {
                    v.clone()
                } else {
                    v.iter().map(|x| x.exp()).collect()
                };
                let (lo, hi) = shown
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                        (a.min(x), b.max(x))
                    });
                format!(
                    "{card}: {}, {:.4}, {:.4}..{:.4}",
                    v.len(),
                    median(&shown),
                    lo,
                    hi
                )
            })
            .collect();
        let _ = writeln!(
            w,
            "| {} | {:.3} | {} |",
            sp.key.name(),
            sp.sd,
            per_card.join("; ")
        );
    }
    o
}

/// The held-out boots' points judged against the error models fitted without them
/// (nothing when the manifest holds none out).
fn held_out_section(w: &mut String, s: &Study) {
    let h = &s.held_out;
    if h.points.own.is_empty() {
        return;
    }
    let boots: std::collections::BTreeSet<String> = (h.points.own.iter())
        .map(|r| format!("{} ({})", r.boot, r.card))
        .collect();
    let boots: Vec<String> = boots.into_iter().collect();
    let judged = |k: HostKnowledge| {
        let rows: Vec<&Row> = h.points.rows(k).iter().collect();
        fit::apply(&rows, &s.fitted(k).error)
    };
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "## Held out: {}, judged against the error models fitted without it\n",
        boots.join(", ")
    );
    let _ = writeln!(
        w,
        "Its points are predicted as every other boot's are; its stage times carried from the fitted boots' profiles only; each interval is the one the shipped error model gives (its quantile as fitted, nothing refitted on these points).\n"
    );
    let _ = writeln!(
        w,
        "| case | points | held by the 95% interval | median half-width | median \\|error\\| | 95th pct \\|error\\| |"
    );
    let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|");
    let all = |_: &Row| true;
    let same = |r: &Row| r.card == r.profile_card;
    let own = judged(HostKnowledge::Calibrated);
    let _ = writeln!(
        w,
        "| calibrated, stage times its own | {} |",
        cells(&h.points.own, &own, all)
    );
    let moved = judged(HostKnowledge::CalibratedStagesMoved);
    if !h.points.moved.is_empty() {
        let _ = writeln!(
            w,
            "| calibrated, stage times profiled on any fitted boot | {} |",
            cells(&h.points.moved, &moved, all)
        );
        for (what, pick) in [
            ("a boot of the same host type", true),
            ("the other host type", false),
        ] {
            let _ = writeln!(
                w,
                "| calibrated, stage times profiled on {what} | {} |",
                cells(&h.points.moved, &moved, |r| same(r) == pick)
            );
        }
    }
    for (k, what) in [
        (
            HostKnowledge::Typical,
            "typical values, stage times its own",
        ),
        (
            HostKnowledge::TypicalStagesMoved,
            "typical values, stage times profiled on any fitted boot",
        ),
    ] {
        if !h.points.rows(k).is_empty() {
            let _ = writeln!(
                w,
                "| {what} | {} |",
                cells(h.points.rows(k), &judged(k), all)
            );
        }
    }
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "Every point: measured seconds per job; predicted with its own stage times (the diagonal), its 95% interval and whether it held; and with stage times carried from each fitted boot: the median prediction, the smallest and largest error, and how many of those intervals held.\n"
    );
    let _ = writeln!(
        w,
        "| boot | shape | x | measured s | own: predicted s | error | 95% interval | held | carried: median predicted s | error range | held |"
    );
    let _ = writeln!(w, "|---|---|---:|---:|---:|---:|---|---|---:|---|---:|");
    for (i, r) in h.points.own.iter().enumerate() {
        let lo = r.predicted.seconds_per_job / (1.0 + own.half_width[i]);
        let hi = r.predicted.seconds_per_job * (1.0 + own.half_width[i]);
        let carried: Vec<usize> = (0..h.points.moved.len())
            .filter(|&j| {
                let m = &h.points.moved[j];
                m.boot == r.boot && m.shape == r.shape && m.x == r.x
            })
            .collect();
        let predicted: Vec<f64> = (carried.iter())
            .map(|&j| h.points.moved[j].predicted.seconds_per_job)
            .collect();
        let (elo, ehi) = (carried.iter())
            .map(|&j| h.points.moved[j].error())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| {
                (a.min(e), b.max(e))
            });
        let held = carried.iter().filter(|&&j| moved.held[j]).count();
        let _ = writeln!(
            w,
            "| {} | {} | {} | {:.5} | {:.5} | {:+.1}% | {:.5}..{:.5} | {} | {:.5} | {:+.1}%..{:+.1}% | {held}/{} |",
            r.boot,
            r.shape,
            r.x,
            r.measured,
            r.predicted.seconds_per_job,
            r.error() * 100.0,
            lo,
            hi,
            if own.held[i] { "yes" } else { "no" },
            median(&predicted),
            elo * 100.0,
            ehi * 100.0,
            carried.len()
        );
    }
    if !h.stage_factors.is_empty() {
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "The stage factors of its transfer, by what the stage leans on:\n"
        );
        stage_factor_table(w, &h.stage_factors);
    }
}

/// The carried stage factors by what the stage leans on: log sd, smallest, largest.
fn stage_factor_table(w: &mut String, factors: &[(Leans, f64, f64, f64)]) {
    let _ = writeln!(w, "| stage leans on | log sd | smallest | largest |");
    let _ = writeln!(w, "|---|---:|---:|---:|");
    for (leans, sd, lo, hi) in factors {
        let _ = writeln!(
            w,
            "| {} | {:.3} | {:.3} | {:.3} |",
            leans.name(),
            sd,
            lo,
            hi
        );
    }
}

fn spread_table(w: &mut String, name: &str, sp: &HostSpread) {
    let _ = writeln!(
        w,
        "spread_basis = {}",
        toml::Value::String(sp.basis.clone())
    );
    let _ = writeln!(w, "[{name}.spread]");
    for s in &sp.spreads {
        let _ = writeln!(w, "{} = {:.4}", s.key.name(), s.sd);
    }
}

fn error_table(w: &mut String, name: &str, e: &ErrorModel, provenance: &str) {
    let _ = writeln!(w, "[{name}.error]");
    let _ = writeln!(w, "floor = {:.4}", e.floor);
    let _ = writeln!(w, "contention = {:.4}", e.contention);
    let _ = writeln!(w, "weight = {:.4}", e.weight);
    let _ = writeln!(w, "quantile = {:.4}", e.quantile);
    let _ = writeln!(w, "bias = {:.4}", e.bias);
    let _ = writeln!(w, "provenance = {}", toml::Value::String(provenance.into()));
}

/// The data file the prediction intervals read.
pub fn data_file(s: &Study, command: &str) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "# The spreads and error models of bwsim's prediction intervals. Written by\n# `{command}` from the committed evidence (runs/evidence.toml);\n# rebuild it after a new run is added there. See docs/accuracy.md.\n"
    );
    let fitted_on = |rows: &[Row], what: &str| {
        let boots: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r.boot.as_str()).collect();
        format!(
            "fitted to {} points of {} boots ({}), {what}; leave-one-run-out coverage and half-widths in docs/accuracy/coverage.md",
            rows.len(),
            boots.len(),
            boots.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    for k in HostKnowledge::ALL {
        let (spread, what) = match k {
            HostKnowledge::Calibrated => {
                (&s.spread, "each predicted with its own boot's calibration")
            }
            HostKnowledge::CalibratedStagesMoved => (
                &s.spread,
                "each predicted with its own boot's calibration and stage times profiled on another boot",
            ),
            HostKnowledge::Typical => (
                &s.typical_spread,
                "each predicted with typical values (no calibration)",
            ),
            HostKnowledge::TypicalStagesMoved => (
                &s.typical_spread,
                "each predicted with typical values and stage times profiled on another boot",
            ),
        };
        let rows = s.rows(k);
        let provenance = if rows.is_empty() {
            "the calibrated error model (the study was run without these points)".to_string()
        } else {
            fitted_on(rows, what)
        };
        let _ = writeln!(w, "[{}]", k.name());
        spread_table(w, k.name(), spread);
        error_table(w, k.name(), &s.fitted(k).error, &provenance);
        let _ = writeln!(w);
    }
    o
}
