//! Compute throughput per thread vs active threads, and the SMT yield.

use super::{ContentionFit, Spread};
use crate::calibrate::measurements::Measurements;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Compute throughput per thread at k active threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComputeRow {
    /// Active threads (one per core first, then SMT siblings).
    pub threads: usize,
    /// Mean Mops per thread.
    pub per_thread_mops: f64,
    /// Per-thread throughput relative to one thread alone.
    pub relative: f64,
}

pub(super) fn compute(m: &Measurements, f: &mut ContentionFit) {
    let mut by_k: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for p in m.compute.iter().filter(|p| p.kind == "scaling") {
        if !p.cpus.is_empty() {
            by_k.entry(p.cpus.len())
                .or_default()
                .push(p.total_mops / p.cpus.len() as f64);
        }
    }
    let one = by_k.get(&1).and_then(|v| Spread::of(v)).map(|s| s.median);
    for (k, v) in &by_k {
        let Some(s) = Spread::of(v) else { continue };
        f.compute.push(ComputeRow {
            threads: *k,
            per_thread_mops: s.median,
            relative: one.map_or(0.0, |o| if o > 0.0 { s.median / o } else { 0.0 }),
        });
    }
    if f.compute.is_empty() {
        f.unresolved
            .push("compute throughput vs threads: not measured".into());
    }
    let ones: Vec<f64> = m
        .compute
        .iter()
        .filter(|p| p.kind == "smt_one")
        .map(|p| p.total_mops)
        .collect();
    let pairs: Vec<f64> = m
        .compute
        .iter()
        .filter(|p| p.kind == "smt_pair")
        .map(|p| p.total_mops)
        .collect();
    match (Spread::of(&ones), Spread::of(&pairs)) {
        (Some(o), Some(p)) if o.median > 0.0 => f.smt_yield = Some(p.median / o.median),
        _ => f
            .unresolved
            .push("SMT yield: no core with two siblings among the allowed CPUs".into()),
    }
}
