//! Schema -> [`Model`]: hardware, arrivals and instrumentation, with every value checked
//! (the workload is built in `stages`).

use std::path::{Path, PathBuf};

use crate::model::{
    ArrivalKind, Arrivals, CopyLatencyFrac, CpuThroughput, Dram, DramPolicy, DramSharing, Edge,
    Gpu, Hardware, Instrumentation, LatencyCurve, Lock, Marker, MemcpyPace, Model, PageableStaging,
    PcieLink, Pool, PoolSharing, Span, Timer, Workload,
};

use super::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};
use super::host_scaling;
use super::rules::Rules;
use super::schema::{
    ArrivalsSpec, DmaShareSpec, DramSpec, GpuSpec, HardwareSpec, InstrumentationSpec, ScenarioSpec,
};
use super::stages;
use super::trace_csv;
use super::units::{Dim, GIB, Qty, to_bytes};
use super::values::{UNLIMITED_DRAM, UNLIMITED_RAM, number, one_of, positive, qty};

/// Builds the model; `warnings` collects keys that were accepted but have no effect.
/// Builds the model; each stage whose time was scaled from `[workload.measured_on]` to
/// this host is listed in `scaled`.
pub fn build(
    spec: &ScenarioSpec,
    loc: &Locator,
    warnings: &mut Vec<String>,
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
    let hardware = hardware(&spec.hardware, rules, loc, warnings)?;
    let running_cpu = hardware.pools.iter().find_map(|p| p.cpu.as_ref());
    let scaling = host_scaling::from_spec(
        spec.workload.measured_on.as_ref(),
        &spec.hardware,
        running_cpu,
        loc,
    )?;
    let workload = stages::workload(&spec.workload, &hardware, &scaling, loc, scaled)?;
    let arrivals = arrivals(&spec.arrivals, loc, warnings)?;
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

    let dram = dram(h, rules, loc, warnings)?;
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
        .map_err(|m| loc.error(ErrorKind::Value, "hardware.cpu", m))?;
    Ok((sharing, Some(model)))
}

