//! Schema -> [`Model`], with every value checked: the host (cores, RAM, locks, pools,
//! `[hardware.cpu]`, `[hardware.dram]`) here; the GPUs and their links in `gpu`, the
//! arrivals in `arrivals`, the instrumentation in `instrumentation` (the workload is built
//! in `stages`).

mod arrivals;
mod gpu;
mod instrumentation;

use crate::model::{
    CpuThroughput, Dram, DramPolicy, DramSharing, Hardware, LatencyCurve, Lock, Model, Pool,
    PoolSharing,
};

use super::cpu_load::KernelCpuLoad;
use super::error::{ErrorKind, Locator, ScenarioError, join_key};
use super::host_scaling;
use super::ignored::IgnoredKey;
use super::rules::Rules;
use super::schema::{DmaShareSpec, DramSpec, HardwareSpec, ScenarioSpec};
use super::stages;
use super::units::{Dim, GIB, to_bytes};
use super::values::{UNLIMITED_DRAM, UNLIMITED_RAM, number, one_of, positive, qty};
use arrivals::arrivals;
use gpu::gpus;
use instrumentation::instrumentation;

/// Builds the model; `warnings` collects keys that were accepted but have no effect (and
/// `ignored` the same, typed, with the key that overrides each), and `scaled` each stage
/// whose time was scaled from `[workload.measured_on]` to this host.
pub fn build(
    spec: &ScenarioSpec,
    loc: &Locator,
    warnings: &mut Vec<String>,
    ignored: &mut Vec<IgnoredKey>,
    scaled: &mut Vec<host_scaling::ScaledStage>,
) -> Result<Model, ScenarioError> {
    let rules = match spec.rules.as_deref() {
        None => Rules::default(),
        Some(name) => Rules::parse(name).ok_or_else(|| {
            loc.error(
                ErrorKind::Value,
                "rules",
                format!("{name:?} is not a rule set; use {}", Rules::NAMES),
            )
        })?,
    };
    let hardware = hardware(&spec.hardware, rules, loc, warnings, ignored)?;
    let running_cpu = hardware.pools.iter().find_map(|p| p.cpu.as_ref());
    let scaling = host_scaling::from_spec(
        spec.workload.measured_on.as_ref(),
        &spec.hardware,
        running_cpu,
        loc,
    )?;
    let kernel_load = match rules.kernel_cpu_load() {
        true => KernelCpuLoad::from_spec(
            spec.hardware.gpu.as_ref().and_then(|g| g.cpu_load.as_ref()),
            loc,
        )?,
        false => KernelCpuLoad::default(),
    };
    let workload = stages::workload(
        &spec.workload,
        &hardware,
        &scaling,
        &kernel_load,
        loc,
        scaled,
    )?;
    let arrivals = arrivals(&spec.arrivals, loc, warnings, ignored)?;
    let instrumentation = instrumentation(&spec.instrumentation, &workload, loc)?;
    let name = spec.name.clone().unwrap_or_else(|| {
        loc.root
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into())
    });
    Ok(Model {
        name,
        seed: spec.seed.unwrap_or(1),
        hardware,
        workload,
        arrivals,
        instrumentation,
    })
}

