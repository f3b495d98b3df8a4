//! Which concurrency settings `bwsim compare` searches on a host, and which one wins:
//! the domain rules, apart from running the sweep (`commands::compare`).

use std::path::Path;

use super::error::CompareInputError;
use crate::analysis::interval::Summary;
use crate::scenario::ParamInfo;
use crate::sweep::knee::{CurvePoint, fit_knee};

/// Most values a default knob search takes (the range 1..=2 x default is stepped to fit).
pub const DEFAULT_SEARCH_VALUES: i64 = 16;

/// Every `[params]` knob whose name ends in `concurrency` (else, when there is none,
/// every one ending in `in_flight`: how many proofs a scenario without a synthesis knob
/// keeps going), over 1..=2 x its value in effect (an expression's result) in at most
/// [`DEFAULT_SEARCH_VALUES`] steps, as `--search` specs.
pub fn default_search(params: &[ParamInfo]) -> Result<Vec<String>, CompareInputError> {
    let knobs = |suffix: &str| -> Vec<String> {
        params
            .iter()
            .filter(|p| p.name.ends_with(suffix))
            .filter_map(|p| {
                let d = whole(&p.value)?.max(1);
                let hi = 2 * d;
                let step = (hi + DEFAULT_SEARCH_VALUES - 1) / DEFAULT_SEARCH_VALUES;
                Some(format!("params.{}=1..{hi}:{step}", p.name))
            })
            .collect()
    };
    let mut found = knobs("concurrency");
    if found.is_empty() {
        found = knobs("in_flight");
    }
    if found.is_empty() {
        return Err(CompareInputError::new(
            "--search",
            "the scenario declares no whole-number [params] knob named *concurrency or \
             *in_flight; give --search KEY=SPEC, e.g. --search params.workers=1..16",
        ));
    }
    Ok(found)
}

/// A whole number: an integer, or a float without a fraction (an expression's result).
fn whole(v: &toml::Value) -> Option<i64> {
    match v {
        toml::Value::Integer(i) => Some(*i),
        toml::Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => Some(*f as i64),
        _ => None,
    }
}