fn dram(
    h: &HardwareSpec,
    rules: Rules,
    loc: &Locator,
    warnings: &mut Vec<String>,
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
        d.channels.is_some(),
        d.mts.is_some(),
        d.bus_bytes.is_some(),
        d.efficiency.is_some(),
    ];
    let capacity_gbps = match &d.capacity_gbps {
        Some(q) => {
            if derived.iter().any(|x| *x) {
                warnings.push(format!(
                    "{p}: capacity_gbps is given, so channels/mts/bus_bytes/efficiency are ignored"
                ));
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
    let latency = match &d.latency_curve {
        Some(points) if offered => LatencyCurve::offered(points.clone()).map_err(|m| {
            loc.error(
                ErrorKind::Value,
                &join_key(p, "latency_curve"),
                format!("{m}; write [[offered_load, ns], ...] with offered load ascending, >= 0"),
            )
        })?,
        Some(points) => LatencyCurve::new(points.clone()).map_err(|m| {
            loc.error(
                ErrorKind::Value,
                &join_key(p, "latency_curve"),
                format!("{m}; write [[utilisation, ns], ...] with utilisation ascending in 0..=1"),
            )
        })?,
        None => LatencyCurve::flat(),
    };
    let latency = latency_axes(d, latency, offered, loc)?;
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

/// The latency curve's write-fraction axis (`latency_curve_write_fraction` and
/// `latency_mixes`) and 4 KiB-page factor (`page_factor`), when given.
fn latency_axes(
    d: &DramSpec,
    mut latency: LatencyCurve,
    offered: bool,
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
                    LatencyCurve::offered(m.curve.clone())
                } else {
                    LatencyCurve::new(m.curve.clone())
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

fn gpus(g: &GpuSpec, rules: Rules, loc: &Locator) -> Result<Vec<Gpu>, ScenarioError> {
    let p = "hardware.gpu";
    let count = g.count.unwrap_or(1);
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > super::limits::MAX_GPUS {
        return Err(loc.error(
            ErrorKind::Value,
            &join_key(p, "count"),
            format!(
                "{count} GPUs; a host has at most {} here",
                super::limits::MAX_GPUS
            ),
        ));
    }
    let k = |s: &str| join_key(p, s);
    let vram = match one_of((&g.vram_gib, &k("vram_gib")), (&g.vram, &k("vram")), loc)? {
        Some((q, 0)) => qty(q, Dim::Size, GIB, &k("vram_gib"), loc)?,
        Some((q, _)) => qty(q, Dim::Size, 1.0, &k("vram"), loc)?,
        None => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &k("vram_gib"),
                "missing; give each GPU's memory as vram_gib = 80 or vram = \"80 GiB\"",
            ));
        }
    };
    let vram_bytes = to_bytes(vram).map_err(|m| loc.error(ErrorKind::Value, &k("vram_gib"), m))?;
    let rate = |q: &Option<Qty>, name: &str, default: Option<f64>| -> Result<f64, ScenarioError> {
        let key = k(name);
        let v = match (q, default) {
            (Some(q), _) => qty(q, Dim::Rate, 1.0, &key, loc)?,
            (None, Some(d)) => d,
            (None, None) => {
                return Err(loc.error(
                    ErrorKind::MissingKey,
                    &key,
                    "missing; the pinned PCIe bandwidth in GB/s (e.g. 50 for PCIe 5.0 x16)",
                ));
            }
        };
        positive(v, &key, "a PCIe bandwidth", loc)
    };
    let h2d = rate(&g.pcie_h2d_gbps, "pcie_h2d_gbps", None)?;
    let d2h = rate(&g.pcie_d2h_gbps, "pcie_d2h_gbps", None)?;
    let duplex = match &g.pcie_duplex_gbps {
        Some(q) => Some(rate(&Some(q.clone()), "pcie_duplex_gbps", None)?),
        None => None,
    };
    let pageable_h2d = rate(
        &g.pageable_h2d_gbps,
        "pageable_h2d_gbps",
        Some(h2d * PcieLink::DEFAULT_PAGEABLE_SHARE),
    )?;
    let pageable_d2h = rate(
        &g.pageable_d2h_gbps,
        "pageable_d2h_gbps",
        Some(d2h * PcieLink::DEFAULT_PAGEABLE_SHARE),
    )?;
    let factor = |v: Option<f64>, name: &str, d: f64| {
        number(
            v.unwrap_or(d),
            0.0,
            f64::INFINITY,
            &k(name),
            "DRAM bytes per byte copied, >= 0",
            loc,
        )
    };
    let link = PcieLink {
        h2d_gbps: h2d,
        d2h_gbps: d2h,
        duplex_gbps: duplex,
        pageable_h2d_gbps: pageable_h2d,
        pageable_d2h_gbps: pageable_d2h,
        h2d_dram_factor: factor(
            g.h2d_dram_factor,
            "h2d_dram_factor",
            PcieLink::DEFAULT_DMA_DRAM_FACTOR,
        )?,
        d2h_dram_factor: factor(
            g.d2h_dram_factor,
            "d2h_dram_factor",
            PcieLink::DEFAULT_DMA_DRAM_FACTOR,
        )?,
        pageable_copy_dram_factor: factor(
            g.pageable_copy_dram_factor,
            "pageable_copy_dram_factor",
            PcieLink::DEFAULT_PAGEABLE_COPY_DRAM_FACTOR,
        )?,
        pageable_h2d_staging: staging(g, "h2d", loc)?,
        pageable_d2h_staging: staging(g, "d2h", loc)?,
        latency_frac: copy_latency_frac(g, rules, loc)?,
    };
    Ok((0..count)
        .map(|i| Gpu {
            name: format!("gpu{i}"),
            vram_bytes,
            link: link.clone(),
        })
        .collect())
}

/// `hardware.gpu.*_latency_frac`: each kind of copy's latency-bound share, the rule
/// set's typical value where absent.
fn copy_latency_frac(
    g: &GpuSpec,
    rules: Rules,
    loc: &Locator,
) -> Result<CopyLatencyFrac, ScenarioError> {
    let typical = rules.copy_latency_frac();
    let share = |v: Option<f64>, name: &str, d: f64| {
        number(
            v.unwrap_or(d),
            0.0,
            1.0,
            &join_key("hardware.gpu", name),
            "the latency-bound share of a copy's standalone time is in 0..=1",
            loc,
        )
    };
    Ok(CopyLatencyFrac {
        pinned_h2d: share(
            g.pinned_h2d_latency_frac,
            "pinned_h2d_latency_frac",
            typical.pinned_h2d,
        )?,
        pinned_d2h: share(
            g.pinned_d2h_latency_frac,
            "pinned_d2h_latency_frac",
            typical.pinned_d2h,
        )?,
        pageable_h2d: share(
            g.pageable_h2d_latency_frac,
            "pageable_h2d_latency_frac",
            typical.pageable_h2d,
        )?,
        pageable_d2h: share(
            g.pageable_d2h_latency_frac,
            "pageable_d2h_latency_frac",
            typical.pageable_d2h,
        )?,
    })
}

/// `hardware.gpu.pageable_staging.<dir>`: None when absent (the one-rate rule).
fn staging(
    g: &GpuSpec,
    dir: &str,
    loc: &Locator,
) -> Result<Option<PageableStaging>, ScenarioError> {
    let spec = g.pageable_staging.as_ref().and_then(|s| match dir {
        "h2d" => s.h2d.as_ref(),
        _ => s.d2h.as_ref(),
    });
    let Some(spec) = spec else {
        return Ok(None);
    };
    let p = format!("hardware.gpu.pageable_staging.{dir}");
    let k = |s: &str| join_key(&p, s);
    let setup_s = match &spec.setup_s {
        Some(q) => number(
            qty(q, Dim::Time, 1.0, &k("setup_s"), loc)?,
            0.0,
            f64::INFINITY,
            &k("setup_s"),
            "the fixed cost per copy call is >= 0 seconds",
            loc,
        )?,
        None => 0.0,
    };
    let memcpy_gbps = match &spec.memcpy_gbps {
        Some(q) => positive(
            qty(q, Dim::Rate, 1.0, &k("memcpy_gbps"), loc)?,
            &k("memcpy_gbps"),
            "the staging memcpy's one-thread rate (GB/s)",
            loc,
        )?,
        None => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &k("memcpy_gbps"),
                "missing; give the driver memcpy's one-thread rate alone, e.g. memcpy_gbps = 8 \
                 (calibrate writes it), or remove the table to keep the one-rate rule",
            ));
        }
    };
    let memcpy_pace = match &spec.memcpy_pace {
        None => MemcpyPace::LatencyBound,
        Some(name) => MemcpyPace::parse(name).ok_or_else(|| {
            loc.error(
                ErrorKind::Value,
                &k("memcpy_pace"),
                format!(
                    "\"{name}\" is not a memcpy pace; use \"latency-bound\" (its loads wait on \
                     DRAM latency) or \"posted\" (its stores do not)"
                ),
            )
        })?,
    };
    Ok(Some(PageableStaging {
        setup_s,
        memcpy_gbps,
        memcpy_pace,
    }))
}

