//! Which concurrency settings `bwsim compare` searches on a host, and which one wins:
//! the domain rules, apart from running the sweep (`commands::compare`).

use std::path::Path;

use super::error::CompareInputError;
use crate::scenario::ParamInfo;

/// Most values a default knob search takes (the range 1..=2 x default is stepped to fit).
pub const DEFAULT_SEARCH_VALUES: i64 = 16;

/// Every `[params]` knob whose name ends in `concurrency`, over 1..=2 x its default in at
/// most [`DEFAULT_SEARCH_VALUES`] steps, as `--search` specs.
pub fn default_search(params: &[ParamInfo]) -> Result<Vec<String>, CompareInputError> {
    let found: Vec<String> = params
        .iter()
        .filter(|p| p.name.ends_with("concurrency"))
        .filter_map(|p| {
            let d = p.default.as_integer()?.max(1);
            let hi = 2 * d;
            let step = (hi + DEFAULT_SEARCH_VALUES - 1) / DEFAULT_SEARCH_VALUES;
            Some(format!("params.{}=1..{hi}:{step}", p.name))
        })
        .collect();
    if found.is_empty() {
        return Err(CompareInputError::new(
            "--search",
            "the scenario declares no integer [params] knob named *concurrency; give \
             --search KEY=SPEC, e.g. --search params.workers=1..16",
        ));
    }
    Ok(found)
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
                return Err(CompareInputError::new("--search", format!("{arg}: {e}")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// One searched setting, aggregated over its seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Some seed's run stalled.
    pub stalled: bool,
    /// Every seed's run had a steady state (its measured proofs did not mostly start
    /// together at t = 0).
    pub steady: bool,
    /// Mean throughput over the seeds, when any proof finished.
    pub jobs_per_hour: Option<f64>,
}

/// The setting with the most proofs per hour among those that did not stall, had a steady
/// state and finished a proof (the last of equals); None when none qualifies.
pub fn best(candidates: &[Candidate]) -> Option<(usize, f64)> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.stalled && c.steady)
        .filter_map(|(i, c)| c.jobs_per_hour.filter(|j| *j > 0.0).map(|j| (i, j)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
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
    }

    #[test]
    fn the_best_setting_skips_stalls_and_runs_without_a_steady_state() {
        let ok = |j: f64| Candidate {
            stalled: false,
            steady: true,
            jobs_per_hour: Some(j),
        };
        let cands = [
            ok(10.0),
            Candidate {
                stalled: true,
                ..ok(99.0)
            },
            Candidate {
                steady: false,
                ..ok(98.0)
            },
            ok(12.0),
            ok(12.0),
            Candidate {
                jobs_per_hour: None,
                ..ok(0.0)
            },
        ];
        assert_eq!(best(&cands), Some((4, 12.0)));
        assert_eq!(best(&cands[1..3]), None);
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
