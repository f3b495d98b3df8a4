//! `[hardware.gpu]`: the GPUs, their memory and PCIe link (pinned and pageable rates,
//! DRAM bytes per byte copied, pageable staging, each kind of copy's latency share).

use crate::model::{
    CopyLatencyFrac, Gpu, MemcpyPace, PageableStaging, PcieLink, StreamNeighbourCurve,
};

use crate::scenario::error::{ErrorKind, Locator, ScenarioError, join_key};
use crate::scenario::rules::Rules;
use crate::scenario::schema::{GpuSpec, StagingDirSpec};
use crate::scenario::units::{Dim, GIB, Qty, to_bytes};
use crate::scenario::values::{number, one_of, positive, qty};

pub(super) fn gpus(g: &GpuSpec, rules: Rules, loc: &Locator) -> Result<Vec<Gpu>, ScenarioError> {
    let p = "hardware.gpu";
    let count = g.count.unwrap_or(1);
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > crate::scenario::limits::MAX_GPUS {
        return Err(loc.error(
            ErrorKind::Value,
            &join_key(p, "count"),
            format!(
                "{count} GPUs; a host has at most {} here",
                crate::scenario::limits::MAX_GPUS
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
                     DRAM latency), \"posted\" (its stores do not) or \"beside-streams\" (its \
                     streaming neighbours pace it, memcpy_beside_streams)"
                ),
            )
        })?,
    };
    let latency_exponent = match spec.memcpy_latency_exponent {
        Some(e) => number(
            e,
            0.0,
            PageableStaging::MAX_LATENCY_EXPONENT,
            &k("memcpy_latency_exponent"),
            &format!(
                "a latency-bound memcpy runs at memcpy_gbps x (L(0)/L)^exponent, from 0 \
                 (latency does not slow it) through 1 (Little's law, the default) to {}",
                PageableStaging::MAX_LATENCY_EXPONENT
            ),
            loc,
        )?,
        None => 1.0,
    };
    if latency_exponent != 1.0 && memcpy_pace != MemcpyPace::LatencyBound {
        return Err(loc.error(
            ErrorKind::Value,
            &k("memcpy_latency_exponent"),
            format!(
                "is set on a \"{}\" memcpy, which latency does not slow; remove it or use \
                 memcpy_pace = \"latency-bound\"",
                memcpy_pace.name()
            ),
        ));
    }
    let beside_streams = beside_streams(spec, memcpy_pace, &k("memcpy_beside_streams"), loc)?;
    Ok(Some(PageableStaging {
        setup_s,
        memcpy_gbps,
        memcpy_pace,
        latency_exponent,
        beside_streams,
    }))
}

/// The `memcpy_beside_streams` curve: required by, and only read with,
/// memcpy_pace = "beside-streams".
fn beside_streams(
    spec: &StagingDirSpec,
    pace: MemcpyPace,
    key: &str,
    loc: &Locator,
) -> Result<Option<StreamNeighbourCurve>, ScenarioError> {
    let allowed = format!(
        "[[threads per CPU, rate / alone], ...]: threads per CPU streaming beside the memcpy \
         rising above 0, each ratio in (0, 1], at most {} points (calibrate writes it)",
        StreamNeighbourCurve::MAX_POINTS
    );
    match (&spec.memcpy_beside_streams, pace) {
        (None, MemcpyPace::BesideStreams) => Err(loc.error(
            ErrorKind::MissingKey,
            key,
            format!("missing; memcpy_pace = \"beside-streams\" needs its curve, {allowed}"),
        )),
        (None, _) => Ok(None),
        (Some(pts), MemcpyPace::BesideStreams) => StreamNeighbourCurve::new(pts)
            .map(Some)
            .ok_or_else(|| loc.error(ErrorKind::Value, key, format!("{pts:?} is not {allowed}"))),
        (Some(_), other) => Err(loc.error(
            ErrorKind::Value,
            key,
            format!(
                "is set on a \"{}\" memcpy; it is read only with memcpy_pace = \"beside-streams\"",
                other.name()
            ),
        )),
    }
}
