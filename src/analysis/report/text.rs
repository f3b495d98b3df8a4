//! The report as a readable text table (the CLI's default output).

use std::fmt::Write;

use super::Report;
use crate::analysis::gap::GapPart;
use crate::analysis::knob::{Knobs, MIN_GAIN};
use crate::analysis::throughput::{at_precision, cell, sig3, significant};

/// An inflation at the precision its spread allows, never finer than hundredths.
fn inflation_text(x: f64, half_width: Option<f64>) -> String {
    match half_width.filter(|h| h.is_finite() && *h >= 0.1) {
        Some(h) => at_precision(x, Some(h)),
        None => format!("{x:.2}"),
    }
}

fn pct(x: f64) -> String {
    format!("{:5.1}%", x * 100.0)
}

impl Report {
    /// The GPU bracket breakdown: what the bracketed time was spent on, per bracket and
    /// per job, and the verdict; nothing when no bracket closed.
    fn write_breakdown(&self, w: &mut String) {
        let Some(verdict) = self.gap_verdict() else {
            return;
        };
        let per_job = self.gpu_bracketed_seconds_per_job;
        let why = if per_job > self.seconds_per_job {
            format!(
                "more than the {:.3} s/job wall time: brackets of concurrent workers overlap",
                self.seconds_per_job
            )
        } else {
            "what the markers alone would imply".to_string()
        };
        let _ = writeln!(
            w,
            "GPU brackets {} of {:.3} s mean, {:.3} s/job per GPU added up ({why})",
            self.gpu_breakdown.brackets,
            self.mean_bracket_s(),
            per_job
        );
        let _ = writeln!(
            w,
            "             {:<14} {:>9} {:>9} {:>7}",
            "spent on", "s/bracket", "s/job", "share"
        );
        for part in GapPart::ALL {
            let _ = writeln!(
                w,
                "             {:<14} {:>9.3} {:>9.3} {:>7}",
                part.label(),
                self.per_bracket_s(part),
                self.per_job_s(part),
                pct(self.gpu_breakdown.share(part))
            );
        }
        let _ = writeln!(w, "             {verdict}");
    }

    /// The bottleneck. With the what-if steps run, it is the step that buys most (the
    /// steps first, then the verdict), and the busiest resource follows, with what one step
    /// more of it buys: busy is not binding. Without them (`--no-what-if`) it is the
    /// busiest resource, said as such.
    fn write_bottleneck(&self, w: &mut String) {
        let busiest = format!("{}: {}", self.bottleneck.resource, self.bottleneck.reason);
        let Some(k) = &self.knobs else {
            let _ = writeln!(
                w,
                "bottleneck   {busiest}   (by occupancy: the what-if steps were not run)"
            );
            return;
        };
        let _ = writeln!(
            w,
            "what if      one step more of one resource at a time, same seed (share: of the time the steps save)"
        );
        // One seed's run, written at the precision the seeds' interval allows.
        let half_width = (self.replications.as_ref()).and_then(|r| r.seconds_per_job.ci95);
        for x in &k.what_ifs {
            // Below half a permille the change prints as 0, never as -0.0.
            let change = if x.gain.abs() < 5e-4 { 0.0 } else { -x.gain };
            let _ = writeln!(
                w,
                "             {:<15} {:>4}  {:>10} {} {:>+6.1}%   share {:>4.0}%",
                x.resource.label(),
                x.resource.step(),
                at_precision(x.seconds_per_job, half_width),
                self.job_name.seconds_per(),
                change * 100.0,
                k.share(x) * 100.0
            );
        }
        for f in &k.failed {
            let _ = writeln!(
                w,
                "             {:<15} {:>4}  failed: {}",
                f.resource.label(),
                f.resource.step(),
                f.reason
            );
        }
        let _ = writeln!(w, "bottleneck   {}", k.verdict(self.job_name.singular()));
        let _ = writeln!(w, "busiest      {busiest}{}", self.busiest_against_steps(k));
    }

