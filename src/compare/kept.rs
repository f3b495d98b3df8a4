//! What of the host model a scenario keeps on every host: a host profile sets cores,
//! clocks, RAM, DRAM bandwidth, GPUs and links, but the DRAM latency curve, the
//! per-stream efficiency loss, the DRAM sharing rules, the DMA factors, pageable staging
//! and pool sharing stay the scenario's. Two scenarios that state these differently give
//! one host two answers; the table says so with these lines.

use crate::model::{Model, PoolSharing};

/// One line per part of the host model the scenario keeps, in words and numbers.
pub fn kept_host_model(model: &Model) -> Vec<String> {
    let dram = &model.hardware.dram;
    let mut kept = Vec::new();
    let points = dram.latency.points();
    let (lo, hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    let top_load = points.last().map_or(0.0, |p| p.0);
    let axis = if dram.latency.by_offered_load() {
        "offered"
    } else {
        "achieved"
    };
    kept.push(if points.len() < 2 {
        "DRAM latency: flat (no loaded-latency curve)".to_string()
    } else {
        format!(
            "DRAM latency: {lo:.0} to {hi:.0} ns over 0 to {:.0}% {axis} load ({} points)",
            top_load * 100.0,
            points.len()
        )
    });
    kept.push(match dram.efficiency_loss_per_stream {
        l if l > 0.0 => format!(
            "DRAM efficiency: {:.1}% of capacity lost per extra stream (at 30 streams {:.0}% \
             of it is usable)",
            l * 100.0,
            dram.effective_capacity_gbps(30) / dram.capacity_gbps * 100.0
        ),
        _ => "DRAM efficiency: no capacity lost as streams interleave".to_string(),
    });
    let s = &dram.sharing;
    kept.push(format!(
        "DRAM sharing: pinned H2D DMA {}, D2H DMA {}, {}",
        s.dma_h2d.name(),
        s.dma_d2h.name(),
        match s.lines_in_flight_per_thread {
            Some(l) => format!("{l:.0} cache lines in flight per CPU thread"),
            None => "no per-thread bound".into(),
        }
    ));
    if let Some(g) = model.hardware.gpus.first() {
        let l = &g.link;
        let staged = match (&l.pageable_h2d_staging, &l.pageable_d2h_staging) {
            (Some(_), Some(_)) => "staged through CPU memcpy both ways",
            (Some(_), None) | (None, Some(_)) => "staged through CPU memcpy one way",
            (None, None) => "at one rate each way",
        };
        kept.push(format!(
            "DMA: {:.2} (H2D) and {:.2} (D2H) DRAM bytes per byte moved; pageable copies {staged}, \
             +{:.1} DRAM bytes per byte of memcpy",
            l.h2d_dram_factor, l.d2h_dram_factor, l.pageable_copy_dram_factor
        ));
    }
    if let Some(p) = model.hardware.pools.iter().find(|p| p.name == "cpu") {
        kept.push(format!(
            "CPU pool: {}",
            match p.sharing {
                PoolSharing::PerThread => "every runnable thread gets an equal share",
                PoolSharing::ByActivity => "max-min by stage (a one-thread stage keeps its thread)",
            }
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn kept(name: &str) -> Vec<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(name);
        kept_host_model(&crate::scenario::load(&path, &[]).unwrap().model)
    }

    #[test]
    fn two_c2_scenarios_keep_different_host_models_and_say_how() {
        let (cuzk, h200) = (kept("c2-32g-cuzk.toml"), kept("c2-32g-h200.toml"));
        assert_eq!(cuzk.len(), h200.len());
        assert_ne!(cuzk, h200);
        // The reference box's estimate loses capacity per stream; the H200 calibration
        // measured none.
        assert!(cuzk[1].contains("lost per extra stream"), "{cuzk:?}");
        assert!(h200[1].contains("no capacity lost"), "{h200:?}");
        assert!(h200[0].contains("offered load"), "{h200:?}");
    }
}
