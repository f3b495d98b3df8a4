//! Keys a scenario accepts but does not use, because another key overrides them: DRAM's
//! `channels`, `mts`, `bus_bytes` and `efficiency` where `capacity_gbps` is given (a
//! calibration's measured capacity), an arrival key the arrival kind does not read. A
//! `--set`, `--what-if` or swept key that lands on one changes nothing, so the commands
//! say so ([`super::Loaded::no_effect`]) instead of reporting "noise".

use std::collections::BTreeMap;

/// A key that has no effect, what overrides it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredKey {
    /// The dotted key, e.g. `hardware.dram.channels`.
    pub key: String,
    /// The key that overrides it, e.g. `hardware.dram.capacity_gbps`.
    pub by: String,
    /// Why, in words: "hardware.dram.capacity_gbps is given (in calibration/h200-host.toml),
    /// so channels, mts, bus_bytes and efficiency are ignored".
    pub why: String,
}

/// Which scenario keys each `[params]` knob feeds, directly (`"$name"`, an expression
/// naming it) or through another knob: read from the merged document before
/// substitution.
pub fn param_uses(doc: &toml::Table) -> BTreeMap<String, Vec<String>> {
    fn walk(v: &toml::Value, path: &str, out: &mut BTreeMap<String, Vec<String>>) {
        match v {
            toml::Value::String(s) if s.starts_with('$') || s.starts_with('=') => {
                for name in super::params::references(s) {
                    out.entry(name).or_default().push(path.to_string());
                }
            }
            toml::Value::Table(t) => {
                for (k, item) in t {
                    walk(item, &super::error::join_key(path, k), out);
                }
            }
            toml::Value::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    walk(item, &super::error::join_index(path, i), out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    for (k, v) in doc {
        // A knob's default may name another knob: `params.<name>.default` is a use of it.
        let path = if k == "params" {
            "params".to_string()
        } else {
            k.clone()
        };
        walk(v, &path, &mut out);
    }
    out
}

/// Every scenario key that `key` reaches: itself, or for `params.NAME` the keys the knob
/// feeds, through other knobs too (`params.a` -> `params.b.default` -> what `b` feeds).
fn reached(key: &str, uses: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![key.to_string()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(k) = todo.pop() {
        if !seen.insert(k.clone()) {
            continue;
        }
        let Some(name) = k.strip_prefix("params.") else {
            out.push(k);
            continue;
        };
        let name = name.strip_suffix(".default").unwrap_or(name);
        for used in uses.get(name).into_iter().flatten() {
            match used.strip_prefix("params.") {
                Some(p) => todo.push(format!("params.{}", p.trim_end_matches(".default"))),
                None => todo.push(used.clone()),
            }
        }
    }
    out
}

/// Why `key` has no effect on a scenario whose ignored keys are `ignored` and whose knobs
/// feed `uses`: it is an ignored key, or a knob that feeds only ignored keys. None when
/// it has an effect (or feeds nothing this check knows of).
pub fn no_effect(
    key: &str,
    ignored: &[IgnoredKey],
    uses: &BTreeMap<String, Vec<String>>,
) -> Option<String> {
    let key = key.trim();
    let find = |k: &str| ignored.iter().find(|i| i.key == k);
    if let Some(i) = find(key) {
        return Some(format!("{} has no effect here: {}", i.key, i.why));
    }
    if !key.starts_with("params.") {
        return None;
    }
    let reached = reached(key, uses);
    let all: Vec<&IgnoredKey> = reached.iter().filter_map(|k| find(k)).collect();
    (!reached.is_empty() && all.len() == reached.len()).then(|| {
        let keys: Vec<&str> = all.iter().map(|i| i.key.as_str()).collect();
        format!(
            "{key} has no effect here: it only sets {}, and {}",
            keys.join(", "),
            all[0].why
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channels() -> IgnoredKey {
        IgnoredKey {
            key: "hardware.dram.channels".into(),
            by: "hardware.dram.capacity_gbps".into(),
            why: "hardware.dram.capacity_gbps is given, so channels are ignored".into(),
        }
    }

    #[test]
    fn a_key_or_a_knob_that_only_feeds_ignored_keys_has_no_effect() {
        let doc: toml::Table = toml::from_str(
            r#"
[params]
ch = { default = 8 }
twice = { default = "= 2 * $ch" }
cores = { default = 4 }
[hardware]
cpu_cores = "$cores"
[hardware.dram]
channels = "$twice"
capacity_gbps = 100
"#,
        )
        .unwrap();
        let uses = param_uses(&doc);
        let ignored = [channels()];
        let direct = no_effect("hardware.dram.channels", &ignored, &uses).unwrap();
        assert!(direct.starts_with("hardware.dram.channels has no effect here: "));
        // Through two knobs.
        let knob = no_effect("params.ch", &ignored, &uses).unwrap();
        assert!(
            knob.contains("it only sets hardware.dram.channels"),
            "{knob}"
        );
        assert_eq!(no_effect("params.cores", &ignored, &uses), None);
        assert_eq!(no_effect("hardware.cpu_cores", &ignored, &uses), None);
        assert_eq!(no_effect("params.unused", &ignored, &uses), None);
    }
}
