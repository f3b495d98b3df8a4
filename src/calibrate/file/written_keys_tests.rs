//! What `bwsim calibrate` writes is what `--calibration` takes: every `[hardware]` key of
//! a file written with every optional table is one of the scenario layer's
//! [`HOST_KEYS`], every listed key is written, and every `[params]` name is a measured one.

use super::CalibrationFile;
use super::tables::{CpuLoadTable, DramTable, GpuTable, HardwareTable, PolicyTable};
use crate::calibrate::fit::cpu::CpuTable;
use crate::calibrate::fit::cpu_load::NeighbourCurves;
use crate::calibrate::fit::staging::{StagingDirTable, StagingTable};
use crate::scenario::host_keys::{HOST_KEYS, is_measured_param};
use std::collections::BTreeMap;
use toml::{Table, Value};

fn bundled() -> CalibrationFile {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/calibration/h200-host.toml"
    ))
    .unwrap();
    CalibrationFile::parse(&text).unwrap()
}

/// The bundled file with every optional table and key written. The patterns below name
/// every field (no `..`): a field added to the tables fails to compile here until it is
/// written too, and then fails the test until [`HOST_KEYS`] lists it.
fn with_every_key() -> CalibrationFile {
    let mut file = bundled();
    let HardwareTable {
        cpu_cores: _,
        cpu,
        dram,
        gpu,
    } = &mut file.hardware;
    *cpu = Some(CpuTable {
        physical_cores: 8,
        threads_per_core: 2,
        smt_yield: 1.2,
        per_core_throughput: vec![(1.0, 1.0), (8.0, 0.9)],
    });
    let DramTable {
        capacity_gbps: _,
        latency_curve: _,
        latency_load,
        lines_in_flight_per_thread,
        dma_h2d,
        dma_d2h,
    } = dram;
    *latency_load = Some("offered".into());
    *lines_in_flight_per_thread = Some(24.0);
    let policy = |p: &str| Some(PolicyTable { policy: p.into() });
    (*dma_h2d, *dma_d2h) = (policy("proportional"), policy("priority"));
    let GpuTable {
        count: _,
        vram_gib: _,
        pcie_h2d_gbps: _,
        pcie_d2h_gbps: _,
        pcie_duplex_gbps,
        pageable_h2d_gbps,
        pageable_d2h_gbps,
        h2d_dram_factor,
        d2h_dram_factor,
        pageable_copy_dram_factor,
        pageable_staging,
        pinned_h2d_latency_frac,
        pinned_d2h_latency_frac,
        pageable_h2d_latency_frac,
        pageable_d2h_latency_frac,
        cpu_load,
    } = gpu.as_mut().unwrap();
    for v in [
        pcie_duplex_gbps,
        pageable_h2d_gbps,
        pageable_d2h_gbps,
        h2d_dram_factor,
        d2h_dram_factor,
        pageable_copy_dram_factor,
        pinned_h2d_latency_frac,
        pinned_d2h_latency_frac,
        pageable_h2d_latency_frac,
        pageable_d2h_latency_frac,
    ] {
        *v = Some(v.unwrap_or(0.5));
    }
    let dir = || {
        Some(StagingDirTable {
            setup_s: 0.001,
            memcpy_gbps: 7.0,
            memcpy_pace: "latency-bound".into(),
            memcpy_latency_exponent: Some(1.5),
            memcpy_beside_streams: Some(vec![(0.25, 1.0), (0.5, 0.9)]),
        })
    };
    *pageable_staging = Some(StagingTable {
        h2d: dir(),
        d2h: dir(),
    });
    let curves = || NeighbourCurves {
        busy_per_cpu: vec![0.0, 1.0],
        kernels: BTreeMap::from([("msm:20".to_string(), vec![1.0, 1.5])]),
    };
    *cpu_load = Some(CpuLoadTable {
        busy_per_cpu: vec![0.0, 1.0],
        kernels: BTreeMap::from([("msm:20".to_string(), vec![1.0, 1.4])]),
        threads: BTreeMap::from([("msm:20".to_string(), 1.0)]),
        next_to_streaming: Some(curves()),
        next_to_chasing: Some(curves()),
    });
    file
}

/// Every dotted path `[hardware]` holds down to [`HOST_KEYS`]' keys; a path the list
/// does not reach is returned as unlisted.
fn walk(t: &Table, prefix: &str, written: &mut Vec<String>, unlisted: &mut Vec<String>) {
    for (k, v) in t {
        let path = format!("{prefix}.{k}");
        let listed = HOST_KEYS.iter().find(|h| h.path == path);
        match (listed, v) {
            (Some(h), Value::Table(sub)) if h.table => {
                written.push(path.clone());
                walk(sub, &path, written, unlisted);
            }
            (Some(_), _) => written.push(path),
            (None, _) => unlisted.push(path),
        }
    }
}

#[test]
fn every_key_calibrate_writes_is_a_host_key_and_every_host_key_is_written() {
    let text = with_every_key().render().unwrap();
    let doc: Table = text.parse().unwrap();
    let (mut written, mut unlisted) = (Vec::new(), Vec::new());
    walk(
        doc["hardware"].as_table().unwrap(),
        "hardware",
        &mut written,
        &mut unlisted,
    );
    assert!(
        unlisted.is_empty(),
        "calibrate writes {unlisted:?}, which scenario::host_keys::HOST_KEYS does not list: \
         --calibration would leave them to whatever the scenario includes"
    );
    let never: Vec<&str> = (HOST_KEYS.iter())
        .map(|h| h.path)
        .filter(|p| !written.iter().any(|w| w == p))
        .collect();
    assert!(
        never.is_empty(),
        "HOST_KEYS lists {never:?}, which calibrate never writes"
    );
    let params = doc["params"].as_table().unwrap();
    assert!(params.len() > 20, "{params:?}");
    for name in params.keys() {
        assert!(
            is_measured_param(name),
            "calibrate writes params.{name}, not a measured name"
        );
    }
}