fn arrivals(
    a: &ArrivalsSpec,
    loc: &Locator,
    warnings: &mut Vec<String>,
) -> Result<Arrivals, ScenarioError> {
    let p = "arrivals";
    let k = |s: &str| join_key(p, s);
    let mut unused = |present: bool, key: &str, kind: &str| {
        if present {
            warnings.push(format!(
                "{}: not used when arrivals.kind = {kind:?}",
                join_key(p, key)
            ));
        }
    };
    let (kind, trace_len) = match a.kind.as_str() {
        "closed" => {
            unused(a.rate_per_s.is_some(), "rate_per_s", "closed");
            unused(a.trace.is_some(), "trace", "closed");
            let c = a.concurrency.ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &k("concurrency"),
                    "missing; a closed loop needs concurrency >= 1 (jobs in flight)",
                )
            })?;
            if c == 0 {
                return Err(loc.error(
                    ErrorKind::Value,
                    &k("concurrency"),
                    "0 jobs in flight; a closed loop needs concurrency >= 1",
                ));
            }
            (ArrivalKind::Closed { concurrency: c }, None)
        }
        "poisson" => {
            unused(a.concurrency.is_some(), "concurrency", "poisson");
            unused(a.trace.is_some(), "trace", "poisson");
            let r = a.rate_per_s.ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &k("rate_per_s"),
                    "missing; Poisson arrivals need rate_per_s > 0 (jobs per second)",
                )
            })?;
            let r = positive(
                r,
                &k("rate_per_s"),
                "the arrival rate (jobs per second)",
                loc,
            )?;
            (ArrivalKind::Poisson { rate_per_s: r }, None)
        }
        "trace" => {
            unused(a.concurrency.is_some(), "concurrency", "trace");
            unused(a.rate_per_s.is_some(), "rate_per_s", "trace");
            let key = k("trace");
            let file = a.trace.as_ref().ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &key,
                    "missing; a trace needs trace = \"file.csv\" (a `time_s` column)",
                )
            })?;
            let base: PathBuf = match loc.file_of(&key) {
                Some(f) => f.parent().unwrap_or(Path::new("")).to_path_buf(),
                None => PathBuf::new(),
            };
            let path = base.join(file);
            let times = trace_csv::read(&path).map_err(|m| loc.error(ErrorKind::Trace, &key, m))?;
            let n = times.len() as u64;
            (ArrivalKind::Trace { times_s: times }, Some(n))
        }
        other => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("kind"),
                format!(
                    "{other:?} is not an arrival kind; use \"closed\", \"poisson\" or \"trace\""
                ),
            ));
        }
    };
    let jobs = match (a.jobs, trace_len) {
        (Some(j), Some(n)) if j > n => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("jobs"),
                format!("{j} jobs, but the trace has only {n} arrivals"),
            ));
        }
        (Some(j), _) => j,
        (None, Some(n)) => n,
        (None, None) => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &k("jobs"),
                "missing; the number of jobs to simulate (>= 1, warm-up included)",
            ));
        }
    };
    if jobs == 0 {
        return Err(loc.error(ErrorKind::Value, &k("jobs"), "0 jobs; simulate at least 1"));
    }
    let warmup_jobs = match &a.warmup_jobs {
        None => 0,
        Some(Qty::Num(x)) if *x >= 0.0 && x.fract() == 0.0 && *x < 1.8e19 => *x as u64,
        // One '%' after the number ("5%%" is no share).
        Some(Qty::Text(t))
            if t.trim()
                .strip_suffix('%')
                .and_then(|n| n.trim().parse::<f64>().ok())
                .is_some_and(|p| (0.0..100.0).contains(&p)) =>
        {
            let pct: f64 = (t.trim().strip_suffix('%').unwrap_or("0").trim())
                .parse()
                .unwrap_or(0.0);
            (jobs as f64 * pct / 100.0).floor() as u64
        }
        Some(q) => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("warmup_jobs"),
                format!("{} is not allowed; give a whole number of jobs >= 0 or a share of jobs such as \"10%\" (below 100%)", q.shown()),
            ));
        }
    };
    if warmup_jobs >= jobs {
        return Err(loc.error(
            ErrorKind::Value,
            &k("warmup_jobs"),
            format!("{warmup_jobs} warm-up jobs leave none of the {jobs} jobs for statistics; warmup_jobs must be < jobs"),
        ));
    }
    Ok(Arrivals {
        kind,
        jobs,
        warmup_jobs,
    })
}