fn hardware(
    h: &HardwareSpec,
    rules: Rules,
    loc: &Locator,
    warnings: &mut Vec<String>,
    ignored: &mut Vec<IgnoredKey>,
) -> Result<Hardware, ScenarioError> {
    if h.cpu_cores == 0 {
        return Err(loc.error(
            ErrorKind::Value,
            "hardware.cpu_cores",
            "0 cores; a host needs at least 1",
        ));
    }
    let (k_gib, k_raw) = ("hardware.host_ram_gib", "hardware.host_ram");
    let host_ram_bytes = match one_of((&h.host_ram_gib, k_gib), (&h.host_ram, k_raw), loc)? {
        None => UNLIMITED_RAM,
        Some((q, which)) => {
            let (key, unit) = if which == 0 {
                (k_gib, GIB)
            } else {
                (k_raw, 1.0)
            };
            let b = qty(q, Dim::Size, unit, key, loc)?;
            if b <= 0.0 {
                return Err(loc.error(ErrorKind::Value, key, "0 bytes; host RAM must be > 0"));
            }
            to_bytes(b).map_err(|m| loc.error(ErrorKind::Value, key, m))?
        }
    };

    let dram = dram(h, rules, loc, warnings, ignored)?;
    let gpus = match &h.gpu {
        Some(g) => gpus(g, rules, loc)?,
        None => Vec::new(),
    };

    let mut locks = Vec::new();
    for (name, l) in &h.locks {
        let key = join_key("hardware.locks", name);
        if matches!(name.as_str(), "cores" | "host_ram" | "vram") {
            return Err(loc.error(
                ErrorKind::Value,
                &key,
                "this name is reserved for a built-in resource; choose another lock name",
            ));
        }
        if l.capacity < 1 {
            return Err(loc.error(
                ErrorKind::Value,
                &key,
                format!(
                    "capacity {} is not allowed; a lock has capacity >= 1",
                    l.capacity
                ),
            ));
        }
        if l.per_gpu && gpus.is_empty() {
            return Err(loc.error(
                ErrorKind::Value,
                &key,
                "per_gpu = true, but the host has no GPU ([hardware.gpu] count = 0 or absent)",
            ));
        }
        locks.push(Lock {
            name: name.clone(),
            capacity: l.capacity as u64,
            per_gpu: l.per_gpu,
        });
    }
    let (sharing, cpu) = cpu(h, rules, loc)?;
    let mut pools = Vec::new();
    for (name, &threads) in &h.pools {
        let key = join_key("hardware.pools", name);
        positive(threads, &key, "a pool's thread count", loc)?;
        pools.push(Pool {
            name: name.clone(),
            threads,
            sharing,
            cpu: cpu.clone(),
        });
    }
    Ok(Hardware {
        cpu_cores: h.cpu_cores,
        host_ram_bytes,
        dram,
        gpus,
        locks,
        pools,
    })
}

/// `[hardware.cpu]`: the pools' sharing rule (absent: the rule set's) and compute
/// throughput (absent: none).
fn cpu(
    h: &HardwareSpec,
    rules: Rules,
    loc: &Locator,
) -> Result<(PoolSharing, Option<CpuThroughput>), ScenarioError> {
    let Some(c) = &h.cpu else {
        return Ok((rules.pool_sharing(), None));
    };
    let sharing = match &c.pool_sharing {
        None => rules.pool_sharing(),
        Some(name) => PoolSharing::parse(name).ok_or_else(|| {
            loc.error(
                ErrorKind::Value,
                "hardware.cpu.pool_sharing",
                format!("unknown sharing {name:?}; use \"by-activity\" or \"per-thread\""),
            )
        })?,
    };
    let Some(per_core) = &c.per_core_throughput else {
        for (set, key) in [
            (c.physical_cores.is_some(), "physical_cores"),
            (c.threads_per_core.is_some(), "threads_per_core"),
            (c.smt_yield.is_some(), "smt_yield"),
        ] {
            if set {
                return Err(loc.error(
                    ErrorKind::MissingKey,
                    &format!("hardware.cpu.{key}"),
                    "needs per_core_throughput = [[active cores, relative], ...] beside it",
                ));
            }
        }
        return Ok((sharing, None));
    };
    let threads_per_core = c.threads_per_core.unwrap_or(1);
    let physical_cores = c
        .physical_cores
        .unwrap_or((h.cpu_cores / threads_per_core.max(1)).max(1));
    let model = CpuThroughput {
        physical_cores,
        threads_per_core,
        smt_yield: c.smt_yield.unwrap_or(1.0),
        per_core: per_core.clone(),
    };
    model
        .validate()
        .map_err(|m| loc.error(ErrorKind::Value, "hardware.cpu", m.to_string()))?;
    Ok((sharing, Some(model)))
}

