//! The aggregated sweep: one row per point with mean and CI of every metric. Both the
//! live sweep and `bwsim plot sweep.csv` build this table, so plots drawn either way
//! are the same.

use std::collections::HashMap;

use super::value::ParamValue;
use crate::analysis::interval::Summary;
use crate::analysis::keys;
use crate::analysis::throughput::{JobName, Throughput};

/// Mean and 95% CI half-width of one metric at one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Mean over the point's seeds.
    pub mean: f64,
    /// 95% CI half-width (Student t); None with a single seed.
    pub ci95: Option<f64>,
}

/// One sweep point, aggregated.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Parameter values, aligned with [`SweepTable::params`].
    pub values: Vec<ParamValue>,
    /// Seeds (replicates) run at this point.
    pub seeds: usize,
    /// How many of those seeds stalled (or deadlocked) before finishing their jobs; their
    /// numbers are not a steady-state result.
    pub stalled: usize,
    /// Per metric, aligned with [`SweepTable::metrics`]; None where no seed reported it.
    pub stats: Vec<Option<Stat>>,
    /// The most common bottleneck resource across seeds ("" when none reported).
    pub bottleneck: String,
}

/// A whole aggregated sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    /// Scenario name (plot titles, output folder).
    pub scenario: String,
    /// What one job is called (`workload.job_name`), for units and axis titles.
    pub job_name: JobName,
    /// Swept keys; the first is the x axis, the others split series.
    pub params: Vec<String>,
    /// Metric names: dotted paths of numeric leaves of the run report.
    pub metrics: Vec<String>,
    /// One row per point, in grid order.
    pub rows: Vec<Row>,
}

/// Rows that share the values of every parameter but the first: one plotted line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// e.g. `arrivals.concurrency=4`; None for a one-parameter sweep.
    pub label: Option<String>,
    /// Row indices, sorted by the first parameter's value.
    pub rows: Vec<usize>,
}

impl SweepTable {
    /// Column index of a metric.
    pub fn metric_index(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == name)
    }

    /// A metric at a row.
    pub fn stat(&self, row: usize, metric: &str) -> Option<Stat> {
        self.metric_index(metric)
            .and_then(|i| self.rows[row].stats[i])
            .filter(|s| s.mean.is_finite())
    }

    /// Jobs per day at a row: the `jobs_per_day` metric, or 24 x `jobs_per_hour` in a
    /// sweep.csv written before it existed.
    pub fn per_day(&self, row: usize) -> Option<Stat> {
        self.stat(row, keys::JOBS_PER_DAY).or_else(|| {
            let h = self.stat(row, keys::JOBS_PER_HOUR)?;
            Some(Stat {
                mean: h.mean * 24.0,
                ci95: h.ci95.map(|c| c * 24.0),
            })
        })
    }

    /// The throughput at a row as every report says it (None when nothing finished).
    pub fn throughput(&self, row: usize) -> Option<Throughput> {
        let n = self.rows[row].seeds;
        let summary = |s: Stat| Summary {
            n,
            mean: s.mean,
            ci95: s.ci95,
        };
        Some(Throughput {
            seconds_per_job: summary(self.stat(row, keys::SECONDS_PER_JOB)?),
            jobs_per_day: summary(self.per_day(row)?),
            job: self.job_name.clone(),
        })
    }

    /// The x value (first parameter) of a row; 0 for a sweep without parameters.
    pub fn x(&self, row: usize) -> f64 {
        self.rows[row]
            .values
            .first()
            .map_or(0.0, ParamValue::as_f64)
    }

    /// The x axis name.
    pub fn x_key(&self) -> &str {
        self.params.first().map_or("point", String::as_str)
    }

    /// Groups rows into series by the values of the second and later parameters.
    pub fn series(&self) -> Vec<Series> {
        // Series in order of first appearance, found by key (not by a scan of every
        // series: a grid of thousands of series).
        let mut series: Vec<Series> = Vec::new();
        let mut index: HashMap<Vec<String>, usize> = HashMap::new();
        for (i, row) in self.rows.iter().enumerate() {
            let key: Vec<String> = row.values.iter().skip(1).map(|v| v.to_string()).collect();
            match index.get(&key) {
                Some(&k) => series[k].rows.push(i),
                None => {
                    let label = (!key.is_empty()).then(|| {
                        self.params[1..]
                            .iter()
                            .zip(&key)
                            .map(|(p, v)| format!("{p}={v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    });
                    index.insert(key, series.len());
                    series.push(Series {
                        label,
                        rows: vec![i],
                    });
                }
            }
        }
        for s in &mut series {
            s.rows.sort_by(|&a, &b| self.x(a).total_cmp(&self.x(b)));
        }
        series
    }

    /// Stage names that have an `stages.<name>.inflation` metric, in column order.
    pub fn stages_with(&self, leaf: &str) -> Vec<String> {
        let suffix = format!(".{leaf}");
        self.metrics
            .iter()
            .filter_map(|m| m.strip_prefix("stages.")?.strip_suffix(&suffix))
            .map(str::to_string)
            .collect()
    }
}
