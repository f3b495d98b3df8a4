//! The report as a readable text table (the CLI's default output).

use std::fmt::Write;

use super::Report;

fn pct(x: f64) -> String {
    format!("{:5.1}%", x * 100.0)
}

impl Report {
    /// Renders the report for a terminal.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let w = &mut o;
        let _ = writeln!(w, "scenario {}  (seed {})", self.scenario, self.seed);
        let _ = writeln!(
            w,
            "jobs {} completed, {} measured after {} warm-up; simulated {:.1} s (window {:.1} s)",
            self.jobs_completed,
            self.jobs_measured,
            self.warmup_jobs,
            self.sim_time_s,
            self.window_s
        );
        let _ = writeln!(w);
        if self.seconds_per_job.is_finite() {
            let _ = writeln!(
                w,
                "throughput   {:.3} s/job   {:.1} jobs/hour   (mean response {:.3} s)",
                self.seconds_per_job, self.jobs_per_hour, self.response_mean_s
            );
        } else {
            let _ = writeln!(w, "throughput   unknown: no measured job finished");
        }
        if let Some(ideal) = self.ideal_seconds_per_job.filter(|x| x.is_finite()) {
            let _ = writeln!(
                w,
                "ideal        {:.3} s/job   {:.1} jobs/hour   (no DRAM/PCIe/pool contention)",
                ideal,
                3600.0 / ideal
            );
        }
        let _ = writeln!(
            w,
            "GPU          true kernel duty {}   bracketed by markers {}",
            pct(self.gpu_true_busy_frac),
            pct(self.gpu_bracketed_busy_frac)
        );
        if self.gpu_bracketed_seconds_per_job.is_finite()
            && self.gpu_bracketed_seconds_per_job > 0.0
        {
            let _ = writeln!(
                w,
                "             brackets sum to {:.3} s/job (what the markers alone would imply)",
                self.gpu_bracketed_seconds_per_job
            );
        }
        if self.gpu_true_busy_frac > 0.0 {
            let _ = writeln!(
                w,
                "             nvidia-smi view {}   (sample windows of {:.3} s with any kernel running)",
                pct(self.gpu_sampled_busy_frac),
                self.smi_sample_period_s
            );
        }
        if self.dram_capacity_gbps.is_finite() {
            let _ = writeln!(
                w,
                "DRAM         mean {} of {:.0} GB/s, peak {:.1} GB/s, latency x{:.2} mean / x{:.2} max",
                pct(self.dram_mean_utilization),
                self.dram_capacity_gbps,
                self.dram_peak_gbps,
                self.dram_mean_latency_slowdown,
                self.dram_max_latency_slowdown
            );
        } else {
            let _ = writeln!(
                w,
                "DRAM         not modelled (the scenario declares no DRAM bandwidth)"
            );
        }
        for r in self.pcie() {
            let _ = writeln!(
                w,
                "{:<12} mean {}, peak {:.1} GB/s",
                r.name,
                pct(r.mean_utilization),
                r.peak
            );
        }
        let ram = if self.ram_capacity_gib.is_nan() {
            format!("{:.1} GiB (capacity not modelled)", self.ram_peak_gib)
        } else {
            format!(
                "{:.1} of {:.1} GiB",
                self.ram_peak_gib, self.ram_capacity_gib
            )
        };
        let _ = writeln!(
            w,
            "memory       host RAM peak {ram}, VRAM peak {:.1} GiB",
            self.vram_peak_gib
        );
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "{:<22} {:>8} {:>11} {:>11} {:>9} {:>10}  main loss",
            "stage", "count", "mean s", "alone s", "inflation", "wait s"
        );
        for s in &self.stages {
            let main_loss = s
                .lost_s
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .filter(|(_, v)| **v > 1e-9)
                .map(|(k, v)| format!("{k} {v:.3} s"))
                .unwrap_or_default();
            let _ = writeln!(
                w,
                "{:<22} {:>8} {:>11.4} {:>11.4} {:>8.2}x {:>10.4}  {}",
                s.name,
                s.count,
                s.mean_s,
                s.standalone_mean_s,
                s.inflation,
                s.mean_wait_s,
                main_loss
            );
        }
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "bottleneck   {}: {}",
            self.bottleneck.resource, self.bottleneck.reason
        );
        for n in &self.notes {
            let _ = writeln!(w, "note         {n}");
        }
        let _ = writeln!(
            w,
            "engine       {} events in {:.3} s ({:.2} M events/s)",
            self.engine_events,
            self.engine_wall_s,
            self.engine_events as f64 / self.engine_wall_s.max(1e-12) / 1e6
        );
        o
    }
}
