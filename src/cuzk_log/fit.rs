//! `--fit`: which scenario parameters a log can estimate, and the include file that sets
//! them. A parameter is fittable when a stage's `duration_s` is exactly `"$name"` and the
//! log observes that stage alone: a marker pair `X_START` at `stage:start` and `X_END`
//! at `stage:end`, or a timer from `stage:start` to `stage:end`. Its value is corrected
//! by the ratio of the log's median to the model's at the same concurrency (the caller
//! iterates: contention makes the observed time a function of every stage's).

use std::fmt::Write as _;

use serde_json::json;
use toml::{Table, Value};

use super::analyse::LogAnalysis;

/// What observes a stage in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observable {
    /// An `X_START`..`X_END` bracket (its stage name `X`).
    Bracket(String),
    /// A timer of the timing lines.
    Timer(String),
}

impl Observable {
    /// The median of this observable in an analysed log, ms.
    pub fn p50_ms(&self, a: &LogAnalysis) -> Option<f64> {
        match self {
            Observable::Bracket(x) => a
                .stages
                .iter()
                .find(|s| &s.name == x)
                .and_then(|s| s.duration_ms.as_ref())
                .map(|d| d.p50),
            Observable::Timer(t) => a.timers.iter().find(|(n, _)| n == t).map(|(_, d)| d.p50),
        }
    }

    /// How it is named in outputs.
    pub fn describe(&self) -> String {
        match self {
            Observable::Bracket(x) => format!("{x}_START..{x}_END"),
            Observable::Timer(t) => format!("timer {t}"),
        }
    }
}

/// A parameter the log can estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct FitTarget {
    /// The `[params]` knob.
    pub param: String,
    /// The stage whose `duration_s` it is.
    pub stage: String,
    /// What observes that stage.
    pub observable: Observable,
}

fn tables<'a>(t: &'a Table, path: &[&str]) -> Vec<&'a Table> {
    let mut v: Option<&Value> = None;
    let mut cur = t;
    for (i, k) in path.iter().enumerate() {
        let Some(x) = cur.get(*k) else {
            return Vec::new();
        };
        if i + 1 == path.len() {
            v = Some(x);
        } else if let Some(t) = x.as_table() {
            cur = t;
        } else {
            return Vec::new();
        }
    }
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_table).collect())
        .unwrap_or_default()
}

fn str_of<'a>(t: &'a Table, k: &str) -> Option<&'a str> {
    t.get(k).and_then(Value::as_str)
}

/// The fittable parameters of a scenario document (its merged TOML, before `[params]`
/// substitution).
pub fn fit_targets(doc: &Table) -> Vec<FitTarget> {
    let markers: Vec<(&str, &str)> = tables(doc, &["instrumentation", "markers"])
        .into_iter()
        .filter_map(|m| Some((str_of(m, "name")?, str_of(m, "at")?)))
        .collect();
    let timers: Vec<(&str, &str, &str)> = tables(doc, &["instrumentation", "timers"])
        .into_iter()
        .filter_map(|m| Some((str_of(m, "name")?, str_of(m, "from")?, str_of(m, "to")?)))
        .collect();
    let mut out = Vec::new();
    for stage in tables(doc, &["workload", "stages"]) {
        let (Some(name), Some(dur)) = (str_of(stage, "name"), str_of(stage, "duration_s")) else {
            continue;
        };
        let Some(param) = dur.trim().strip_prefix('$') else {
            continue;
        };
        if param.is_empty() || !param.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let (start, end) = (format!("{name}:start"), format!("{name}:end"));
        let bracket = markers.iter().find_map(|(m, at)| {
            let x = m.strip_suffix("_START")?;
            let closes = markers
                .iter()
                .any(|(m2, at2)| *m2 == format!("{x}_END") && *at2 == end);
            (*at == start && closes).then(|| Observable::Bracket(x.to_string()))
        });
        let timer = timers
            .iter()
            .find(|(_, f, t)| *f == start && *t == end)
            .map(|(n, _, _)| Observable::Timer(n.to_string()));
        if let Some(observable) = bracket.or(timer) {
            out.push(FitTarget {
                param: param.to_string(),
                stage: name.to_string(),
                observable,
            });
        }
    }
    out
}

