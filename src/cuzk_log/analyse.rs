//! What a parsed cuzk log says: bracketed GPU utilisation (time with a GPU_START..GPU_END
//! bracket open, per GPU), the gaps between GPU operations, GPU time from the timer
//! lines, stage durations (`X_START`..`X_END` pairs) by percentile, and how many of each
//! stage were in flight over time.
//!
//! The measurement window is the run's: from the completion of the first `warmup_jobs`
//! jobs (a job completes at its last record) to the last record, as `bwsim run` measures.

use std::collections::{BTreeMap, HashMap};

use super::parse::ParsedLog;

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
    /// Durations of matched brackets, ms.
    pub duration_ms: Option<Distribution>,
    /// Time-weighted mean number in flight over the window.
    pub mean_in_flight: f64,
    /// Most in flight at once.
    pub max_in_flight: usize,
    /// Starts never ended (the log ends first) and ends never started.
    pub unmatched_starts: usize,
    /// Ends without a start.
    pub unmatched_ends: usize,
    /// (time ms, in flight) at every change, for plots.
    pub in_flight: Vec<(f64, usize)>,
}

/// Jobs in flight over time: a job is in flight from its first record to its last.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobsInFlight {
    /// Time-weighted median over the window (the level the log spends most of its
    /// window at or below half the time): the closed-loop concurrency `--against` uses.
    pub median: usize,
    /// Time-weighted mean over the window.
    pub mean: f64,
    /// Most at once.
    pub max: usize,
    /// (time ms, jobs in flight) at every change, for plots.
    pub series: Vec<(f64, usize)>,
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
    /// GPUs seen (`gpu=` values; 1 when none are given).
    pub gpus: usize,
    /// Share of the window with a GPU bracket open, averaged over GPUs.
    pub gpu_bracketed_busy_frac: f64,
    /// Idle gaps between GPU brackets (a GPU's last END to its next START), ms.
    pub gpu_gap_ms: Option<Distribution>,
    /// Sum of `gpu_total_ms` of timer lines inside the window over GPUs x window (None
    /// without such timers).
    pub gpu_timer_busy_frac: Option<f64>,
    /// Every timer's distribution, in first-seen order.
    pub timers: Vec<(String, Distribution)>,
    /// Stages, in first-seen order.
    pub stages: Vec<StageStats>,
    /// Jobs in flight over time.
    pub jobs_in_flight: JobsInFlight,
    /// (time ms, GPUs with a bracket open) at every change, for plots.
    pub gpus_busy: Vec<(f64, usize)>,
}

