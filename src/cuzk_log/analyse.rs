//! What a parsed cuzk log says: per-GPU bracketed utilisation (time with a
//! GPU_START..GPU_END bracket open), the engine's own GPU time (`gpu_ms=`), the gaps
//! between GPU operations, GPU time from the timer lines, stage durations (`X_START`..
//! `X_END` pairs) by percentile, and how many of each stage were in flight over time.
//!
//! One measurement window serves every figure: from the completion of the first
//! `warmup_jobs` jobs (a job completes at its last record), or from the first record
//! without warm-up, to the last record, as `bwsim run` measures.
//!
//! The order of lines changes nothing (journald and multi-process logs interleave them):
//! records are taken in [`record_order`], by offset, and at equal offsets by their
//! content (ends before starts, then event, job, partition, worker, GPU, `gpu_ms`, the
//! rest of the detail), so records that tie are told apart by what they say, never by
//! where they stand. Stages are listed in that order of first appearance. An end closes
//! the open start of its stage, job and partition that names the same worker, else the
//! latest one. Only the timing lines, which carry no time, are placed by their position
//! (see [`super::parse`]).
//!
//! GPUs are those the log names (in records or start-up lines), mapped sparsely by
//! their number: a GPU numbered 4294967295 is one more GPU, not four billion.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::parse::{Marker, ParsedLog};
use crate::analysis::bracket_measures::{self, Bracket, BracketSummary};

/// cuzk's own default of GPU workers per device (cuzk-core config.rs,
/// `default_gpu_workers_per_device`).
pub const CUZK_DEFAULT_WORKERS_PER_GPU: u32 = 2;

/// How cuzk's global worker numbers map to GPUs: worker `w` runs on GPU
/// `w / per_gpu` (cuzk numbers the workers of GPU 0 first).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerLayout {
    /// GPU workers per device.
    pub per_gpu: u32,
    /// Where `per_gpu` came from, said in the report.
    pub source: String,
    /// Given by the user: wins over what the log's own start-up lines say.
    pub explicit: bool,
}

impl Default for WorkerLayout {
    fn default() -> Self {
        WorkerLayout {
            per_gpu: CUZK_DEFAULT_WORKERS_PER_GPU,
            source: "cuzk's default".into(),
            explicit: false,
        }
    }
}

impl WorkerLayout {
    /// The layout in effect for `log`: an explicit one, else the log's own start-up lines
    /// (`GPU worker started` per worker, or `gpu_workers_per_device=`), else this one.
    fn for_log(&self, log: &ParsedLog) -> (WorkerLayout, BTreeMap<u32, u32>) {
        if self.explicit {
            return (self.clone(), BTreeMap::new());
        }
        let from_log = |per_gpu| WorkerLayout {
            per_gpu,
            source: "the log's own start-up lines".into(),
            explicit: false,
        };
        match log.workers_per_gpu {
            Some(n) => (from_log(n), log.worker_gpus.clone()),
            None if !log.worker_gpus.is_empty() => {
                let n = self.per_gpu;
                (from_log(n), log.worker_gpus.clone())
            }
            None => (self.clone(), BTreeMap::new()),
        }
    }
}

/// What the analysis needs besides the log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnalyseOptions {
    /// Jobs to skip before the window opens.
    pub warmup_jobs: usize,
    /// Workers to GPUs.
    pub workers: WorkerLayout,
}

/// Percentiles and extremes of a set of durations, milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// How many.
    pub count: usize,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Distribution {
    /// The distribution of `values` (None when empty). Percentiles by nearest rank.
    pub fn of(mut values: Vec<f64>) -> Option<Distribution> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |p: f64| values[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Distribution {
            count: n,
            mean: values.iter().sum::<f64>() / n as f64,
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: values[n - 1],
        })
    }
}

