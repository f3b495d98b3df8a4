//! The report as one JSON object (key names, from [`crate::analysis::keys`], are part of the CLI's
//! contract).

use serde_json::{Map, Value, json};

use super::Report;
use crate::analysis::gap::GapPart;
use crate::analysis::interval::Summary;
use crate::analysis::keys as k;

/// A prediction interval as JSON (a run's `prediction`, a compared host's).
pub fn prediction_json(p: &crate::analysis::prediction::PredictionInterval) -> Value {
    let (lo, mid, hi) = p.jobs_per_day();
    json!({
        "coverage": 0.95,
        "seconds_per_job": num(p.seconds_per_job),
        "seconds_per_job_low": num(p.low_s),
        "seconds_per_job_high": num(p.high_s),
        "jobs_per_day": num(mid),
        "jobs_per_day_low": num(lo),
        "jobs_per_day_high": num(hi),
        "host": p.knowledge.name(),
        "why": p.knowledge.why(),
        "log_half_width_parts": {
            "model": num(p.model_log_sd),
            "host_keys": num(p.host_log_sd),
            "seeds": num(p.sim_log_sd),
            "gpu_kernel_speed": num(p.gpu_log_sd),
        },
        "largest_host_key": p.largest.map(|(k, sd)| json!({"key": k, "log_half_width": num(sd)})),
    })
}

/// Rounds to 9 significant digits so reports are stable and readable.
fn num(x: f64) -> Value {
    if !x.is_finite() {
        return Value::Null;
    }
    if x == 0.0 {
        return json!(0.0);
    }
    let digits = 9 - x.abs().log10().ceil() as i32;
    let f = 10f64.powi(digits.clamp(-300, 300));
    json!((x * f).round() / f)
}

/// Sets a dotted key, creating its sections in first-use order.
fn put(root: &mut Map<String, Value>, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            root.insert(key.to_string(), value);
        }
        Some((section, rest)) => {
            let child = root
                .entry(section.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = child {
                put(map, rest, value);
            }
        }
    }
}

/// An object from (leaf key, value) pairs, in order.
fn object<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A name -> number object.
fn numbers<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a f64)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.clone(), num(*v)))
            .collect(),
    )
}