/// One fitted value and the evidence for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// What was fitted.
    pub target: FitTarget,
    /// The scenario's value before.
    pub was: f64,
    /// The fitted value.
    pub value: f64,
    /// The log's median of the observable, ms.
    pub log_p50_ms: f64,
    /// The model's median with the fitted value, ms.
    pub model_p50_ms: f64,
    /// Change of the model's median per unit of the parameter around the fitted value,
    /// ms (None when the moved run did not observe it).
    pub sensitivity_ms: Option<f64>,
    /// The same as a fraction per fraction: % of the median per +1% of the parameter.
    pub elasticity: Option<f64>,
}

impl Fitted {
    /// Whether the log hardly determines the value: its median moves less than
    /// `threshold` per unit fraction of it (or not at all, or unmeasured).
    pub fn is_flat(&self, threshold: f64) -> bool {
        self.elasticity.is_none_or(|e| e.abs() < threshold)
    }

    /// What the sensitivity run says of the fitted value.
    pub fn determination(&self) -> Determination {
        match self.elasticity {
            None => Determination::Unmeasured,
            Some(e) if e <= -FLAT_ELASTICITY => Determination::Impossible,
            Some(e) if e < FLAT_ELASTICITY => Determination::Flat,
            Some(_) => Determination::Determined,
        }
    }
}

/// Whether the log determines a fitted value, from its elasticity. Only a determined
/// value goes into the fit file; the others keep the scenario's value, with a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Determination {
    /// The observed median moves with the parameter, the right way.
    Determined,
    /// It hardly moves (|elasticity| < [`FLAT_ELASTICITY`]): the value is wherever the
    /// other parameters left the figure.
    Flat,
    /// A longer duration gave a shorter observed median: no stage can do that, so the
    /// medians moved with the run's noise (or contention), not with the parameter.
    Impossible,
    /// The moved run did not observe the median at all.
    Unmeasured,
}

impl Determination {
    /// The word the reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Determination::Determined => "determined",
            Determination::Flat => "flat",
            Determination::Impossible => "impossible",
            Determination::Unmeasured => "unmeasured",
        }
    }

    /// Why a value that is not determined is kept at the scenario's.
    fn why(self) -> &'static str {
        match self {
            Determination::Determined => "",
            Determination::Flat => "the log hardly determines it",
            Determination::Impossible => {
                "a longer duration gave a shorter observed median, which no stage can do: \
                 the medians move with the run's noise, not with this parameter, so the log \
                 does not determine it (fit a longer log, or hold the value from a \
                 measurement)"
            }
            Determination::Unmeasured => "the moved run did not observe its median",
        }
    }
}

/// Below this elasticity (% of the observed p50 per +1% of the parameter) a parameter
/// is flat: the log hardly determines it.
pub const FLAT_ELASTICITY: f64 = 0.1;

/// The include file: the scenario (by `include_path`, relative to the file) with the
/// fitted knobs set, so `bwsim run FILE` runs the fitted scenario.
pub fn render_include(
    include_path: &str,
    source: &str,
    concurrency: usize,
    fitted: &[Fitted],
) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `bwsim log --fit` from {source}, the model at concurrency {concurrency}."
    );
    let _ = writeln!(
        o,
        "# Run it as a scenario (`bwsim run THIS_FILE`): it includes the scenario and sets"
    );
    let _ = writeln!(
        o,
        "# the fitted knobs, which win over the scenario's defaults."
    );
    let _ = writeln!(
        o,
        "include = [{}]\n\n[params]",
        Value::String(include_path.to_string())
    );
    for f in fitted {
        let _ = writeln!(
            o,
            "# stage {}: {} p50 {:.3} ms in the log, {:.3} ms in the model (was {})",
            f.target.stage,
            f.target.observable.describe(),
            f.log_p50_ms,
            f.model_p50_ms,
            f.was
        );
        if let Some(e) = f.elasticity {
            let _ = writeln!(o, "# elasticity {e:.3} (% of that p50 per +1% of it)");
        }
        // A value the log does not determine is wherever the others left its figure (or
        // noise): the scenario's own value is the better guess.
        let d = f.determination();
        let value = if d == Determination::Determined {
            f.value
        } else {
            let _ = writeln!(
                o,
                "# {}: {}, so the scenario's value is kept (the fit reached {})",
                d.as_str(),
                d.why(),
                f.value
            );
            f.was
        };
        let _ = writeln!(o, "{} = {{ default = {value:?} }}", f.target.param);
    }
    o
}