/// One stage's brackets (`X_START`..`X_END` of one job and partition).
#[derive(Debug, Clone, PartialEq)]
pub struct StageStats {
    /// Stage name (`X` of the marker names; `GPU_QUEUE` for queue..pickup).
    pub name: String,
    /// Durations of matched brackets that end in the window, ms.
    pub duration_ms: Option<Distribution>,
    /// Time-weighted mean number in flight over the window.
    pub mean_in_flight: f64,
    /// Most in flight at once within the window.
    pub max_in_flight: usize,
    /// Starts never ended (the log ends first).
    pub unmatched_starts: usize,
    /// Ends without a start.
    pub unmatched_ends: usize,
    /// (time ms, in flight) at every change, for plots.
    pub in_flight: Vec<(f64, usize)>,
}

/// Jobs in flight over time: a job is in flight from its first record to its last.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobsInFlight {
    /// Time-weighted median over the window: the closed-loop concurrency `--against`
    /// uses.
    pub median: usize,
    /// Time-weighted mean over the window.
    pub mean: f64,
    /// Most at once within the window.
    pub max: usize,
    /// (time ms, jobs in flight) at every change, for plots.
    pub series: Vec<(f64, usize)>,
}

/// One GPU_START..GPU_END bracket and what the log says happened inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuBracket {
    /// Job id.
    pub job: String,
    /// Partition, when logged.
    pub partition: Option<u32>,
    /// GPU index (from `gpu=`, or the worker's GPU).
    pub gpu: u32,
    /// Opened, ms.
    pub start_ms: f64,
    /// Closed, ms (None: still open when the log ends).
    pub end_ms: Option<f64>,
    /// The engine's own GPU time (`gpu_ms=` on GPU_END).
    pub gpu_ms: Option<f64>,
    /// Timers of the timing lines attributed to it (kernel times, mutex wait, ...).
    pub timers: Vec<(String, f64)>,
}

/// One GPU's share of the window.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuUse {
    /// GPU index.
    pub gpu: u32,
    /// Share of the window with a bracket open.
    pub bracketed_busy_frac: f64,
    /// Share of the window inside `gpu_ms` intervals (ending at each GPU_END), None
    /// when no GPU_END carries `gpu_ms=`.
    pub engine_busy_frac: Option<f64>,
    /// Brackets that end in the window.
    pub brackets: usize,
}

/// The analysis of a log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogAnalysis {
    /// Window start and end, ms.
    pub window_ms: (f64, f64),
    /// Jobs seen.
    pub jobs: usize,
    /// Jobs skipped as warm-up.
    pub warmup_jobs: usize,
    /// GPUs: those the log names (1 when none is named).
    pub gpus: usize,
    /// Workers to GPUs as used, and whether the log's own lines said so.
    pub workers: WorkerLayout,
    /// Each GPU the log names, by number.
    pub per_gpu: Vec<GpuUse>,
    /// Mean over GPUs of the bracketed busy share (the union: a bracket open), what
    /// cuzk's merged-interval analysis calls GPU utilisation.
    pub gpu_bracketed_busy_frac: f64,
    /// The same brackets added up (the seed's formula), over the window and over the
    /// GPU's span, with the mean gap between GPU operations.
    pub gpu_bracket_sums: BracketSummary,
    /// Mean over GPUs of the `gpu_ms=` share (None without `gpu_ms=`).
    pub gpu_engine_busy_frac: Option<f64>,
    /// Idle gaps between a GPU's brackets (its last END to its next START), ms.
    pub gpu_gap_ms: Option<Distribution>,
    /// `gpu_total_ms` of timer lines, each clipped to the window, over GPUs x window
    /// (None without such timers).
    pub gpu_timer_busy_frac: Option<f64>,
    /// Every timer's distribution over the lines in the window, in first-seen order.
    pub timers: Vec<(String, Distribution)>,
    /// Timing lines attributed to no open GPU bracket.
    pub unattributed_timings: usize,
    /// Stages, in first-seen order.
    pub stages: Vec<StageStats>,
    /// GPU brackets in start order (those open in or after the window).
    pub gpu_brackets: Vec<GpuBracket>,
    /// Jobs in flight over time.
    pub jobs_in_flight: JobsInFlight,
    /// (time ms, GPUs with a bracket open) at every change, for plots.
    pub gpus_busy: Vec<(f64, usize)>,
    /// Partitions per job: the most common count of distinct `partition=` values a job's
    /// markers name (None when no marker names one).
    pub partitions_per_job: Option<usize>,
}