    /// What one step more of the busiest resource buys, beside the knob.
    fn busiest_against_steps(&self, k: &Knobs) -> String {
        let Some(step) = self.bottleneck.step else {
            return String::new();
        };
        if k.knob().is_some_and(|x| x.resource == step) {
            return "; the step that buys most adds more of it".into();
        }
        match k.of(step) {
            Some(x) if x.gain >= MIN_GAIN => format!(
                "; one step more of it ({}) saves {:.1}%, less than the bottleneck's",
                step.with_step(),
                x.gain * 100.0
            ),
            Some(x) => format!(
                "; yet one step more of it ({}) saves nothing ({:+.1}%): busy, not binding",
                step.with_step(),
                -x.gain.max(-1.0) * 100.0
            ),
            None => String::new(),
        }
    }

    /// DRAM: what was drawn against what was usable at the run's stream count (the
    /// nominal capacity less what interleaving streams lose), the nominal beside it, and
    /// the loaded latency.
    fn write_dram(&self, w: &mut String) {
        if !self.dram_capacity_gbps.is_finite() {
            let _ = writeln!(
                w,
                "DRAM         not modelled (the scenario declares no DRAM bandwidth)"
            );
            return;
        }
        let mean_gbps = self.dram_mean_utilization * self.dram_capacity_gbps;
        let latency = format!(
            "loaded latency x{:.2} mean / x{:.2} max (latency-bound work runs that much slower)",
            self.dram_mean_latency_slowdown, self.dram_max_latency_slowdown
        );
        match self.dram_mean_streams {
            Some(streams) => {
                let _ = writeln!(
                    w,
                    "DRAM         mean {mean_gbps:.1} GB/s, {} of the {:.0} GB/s usable at {streams:.0} streams on average ({:.0} GB/s nominal, {:.1}% lost per extra stream)",
                    pct(self.dram_usable_utilization).trim_start(),
                    self.dram_usable_gbps,
                    self.dram_capacity_gbps,
                    self.dram_efficiency_loss_per_stream * 100.0
                );
                let _ = writeln!(
                    w,
                    "             peak {:.1} GB/s; {latency}",
                    self.dram_peak_gbps
                );
            }
            None => {
                let _ = writeln!(
                    w,
                    "DRAM         mean {mean_gbps:.1} GB/s, {} of {:.0} GB/s usable, peak {:.1} GB/s",
                    pct(self.dram_mean_utilization).trim_start(),
                    self.dram_capacity_gbps,
                    self.dram_peak_gbps
                );
                let _ = writeln!(w, "             {latency}");
            }
        }
    }