/// The fit as the text report ends: the file written, then one line per parameter.
pub fn fit_text(file: &std::path::Path, fitted: &[Fitted]) -> String {
    let mut text = format!(
        "\nfit: wrote {} (sensitivity: ms of the observed p50 per unit of the \
         parameter; elasticity: % per +1%)\n",
        file.display()
    );
    for f in fitted {
        text.push_str(&format!(
            "  {} = {:.6} (was {}; {} p50 {:.1} ms in the log, {:.1} in the model; \
             sensitivity {}, elasticity {}{})\n",
            f.target.param,
            f.value,
            f.was,
            f.target.observable.describe(),
            f.log_p50_ms,
            f.model_p50_ms,
            f.sensitivity_ms.map_or("-".into(), |x| format!("{x:.1}")),
            f.elasticity.map_or("-".into(), |x| format!("{x:.3}")),
            match f.determination() {
                Determination::Determined => String::new(),
                d => format!(
                    ", {}: not determined, the file keeps {}",
                    d.as_str().to_uppercase(),
                    f.was
                ),
            }
        ));
    }
    text
}

/// The warning a parameter the log does not determine gets on stderr (None for a
/// determined one).
pub fn undetermined_warning(f: &Fitted) -> Option<String> {
    let d = f.determination();
    (d != Determination::Determined).then(|| {
        format!(
            "--fit: {} is {}: its {} p50 moves {:+.3}% per +1% of it; {}; the fit file \
             keeps the scenario's {} (the fit reached {:.6})",
            f.target.param,
            d.as_str(),
            f.target.observable.describe(),
            f.elasticity.unwrap_or(0.0),
            d.why(),
            f.was,
            f.value
        )
    })
}

