//! The bottleneck names the knob (issue 25): for every bundled C2 scenario the what-if of
//! the named resource beats every other resource's, each simulated on its own here, and
//! the shares add up to 100%. On c2-32g-h200 the knob is host RAM, as raising
//! `params.host_ram_gib` shows through the scenario file.

use std::path::{Path, PathBuf};

use bwsim::analysis::knob::Resource;
use bwsim::engine::EngineLimits;
use bwsim::model::Model;
use bwsim::run::what_if::{stepped, what_ifs};
use bwsim::run::{RunOptions, run_model_within};
use bwsim::scenario;

fn load(path: &Path, sets: &[&str]) -> Model {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    scenario::load(path, &sets)
        .unwrap_or_else(|e| panic!("{e}"))
        .model
}

fn seconds_per_job(model: &Model) -> f64 {
    let opts = RunOptions { ideal: false };
    let limits = EngineLimits::default();
    let r = run_model_within(model, opts, limits, &mut bwsim::engine::NullObserver);
    r.expect("runs").seconds_per_job
}

fn c2_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<_> = (std::fs::read_dir(dir).expect("scenarios/ lists"))
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("c2-") && name.ends_with(".toml")
        })
        .collect();
    paths.sort();
    assert!(paths.len() >= 4, "{paths:?}");
    paths
}

#[test]
fn on_every_c2_scenario_the_named_knob_buys_more_than_any_other_step() {
    for path in c2_scenarios() {
        let name = path.display();
        let model = load(&path, &[]);
        let base = seconds_per_job(&model);
        let knobs = what_ifs(&model, base, EngineLimits::default());
        assert!(knobs.failed.is_empty(), "{:?}", knobs.failed);
        let knob = knobs.knob().unwrap_or_else(|| panic!("{name}: no knob"));
        // Each step simulated again on its own: the knob's is the fastest.
        let mine = seconds_per_job(&stepped(&model, knob.resource).expect("stepped"));
        assert_eq!(mine, knob.seconds_per_job, "{name}: same seed, same answer");
        assert!(mine < base, "{name}: the knob's step is faster than now");
        for other in Resource::ALL.into_iter().filter(|&r| r != knob.resource) {
            let Some(m) = stepped(&model, other) else {
                continue;
            };
            let theirs = seconds_per_job(&m);
            assert!(
                mine <= theirs,
                "{name}: knob {:?} {mine} s/job, but {other:?} {theirs} s/job",
                knob.resource
            );
        }
        let shares: f64 = knobs.what_ifs.iter().map(|w| knobs.share(w)).sum();
        assert!(
            (shares - 1.0).abs() < 1e-9,
            "{name}: shares add to {shares}"
        );
    }
}

#[test]
fn on_the_h200_host_the_knob_is_host_ram_as_the_scenario_knob_confirms() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-h200.toml");
    let model = load(&path, &[]);
    let base = seconds_per_job(&model);
    let knobs = what_ifs(&model, base, EngineLimits::default());
    assert!(knobs.failed.is_empty(), "{:?}", knobs.failed);
    assert_eq!(knobs.knob().map(|w| w.resource), Some(Resource::HostRam));
    // The finding, through the scenario's own knob: 192 GiB instead of 128.
    let more_ram = seconds_per_job(&load(&path, &["params.host_ram_gib=192"]));
    assert!(
        more_ram < 0.95 * base,
        "192 GiB: {more_ram} vs {base} s/job"
    );
}