fn instrumentation(
    s: &InstrumentationSpec,
    w: &Workload,
    loc: &Locator,
) -> Result<Instrumentation, ScenarioError> {
    let mut markers: Vec<Marker> = Vec::new();
    for (i, m) in s.markers.iter().enumerate() {
        let p = join_index("instrumentation.markers", i);
        if markers.iter().any(|x| x.name == m.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "marker {:?} is declared twice; marker names are unique",
                    m.name
                ),
            ));
        }
        let (stage, edge) = stage_edge(&m.at, &join_key(&p, "at"), w, loc)?;
        markers.push(Marker {
            name: m.name.clone(),
            stage,
            edge,
        });
    }
    let mut spans: Vec<Span> = Vec::new();
    for (i, sp) in s.spans.iter().enumerate() {
        let p = join_index("instrumentation.spans", i);
        if spans.iter().any(|x| x.name == sp.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "span {:?} is declared twice; span names are unique",
                    sp.name
                ),
            ));
        }
        let find = |name: &str, field: &str| {
            markers.iter().position(|m| m.name == name).ok_or_else(|| {
                loc.error(
                    ErrorKind::Reference,
                    &join_key(&p, field),
                    format!(
                        "no marker named {name:?}; markers: {}",
                        if markers.is_empty() {
                            "(none declared)".to_string()
                        } else {
                            markers
                                .iter()
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                )
            })
        };
        let from = find(&sp.from, "from")?;
        let to = find(&sp.to, "to")?;
        check_span_order(
            &markers[from],
            &markers[to],
            &sp.name,
            &join_key(&p, "to"),
            w,
            loc,
        )?;
        spans.push(Span {
            name: sp.name.clone(),
            from,
            to,
            gpu_busy: sp.gpu_busy,
        });
    }
    let mut timers: Vec<Timer> = Vec::new();
    for (i, t) in s.timers.iter().enumerate() {
        let p = join_index("instrumentation.timers", i);
        if timers.iter().any(|x| x.name == t.name) {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "name"),
                format!(
                    "timer {:?} is declared twice; timer names are unique",
                    t.name
                ),
            ));
        }
        let from = stage_edge(&t.from, &join_key(&p, "from"), w, loc)?;
        let to = stage_edge(&t.to, &join_key(&p, "to"), w, loc)?;
        if w.stages[from.0].per_partition != w.stages[to.0].per_partition {
            return Err(loc.error(
                ErrorKind::Value,
                &join_key(&p, "to"),
                format!(
                    "timer {:?} runs from a {} stage to a {} stage; both ends must be per partition or both per job",
                    t.name,
                    scope(w, from.0),
                    scope(w, to.0)
                ),
            ));
        }
        timers.push(Timer {
            name: t.name.clone(),
            from,
            to,
        });
    }
    let smi_sample_period_s = s
        .smi_sample_period_s
        .map(|p| {
            positive(
                p,
                "instrumentation.smi_sample_period_s",
                "the nvidia-smi sample period in seconds",
                loc,
            )
        })
        .transpose()?;
    Ok(Instrumentation {
        markers,
        spans,
        timers,
        timing_prefix: s.timing_prefix.clone().unwrap_or_else(|| "TIMING".into()),
        smi_sample_period_s,
    })
}