/// The measurement window.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: f64,
    end: f64,
}

impl Window {
    fn len(self) -> f64 {
        (self.end - self.start).max(0.0)
    }
    /// The part of `a..b` inside the window.
    fn clip(self, a: f64, b: f64) -> f64 {
        (b.min(self.end) - a.max(self.start)).max(0.0)
    }
    fn holds(self, t: f64) -> bool {
        t >= self.start && t <= self.end
    }
    fn frac(self, x: f64, gpus: usize) -> f64 {
        let w = self.len() * gpus as f64;
        if w > 0.0 { x / w + 0.0 } else { 0.0 }
    }
}

/// A step series (time, level) from +1/-1 steps, ends before starts at equal times.
fn levels(mut steps: Vec<(f64, i64)>) -> Vec<(f64, usize)> {
    steps.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut level = 0_i64;
    steps
        .into_iter()
        .map(|(t, d)| {
            level += d;
            (t, level.max(0) as usize)
        })
        .collect()
}

/// Time spent at each level within the window, and the highest level held in it.
fn time_at_levels(series: &[(f64, usize)], w: Window) -> (BTreeMap<usize, f64>, usize) {
    let mut time_at: BTreeMap<usize, f64> = BTreeMap::new();
    let mut max = 0;
    for (i, &(t, n)) in series.iter().enumerate() {
        let next = series.get(i + 1).map_or(w.end, |s| s.0);
        let d = w.clip(t, next);
        // A level counts when it lasts inside the window or is reached at an instant in it.
        if d > 0.0 || w.holds(t) {
            max = max.max(n);
        }
        *time_at.entry(n).or_default() += d;
    }
    (time_at, max)
}

/// Jobs in flight from each job's first and last record, summarised over the window.
fn jobs_in_flight(spans: &HashMap<&str, (f64, f64)>, w: Window) -> JobsInFlight {
    let series = levels(
        spans
            .values()
            .flat_map(|&(a, b)| [(a, 1), (b, -1)])
            .collect(),
    );
    let (time_at, max) = time_at_levels(&series, w);
    let total: f64 = time_at.values().sum();
    let mut median = max;
    let mut seen = 0.0;
    for (&n, &d) in &time_at {
        seen += d;
        if total > 0.0 && seen >= total / 2.0 {
            median = n;
            break;
        }
    }
    let mean = if total > 0.0 {
        time_at.iter().map(|(&n, &d)| n as f64 * d).sum::<f64>() / total
    } else {
        0.0
    };
    JobsInFlight {
        median,
        mean,
        max,
        series,
    }
}

/// Events that open and close a bracket, and the stage they belong to.
fn bracket_of(event: &str) -> Option<(&str, bool)> {
    if let Some(s) = event.strip_suffix("_START") {
        return Some((s, true));
    }
    if let Some(s) = event.strip_suffix("_END") {
        return Some((s, false));
    }
    match event {
        "GPU_QUEUE" => Some(("GPU_QUEUE", true)),
        "GPU_PICKUP" => Some(("GPU_QUEUE", false)),
        _ => None,
    }
}

/// A bracket's job and partition.
type BracketKey<'a> = (&'a str, Option<u32>);

/// Where a record stands, whatever its line: whether it closes a bracket (ends first at
/// one instant, so a worker that hands over is free at once), its offset, then what it
/// says. Two records equal in this order are equal in every field the analysis reads.
pub fn record_order(a: &Marker, b: &Marker) -> Ordering {
    let ends_last = |m: &Marker| bracket_of(&m.event).is_some_and(|(_, start)| start);
    a.t_ms
        .total_cmp(&b.t_ms)
        .then_with(|| ends_last(a).cmp(&ends_last(b)))
        .then_with(|| a.event.cmp(&b.event))
        .then_with(|| a.job.cmp(&b.job))
        .then_with(|| a.partition.cmp(&b.partition))
        .then_with(|| a.worker.cmp(&b.worker))
        .then_with(|| a.gpu.cmp(&b.gpu))
        .then_with(|| {
            let ms = |m: &Marker| m.gpu_ms.unwrap_or(-1.0);
            ms(a).total_cmp(&ms(b))
        })
        .then_with(|| a.details.cmp(&b.details))
}