    /// The prediction interval (what the host will do) and what makes it, before the
    /// simulation's own interval.
    fn write_prediction(&self, w: &mut String) {
        let Some(p) = self
            .prediction
            .as_ref()
            .filter(|p| p.seconds_per_job.is_finite())
        else {
            return;
        };
        let (_, mid, _) = p.jobs_per_day();
        let job = &self.job_name;
        let _ = writeln!(
            w,
            "prediction   {} {}, 95% prediction interval {}   ({} {}, {})",
            sig3(mid),
            job.per_day(),
            p.per_day_range(),
            sig3(p.seconds_per_job),
            job.seconds_per(),
            p.seconds_range(),
        );
        let host = match p.largest {
            Some((k, sd)) => format!(
                ", host keys {:.1}% (most: {k} {:.1}%)",
                p.host_log_sd * 100.0,
                sd * 100.0
            ),
            None => String::new(),
        };
        let _ = writeln!(
            w,
            "             its log half-width from: model {:.1}%{host}, seeds {:.1}% (in quadrature); {}",
            p.model_log_sd * 100.0,
            p.sim_log_sd * 100.0,
            p.knowledge.why()
        );
        let _ = writeln!(
            w,
            "             (how the interval was measured: docs/accuracy.md; the ± below is the seeds' alone)"
        );
    }

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
        self.write_prediction(w);
        if !self.seconds_per_job.is_finite() {
            let _ = writeln!(w, "throughput   unknown: no measured job finished");
        } else {
            let response = match &self.replications {
                Some(r) => cell(&r.response_mean_s),
                None => significant(self.response_mean_s),
            };
            let _ = writeln!(
                w,
                "throughput   {}   (mean response {response} s)",
                self.throughput().line()
            );
            if let Some(reps) = &self.replications {
                let last = reps.seeds.last().copied().unwrap_or(self.seed);
                let _ = writeln!(
                    w,
                    "             mean ± 95% interval over {} replications (seeds {} to \
                     {last}); the tables below are seed {}'s run",
                    reps.count(),
                    self.seed,
                    self.seed
                );
            }
        }
        if let Some(ideal) = self
            .ideal_throughput()
            .filter(|t| t.seconds_per_job.mean.is_finite())
        {
            let _ = writeln!(
                w,
                "ideal        {}   (no DRAM/PCIe/pool contention)",
                ideal.line()
            );
        }
        let _ = writeln!(
            w,
            "GPU          true kernel duty {}   bracketed by markers {}",
            pct(self.gpu_true_busy_frac),
            pct(self.gpu_bracketed_busy_frac)
        );
        let per_gpu: Vec<String> = (self.gpu_kernel_duty.iter().enumerate())
            .map(|(i, u)| format!("gpu{i} {}", pct(*u).trim()))
            .collect();
        if per_gpu.len() > 1 {
            let _ = writeln!(
                w,
                "             kernel duty per GPU: {}",
                per_gpu.join(", ")
            );
        }
        if self.gpu_true_busy_frac > 0.0 {
            let _ = writeln!(
                w,
                "             nvidia-smi view {}   (an upper bound: sample windows of {:.3} s with any kernel running; NVML's utilization.gpu averages near the true duty)",
                pct(self.gpu_sampled_busy_frac),
                self.smi_sample_period_s
            );
        }
        self.write_bracket_sums(w);
        self.write_breakdown(w);
        self.write_dram(w);
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
        for (i, s) in self.stages.iter().enumerate() {
            // One seed's numbers, at the precision the seeds' spread of this stage allows.
            let h = (self.replications.as_ref())
                .and_then(|r| r.stage_mean_s.get(i))
                .and_then(|m| m.ci95);
            let seconds = |x: f64| {
                if x == 0.0 {
                    "0".to_string()
                } else {
                    at_precision(x, h)
                }
            };
            let main_loss = s
                .lost_s
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .filter(|(_, v)| **v > 1e-9)
                .map(|(k, v)| format!("{k} {} s", seconds(*v)))
                .unwrap_or_default();
            let _ = writeln!(
                w,
                "{:<22} {:>8} {:>11} {:>11} {:>8}x {:>10}  {}",
                s.name,
                s.count,
                seconds(s.mean_s),
                seconds(s.standalone_mean_s),
                inflation_text(s.inflation, h.map(|h| h / s.standalone_mean_s)),
                seconds(s.mean_wait_s),
                main_loss
            );
        }
        let _ = writeln!(w);
        self.write_bottleneck(w);
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

/// The seed's reading of the markers, kept apart from the rest of the text report.
impl Report {
    /// The brackets added up (the seed's formula: every GPU_START..GPU_END interval summed,
    /// over the wall window and over the GPU's own span), beside the union printed above.
    fn write_bracket_sums(&self, w: &mut String) {
        let b = &self.gpu_brackets;
        let Some(over_span) = b.summed_span_frac else {
            return;
        };
        let gap = b.mean_gap.map_or(String::new(), |g| {
            format!("; mean gap {g:.3} s between GPU operations")
        });
        let _ = writeln!(
            w,
            "             brackets added up {} of the window, {} of the GPU's span (the seed's formula; the union is above){gap}",
            pct(b.summed_frac),
            pct(over_span)
        );
    }
}