/// A span must run forward: `to`'s marker on a later edge of the same stage, or on a
/// stage that (transitively) runs after `from`'s. A swapped pair was accepted and
/// bracketed the gaps between spans instead of the spans.
fn check_span_order(
    from: &Marker,
    to: &Marker,
    span: &str,
    key: &str,
    w: &Workload,
    loc: &Locator,
) -> Result<(), ScenarioError> {
    let rank = |e: Edge| match e {
        Edge::Ready => 0,
        Edge::Start => 1,
        Edge::End => 2,
    };
    let forward = if from.stage == to.stage {
        rank(from.edge) <= rank(to.edge)
    } else {
        let after: Vec<Vec<usize>> = w.stages.iter().map(|s| s.after.clone()).collect();
        super::dag::Reach::new(&after).runs_after(from.stage, to.stage)
    };
    if forward {
        return Ok(());
    }
    let at = |m: &Marker| format!("{}:{}", w.stages[m.stage].name, edge_name(m.edge));
    Err(loc.error(
        ErrorKind::Value,
        key,
        format!(
            "span {span:?} runs from marker {:?} ({}) to marker {:?} ({}), which does not come after it; `to` must be a later edge of the same stage or on a stage that runs after `from`'s (are from and to swapped?)",
            from.name,
            at(from),
            to.name,
            at(to)
        ),
    ))
}

fn edge_name(e: Edge) -> &'static str {
    match e {
        Edge::Ready => "ready",
        Edge::Start => "start",
        Edge::End => "end",
    }
}

fn scope(w: &Workload, stage: usize) -> &'static str {
    if w.stages[stage].per_partition {
        "per-partition"
    } else {
        "per-job"
    }
}

/// Parses `"stage:ready|start|end"` into a stage index and an edge.
fn stage_edge(
    text: &str,
    key: &str,
    w: &Workload,
    loc: &Locator,
) -> Result<(usize, Edge), ScenarioError> {
    let Some((stage, edge)) = text.rsplit_once(':') else {
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!("{text:?}: write \"stage:ready\", \"stage:start\" or \"stage:end\""),
        ));
    };
    let edge = match edge.trim() {
        "ready" => Edge::Ready,
        "start" => Edge::Start,
        "end" => Edge::End,
        other => {
            return Err(loc.error(
                ErrorKind::Value,
                key,
                format!("{other:?} is not a stage boundary; use ready, start or end"),
            ));
        }
    };
    let stage = w
        .stages
        .iter()
        .position(|s| s.name == stage.trim())
        .ok_or_else(|| {
            loc.error(
                ErrorKind::Reference,
                key,
                format!("no stage named {stage:?}; stages: {}", stage_names(w)),
            )
        })?;
    Ok((stage, edge))
}

/// Stage names, comma separated, for messages.
pub fn stage_names(w: &Workload) -> String {
    w.stages
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
