//! The workload: stage names and `after` references, ordering (via `dag`), and each
//! stage's duration, holds and rate demands, including derived PCIe transfers.

use std::collections::{BTreeMap, HashMap};

use crate::model::{
    CopyDir, Demand, Duration, Hardware, Hold, HoldResource, HostThread, LinkCopy, RateTarget,
    Stage, StagedCopy, Workload,
};

use super::capacity::{capacity, check_live_holds, quantity};
use super::dag::{Reach, topo_order};
use super::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};
use super::host_scaling::{HostScaling, ScaledStage, StageWork, scaled};
use super::schema::{DistSpec, HoldSpec, HostThreadSpec, StageSpec, TransferSpec, WorkloadSpec};
use super::units::{Dim, GB, GIB, Qty, to_bytes};
use super::values::{UNLIMITED_DRAM, UNLIMITED_RAM, number, one_of, positive, qty};

/// Builds the workload; stages come out in topological order.
/// Stage times are carried from `[workload.measured_on]` to `hw` by `scaling`; each
/// stage it changes is listed in `scaled`.
pub fn workload(
    w: &WorkloadSpec,
    hw: &Hardware,
    scaling: &HostScaling,
    loc: &Locator,
    scaled: &mut Vec<ScaledStage>,
) -> Result<Workload, ScenarioError> {
    let partitions = w.partitions.unwrap_or(1);
    if partitions == 0 {
        return Err(loc.error(
            ErrorKind::Value,
            "workload.partitions",
            "0 partitions; a job has at least 1",
        ));
    }
    if w.stages.is_empty() {
        return Err(loc.error(
            ErrorKind::MissingKey,
            "workload.stages",
            "no stages; declare at least one [[workload.stages]]",
        ));
    }
    let key = |i: usize| join_index("workload.stages", i);

    // Names and `after` references, in file order.
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, s) in w.stages.iter().enumerate() {
        if s.name.trim().is_empty() {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&key(i), "name"),
                "empty stage name",
            ));
        }
        if let Some(j) = by_name.insert(s.name.as_str(), i) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&key(i), "name"),
                format!(
                    "stage name {:?} is already used by workload.stages[{j}]; stage names are unique",
                    s.name
                ),
            ));
        }
    }
    let all_names = || {
        w.stages
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut after: Vec<Vec<usize>> = Vec::with_capacity(w.stages.len());
    for (i, s) in w.stages.iter().enumerate() {
        let mut deps = Vec::new();
        for (j, a) in s.after.iter().enumerate() {
            let d = *by_name.get(a.as_str()).ok_or_else(|| {
                loc.error(
                    ErrorKind::Reference,
                    &join_index(&join_key(&key(i), "after"), j),
                    format!("no stage named {a:?}; stages: {}", all_names()),
                )
            })?;
            if !deps.contains(&d) {
                deps.push(d);
            }
        }
        after.push(deps);
    }
    let order = topo_order(&after).map_err(|cycle| {
        let names: Vec<&str> = cycle.iter().map(|&i| w.stages[i].name.as_str()).collect();
        loc.error(
            ErrorKind::Cycle,
            &join_key(&key(cycle[0]), "after"),
            format!(
                "the stages' `after` lists form a cycle: {} (each runs after the one before it); the stages must form a DAG",
                names.join(" -> ")
            ),
        )
    })?;
    // new index of each file-order stage
    let mut new_of = vec![0usize; w.stages.len()];
    for (n, &old) in order.iter().enumerate() {
        new_of[old] = n;
    }
    let reach = Reach::new(&after);
    let per_partition: Vec<bool> = w
        .stages
        .iter()
        .map(|s| s.per_partition.unwrap_or(true))
        .collect();

    let mut built: Vec<Option<Stage>> = vec![None; w.stages.len()];
    for (i, s) in w.stages.iter().enumerate() {
        let cx = StageCx {
            i,
            key: key(i),
            hw,
            scaling,
            measured_elsewhere: w.measured_on.is_some(),
            loc,
            by_name: &by_name,
            reach: &reach,
            per_partition: &per_partition,
            all_names: &all_names,
        };
        let (mut st, note) = cx.stage(s)?;
        scaled.extend(note);
        st.after = after[i].iter().map(|&d| new_of[d]).collect();
        st.after.sort_unstable();
        for h in &mut st.holds {
            h.until = new_of[h.until];
        }
        built[new_of[i]] = Some(st);
    }
    let stages: Vec<Stage> = built.into_iter().flatten().collect();
    let wl = Workload { partitions, stages };
    check_live_holds(&wl, hw, &order, loc)?;
    Ok(wl)
}