impl Report {
    /// The report as a JSON value. `engine.wall_s` is the only field that differs between
    /// two runs of the same scenario and seed.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        let r = &mut o;
        put(r, k::SCENARIO, json!(self.scenario));
        put(r, k::SEED, json!(self.seed));
        put(r, k::JOB_NAME, json!(self.job_name.singular()));
        put(r, k::JOBS_COMPLETED, json!(self.jobs_completed));
        put(r, k::JOBS_MEASURED, json!(self.jobs_measured));
        put(r, k::WARMUP_JOBS, json!(self.warmup_jobs));
        put(r, k::SIM_TIME_S, num(self.sim_time_s));
        put(r, k::WINDOW_S, num(self.window_s));
        put(r, k::SECONDS_PER_JOB, num(self.seconds_per_job));
        put(r, k::JOBS_PER_HOUR, num(self.jobs_per_hour));
        put(r, k::JOBS_PER_DAY, num(self.jobs_per_hour * 24.0));
        put(r, k::RESPONSE_MEAN_S, num(self.response_mean_s));
        put(r, k::RESPONSE_MAX_S, num(self.response_max_s));
        let ideal = self.ideal_seconds_per_job;
        put(r, k::IDEAL_SECONDS_PER_JOB, ideal.map_or(Value::Null, num));
        let ideal_jph = ideal.map_or(Value::Null, |s| num(3600.0 / s));
        put(r, k::IDEAL_JOBS_PER_HOUR, ideal_jph);
        let ideal_jpd = ideal.map_or(Value::Null, |s| num(86_400.0 / s));
        put(r, k::IDEAL_JOBS_PER_DAY, ideal_jpd);
        self.put_gpu(r);
        self.put_dram(r);
        put(r, k::STAGES, self.stages_json());
        put(r, k::RATES, self.rates_json());
        put(r, k::HOLDS, self.holds_json());
        put(r, k::RAM_PEAK_GIB, num(self.ram_peak_gib));
        put(r, k::RAM_CAPACITY_GIB, num(self.ram_capacity_gib));
        put(r, k::VRAM_PEAK_GIB, num(self.vram_peak_gib));
        self.put_bottleneck(r);
        put(r, k::WHAT_IF, self.knobs_json());
        put(r, k::PREDICTION, self.prediction_json());
        put(r, k::LITTLE_L, num(self.little_l));
        put(r, k::LITTLE_LAMBDA_W, num(self.little_lambda_w));
        put(r, k::NOTES, json!(self.notes));
        self.put_replications(r);
        put(r, k::THROUGHPUT, self.throughput().to_json());
        put(r, k::ENGINE_EVENTS, json!(self.engine_events));
        put(r, k::ENGINE_WALL_S, json!(self.engine_wall_s));
        Value::Object(o)
    }

    /// The mean and interval over seeds of a replicated report (nothing for one run).
    fn put_replications(&self, r: &mut Map<String, Value>) {
        let Some(reps) = &self.replications else {
            return;
        };
        let interval = |s: &Summary| {
            let ci95 = s.ci95.map_or(Value::Null, num);
            object([("mean", num(s.mean)), ("ci95", ci95)])
        };
        let with_seeds = |s: &Summary, by_seed: &[f64]| {
            let mut v = interval(s);
            v["by_seed"] = Value::Array(by_seed.iter().map(|x| num(*x)).collect());
            v
        };
        let [spj, jph, jpd, response] = k::REPLICATED_LEAVES;
        let mut section = vec![
            ("count", json!(reps.count())),
            ("seeds", json!(reps.seeds)),
            ("details_seed", json!(self.seed)),
            (
                spj,
                with_seeds(&reps.seconds_per_job, &reps.seconds_per_job_by_seed),
            ),
            (
                jph,
                with_seeds(&reps.jobs_per_hour, &reps.jobs_per_hour_by_seed),
            ),
            (jpd, interval(&reps.jobs_per_hour.scaled(24.0))),
            (response, interval(&reps.response_mean_s)),
        ];
        if let Some(ideal) = &reps.ideal_seconds_per_job {
            section.push(("ideal_seconds_per_job", interval(ideal)));
        }
        put(r, k::REPLICATIONS, object(section));
    }

    fn put_gpu(&self, r: &mut Map<String, Value>) {
        put(r, k::GPU_TRUE_BUSY_FRAC, num(self.gpu_true_busy_frac));
        let per_gpu = self.gpu_kernel_duty.iter().map(|d| num(*d)).collect();
        put(r, k::GPU_KERNEL_DUTY, Value::Array(per_gpu));
        put(
            r,
            k::GPU_BRACKETED_BUSY_FRAC,
            num(self.gpu_bracketed_busy_frac),
        );
        let bracketed = num(self.gpu_bracketed_seconds_per_job);
        put(r, k::GPU_BRACKETED_SECONDS_PER_JOB, bracketed);
        self.put_bracket_sums(r);
        put(r, k::GPU_SAMPLED_BUSY_FRAC, num(self.gpu_sampled_busy_frac));
        put(r, k::GPU_SPANS_MEAN_S, numbers(&self.spans_mean_s));
        put(r, k::GPU_BREAKDOWN, self.breakdown_json());
    }

    /// The brackets added up (the seed's formula) beside the union above.
    fn put_bracket_sums(&self, r: &mut Map<String, Value>) {
        let b = &self.gpu_brackets;
        put(r, k::GPU_BRACKETS_SUMMED_FRAC, num(b.summed_frac));
        let over_span = b.summed_span_frac.map_or(Value::Null, num);
        put(r, k::GPU_BRACKETS_SUMMED_SPAN_FRAC, over_span);
        put(r, k::GPU_MEAN_GAP_S, b.mean_gap.map_or(Value::Null, num));
    }

    fn prediction_json(&self) -> Value {
        self.prediction
            .as_ref()
            .map_or(Value::Null, prediction_json)
    }

    /// The bottleneck as the text names it: by the what-if steps when they ran, else by
    /// occupancy; the occupancy analysis is always there as `busiest`.
    fn put_bottleneck(&self, r: &mut Map<String, Value>) {
        let b = &self.bottleneck;
        let (resource, reason, named_by) = match &self.knobs {
            Some(knobs) => (
                knobs
                    .knob()
                    .map_or("none", |w| w.resource.key())
                    .to_string(),
                knobs.verdict(self.job_name.singular()),
                "what_if_steps",
            ),
            None => (b.resource.clone(), b.reason.clone(), "occupancy"),
        };
        put(r, k::BOTTLENECK_RESOURCE, json!(resource));
        put(r, k::BOTTLENECK_REASON, json!(reason));
        put(r, k::BOTTLENECK_NAMED_BY, json!(named_by));
        put(r, k::BOTTLENECK_BUSIEST_RESOURCE, json!(b.resource));
        put(r, k::BOTTLENECK_BUSIEST_REASON, json!(b.reason));
        put(
            r,
            k::BOTTLENECK_BUSIEST_STEP,
            json!(b.step.map(|s| s.key())),
        );
        put(r, k::BOTTLENECK_BLAME_S, numbers(&b.blame_s));
    }

    fn knobs_json(&self) -> Value {
        let Some(knobs) = &self.knobs else {
            return Value::Null;
        };
        let mut o = Map::new();
        let knob = knobs.knob().map(|w| w.resource.key());
        o.insert("knob".into(), json!(knob));
        o.insert(
            "verdict".into(),
            json!(knobs.verdict(self.job_name.singular())),
        );
        for w in &knobs.what_ifs {
            let fields = json!({
                "step": w.resource.step(),
                "seconds_per_job": num(w.seconds_per_job),
                "gain": num(w.gain),
                "share": num(knobs.share(w)),
            });
            o.insert(w.resource.key().into(), fields);
        }
        for f in &knobs.failed {
            let fields = json!({"step": f.resource.step(), "failed": f.reason});
            o.insert(f.resource.key().into(), fields);
        }
        Value::Object(o)
    }

    fn breakdown_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("brackets".into(), json!(self.gpu_breakdown.brackets));
        o.insert("mean_bracket_s".into(), num(self.mean_bracket_s()));
        for part in GapPart::ALL {
            let leaves = [
                (k::BREAKDOWN_PER_BRACKET_S, self.per_bracket_s(part)),
                (k::BREAKDOWN_PER_JOB_S, self.per_job_s(part)),
                (k::BREAKDOWN_SHARE, self.gpu_breakdown.share(part)),
            ];
            for (leaf, x) in leaves {
                o.insert(format!("{}{leaf}", part.key()), num(x));
            }
        }
        o.insert("verdict".into(), json!(self.gap_verdict()));
        Value::Object(o)
    }

    fn put_dram(&self, r: &mut Map<String, Value>) {
        put(r, k::DRAM_CAPACITY_GBPS, num(self.dram_capacity_gbps));
        put(r, k::DRAM_MEAN_UTILIZATION, num(self.dram_mean_utilization));
        let mean_gbps = self.dram_mean_utilization * self.dram_capacity_gbps;
        put(r, k::DRAM_MEAN_GBPS, num(mean_gbps));
        put(r, k::DRAM_PEAK_GBPS, num(self.dram_peak_gbps));
        put(r, k::DRAM_USABLE_GBPS, num(self.dram_usable_gbps));
        put(
            r,
            k::DRAM_USABLE_UTILIZATION,
            num(self.dram_usable_utilization),
        );
        let streams = self.dram_mean_streams.map_or(Value::Null, num);
        put(r, k::DRAM_MEAN_STREAMS, streams);
        let loss = num(self.dram_efficiency_loss_per_stream);
        put(r, k::DRAM_EFFICIENCY_LOSS_PER_STREAM, loss);
        let mean_slowdown = num(self.dram_mean_latency_slowdown);
        put(r, k::DRAM_MEAN_LATENCY_SLOWDOWN, mean_slowdown);
        let max_slowdown = num(self.dram_max_latency_slowdown);
        put(r, k::DRAM_MAX_LATENCY_SLOWDOWN, max_slowdown);
    }

    fn stages_json(&self) -> Value {
        let stages = self.stages.iter().enumerate().map(|(i, s)| {
            let mut fields = object([
                (k::STAGE_COUNT, json!(s.count)),
                (k::STAGE_MEAN_S, num(s.mean_s)),
                (k::STAGE_STANDALONE_MEAN_S, num(s.standalone_mean_s)),
                (k::STAGE_INFLATION, num(s.inflation)),
                (k::STAGE_MEAN_WAIT_S, num(s.mean_wait_s)),
                (k::STAGE_LOST_S, numbers(&s.lost_s)),
            ]);
            let spread = (self.replications.as_ref()).and_then(|r| r.stage_mean_s.get(i));
            if let (Some(spread), Value::Object(o)) = (spread, &mut fields) {
                let ci95 = spread.ci95.map_or(Value::Null, num);
                o.insert(k::STAGE_MEAN_S_CI95.into(), ci95);
            }
            (s.name.clone(), fields)
        });
        Value::Object(stages.collect())
    }

    fn rates_json(&self) -> Value {
        let rates = self.rates.iter().map(|r| {
            let fields = json!({"capacity": num(r.capacity), "mean_utilization": num(r.mean_utilization), "peak": num(r.peak)});
            (r.name.clone(), fields)
        });
        Value::Object(rates.collect())
    }

    fn holds_json(&self) -> Value {
        let holds = self.holds.iter().map(|h| {
            let fields = json!({"capacity": h.capacity, "mean_occupancy": num(h.mean_occupancy), "peak": h.peak, "wait_s": num(h.wait_s)});
            (h.name.clone(), fields)
        });
        Value::Object(holds.collect())
    }
}
