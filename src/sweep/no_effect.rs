//! Swept keys that change nothing: a key another key overrides (DRAM `channels` beside a
//! calibration's `capacity_gbps`), or a knob that only feeds such keys. A sweep over one
//! draws a flat line and names a knee in the noise of its seeds, so `sweep` refuses it
//! unless asked, and `compare` warns.

use std::path::Path;

use super::spec::parse_param;

/// Each `KEY=SPEC` of `params` whose key has no effect on `scenario` (with `sets`), tried
/// at its first value: (the argument, why). A SPEC or scenario that does not load is
/// left to the sweep's own checks.
pub fn swept_without_effect(
    scenario: &Path,
    sets: &[String],
    params: &[String],
) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|arg| {
            let p = parse_param(arg).ok()?;
            let first = p.values.first()?;
            let mut tried = sets.to_vec();
            tried.push(format!("{}={first}", p.key));
            let loaded = crate::scenario::load(scenario, &tried).ok()?;
            Some((arg.clone(), loaded.no_effect(&p.key)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_under_a_measured_capacity_are_swept_without_effect() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let h200 = root.join("c2-32g-h200.toml");
        let params = [
            "hardware.dram.channels=4,8,12".to_string(),
            "params.synthesis_concurrency=1..3".to_string(),
        ];
        let found = swept_without_effect(&h200, &[], &params);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, params[0]);
        assert!(
            found[0].1.contains("hardware.dram.capacity_gbps is given"),
            "{found:?}"
        );
        assert!(found[0].1.contains("h200-host.toml"), "{found:?}");
        // On a scenario that derives its capacity from channels, the key has an effect.
        let demo = root.join("demo.toml");
        let channels = ["hardware.dram.channels=4,8".to_string()];
        assert!(swept_without_effect(&demo, &[], &channels).is_empty());
    }
}