/// A matched (or still open) bracket of one stage, job and partition.
struct Pair<'a> {
    stage: usize,
    start: &'a Marker,
    end: Option<&'a Marker>,
}

/// Pairs starts and ends by (stage, job, partition), taking `markers` in
/// [`record_order`]: an end closes the open start that names its worker, else the latest
/// open one; an end that finds no start waits for a start at its own instant (a
/// zero-length bracket logged end first).
fn pair<'a>(markers: &[&'a Marker], stage_names: &mut Vec<String>) -> (Vec<Pair<'a>>, Vec<usize>) {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut sorted: Vec<(&Marker, usize, bool)> = markers
        .iter()
        .filter_map(|m| {
            let (s, is_start) = bracket_of(&m.event)?;
            let id = *index.entry(s).or_insert_with(|| {
                stage_names.push(s.to_string());
                stage_names.len() - 1
            });
            Some((*m, id, is_start))
        })
        .collect();
    sorted.sort_by(|a, b| record_order(a.0, b.0));
    let mut pairs: Vec<Pair> = Vec::new();
    let mut open: HashMap<(usize, &str, Option<u32>), Vec<usize>> = HashMap::new();
    let mut waiting_ends: HashMap<(usize, &str, Option<u32>), Vec<&Marker>> = HashMap::new();
    let mut unmatched_ends = vec![0; stage_names.len()];
    for (m, stage, is_start) in sorted {
        let key = (stage, m.job.as_str(), m.partition);
        if is_start {
            let early_end = waiting_ends
                .get_mut(&key)
                .and_then(|v| v.pop_if(|e| e.t_ms == m.t_ms));
            pairs.push(Pair {
                stage,
                start: m,
                end: early_end,
            });
            if early_end.is_none() {
                open.entry(key).or_default().push(pairs.len() - 1);
            }
        } else if let Some(stack) = open.get_mut(&key).filter(|v| !v.is_empty()) {
            let same_worker = (m.worker.is_some())
                .then(|| {
                    stack
                        .iter()
                        .rposition(|&i| pairs[i].start.worker == m.worker)
                })
                .flatten();
            let i = stack.remove(same_worker.unwrap_or(stack.len() - 1));
            pairs[i].end = Some(m);
        } else {
            waiting_ends.entry(key).or_default().push(m);
        }
    }
    for (key, ends) in waiting_ends {
        unmatched_ends[key.0] += ends.len();
    }
    (pairs, unmatched_ends)
}