fn dram(
    h: &HardwareSpec,
    rules: Rules,
    loc: &Locator,
    warnings: &mut Vec<String>,
    ignored: &mut Vec<IgnoredKey>,
) -> Result<Dram, ScenarioError> {
    let Some(d) = &h.dram else {
        return Ok(Dram {
            capacity_gbps: UNLIMITED_DRAM,
            latency: LatencyCurve::flat(),
            efficiency_loss_per_stream: 0.0,
            sharing: DramSharing::default(),
        });
    };
    let p = "hardware.dram";
    let derived = [
        ("channels", d.channels.is_some()),
        ("mts", d.mts.is_some()),
        ("bus_bytes", d.bus_bytes.is_some()),
        ("efficiency", d.efficiency.is_some()),
    ];
    let capacity_gbps = match &d.capacity_gbps {
        Some(q) => {
            if derived.iter().any(|x| x.1) {
                warnings.push(format!(
                    "{p}: capacity_gbps is given, so channels/mts/bus_bytes/efficiency are ignored"
                ));
                let by = join_key(p, "capacity_gbps");
                let from = loc
                    .file_of(&by)
                    .map(|f| format!(" (in {})", f.display()))
                    .unwrap_or_default();
                for (key, _) in derived.iter().filter(|x| x.1) {
                    ignored.push(IgnoredKey {
                        key: join_key(p, key),
                        by: by.clone(),
                        why: format!(
                            "{by} is given{from}, so channels, mts, bus_bytes and efficiency \
                             are ignored; change {by} instead"
                        ),
                    });
                }
            }
            qty(q, Dim::Rate, 1.0, &join_key(p, "capacity_gbps"), loc)?
        }
        None => {
            let (Some(ch), Some(mts)) = (d.channels, d.mts) else {
                return Err(loc.error(
                    ErrorKind::MissingKey,
                    &join_key(p, "capacity_gbps"),
                    "missing; give capacity_gbps (measured) or channels and mts (with optional bus_bytes, efficiency)",
                ));
            };
            let mts = number(
                mts,
                0.0,
                f64::INFINITY,
                &join_key(p, "mts"),
                "transfers per second in millions, >= 0",
                loc,
            )?;
            let bus = number(
                d.bus_bytes.unwrap_or(8.0),
                0.0,
                f64::INFINITY,
                &join_key(p, "bus_bytes"),
                "bytes per transfer per channel (8 for DDR), >= 0",
                loc,
            )?;
            let eff = d.efficiency.unwrap_or(1.0);
            if !(eff > 0.0 && eff <= 1.0) {
                return Err(loc.error(
                    ErrorKind::Value,
                    &join_key(p, "efficiency"),
                    format!("{eff} is out of range; the achievable fraction of peak is in (0, 1]"),
                ));
            }
            f64::from(ch) * mts * bus / 1000.0 * eff
        }
    };
    if capacity_gbps <= 0.0 {
        let key = if d.capacity_gbps.is_some() {
            join_key(p, "capacity_gbps")
        } else {
            join_key(p, "channels")
        };
        return Err(loc.error(
            ErrorKind::Value,
            &key,
            format!("DRAM capacity is {capacity_gbps} GB/s; it must be > 0"),
        ));
    }
    let offered = match d.latency_load.as_deref() {
        None => rules.latency_on_offered_load(),
        Some("utilisation") => false,
        Some("offered") => true,
        Some(other) => {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(p, "latency_load"),
                format!(
                    "\"{other}\" is not a load axis; use \"offered\" (default) or \"utilisation\" (model v1's)"
                ),
            ));
        }
    };
    let scaled = latency_scaling(d, loc)?;
    let latency = match d.latency_curve.as_ref().map(|c| scaled.apply(c)) {
        Some(points) if offered => LatencyCurve::offered(points).map_err(|m| {
            loc.error(
                ErrorKind::Value,
                &join_key(p, "latency_curve"),
                format!("{m}; write [[offered_load, ns], ...] with offered load ascending, >= 0"),
            )
        })?,
        Some(points) => LatencyCurve::new(points).map_err(|m| {
            loc.error(
                ErrorKind::Value,
                &join_key(p, "latency_curve"),
                format!("{m}; write [[utilisation, ns], ...] with utilisation ascending in 0..=1"),
            )
        })?,
        None => LatencyCurve::flat(),
    };
    let latency = latency_axes(d, latency, offered, &scaled, loc)?;
    let policy = |spec: &Option<DmaShareSpec>,
                  key: &str,
                  default: DramPolicy|
     -> Result<DramPolicy, ScenarioError> {
        match spec {
            None => Ok(default),
            Some(s) => DramPolicy::parse(&s.policy).ok_or_else(|| {
                loc.error(
                    ErrorKind::Value,
                    &join_key(p, &format!("{key}.policy")),
                    format!(
                        "\"{}\" is not a DRAM policy; use \"max-min\", \"proportional\" or \"priority\"",
                        s.policy
                    ),
                )
            }),
        }
    };
    let lines = match d.lines_in_flight_per_thread {
        None => rules.lines_in_flight_per_thread(),
        Some(n) if n > 0.0 && n.is_finite() => Some(n),
        Some(n) => {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(p, "lines_in_flight_per_thread"),
                format!("{n} is out of range; cache lines one thread keeps in flight is > 0"),
            ));
        }
    };
    let (h2d_default, d2h_default) = rules.dma_policies();
    let sharing = DramSharing {
        dma_h2d: policy(&d.dma_h2d, "dma_h2d", h2d_default)?,
        dma_d2h: policy(&d.dma_d2h, "dma_d2h", d2h_default)?,
        lines_in_flight_per_thread: lines,
    };
    let loss = d.efficiency_loss_per_stream.unwrap_or(0.0);
    if !(0.0..0.5).contains(&loss) {
        return Err(loc.error(
            ErrorKind::Value,
            &join_key(p, "efficiency_loss_per_stream"),
            format!("{loss} is out of range; the capacity lost per extra DRAM stream is in 0..0.5"),
        ));
    }
    Ok(Dram {
        capacity_gbps,
        latency,
        efficiency_loss_per_stream: loss,
        sharing,
    })
}

