//! `[instrumentation]`: markers on stage edges, spans between markers (running forward),
//! timers between stage edges, and the log's settings.

use crate::model::{Edge, Instrumentation, Marker, Span, Timer, Workload};

use crate::scenario::dag::Reach;
use crate::scenario::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};
use crate::scenario::schema::InstrumentationSpec;
use crate::scenario::values::positive;

pub(super) fn instrumentation(
    s: &InstrumentationSpec,
    w: &Workload,
    loc: &Locator,
) -> Result<Instrumentation, ScenarioError> {
    let mut markers: Vec<Marker> = Vec::new();
    for (i, m) in s.markers.iter().enumerate() {
        let p = join_index("instrumentation.markers", i);
        if markers.iter().any(|x| x.name == m.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "marker {:?} is declared twice; marker names are unique",
                    m.name
                ),
            ));
        }
        let (stage, edge) = stage_edge(&m.at, &join_key(&p, "at"), w, loc)?;
        markers.push(Marker {
            name: m.name.clone(),
            stage,
            edge,
        });
    }
    let mut spans: Vec<Span> = Vec::new();
    for (i, sp) in s.spans.iter().enumerate() {
        let p = join_index("instrumentation.spans", i);
        if spans.iter().any(|x| x.name == sp.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "span {:?} is declared twice; span names are unique",
                    sp.name
                ),
            ));
        }
        let find = |name: &str, field: &str| {
            markers.iter().position(|m| m.name == name).ok_or_else(|| {
                loc.error(
                    ErrorKind::Reference,
                    &join_key(&p, field),
                    format!(
                        "no marker named {name:?}; markers: {}",
                        if markers.is_empty() {
                            "(none declared)".to_string()
                        } else {
                            markers
                                .iter()
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                )
            })
        };
        let from = find(&sp.from, "from")?;
        let to = find(&sp.to, "to")?;
        check_span_order(
            &markers[from],
            &markers[to],
            &sp.name,
            &join_key(&p, "to"),
            w,
            loc,
        )?;
        spans.push(Span {
            name: sp.name.clone(),
            from,
            to,
            gpu_busy: sp.gpu_busy,
        });
    }
    let mut timers: Vec<Timer> = Vec::new();
    for (i, t) in s.timers.iter().enumerate() {
        let p = join_index("instrumentation.timers", i);
        if timers.iter().any(|x| x.name == t.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "timer {:?} is declared twice; timer names are unique",
                    t.name
                ),
            ));
        }
        let from = stage_edge(&t.from, &join_key(&p, "from"), w, loc)?;
        let to = stage_edge(&t.to, &join_key(&p, "to"), w, loc)?;
        if w.stages[from.0].per_partition != w.stages[to.0].per_partition {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "to"),
                format!(
                    "timer {:?} runs from a {} stage to a {} stage; both ends must be per partition or both per job",
                    t.name,
                    scope(w, from.0),
                    scope(w, to.0)
                ),
            ));
        }
        timers.push(Timer {
            name: t.name.clone(),
            from,
            to,
        });
    }
    let smi_sample_period_s = s
        .smi_sample_period_s
        .map(|p| {
            positive(
                p,
                "instrumentation.smi_sample_period_s",
                "the nvidia-smi sample period in seconds",
                loc,
            )
        })
        .transpose()?;
    Ok(Instrumentation {
        markers,
        spans,
        timers,
        timing_prefix: s.timing_prefix.clone().unwrap_or_else(|| "TIMING".into()),
        smi_sample_period_s,
    })
}

/// A span must run forward: `to`'s marker on a later edge of the same stage, or on a
/// stage that (transitively) runs after `from`'s. A swapped pair was accepted and
/// bracketed the gaps between spans instead of the spans.
fn check_span_order(
    from: &Marker,
    to: &Marker,
    span: &str,
    key: &str,
    w: &Workload,
    loc: &Locator,
) -> Result<(), ScenarioError> {
    let rank = |e: Edge| match e {
        Edge::Ready => 0,
        Edge::Start => 1,
        Edge::End => 2,
    };
    let forward = if from.stage == to.stage {
        rank(from.edge) <= rank(to.edge)
    } else {
        let after: Vec<Vec<usize>> = w.stages.iter().map(|s| s.after.clone()).collect();
        Reach::new(&after).runs_after(from.stage, to.stage)
    };
    if forward {
        return Ok(());
    }
    let at = |m: &Marker| format!("{}:{}", w.stages[m.stage].name, edge_name(m.edge));
    Err(loc.error(
        ErrorKind::Value,
        key,
        format!(
            "span {span:?} runs from marker {:?} ({}) to marker {:?} ({}), which does not come after it; `to` must be a later edge of the same stage or on a stage that runs after `from`'s (are from and to swapped?)",
            from.name,
            at(from),
            to.name,
            at(to)
        ),
    ))
}

fn edge_name(e: Edge) -> &'static str {
    match e {
        Edge::Ready => "ready",
        Edge::Start => "start",
        Edge::End => "end",
    }
}

fn scope(w: &Workload, stage: usize) -> &'static str {
    if w.stages[stage].per_partition {
        "per-partition"
    } else {
        "per-job"
    }
}

/// Parses `"stage:ready|start|end"` into a stage index and an edge.
fn stage_edge(
    text: &str,
    key: &str,
    w: &Workload,
    loc: &Locator,
) -> Result<(usize, Edge), ScenarioError> {
    let Some((stage, edge)) = text.rsplit_once(':') else {
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!("{text:?}: write \"stage:ready\", \"stage:start\" or \"stage:end\""),
        ));
    };
    let edge = match edge.trim() {
        "ready" => Edge::Ready,
        "start" => Edge::Start,
        "end" => Edge::End,
        other => {
            return Err(loc.error(
                ErrorKind::Value,
                key,
                format!("{other:?} is not a stage boundary; use ready, start or end"),
            ));
        }
    };
    let stage = w
        .stages
        .iter()
        .position(|s| s.name == stage.trim())
        .ok_or_else(|| {
            loc.error(
                ErrorKind::Reference,
                key,
                format!("no stage named {stage:?}; stages: {}", stage_names(w)),
            )
        })?;
    Ok((stage, edge))
}

/// Stage names, comma separated, for messages.
fn stage_names(w: &Workload) -> String {
    w.stages
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