/// A GPU's busy intervals: the union of its brackets, in time order.
fn union(mut spans: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Workers to GPUs as the analysis uses them.
struct GpuMap {
    layout: WorkerLayout,
    logged: BTreeMap<u32, u32>,
}

impl GpuMap {
    /// The GPU a record ran on: its `gpu=`, else its worker's GPU.
    fn gpu_of(&self, m: &Marker) -> Option<u32> {
        m.gpu.or_else(|| {
            let w = m.worker?;
            Some(
                self.logged
                    .get(&w)
                    .copied()
                    .unwrap_or(w / self.layout.per_gpu.max(1)),
            )
        })
    }
}

/// Analyses a parsed log.
pub fn analyse(log: &ParsedLog, opts: &AnalyseOptions) -> LogAnalysis {
    let mut markers: Vec<&Marker> = log.markers.iter().collect();
    markers.sort_by(|a, b| record_order(a, b));
    let (layout, logged) = opts.workers.for_log(log);
    let map = GpuMap { layout, logged };

    let mut job_span: HashMap<&str, (f64, f64)> = HashMap::new();
    for m in &log.markers {
        let s = job_span.entry(&m.job).or_insert((m.t_ms, m.t_ms));
        s.0 = s.0.min(m.t_ms);
        s.1 = s.1.max(m.t_ms);
    }
    let mut ends: Vec<f64> = job_span.values().map(|s| s.1).collect();
    ends.sort_by(f64::total_cmp);
    let end = ends.last().copied().unwrap_or(0.0);
    let first = job_span
        .values()
        .map(|s| s.0)
        .min_by(f64::total_cmp)
        .unwrap_or(0.0);
    let start = match opts.warmup_jobs {
        0 => first,
        n => ends.get(n - 1).copied().unwrap_or(end),
    };
    let w = Window { start, end };

    let mut names = Vec::new();
    let (pairs, unmatched_ends) = pair(&markers, &mut names);
    let mut durations: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut steps: Vec<Vec<(f64, i64)>> = vec![Vec::new(); names.len()];
    let mut unmatched_starts = vec![0; names.len()];
    for p in &pairs {
        steps[p.stage].push((p.start.t_ms, 1));
        match p.end {
            Some(e) => {
                steps[p.stage].push((e.t_ms, -1));
                if w.holds(e.t_ms) {
                    durations[p.stage].push(e.t_ms - p.start.t_ms);
                }
            }
            None => unmatched_starts[p.stage] += 1,
        }
    }
    let stages = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let series = levels(std::mem::take(&mut steps[i]));
            let (time_at, max) = time_at_levels(&series, w);
            let integral: f64 = time_at.iter().map(|(&n, &d)| n as f64 * d).sum();
            StageStats {
                name: name.clone(),
                duration_ms: Distribution::of(std::mem::take(&mut durations[i])),
                mean_in_flight: if w.len() > 0.0 {
                    integral / w.len()
                } else {
                    0.0
                },
                max_in_flight: max,
                unmatched_starts: unmatched_starts[i],
                unmatched_ends: unmatched_ends[i],
                in_flight: series,
            }
        })
        .collect();

    // GPU brackets, with the timing lines attributed to each.
    let gpu_stage = names.iter().position(|n| n == "GPU");
    let mut attributed: HashMap<BracketKey, Vec<(String, f64)>> = HashMap::new();
    let mut unattributed_timings = 0;
    for line in &log.timings {
        match &line.bracket {
            Some((job, p)) => attributed
                .entry((job.as_str(), *p))
                .or_default()
                .extend(line.timers.iter().cloned()),
            None => unattributed_timings += 1,
        }
    }
    let mut gpu_brackets: Vec<GpuBracket> = pairs
        .iter()
        .filter(|p| Some(p.stage) == gpu_stage)
        .filter(|p| p.end.is_none_or(|e| e.t_ms >= w.start))
        .map(|p| GpuBracket {
            job: p.start.job.clone(),
            partition: p.start.partition,
            gpu: map
                .gpu_of(p.start)
                .or_else(|| map.gpu_of(p.end?))
                .unwrap_or(0),
            start_ms: p.start.t_ms,
            end_ms: p.end.map(|e| e.t_ms),
            gpu_ms: p.end.and_then(|e| e.gpu_ms),
            timers: attributed
                .remove(&(p.start.job.as_str(), p.start.partition))
                .unwrap_or_default(),
        })
        .collect();
    gpu_brackets.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));

    let mut named: BTreeSet<u32> = (log.markers.iter())
        .filter_map(|m| map.gpu_of(m))
        .chain(map.logged.values().copied())
        .chain(gpu_brackets.iter().map(|b| b.gpu))
        .collect();
    if named.is_empty() {
        named.insert(0);
    }
    let gpus = named.len();
    // measure() indexes GPUs 0..gpus and folds a higher index into the last, so it is
    // given each GPU's rank among those named, never its number (gpu=4294967295).
    let rank: BTreeMap<u32, u32> = (named.iter().enumerate())
        .map(|(r, &g)| (g, r as u32))
        .collect();
    let records: Vec<Bracket> = gpu_brackets
        .iter()
        .map(|b| Bracket {
            gpu: rank[&b.gpu],
            start: b.start_ms,
            end: b.end_ms.unwrap_or(end),
        })
        .collect();
    let measured = bracket_measures::measure(&records, (w.start, w.end), gpus);
    let mut per_gpu = Vec::with_capacity(gpus);
    let mut busy_steps = Vec::new();
    for (r, g) in named.into_iter().enumerate() {
        let mine = || gpu_brackets.iter().filter(move |b| b.gpu == g);
        let spans = union(
            mine()
                .map(|b| (b.start_ms, b.end_ms.unwrap_or(end)))
                .collect(),
        );
        busy_steps.extend(spans.iter().flat_map(|&(a, b)| [(a, 1), (b, -1)]));
        let engine: Vec<(f64, f64)> = mine()
            .filter_map(|b| Some((b.end_ms? - b.gpu_ms?, b.end_ms?)))
            .collect();
        per_gpu.push(GpuUse {
            gpu: g,
            bracketed_busy_frac: w.frac(measured.per_gpu[r].union, 1),
            engine_busy_frac: (!engine.is_empty())
                .then(|| w.frac(union(engine).iter().map(|s| w.clip(s.0, s.1)).sum(), 1)),
            brackets: mine()
                .filter(|b| b.end_ms.is_some_and(|e| w.holds(e)))
                .count(),
        });
    }
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len().max(1) as f64 + 0.0;
    let gpu_engine_busy_frac = per_gpu
        .iter()
        .map(|g| g.engine_busy_frac)
        .collect::<Option<Vec<f64>>>()
        .map(mean);

    let mut timer_index: HashMap<&str, usize> = HashMap::new();
    let mut timer_values: Vec<(String, Vec<f64>)> = Vec::new();
    let mut gpu_total_in_window = None;
    for line in log.timings.iter().filter(|l| w.holds(l.t_ms)) {
        for (name, ms) in &line.timers {
            let i = *timer_index.entry(name).or_insert_with(|| {
                timer_values.push((name.clone(), Vec::new()));
                timer_values.len() - 1
            });
            timer_values[i].1.push(*ms);
            if name == "gpu_total_ms" {
                *gpu_total_in_window.get_or_insert(0.0) += w.clip(line.t_ms - ms, line.t_ms);
            }
        }
    }
    let timers = timer_values
        .into_iter()
        .filter_map(|(n, v)| Some((n, Distribution::of(v)?)))
        .collect();

    LogAnalysis {
        window_ms: (start, end),
        jobs: job_span.len(),
        warmup_jobs: opts.warmup_jobs.min(job_span.len()),
        gpus,
        workers: map.layout,
        gpu_bracketed_busy_frac: mean(per_gpu.iter().map(|g| g.bracketed_busy_frac).collect()),
        gpu_bracket_sums: measured.summary(),
        gpu_engine_busy_frac,
        per_gpu,
        gpu_gap_ms: Distribution::of(measured.gaps.clone()),
        gpu_timer_busy_frac: gpu_total_in_window.map(|x| w.frac(x, gpus)),
        timers,
        unattributed_timings,
        stages,
        gpu_brackets,
        jobs_in_flight: jobs_in_flight(&job_span, w),
        gpus_busy: levels(busy_steps),
        partitions_per_job: partitions_per_job(&log.markers),
    }
}

/// The most common number of distinct partitions a job's markers name (ties: the
/// larger), None when no marker names a partition.
fn partitions_per_job(markers: &[Marker]) -> Option<usize> {
    let mut by_job: HashMap<&str, BTreeSet<u32>> = HashMap::new();
    for m in markers {
        if let Some(p) = m.partition {
            by_job.entry(&m.job).or_default().insert(p);
        }
    }
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    for parts in by_job.values() {
        *counts.entry(parts.len()).or_default() += 1;
    }
    (counts.into_iter())
        .max_by_key(|&(n, jobs)| (jobs, n))
        .map(|(n, _)| n)
}

#[cfg(test)]
mod tests;