/// What a `transfer` makes of a stage.
struct CopyStage {
    /// Standalone time.
    duration: Duration,
    /// The link direction drawn, and at what rate.
    link: RateTarget,
    link_gbps: f64,
    /// DRAM drawn by the DMA, GB/s.
    dram_gbps: f64,
    /// A pageable copy's staging (None: pinned, or the one-rate rule).
    staged: Option<StagedCopy>,
    /// The share of a copy alone that waits on DRAM latency (0 for a kernel's stream).
    latency_frac: f64,
    pinned: bool,
}

struct StageCx<'a> {
    i: usize,
    key: String,
    hw: &'a Hardware,
    scaling: &'a HostScaling,
    /// The scenario states `[workload.measured_on]`: a stage may ask for more threads
    /// than the running pool has (its time stretches).
    measured_elsewhere: bool,
    loc: &'a Locator,
    by_name: &'a HashMap<&'a str, usize>,
    reach: &'a Reach,
    per_partition: &'a [bool],
    /// Every stage name, comma separated (built only for an error message).
    all_names: &'a dyn Fn() -> String,
}

impl StageCx<'_> {
    fn k(&self, field: &str) -> String {
        join_key(&self.key, field)
    }

    fn err(&self, kind: ErrorKind, field: &str, msg: impl Into<String>) -> ScenarioError {
        self.loc.error(kind, &self.k(field), msg)
    }

    fn need_gpu(&self, field: &str, what: &str) -> Result<(), ScenarioError> {
        if self.hw.gpus.is_empty() {
            return Err(self.err(
                ErrorKind::Value,
                field,
                format!(
                    "{what} needs a GPU, but the host has none (add [hardware.gpu] with count >= 1)"
                ),
            ));
        }
        Ok(())
    }

    /// What the stage's standalone time is spent on, as far as scaling goes; odd values
    /// that later checks refuse scale nothing.
    fn work(&self, s: &StageSpec) -> StageWork {
        if s.gpu_kernel == Some(true) {
            return StageWork::GpuKernel;
        }
        if s.transfer.is_some() {
            return StageWork::Other;
        }
        if let Some(pu) = &s.pool {
            return match self.hw.pools.iter().find(|p| p.name == pu.name) {
                Some(p) if pu.threads > 0.0 && pu.threads.is_finite() => StageWork::Cpu {
                    asked: pu.threads,
                    granted: pu.threads.min(p.threads),
                },
                _ => StageWork::Other,
            };
        }
        if let Some(c) = s.cores.filter(|&c| c > 0) {
            return StageWork::Cpu {
                asked: f64::from(c),
                granted: f64::from(c),
            };
        }
        match &s.host_thread {
            Some(h) if h.frac > 0.0 && h.frac <= 1.0 => StageWork::HostThread { frac: h.frac },
            _ => StageWork::Other,
        }
    }

    /// Builds one stage, with a note when its time was scaled to this host; `after` and
    /// `until` still hold file-order indices.
    fn stage(&self, s: &StageSpec) -> Result<(Stage, Option<ScaledStage>), ScenarioError> {
        let loc = self.loc;
        let name = &s.name;
        let mut holds: Vec<Hold> = Vec::new();
        let mut demands: BTreeMap<RateTarget, f64> = BTreeMap::new();

        // Duration: duration_s, duration = {dist}, or derived from a transfer.
        if s.duration_s.is_some() && s.duration.is_some() {
            return Err(self.err(
                ErrorKind::Value,
                "duration",
                "both duration_s and duration are given; use one",
            ));
        }
        let mut duration = match (&s.duration_s, &s.duration) {
            (Some(q), _) => Some(Duration::Fixed(self.seconds(q, "duration_s")?)),
            (_, Some(d)) => Some(self.dist(d)?),
            _ => None,
        };
        let (spec_latency, spec_compute) = (
            s.latency_bound_frac.unwrap_or(0.0),
            s.compute_bound_frac.unwrap_or(0.0),
        );
        let fracs_valid = (0.0..=1.0).contains(&spec_latency)
            && (0.0..=1.0 - spec_latency).contains(&spec_compute);
        let work = self.work(s);
        let scale = fracs_valid.then(|| self.scaling.stage(work, spec_latency, spec_compute));
        let mut scaled_note = None;
        let mut time_scale = 1.0;
        if let (Some(d), Some(k)) = (duration.clone(), scale.map(|sc| sc.time))
            && k != 1.0
        {
            let measured_s = d.mean_s();
            let to = scaled(d, k);
            time_scale = k;
            scaled_note = Some(ScaledStage {
                stage: name.clone(),
                measured_s,
                here_s: to.mean_s(),
                work,
            });
            duration = Some(to);
        }

        let mut staged_copy = None;
        // A stage that is a copy alone waits on DRAM latency as its kind of copy does
        // (unless it says otherwise); a staged copy's memcpy is paced in the solver.
        let mut copy_latency_frac = 0.0;
        if let Some(t) = &s.transfer {
            let copy = self.transfer(t, duration)?;
            copy_latency_frac = copy.latency_frac;
            staged_copy = copy.staged;
            duration = Some(copy.duration);
            *demands.entry(copy.link).or_default() += copy.link_gbps;
            *demands.entry(RateTarget::Dram).or_default() += copy.dram_gbps;
            if !copy.pinned {
                // The driver's memcpy into the bounce buffer occupies a core.
                holds.push(Hold {
                    resource: HoldResource::Cores,
                    amount: 1,
                    until: self.i,
                });
            }
        }
        let Some(duration) = duration else {
            return Err(self.err(
                ErrorKind::MissingKey,
                "duration_s",
                format!(
                    "stage {name:?} has no duration; give duration_s (seconds or \"300 ms\"), duration = {{ dist = ... }}, or transfer"
                ),
            ));
        };
        let mean_s = duration.mean_s();
        // A kernel that waits on its copy lasts the copy's time here.
        if let Some(note) = &mut scaled_note {
            note.here_s = mean_s;
        }

        // Cores shorthand.
        if let Some(c) = s.cores
            && c > 0
        {
            if c > self.hw.cpu_cores {
                return Err(self.err(
                    ErrorKind::Capacity,
                    "cores",
                    format!(
                        "stage {name:?} needs {c} cores, but the host has {} (hardware.cpu_cores)",
                        self.hw.cpu_cores
                    ),
                ));
            }
            holds.push(Hold {
                resource: HoldResource::Cores,
                amount: u64::from(c),
                until: self.i,
            });
        }
        for (j, h) in s.holds.iter().enumerate() {
            holds.push(self.hold(h, j, name)?);
        }
        self.check_own_holds(name, &holds)?;

        // DRAM.
        let (kr, kb) = (self.k("dram_gbps"), self.k("dram_gb"));
        match one_of((&s.dram_gbps, &kr), (&s.dram_gb, &kb), loc)? {
            Some((q, 0)) => {
                // A rate as measured: the same bytes over the scaled time.
                *demands.entry(RateTarget::Dram).or_default() +=
                    qty(q, Dim::Rate, 1.0, &kr, loc)? / time_scale
            }
            Some((q, _)) => {
                let gb = qty(q, Dim::Size, GB, &kb, loc)? / GB;
                if gb > 0.0 {
                    if mean_s <= 0.0 {
                        return Err(self.err(
                            ErrorKind::Value,
                            "dram_gb",
                            "the stage's standalone duration is 0, so bytes per second is undefined; use dram_gbps",
                        ));
                    }
                    *demands.entry(RateTarget::Dram).or_default() += gb / mean_s;
                }
            }
            None => {}
        }

        // Thread pool.
        if let Some(pu) = &s.pool {
            let Some(pid) = self.hw.pools.iter().position(|p| p.name == pu.name) else {
                let pools: Vec<&str> = self.hw.pools.iter().map(|p| p.name.as_str()).collect();
                return Err(self.err(
                    ErrorKind::Reference,
                    "pool.name",
                    format!(
                        "no pool named {:?}; pools: {}",
                        pu.name,
                        if pools.is_empty() {
                            "(none; declare [hardware.pools])".into()
                        } else {
                            pools.join(", ")
                        }
                    ),
                ));
            };
            let size = self.hw.pools[pid].threads;
            let t = positive(
                pu.threads,
                &self.k("pool.threads"),
                "the threads a stage uses",
                loc,
            )?;
            if t > size && !self.measured_elsewhere {
                return Err(self.err(
                    ErrorKind::Capacity,
                    "pool.threads",
                    format!(
                        "stage {name:?} uses {t} threads of pool {:?}, which has {size}; to run it on fewer threads with its time stretched, say where it was measured in [workload.measured_on]",
                        pu.name
                    ),
                ));
            }
            *demands.entry(RateTarget::Pool(pid)).or_default() += t.min(size);
        }

        // GPU kernel.
        let gpu_kernel = s.gpu_kernel.unwrap_or(false);
        if gpu_kernel {
            self.need_gpu("gpu_kernel", "a GPU kernel")?;
            let share = s.gpu_share.unwrap_or(1.0);
            if !(share > 0.0 && share <= 1.0) {
                return Err(self.err(
                    ErrorKind::Value,
                    "gpu_share",
                    format!(
                        "{share} is out of range; a kernel uses a fraction of the GPU in (0, 1]"
                    ),
                ));
            }
            *demands.entry(RateTarget::GpuCompute).or_default() += share;
        } else if s.gpu_share.is_some() {
            return Err(self.err(
                ErrorKind::Value,
                "gpu_share",
                "only GPU kernels use a GPU share; set gpu_kernel = true or remove gpu_share",
            ));
        }

        let latency_bound_frac = number(
            s.latency_bound_frac.unwrap_or(copy_latency_frac),
            0.0,
            1.0,
            &self.k("latency_bound_frac"),
            "the latency-bound fraction of the standalone time is in 0..=1",
            loc,
        )?;

        let compute_bound_frac = number(
            s.compute_bound_frac.unwrap_or(0.0),
            0.0,
            1.0 - latency_bound_frac,
            &self.k("compute_bound_frac"),
            "the compute-bound fraction is in 0..=1 and, with latency_bound_frac, sums to at most 1",
            loc,
        )?;

        // Validated as written; the shares of the time on this host.
        let (latency_bound_frac, compute_bound_frac) = match scale {
            Some(sc) if matches!(work, StageWork::Cpu { .. }) && sc.time != 1.0 => {
                (sc.latency_frac, sc.compute_frac)
            }
            _ => (latency_bound_frac, compute_bound_frac),
        };

        let dram_write_frac = s
            .dram_write_frac
            .map(|w| {
                number(
                    w,
                    0.0,
                    1.0,
                    &self.k("dram_write_frac"),
                    "the write share of a stage's DRAM bytes is in 0..=1",
                    loc,
                )
            })
            .transpose()?;

        let host_thread = match &s.host_thread {
            None => None,
            Some(h) => Some(HostThread {
                pool: self.host_thread_pool(h)?,
                bound_frac: scale.and_then(|sc| sc.host_thread_frac).unwrap_or(h.frac),
            }),
        };

        if self.hw.dram.capacity_gbps == UNLIMITED_DRAM {
            let field = if demands.get(&RateTarget::Dram).is_some_and(|a| *a > 0.0) {
                Some(if s.transfer.is_some() {
                    "transfer"
                } else if s.dram_gb.is_some() {
                    "dram_gb"
                } else {
                    "dram_gbps"
                })
            } else if latency_bound_frac > 0.0 {
                Some("latency_bound_frac")
            } else {
                None
            };
            if let Some(field) = field {
                return Err(self.err(
                    ErrorKind::MissingKey,
                    field,
                    format!("stage {name:?} uses DRAM, but the host's DRAM is not declared: add [hardware.dram] with capacity_gbps (or channels and mts)"),
                ));
            }
        }

        let stage = Stage {
            name: name.clone(),
            per_partition: self.per_partition[self.i],
            after: Vec::new(),
            duration,
            holds,
            demands: demands
                .into_iter()
                .filter(|(_, a)| *a > 0.0)
                .map(|(target, amount)| Demand { target, amount })
                .collect(),
            latency_bound_frac,
            compute_bound_frac,
            dram_write_frac,
            host_thread,
            gpu_kernel,
            staged_copy,
        };
        Ok((stage, scaled_note))
    }

    fn seconds(&self, q: &Qty, field: &str) -> Result<f64, ScenarioError> {
        q.to_base(Dim::Time, 1.0).map_err(|m| {
            let m = m.replace("a time must be >= 0", "durations must be >= 0 seconds");
            self.err(ErrorKind::Value, field, m)
        })
    }

    fn dist(&self, d: &DistSpec) -> Result<Duration, ScenarioError> {
        let field = |f: &str| format!("duration.{f}");
        let fields: [(&str, bool); 8] = [
            ("value_s", d.value_s.is_some()),
            ("mean_s", d.mean_s.is_some()),
            ("std_s", d.std_s.is_some()),
            ("min_s", d.min_s.is_some()),
            ("max_s", d.max_s.is_some()),
            ("scale_s", d.scale_s.is_some()),
            ("shape", d.shape.is_some()),
            ("k", d.k.is_some()),
        ];
        let needs: &[&str] = match d.dist.as_str() {
            "fixed" => &["value_s"],
            "exponential" => &["mean_s"],
            "normal" | "lognormal" => &["mean_s", "std_s"],
            "uniform" => &["min_s", "max_s"],
            "gamma" => &["shape", "scale_s"],
            "erlang" => &["k", "mean_s"],
            "weibull" => &["scale_s", "shape"],
            other => {
                return Err(self.err(
                    ErrorKind::Value,
                    "duration.dist",
                    format!("{other:?} is not a distribution; use fixed, exponential, normal, lognormal, uniform, gamma, erlang or weibull"),
                ));
            }
        };
        for (f, present) in fields {
            if present && !needs.contains(&f) {
                return Err(self.err(
                    ErrorKind::UnknownKey,
                    &field(f),
                    format!(
                        "not used by dist = {:?}, which takes {}",
                        d.dist,
                        needs.join(", ")
                    ),
                ));
            }
        }
        for f in needs {
            if !fields.iter().any(|(n, p)| n == f && *p) {
                return Err(self.err(
                    ErrorKind::MissingKey,
                    &field(f),
                    format!("missing; dist = {:?} takes {}", d.dist, needs.join(", ")),
                ));
            }
        }
        let s =
            |q: &Option<Qty>, f: &str| self.seconds(q.as_ref().expect("checked above"), &field(f));
        let pos_s = |q: &Option<Qty>, f: &str| -> Result<f64, ScenarioError> {
            let v = s(q, f)?;
            if v <= 0.0 {
                return Err(self.err(
                    ErrorKind::Value,
                    &field(f),
                    format!("{v} is not allowed; it must be > 0 seconds"),
                ));
            }
            Ok(v)
        };
        let shape = || {
            positive(
                d.shape.unwrap_or(0.0),
                &self.k(&field("shape")),
                "the shape",
                self.loc,
            )
        };
        Ok(match d.dist.as_str() {
            "fixed" => Duration::Fixed(s(&d.value_s, "value_s")?),
            "exponential" => Duration::Exponential {
                mean_s: pos_s(&d.mean_s, "mean_s")?,
            },
            "normal" => Duration::Normal {
                mean_s: s(&d.mean_s, "mean_s")?,
                std_s: s(&d.std_s, "std_s")?,
            },
            "lognormal" => {
                let (mean_s, std_s) = (pos_s(&d.mean_s, "mean_s")?, s(&d.std_s, "std_s")?);
                // The log-space sigma is sqrt(ln(1 + (std/mean)^2)): it must be finite.
                if !(std_s / mean_s).powi(2).is_finite() {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("std_s"),
                        format!("{std_s} is too large for mean_s = {mean_s}; a log-normal needs std_s / mean_s below 1e150"),
                    ));
                }
                Duration::LogNormal { mean_s, std_s }
            }
            "uniform" => {
                let (lo, hi) = (s(&d.min_s, "min_s")?, s(&d.max_s, "max_s")?);
                if lo > hi {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("max_s"),
                        format!("{hi} is below min_s = {lo}; need min_s <= max_s"),
                    ));
                }
                Duration::Uniform {
                    min_s: lo,
                    max_s: hi,
                }
            }
            "gamma" => Duration::Gamma {
                shape: shape()?,
                scale_s: pos_s(&d.scale_s, "scale_s")?,
            },
            "erlang" => {
                let k = d.k.unwrap_or(0);
                if k == 0 {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("k"),
                        "0 phases; Erlang needs k >= 1",
                    ));
                }
                Duration::Erlang {
                    k,
                    mean_s: pos_s(&d.mean_s, "mean_s")?,
                }
            }
            _ => Duration::Weibull {
                scale_s: pos_s(&d.scale_s, "scale_s")?,
                shape: shape()?,
            },
        })
    }

    fn hold(&self, h: &HoldSpec, j: usize, name: &str) -> Result<Hold, ScenarioError> {
        let p = join_index("holds", j);
        let f = |x: &str| join_key(&p, x);
        let count = |what: &str| -> Result<u64, ScenarioError> {
            if h.gib.is_some() {
                return Err(self.err(
                    ErrorKind::Value,
                    &f("gib"),
                    format!("{what} are counted with amount, not gib"),
                ));
            }
            match &h.amount {
                None => Ok(1),
                Some(Qty::Num(x)) if x.fract() == 0.0 && *x >= 1.0 && *x < 1e15 => Ok(*x as u64),
                Some(q) => Err(self.err(
                    ErrorKind::Value,
                    &f("amount"),
                    format!(
                        "{} is not allowed; {what} are held as a whole number >= 1",
                        q.shown()
                    ),
                )),
            }
        };
        let bytes = || -> Result<u64, ScenarioError> {
            let (ka, kg) = (self.k(&f("amount")), self.k(&f("gib")));
            let b = match one_of((&h.amount, &ka), (&h.gib, &kg), self.loc)? {
                Some((q, 0)) => qty(q, Dim::Size, 1.0, &ka, self.loc)?,
                Some((q, _)) => qty(q, Dim::Size, GIB, &kg, self.loc)?,
                None => {
                    return Err(self.err(
                        ErrorKind::MissingKey,
                        &f("gib"),
                        "missing; give the memory held as gib = 14 or amount = \"14 GiB\"",
                    ));
                }
            };
            to_bytes(b).map_err(|m| self.err(ErrorKind::Value, &f("gib"), m))
        };
        let (resource, amount, cap, what) = match h.resource.as_str() {
            "cores" => {
                let a = count("cores")?;
                (
                    HoldResource::Cores,
                    a,
                    u64::from(self.hw.cpu_cores),
                    "hardware.cpu_cores".to_string(),
                )
            }
            "host_ram" => {
                if self.hw.host_ram_bytes == UNLIMITED_RAM {
                    return Err(self.err(
                        ErrorKind::Value,
                        &f("resource"),
                        "holding host RAM needs the host's RAM: set hardware.host_ram_gib",
                    ));
                }
                let a = bytes()?;
                (
                    HoldResource::HostRam,
                    a,
                    self.hw.host_ram_bytes,
                    self.capacity_key("hardware.host_ram_gib"),
                )
            }
            "vram" => {
                self.need_gpu(&f("resource"), "holding VRAM")?;
                let a = bytes()?;
                (
                    HoldResource::Vram,
                    a,
                    self.hw.gpus[0].vram_bytes,
                    "per GPU, hardware.gpu.vram_gib".to_string(),
                )
            }
            other => {
                let Some(id) = self.hw.locks.iter().position(|l| l.name == other) else {
                    let locks: Vec<&str> = self.hw.locks.iter().map(|l| l.name.as_str()).collect();
                    return Err(self.err(
                        ErrorKind::Reference,
                        &f("resource"),
                        format!(
                            "{other:?} is not a resource; use \"cores\", \"host_ram\", \"vram\" or a lock ({})",
                            if locks.is_empty() { "none declared in [hardware.locks]".into() } else { locks.join(", ") }
                        ),
                    ));
                };
                let a = count("lock units")?;
                let l = &self.hw.locks[id];
                (
                    HoldResource::Lock(id),
                    a,
                    l.capacity,
                    "hardware.locks".to_string(),
                )
            }
        };
        if amount > cap {
            return Err(self.err(
                ErrorKind::Capacity,
                &p,
                format!(
                    "stage {name:?} holds {}, but there are only {} ({what})",
                    quantity(self.hw, resource, amount),
                    quantity(self.hw, resource, cap)
                ),
            ));
        }
        let until = match &h.until {
            None => self.i,
            Some(u) => {
                let ku = f("until");
                let Some(&t) = self.by_name.get(u.as_str()) else {
                    return Err(self.err(
                        ErrorKind::Reference,
                        &ku,
                        format!("no stage named {u:?}; stages: {}", (self.all_names)()),
                    ));
                };
                if t != self.i && !self.reach.runs_after(self.i, t) {
                    return Err(self.err(
                        ErrorKind::Value,
                        &ku,
                        format!("stage {u:?} does not run after {name:?}; a hold is released at the end of the holding stage or of a stage that (transitively) runs after it"),
                    ));
                }
                if !self.per_partition[self.i] && self.per_partition[t] {
                    return Err(self.err(
                        ErrorKind::Value,
                        &ku,
                        format!("{name:?} runs once per job but {u:?} once per partition; a per-job hold cannot be released by a per-partition stage"),
                    ));
                }
                t
            }
        };
        Ok(Hold {
            resource,
            amount,
            until,
        })
    }

    /// A stage's own holds of one resource together must fit.
    /// A `transfer`: its standalone time (the copy alone, or the stage's own duration
    /// when longer: a kernel streaming its inputs), the link and DRAM it draws, and its
    /// staging.
    fn transfer(
        &self,
        t: &TransferSpec,
        duration: Option<Duration>,
    ) -> Result<CopyStage, ScenarioError> {
        let loc = self.loc;
        self.need_gpu("transfer", "a PCIe transfer")?;
        let link = &self.hw.gpus[0].link;
        let pinned = t.pinned.unwrap_or(true);
        let dir = match t.dir.as_str() {
            "h2d" => CopyDir::H2d,
            "d2h" => CopyDir::D2h,
            other => {
                return Err(self.err(
                    ErrorKind::Value,
                    "transfer.dir",
                    format!(
                        "{other:?} is not a direction; use \"h2d\" (host to device) or \"d2h\""
                    ),
                ));
            }
        };
        let copy = LinkCopy { dir, pinned };
        let rate = link.copy_gbps(copy);
        let (kg, kgib) = (self.k("transfer.gb"), self.k("transfer.gib"));
        let bytes = match one_of((&t.gb, &kg), (&t.gib, &kgib), loc)? {
            Some((q, 0)) => qty(q, Dim::Size, GB, &kg, loc)?,
            Some((q, _)) => qty(q, Dim::Size, GIB, &kgib, loc)?,
            None => {
                return Err(self.err(
                    ErrorKind::MissingKey,
                    "transfer.gb",
                    "missing; give the bytes moved as gb = 1.5 or gib = 2 (or a size string)",
                ));
            }
        };
        // Alone, a copy runs at the link's rate. With a duration too (a kernel that
        // streams its inputs, e.g. an MSM reading SRS points), the stage lasts the
        // longer of the two and draws the link at bytes / standalone time.
        let copy_s = link.copy_seconds(copy, bytes / GB);
        let mut latency_frac = 0.0;
        let (standalone, rate) = match duration {
            Some(d) if d.mean_s() > copy_s => {
                let r = bytes / GB / d.mean_s();
                (d, r)
            }
            // A staged copy draws its bytes over setup + streaming.
            Some(Duration::Fixed(_)) | None if link.staging(copy).is_some() => {
                (Duration::Fixed(copy_s), bytes / GB / copy_s)
            }
            Some(Duration::Fixed(_)) | None => {
                latency_frac = link.latency_frac.of(copy);
                (Duration::Fixed(copy_s), rate)
            }
            Some(_) => {
                return Err(self.err(
                    ErrorKind::Value,
                    "transfer",
                    format!(
                        "the stage's mean duration is shorter than its copy alone ({copy_s:.4} s at {rate} GB/s); give a fixed duration_s or none"
                    ),
                ));
            }
        };
        let staged = link.staged_copy(copy, bytes / GB, standalone.mean_s());
        let demand = link.copy_demand(copy, rate);
        Ok(CopyStage {
            duration: standalone,
            link: demand.link,
            link_gbps: demand.link_gbps,
            dram_gbps: demand.dram_gbps,
            staged,
            latency_frac,
            pinned,
        })
    }

    /// The pool a `host_thread` runs on, its share checked.
    fn host_thread_pool(&self, h: &HostThreadSpec) -> Result<usize, ScenarioError> {
        let Some(pool) = self.hw.pools.iter().position(|p| p.name == h.pool) else {
            let pools: Vec<&str> = self.hw.pools.iter().map(|p| p.name.as_str()).collect();
            return Err(self.err(
                ErrorKind::Reference,
                "host_thread.pool",
                format!(
                    "no pool named {:?}; pools: {}",
                    h.pool,
                    if pools.is_empty() {
                        "(none; declare [hardware.pools])".into()
                    } else {
                        pools.join(", ")
                    }
                ),
            ));
        };
        if !(h.frac > 0.0 && h.frac <= 1.0) {
            return Err(self.err(
                ErrorKind::Value,
                "host_thread.frac",
                format!(
                    "{} is out of range; the share of the stage's time its host thread needs a CPU is in (0, 1]",
                    h.frac
                ),
            ));
        }
        Ok(pool)
    }

    /// A capacity's key for a message, with the knobs it was computed from: the RAM a
    /// user changes is often `params.host_ram_gib`, not the hardware key it feeds.
    fn capacity_key(&self, key: &str) -> String {
        let Some(note) = self.loc.notes.get(key) else {
            return key.to_string();
        };
        let knobs: Vec<String> = note
            .split('$')
            .skip(1)
            .map(|t| {
                t.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|n| !n.is_empty())
            .map(|n| format!("params.{n}"))
            .collect();
        match (note.strip_prefix("params."), knobs.is_empty()) {
            (Some(_), _) => format!("{key} = {note}; change {note}"),
            (None, false) => format!("{key} = {note}; change {}", knobs.join(", ")),
            (None, true) => format!("{key} = {note}"),
        }
    }

    fn check_own_holds(&self, name: &str, holds: &[Hold]) -> Result<(), ScenarioError> {
        let mut sum: BTreeMap<HoldResource, u64> = BTreeMap::new();
        for h in holds {
            *sum.entry(h.resource).or_default() += h.amount;
        }
        for (r, total) in sum {
            let cap = capacity(self.hw, r, false);
            if total > cap {
                return Err(self.err(
                    ErrorKind::Capacity,
                    "holds",
                    format!(
                        "stage {name:?} holds {} in all, but there are only {}",
                        quantity(self.hw, r, total),
                        quantity(self.hw, r, cap)
                    ),
                ));
            }
        }
        Ok(())
    }
}
