//! The report as one JSON object (key names are part of the CLI's contract).

use serde_json::{Map, Value, json};

use super::Report;

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

impl Report {
    /// The report as a JSON value. `engine.wall_s` is the only field that differs between
    /// two runs of the same scenario and seed.
    pub fn to_json(&self) -> Value {
        let mut stages = Map::new();
        for s in &self.stages {
            let lost: Map<String, Value> =
                s.lost_s.iter().map(|(k, v)| (k.clone(), num(*v))).collect();
            stages.insert(
                s.name.clone(),
                json!({
                    "count": s.count,
                    "mean_s": num(s.mean_s),
                    "standalone_mean_s": num(s.standalone_mean_s),
                    "inflation": num(s.inflation),
                    "mean_wait_s": num(s.mean_wait_s),
                    "lost_s": lost,
                }),
            );
        }
        let rates: Map<String, Value> = self
            .rates
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    json!({"capacity": num(r.capacity), "mean_utilization": num(r.mean_utilization), "peak": num(r.peak)}),
                )
            })
            .collect();
        let holds: Map<String, Value> = self
            .holds
            .iter()
            .map(|h| {
                (
                    h.name.clone(),
                    json!({"capacity": h.capacity, "mean_occupancy": num(h.mean_occupancy), "peak": h.peak, "wait_s": num(h.wait_s)}),
                )
            })
            .collect();
        let spans: Map<String, Value> = self
            .spans_mean_s
            .iter()
            .map(|(k, v)| (k.clone(), num(*v)))
            .collect();
        let blame: Map<String, Value> = self
            .bottleneck
            .blame_s
            .iter()
            .map(|(k, v)| (k.clone(), num(*v)))
            .collect();
        let ideal = self.ideal_seconds_per_job;
        json!({
            "scenario": self.scenario,
            "seed": self.seed,
            "jobs_completed": self.jobs_completed,
            "jobs_measured": self.jobs_measured,
            "warmup_jobs": self.warmup_jobs,
            "sim_time_s": num(self.sim_time_s),
            "window_s": num(self.window_s),
            "seconds_per_job": num(self.seconds_per_job),
            "jobs_per_hour": num(self.jobs_per_hour),
            "response": {"mean_s": num(self.response_mean_s), "max_s": num(self.response_max_s)},
            "ideal": {
                "seconds_per_job": ideal.map_or(Value::Null, num),
                "jobs_per_hour": ideal.map_or(Value::Null, |s| num(3600.0 / s)),
            },
            "gpu": {
                "true_busy_frac": num(self.gpu_true_busy_frac),
                "bracketed_busy_frac": num(self.gpu_bracketed_busy_frac),
                "bracketed_seconds_per_job": num(self.gpu_bracketed_seconds_per_job),
                "spans_mean_s": spans,
            },
            "dram": {
                "capacity_gbps": num(self.dram_capacity_gbps),
                "mean_utilization": num(self.dram_mean_utilization),
                "mean_gbps": num(self.dram_mean_utilization * self.dram_capacity_gbps),
                "peak_gbps": num(self.dram_peak_gbps),
                "mean_latency_slowdown": num(self.dram_mean_latency_slowdown),
                "max_latency_slowdown": num(self.dram_max_latency_slowdown),
            },
            "stages": stages,
            "rates": rates,
            "holds": holds,
            "ram": {"peak_gib": num(self.ram_peak_gib), "capacity_gib": num(self.ram_capacity_gib)},
            "vram": {"peak_gib": num(self.vram_peak_gib)},
            "bottleneck": {"resource": self.bottleneck.resource, "reason": self.bottleneck.reason, "blame_s": blame},
            "little": {"l": num(self.little_l), "lambda_w": num(self.little_lambda_w)},
            "notes": self.notes,
            "engine": {"events": self.engine_events, "wall_s": self.engine_wall_s},
        })
    }
}