/// `latency_scale` and `latency_rise_scale` as one map of a curve's points: each
/// latency becomes `scale x (L0 + rise x (L - L0))`, L0 the curve's first point (what-if
/// knobs, and how a prediction interval varies a host's latency).
fn latency_scaling(d: &DramSpec, loc: &Locator) -> Result<LatencyScaling, ScenarioError> {
    let p = "hardware.dram";
    let check = |v: Option<f64>, name: &str, ok: fn(f64) -> bool, allowed: &str| match v {
        None => Ok(1.0),
        Some(x) if x.is_finite() && ok(x) => Ok(x),
        Some(x) => Err(loc.error(
            ErrorKind::Value,
            &join_key(p, name),
            format!("{x} is out of range; {allowed}"),
        )),
    };
    let scale = check(
        d.latency_scale,
        "latency_scale",
        |x| x > 0.0,
        "a factor on every latency of the curve, > 0 (default 1)",
    )?;
    let rise = check(
        d.latency_rise_scale,
        "latency_rise_scale",
        |x| x >= 0.0,
        "a factor on each latency's rise above the idle latency, >= 0 (default 1)",
    )?;
    Ok(LatencyScaling { scale, rise })
}

/// `latency_scale` and `latency_rise_scale`, checked.
#[derive(Debug, Clone, Copy)]
struct LatencyScaling {
    scale: f64,
    rise: f64,
}

impl LatencyScaling {
    /// A curve's points with each latency mapped.
    fn apply(&self, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
        let (scale, rise) = (self.scale, self.rise);
        if scale == 1.0 && rise == 1.0 {
            return points.to_vec();
        }
        let idle = points.first().map_or(0.0, |p| p.1);
        (points.iter())
            .map(|&(u, l)| (u, scale * (idle + rise * (l - idle))))
            .collect()
    }
}

/// The latency curve's write-fraction axis (`latency_curve_write_fraction` and
/// `latency_mixes`) and 4 KiB-page factor (`page_factor`), when given.
fn latency_axes(
    d: &DramSpec,
    mut latency: LatencyCurve,
    offered: bool,
    scaled: &LatencyScaling,
    loc: &Locator,
) -> Result<LatencyCurve, ScenarioError> {
    let p = "hardware.dram";
    match (d.latency_curve_write_fraction, d.latency_mixes.is_empty()) {
        (None, true) => {}
        (None, false) => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &join_key(p, "latency_curve_write_fraction"),
                "latency_mixes needs the write fraction of latency_curve's own mix beside it (e.g. 0.333 for copy)",
            ));
        }
        (Some(_), _) if d.latency_curve.is_none() => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &join_key(p, "latency_curve"),
                "a write-fraction axis needs latency_curve (the base mix)",
            ));
        }
        (Some(base), _) => {
            let mut others = Vec::new();
            for (i, m) in d.latency_mixes.iter().enumerate() {
                let key = join_key(p, &format!("latency_mixes[{i}].curve"));
                let c = if offered {
                    LatencyCurve::offered(scaled.apply(&m.curve))
                } else {
                    LatencyCurve::new(scaled.apply(&m.curve))
                }
                .map_err(|e| {
                    loc.error(
                        ErrorKind::Value,
                        &key,
                        format!("{e}; on the same load axis as latency_curve"),
                    )
                })?;
                others.push((m.write_fraction, c));
            }
            latency = latency.with_write_mixes(base, others).map_err(|e| {
                loc.error(
                    ErrorKind::Value,
                    &join_key(p, "latency_mixes"),
                    format!("{e}; write fractions are distinct, in 0..=1"),
                )
            })?;
        }
    }
    if let Some((idle, loaded)) = d.page_factor {
        latency = latency.with_page_factor(idle, loaded).map_err(|e| {
            loc.error(
                ErrorKind::Value,
                &join_key(p, "page_factor"),
                format!("{e}; write [idle, loaded]"),
            )
        })?;
    }
    Ok(latency)
}