/// The fit as the JSON report's `fit` object.
pub fn fit_json(file: &std::path::Path, fitted: &[Fitted]) -> serde_json::Value {
    json!({
        "file": file.display().to_string(),
        "params": fitted.iter().map(|f| json!({
            "name": f.target.param, "stage": f.target.stage,
            "observed_by": f.target.observable.describe(),
            "was": f.was, "value": f.value,
            "log_p50_ms": f.log_p50_ms, "model_p50_ms": f.model_p50_ms,
            "sensitivity_ms_per_unit": f.sensitivity_ms,
            "elasticity": f.elasticity,
            "flat": f.is_flat(FLAT_ELASTICITY),
            "determination": f.determination().as_str(),
            "written": if f.determination() == Determination::Determined { f.value } else { f.was },
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directly_parameterised_stages_observed_alone_are_fittable() {
        let doc: Table = toml::from_str(
            r#"
[[workload.stages]]
name = "a"
duration_s = "$a_s"
[[workload.stages]]
name = "b"
duration_s = "$b_s"
[[workload.stages]]
name = "c"
duration_s = "= 2 * $c_s"
[[workload.stages]]
name = "d"
duration_s = "$d_s"
[[instrumentation.markers]]
name = "A_START"
at = "a:start"
[[instrumentation.markers]]
name = "A_END"
at = "a:end"
[[instrumentation.markers]]
name = "C_START"
at = "c:start"
[[instrumentation.markers]]
name = "C_END"
at = "c:end"
[[instrumentation.timers]]
name = "b_ms"
from = "b:start"
to = "b:end"
[[instrumentation.timers]]
name = "d_wait_ms"
from = "d:ready"
to = "d:end"
"#,
        )
        .unwrap();
        let t = fit_targets(&doc);
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(t[0].param, "a_s");
        assert_eq!(t[0].observable, Observable::Bracket("A".into()));
        assert_eq!(t[1].observable, Observable::Timer("b_ms".into()));
        let text = render_include(
            "../s.toml",
            "x.log",
            3,
            &[Fitted {
                target: t[0].clone(),
                was: 1.0,
                value: 1.25,
                log_p50_ms: 1250.0,
                model_p50_ms: 1249.0,
                sensitivity_ms: Some(1000.0),
                elasticity: Some(0.8),
            }],
        );
        let back: Table = toml::from_str(&text).unwrap();
        assert_eq!(back["include"][0].as_str(), Some("../s.toml"));
        assert_eq!(back["params"]["a_s"]["default"].as_float(), Some(1.25));
        // A flat parameter keeps the scenario's value.
        let flat = Fitted {
            target: t[0].clone(),
            was: 1.0,
            value: 0.03,
            log_p50_ms: 1250.0,
            model_p50_ms: 1249.0,
            sensitivity_ms: Some(1.0),
            elasticity: Some(0.01),
        };
        let text = render_include("../s.toml", "x.log", 3, &[flat]);
        let back: Table = toml::from_str(&text).unwrap();
        assert_eq!(back["params"]["a_s"]["default"].as_float(), Some(1.0));
        assert!(text.contains("the fit reached 0.03"), "{text}");
    }

    #[test]
    fn the_fit_report_says_each_value_its_evidence_and_flags_a_flat_one() {
        let target = FitTarget {
            param: "a_s".into(),
            stage: "a".into(),
            observable: Observable::Bracket("A".into()),
        };
        let f = |elasticity| Fitted {
            target: target.clone(),
            was: 1.0,
            value: 1.25,
            log_p50_ms: 1250.0,
            model_p50_ms: 1249.0,
            sensitivity_ms: Some(1000.0),
            elasticity: Some(elasticity),
        };
        let file = std::path::Path::new("fit.toml");
        let text = fit_text(file, &[f(0.8), f(0.01)]);
        assert!(text.starts_with("\nfit: wrote fit.toml "), "{text}");
        assert!(text.contains("  a_s = 1.250000 (was 1; A_START..A_END p50 1250.0 ms in the log, 1249.0 in the model; sensitivity 1000.0, elasticity 0.800)\n"), "{text}");
        assert!(
            text.contains("elasticity 0.010, FLAT: not determined, the file keeps 1)"),
            "{text}"
        );
        let doc = fit_json(file, &[f(0.8), f(0.01)]);
        assert_eq!(doc["params"][0]["flat"], false);
        assert_eq!(doc["params"][1]["flat"], true);
        assert_eq!(doc["params"][1]["determination"], "flat");
        assert_eq!(doc["params"][1]["written"], 1.0);
        let flat = undetermined_warning(&f(0.01)).unwrap();
        assert!(
            flat.contains("a_s is flat: its A_START..A_END p50 moves +0.010%"),
            "{flat}"
        );
        assert_eq!(undetermined_warning(&f(0.8)), None);
        // A longer kernel giving a shorter observed stage is flagged, never written.
        let impossible = f(-4.14);
        assert_eq!(impossible.determination(), Determination::Impossible);
        let text = fit_text(file, std::slice::from_ref(&impossible));
        assert!(
            text.contains("elasticity -4.140, IMPOSSIBLE: not determined"),
            "{text}"
        );
        let warning = undetermined_warning(&impossible).unwrap();
        assert!(warning.contains("which no stage can do"), "{warning}");
        let toml = render_include("../s.toml", "x.log", 3, &[impossible]);
        let back: Table = toml::from_str(&toml).unwrap();
        assert_eq!(back["params"]["a_s"]["default"].as_float(), Some(1.0));
        assert!(toml.contains("# impossible: "), "{toml}");
        assert_eq!(fit_json(file, &[f(-4.14)])["params"][0]["written"], 1.0);
    }
}