/// Jobs in flight from each job's first and last record, summarised over the window.
fn jobs_in_flight(spans: &HashMap<u64, (f64, f64)>, start: f64, end: f64) -> JobsInFlight {
    let mut steps: Vec<(f64, i64)> = spans
        .values()
        .flat_map(|&(a, b)| [(a, 1), (b, -1)])
        .collect();
    // Ends before starts at equal times: a job handing over to the next is not two.
    steps.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut series = Vec::with_capacity(steps.len());
    let mut level = 0_i64;
    for (t, d) in steps {
        level += d;
        series.push((t, level.max(0) as usize));
    }
    let mut time_at: BTreeMap<usize, f64> = BTreeMap::new();
    for (i, &(t, n)) in series.iter().enumerate() {
        let next = series.get(i + 1).map_or(end, |s| s.0);
        let d = (next.min(end) - t.max(start)).max(0.0);
        *time_at.entry(n).or_default() += d;
    }
    let window: f64 = time_at.values().sum();
    let max = series.iter().map(|s| s.1).max().unwrap_or(0);
    let mut median = max;
    let mut seen = 0.0;
    for (&n, &d) in &time_at {
        seen += d;
        if window > 0.0 && seen >= window / 2.0 {
            median = n;
            break;
        }
    }
    let mean = if window > 0.0 {
        time_at.iter().map(|(&n, &d)| n as f64 * d).sum::<f64>() / window
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
fn bracket_of(event: &str) -> Option<(String, bool)> {
    if let Some(s) = event.strip_suffix("_START") {
        return Some((s.to_string(), true));
    }
    if let Some(s) = event.strip_suffix("_END") {
        return Some((s.to_string(), false));
    }
    match event {
        "GPU_QUEUE" => Some(("GPU_QUEUE".into(), true)),
        "GPU_PICKUP" => Some(("GPU_QUEUE".into(), false)),
        _ => None,
    }
}

/// Analyses a parsed log, skipping the first `warmup_jobs` completed jobs.
pub fn analyse(log: &ParsedLog, warmup_jobs: usize) -> LogAnalysis {
    // Records in time order (stable for equal times: file order).
    let mut markers: Vec<&super::parse::Marker> = log.markers.iter().collect();
    markers.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));

    let mut job_end: HashMap<u64, f64> = HashMap::new();
    let mut job_span: HashMap<u64, (f64, f64)> = HashMap::new();
    for (job, t) in log
        .markers
        .iter()
        .map(|m| (m.job, m.t_ms))
        .chain(log.timings.iter().map(|l| (l.job, l.t_ms)))
    {
        let e = job_end.entry(job).or_insert(t);
        *e = e.max(t);
        let s = job_span.entry(job).or_insert((t, t));
        s.0 = s.0.min(t);
        s.1 = s.1.max(t);
    }
    let mut ends: Vec<f64> = job_end.values().copied().collect();
    ends.sort_by(f64::total_cmp);
    let end = ends.last().copied().unwrap_or(0.0);
    let start = if warmup_jobs == 0 {
        0.0
    } else {
        ends.get(warmup_jobs - 1).copied().unwrap_or(end)
    };
    let window = (end - start).max(0.0);
    let clip = |a: f64, b: f64| (b.min(end) - a.max(start)).max(0.0);

    // Stages: pair starts and ends by (stage, job, partition, gpu-agnostic).
    let mut order: Vec<String> = Vec::new();
    let mut open: BTreeMap<(String, u64, Option<u32>), Vec<f64>> = BTreeMap::new();
    let mut durations: HashMap<String, Vec<f64>> = HashMap::new();
    let mut unmatched_ends: HashMap<String, usize> = HashMap::new();
    let mut in_flight: HashMap<String, (usize, Vec<(f64, usize)>)> = HashMap::new();
    for m in &markers {
        let Some((stage, is_start)) = bracket_of(&m.event) else {
            continue;
        };
        if !order.contains(&stage) {
            order.push(stage.clone());
        }
        let key = (stage.clone(), m.job, m.partition);
        let flight = in_flight.entry(stage.clone()).or_default();
        if is_start {
            open.entry(key).or_default().push(m.t_ms);
            flight.0 += 1;
            flight.1.push((m.t_ms, flight.0));
        } else if let Some(t0) = open.get_mut(&key).and_then(Vec::pop) {
            durations
                .entry(stage.clone())
                .or_default()
                .push(m.t_ms - t0);
            flight.0 -= 1;
            flight.1.push((m.t_ms, flight.0));
        } else {
            *unmatched_ends.entry(stage).or_default() += 1;
        }
    }
    let stages = order
        .iter()
        .map(|name| {
            let series = in_flight.remove(name).map(|f| f.1).unwrap_or_default();
            let mut integral = 0.0;
            for (i, &(t, n)) in series.iter().enumerate() {
                let next = series.get(i + 1).map_or(end, |s| s.0);
                integral += n as f64 * clip(t, next);
            }
            StageStats {
                name: name.clone(),
                duration_ms: Distribution::of(durations.remove(name).unwrap_or_default()),
                mean_in_flight: if window > 0.0 { integral / window } else { 0.0 },
                max_in_flight: series.iter().map(|s| s.1).max().unwrap_or(0),
                unmatched_starts: open
                    .iter()
                    .filter(|(k, _)| &k.0 == name)
                    .map(|(_, v)| v.len())
                    .sum(),
                unmatched_ends: unmatched_ends.get(name).copied().unwrap_or(0),
                in_flight: series,
            }
        })
        .collect();

    // GPU brackets per GPU: busy while any is open; an unmatched start runs to the end.
    let mut gpu_open: BTreeMap<u32, (usize, f64)> = BTreeMap::new();
    let mut busy: BTreeMap<u32, f64> = BTreeMap::new();
    let mut last_idle: BTreeMap<u32, f64> = BTreeMap::new();
    let mut gaps = Vec::new();
    let mut pending: HashMap<(u64, Option<u32>, u32), usize> = HashMap::new();
    let mut gpus_busy: Vec<(f64, usize)> = Vec::new();
    let mut busy_now = 0_usize;
    for m in &markers {
        let g = m.gpu.unwrap_or(0);
        match m.event.as_str() {
            "GPU_START" => {
                let o = gpu_open.entry(g).or_insert((0, m.t_ms));
                if o.0 == 0 {
                    o.1 = m.t_ms;
                    if let Some(idle) = last_idle.get(&g) {
                        gaps.push(m.t_ms - idle);
                    }
                    busy_now += 1;
                    gpus_busy.push((m.t_ms, busy_now));
                }
                o.0 += 1;
                *pending.entry((m.job, m.partition, g)).or_default() += 1;
            }
            "GPU_END" => {
                let p = pending.entry((m.job, m.partition, g)).or_default();
                if *p == 0 {
                    continue; // an end without a start: counted in the stage table
                }
                *p -= 1;
                let o = gpu_open.entry(g).or_insert((0, m.t_ms));
                o.0 -= 1;
                if o.0 == 0 {
                    *busy.entry(g).or_default() += clip(o.1, m.t_ms);
                    last_idle.insert(g, m.t_ms);
                    busy_now = busy_now.saturating_sub(1);
                    gpus_busy.push((m.t_ms, busy_now));
                }
            }
            _ => {}
        }
    }
    for (g, (n, since)) in &gpu_open {
        if *n > 0 {
            *busy.entry(*g).or_default() += clip(*since, end);
        }
    }
    let gpus = log
        .markers
        .iter()
        .filter_map(|m| m.gpu)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        .max(1);
    let per_gpu_window = window * gpus as f64;
    let frac = |x: f64| {
        if per_gpu_window > 0.0 {
            x / per_gpu_window
        } else {
            0.0
        }
    };

    let mut timer_order: Vec<String> = Vec::new();
    let mut timer_values: HashMap<String, Vec<f64>> = HashMap::new();
    let mut gpu_total_in_window = None;
    for line in &log.timings {
        for (name, ms) in &line.timers {
            if !timer_order.contains(name) {
                timer_order.push(name.clone());
            }
            timer_values.entry(name.clone()).or_default().push(*ms);
            if name == "gpu_total_ms" && line.t_ms >= start && line.t_ms <= end {
                *gpu_total_in_window.get_or_insert(0.0) += ms;
            }
        }
    }
    let timers = timer_order
        .into_iter()
        .filter_map(|n| {
            let d = Distribution::of(timer_values.remove(&n).unwrap_or_default())?;
            Some((n, d))
        })
        .collect();

    LogAnalysis {
        window_ms: (start, end),
        jobs: job_end.len(),
        warmup_jobs: warmup_jobs.min(job_end.len()),
        gpus,
        // + 0.0: an empty f64 sum is -0.0, which would print as "-0.0%".
        gpu_bracketed_busy_frac: frac(busy.values().sum::<f64>() + 0.0),
        gpu_gap_ms: Distribution::of(gaps),
        gpu_timer_busy_frac: gpu_total_in_window.map(frac),
        timers,
        stages,
        jobs_in_flight: jobs_in_flight(&job_span, start, end),
        gpus_busy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysed(text: &str, warmup: usize) -> LogAnalysis {
        let mut log = ParsedLog::default();
        log.add_text("t.log", text);
        analyse(&log, warmup)
    }

    #[test]
    fn brackets_gaps_and_stages() {
        let a = analysed(
            "TIMELINE,0,SYNTH_START,0,partition=0\n\
             TIMELINE,0,SYNTH_START,0,partition=1\n\
             TIMELINE,40,SYNTH_END,0,partition=0\n\
             TIMELINE,40,GPU_START,0,partition=0 gpu=0\n\
             TIMELINE,60,GPU_END,0,partition=0 gpu=0\n\
             TIMELINE,60,SYNTH_END,0,partition=1\n\
             TIMELINE,70,GPU_START,0,partition=1 gpu=0\n\
             TIMELINE,100,GPU_END,0,partition=1 gpu=0\n",
            0,
        );
        assert_eq!(a.window_ms, (0.0, 100.0));
        assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
        assert_eq!(a.gpu_gap_ms.as_ref().unwrap().mean, 10.0);
        let synth = &a.stages[0];
        assert_eq!(synth.name, "SYNTH");
        assert_eq!(synth.duration_ms.as_ref().unwrap().p50, 40.0);
        assert_eq!(synth.max_in_flight, 2);
        assert!((synth.mean_in_flight - 1.0).abs() < 1e-12); // 2x40 + 1x20 over 100
        assert_eq!(a.jobs_in_flight.max, 1);
        assert_eq!(a.gpus_busy, [(40.0, 1), (60.0, 0), (70.0, 1), (100.0, 0)]);
    }

    #[test]
    fn jobs_in_flight_median_is_time_weighted() {
        // Job 0 spans 0..100, job 1 10..20, job 2 15..90: 2 or more in flight 10..90
        // (80 of 100 ms), so the median is 2 and the maximum 3.
        let a = analysed(
            "TIMELINE,0,A_START,0,partition=0\nTIMELINE,100,A_END,0,partition=0\n\
             TIMELINE,10,A_START,1,partition=0\nTIMELINE,20,A_END,1,partition=0\n\
             TIMELINE,15,A_START,2,partition=0\nTIMELINE,90,A_END,2,partition=0\n",
            0,
        );
        let j = &a.jobs_in_flight;
        assert_eq!((j.median, j.max), (2, 3));
        assert!((j.mean - (100.0 + 10.0 + 75.0) / 100.0).abs() < 1e-12);
    }

    #[test]
    fn unmatched_brackets_are_counted_and_open_gpu_runs_to_the_end() {
        let a = analysed(
            "TIMELINE,10,GPU_END,5,partition=0 gpu=0\n\
             TIMELINE,50,GPU_START,6,partition=0 gpu=0\n\
             TIMELINE,100,SYNTH_START,6,partition=1\n",
            0,
        );
        let gpu = a.stages.iter().find(|s| s.name == "GPU").unwrap();
        assert_eq!((gpu.unmatched_starts, gpu.unmatched_ends), (1, 1));
        assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
    }

    #[test]
    fn warmup_jobs_move_the_window_and_empty_logs_are_zero() {
        let a = analysed(
            "TIMELINE,0,GPU_START,0,gpu=0\nTIMELINE,20,GPU_END,0,gpu=0\n\
             TIMELINE,30,GPU_START,1,gpu=0\nTIMELINE,40,GPU_END,1,gpu=0\n",
            1,
        );
        assert_eq!(a.window_ms, (20.0, 40.0));
        assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
        let e = analysed("", 0);
        assert_eq!((e.jobs, e.gpu_bracketed_busy_frac), (0, 0.0));
        assert!(e.stages.is_empty() && e.gpu_gap_ms.is_none());
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let d = Distribution::of((1..=100).map(f64::from).collect()).unwrap();
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
    }
}