/// Refuses a `--search` that no host could run: a SPEC that does not parse, or a key the
/// scenario does not have or a value of the wrong type for it (tried at each key's first
/// value on the scenario as given). Without this each host's row read "does not run" and
/// the exit status was 0. Value errors stay per host: a host's overrides may make a value
/// fit that the scenario as given refuses.
pub fn check_search(
    scenario: &Path,
    sets: &[String],
    search: &[String],
    seeds: u32,
) -> Result<(), CompareInputError> {
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
    // The grid as a whole: a key searched twice, or more settings (x --replications) than a
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
                return Err(CompareInputError::new("--search", format!("{arg}: {e}")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// One searched setting, aggregated over its seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The searched knobs' values, as numbers (false/true as 0/1), in the search's order:
    /// "smaller" compares these, first knob first.
    pub values: Vec<f64>,
    /// Some seed's run stalled.
    pub stalled: bool,
    /// Every seed's run had a steady state (its measured proofs did not mostly start
    /// together at t = 0).
    pub steady: bool,
    /// Proofs per day: the mean over the seeds and the interval the decision trusts (the
    /// seeds' 95% interval; a wider one, such as a prediction interval, may be given),
    /// when any proof finished.
    pub per_day: Option<Summary>,
}

impl Candidate {
    /// A result: it did not stall, had a steady state and finished a proof.
    fn counts(&self) -> bool {
        !self.stalled && self.steady && self.per_day.is_some_and(|p| p.mean > 0.0)
    }
}

/// What the search decided: the setting named, the one with the highest mean, and every
/// setting inside the best's interval (the plateau, smallest first).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The smallest setting whose throughput is inside the best's interval.
    pub chosen: usize,
    /// The setting with the highest mean.
    pub best_mean: usize,
    /// Every setting as good as the best (its mean within the 95% interval of the
    /// difference from the best), smallest first; holds `chosen` and `best_mean`.
    pub plateau: Vec<usize>,
}

impl Decision {
    /// More than one setting is as good as the best: the choice is the smallest of them.
    pub fn on_plateau(&self) -> bool {
        self.plateau.len() > 1
    }
}

/// The setting to name: as `sweep`'s knee, the smallest one whose mean is not
/// significantly below the best mean (within the 95% interval of the difference, the two
/// half-widths in quadrature), among the settings that count (no stall, a steady state,
/// a proof finished). The highest mean alone would be picked from noise: one host's
/// setting moved between neighbours from one run of seeds to the next. None when no
/// setting counts.
pub fn decide(candidates: &[Candidate]) -> Option<Decision> {
    let mut order: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].counts())
        .collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&candidates[a].values, &candidates[b].values);
        x.iter()
            .zip(y)
            .map(|(p, q)| p.total_cmp(q))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let per_day = |i: usize| candidates[i].per_day.expect("counted settings have one");
    let points: Vec<CurvePoint> = (order.iter().enumerate())
        .map(|(rank, &i)| CurvePoint {
            x: rank as f64,
            mean: per_day(i).mean,
            ci95: per_day(i).ci95,
        })
        .collect();
    let fit = fit_knee(&points, 0.0)?;
    let best = &points[fit.best];
    let inside = |p: &CurvePoint| {
        let margin = p.ci95.unwrap_or(0.0).hypot(best.ci95.unwrap_or(0.0));
        p.mean >= best.mean - margin
    };
    Some(Decision {
        chosen: order[fit.knee],
        best_mean: order[fit.best],
        plateau: (points.iter().zip(&order))
            .filter(|(p, _)| inside(p))
            .map(|(_, &i)| i)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(name: &str, default: toml::Value) -> ParamInfo {
        ParamInfo {
            name: name.into(),
            default: default.clone(),
            value: default,
            doc: String::new(),
        }
    }

    #[test]
    fn concurrency_knobs_are_searched_to_twice_their_default_in_at_most_16_steps() {
        let found = default_search(&[
            knob("synthesis_concurrency", toml::Value::Integer(15)),
            knob("gpu_threads", toml::Value::Integer(32)),
            knob("io_concurrency", toml::Value::Integer(40)),
        ])
        .unwrap();
        // 1..30 in steps of 2 (15 values); 1..80 in steps of 5 (16 values).
        assert_eq!(
            found,
            [
                "params.synthesis_concurrency=1..30:2",
                "params.io_concurrency=1..80:5"
            ]
        );
        let none = default_search(&[knob("gpu_threads", toml::Value::Integer(32))]);
        assert!(none.is_err());
        // No *concurrency knob: the proofs in flight are searched instead.
        let stock = default_search(&[knob("proofs_in_flight", toml::Value::Integer(1))]);
        assert_eq!(stock.unwrap(), ["params.proofs_in_flight=1..2:1"]);
        // An expression's knob is searched around the value it resolves to.
        let mut expr = knob(
            "synthesis_concurrency",
            toml::Value::String("= 6 * $gpus".into()),
        );
        expr.value = toml::Value::Integer(12);
        assert_eq!(
            default_search(&[expr]).unwrap(),
            ["params.synthesis_concurrency=1..24:2"]
        );
    }

    fn setting(value: f64, mean: f64, ci95: f64) -> Candidate {
        Candidate {
            values: vec![value],
            stalled: false,
            steady: true,
            per_day: Some(Summary {
                n: 3,
                mean,
                ci95: Some(ci95),
            }),
        }
    }

    #[test]
    fn the_setting_named_is_the_smallest_inside_the_best_interval() {
        // Best mean 2140 at 19; 13 and 15 are within the interval of the difference
        // (hypot(40, 40) = 57), 11 is not: 13 is named, and the plateau is 13..19.
        let cands = [
            setting(19.0, 2140.0, 40.0),
            setting(11.0, 2000.0, 40.0),
            setting(15.0, 2120.0, 40.0),
            setting(13.0, 2100.0, 40.0),
        ];
        let d = decide(&cands).unwrap();
        assert_eq!((d.chosen, d.best_mean), (3, 0));
        assert_eq!(d.plateau, [3, 2, 0]);
        assert!(d.on_plateau());
        // Narrow intervals (a wider or narrower interval is an input): only the best.
        let sharp: Vec<Candidate> = (cands.iter())
            .map(|c| setting(c.values[0], c.per_day.unwrap().mean, 1.0))
            .collect();
        let d = decide(&sharp).unwrap();
        assert_eq!((d.chosen, d.plateau.clone()), (0, vec![0]));
        assert!(!d.on_plateau());
        // A wider interval passed in widens the plateau down to 11.
        let wide: Vec<Candidate> = (cands.iter())
            .map(|c| setting(c.values[0], c.per_day.unwrap().mean, 120.0))
            .collect();
        assert_eq!(decide(&wide).unwrap().chosen, 1);
    }

    #[test]
    fn the_decision_skips_stalls_and_runs_without_a_steady_state() {
        let ok = |v: f64, mean: f64| setting(v, mean, 0.5);
        let cands = [
            ok(1.0, 10.0),
            Candidate {
                stalled: true,
                ..ok(2.0, 99.0)
            },
            Candidate {
                steady: false,
                ..ok(3.0, 98.0)
            },
            ok(4.0, 12.0),
            ok(5.0, 12.0),
            Candidate {
                per_day: None,
                ..ok(6.0, 0.0)
            },
        ];
        let d = decide(&cands).unwrap();
        // 4 and 5 tie: the smaller is named.
        assert_eq!(d.chosen, 3);
        assert_eq!(d.plateau, [3, 4]);
        assert_eq!(decide(&cands[1..3]), None);
    }

    #[test]
    fn a_search_no_host_could_run_is_refused_naming_the_flag() {
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/demo.toml");
        let check = |search: &[&str], seeds| {
            let search: Vec<String> = search.iter().map(|s| s.to_string()).collect();
            check_search(&demo, &[], &search, seeds)
        };
        assert!(check(&["params.concurrency=1..4"], 3).is_ok());
        let no_spec = check(&["params.concurrency"], 3).unwrap_err();
        assert_eq!(no_spec.flag, "--search");
        assert!(!no_spec.problem.contains("--param"), "{}", no_spec.problem);
        let unknown = check(&["params.nosuch=1..4"], 3).unwrap_err();
        assert!(unknown.problem.contains("nosuch"), "{}", unknown.problem);
        let twice = check(&["params.concurrency=1..2", "params.concurrency=3..4"], 3);
        assert!(twice.is_err());
        let wrong_type = check(&["params.concurrency=true,false"], 3).unwrap_err();
        assert!(
            wrong_type
                .problem
                .starts_with("params.concurrency=true,false: ")
        );
    }
}
