//! Text to tables: the shape of every table and the DRAM capacity; the values of
//! `[hardware.gpu]` are the scenario layer's to check (see the module above).

use super::CalibrationFile;
use crate::calibrate::error::{FileError, Result};

impl CalibrationFile {
    /// Reads a file's text into its tables: the shape of every table, and a DRAM capacity
    /// that is a finite number > 0 (named here, before any host is built from the file).
    /// The values of `[hardware.gpu]` are checked where they become the host, by the
    /// scenario layer (see `validate::load_calib`).
    pub fn parse(text: &str) -> Result<Self> {
        let de = toml::Deserializer::parse(text).map_err(FileError::NotToml)?;
        let file: CalibrationFile =
            serde_path_to_error::deserialize(de).map_err(|e| FileError::Shape {
                at: e.path().to_string(),
                error: e.into_inner(),
            })?;
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<()> {
        let capacity = self.hardware.dram.capacity_gbps;
        if !(capacity.is_finite() && capacity > 0.0) {
            return Err(FileError::Capacity(capacity).into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::file::CpuLoadTable;
    use crate::calibrate::fit::cpu_load::NeighbourCurves;
    use crate::model::{Hardware, PcieLink};
    use crate::scenario::ScenarioError;
    use std::collections::BTreeMap;

    fn bundled() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/calibration/h200-host.toml"
        ))
        .unwrap()
    }

    /// The host of a scenario run with `--calibration` on `text`.
    fn read_as_host(text: &str) -> Result<Hardware, ScenarioError> {
        let dir = tempfile::tempdir().unwrap();
        let cal = dir.path().join("cal.toml");
        std::fs::write(&cal, text).unwrap();
        let scenario = "[[workload.stages]]\nname = \"probe\"\nduration_s = 1\n\
            [arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 1\n";
        crate::scenario::load_str_with_calibration(scenario, &dir.path().join("s.toml"), &cal, &[])
            .map(|loaded| loaded.model.hardware)
    }

    fn link_of(text: &str) -> PcieLink {
        read_as_host(text).unwrap().gpus[0].link.clone()
    }

    #[test]
    fn a_written_file_reads_back_as_written() {
        let text = bundled();
        let file = CalibrationFile::parse(&text).unwrap();
        // Rendering what was read gives every line back. TOML tables are unordered, so
        // [params] reads back sorted by name; everything else in the order written.
        let again = file.render().unwrap();
        let sorted = |s: &str| {
            let mut v: Vec<String> = s.lines().map(str::to_string).collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&again), sorted(&text));
        let params_at = |s: &str| s.find("[params]").unwrap();
        assert_eq!(again[..params_at(&again)], text[..params_at(&text)]);
        assert_eq!(CalibrationFile::parse(&again).unwrap(), file);
        let g = file.hardware.gpu.as_ref().unwrap();
        // Written with every mechanism calibrate measured: staging, latency shares, the
        // DRAM rules; the host a scenario reads from it has them.
        let link = link_of(&text);
        assert_eq!(link.pageable_copy_dram_factor, 2.0);
        assert!(link.pageable_h2d_staging.is_some());
        assert!(g.pinned_h2d_latency_frac.is_some_and(|f| f > 0.0));
        assert_eq!(
            link.latency_frac.pinned_h2d,
            g.pinned_h2d_latency_frac.unwrap()
        );
        let d = &file.hardware.dram;
        assert_eq!(d.latency_load.as_deref(), Some("offered"));
        assert!(d.lines_in_flight_per_thread.is_some_and(|l| l > 0.0));
        assert_eq!(d.dma_h2d.as_ref().unwrap().policy, "proportional");
        assert!(
            file.params
                .0
                .iter()
                .any(|p| p.name == "dram_idle_latency_ns")
        );
    }

    #[test]
    fn staging_tables_round_trip_and_bad_ones_name_the_key() {
        use crate::calibrate::fit::staging::{StagingDirTable, StagingTable};
        let text = bundled();
        let mut file = CalibrationFile::parse(&text).unwrap();
        let g = file.hardware.gpu.as_mut().unwrap();
        g.pageable_staging = Some(StagingTable {
            h2d: Some(StagingDirTable {
                setup_s: 0.002,
                memcpy_gbps: 7.5,
                memcpy_pace: "latency-bound".into(),
                memcpy_latency_exponent: Some(2.5),
                memcpy_beside_streams: None,
            }),
            d2h: Some(StagingDirTable {
                setup_s: 0.0003,
                memcpy_gbps: 16.0,
                memcpy_pace: "beside-streams".into(),
                memcpy_latency_exponent: None,
                memcpy_beside_streams: Some(vec![(0.25, 0.95), (0.5, 0.84), (0.75, 0.8)]),
            }),
        });
        let again = file.render().unwrap();
        assert!(
            again.contains("[hardware.gpu.pageable_staging.h2d]\n"),
            "{again}"
        );
        let back = CalibrationFile::parse(&again).unwrap();
        assert_eq!(back, file);
        let l = link_of(&again);
        let st = l.pageable_h2d_staging.unwrap();
        assert_eq!((st.setup_s, st.memcpy_gbps), (0.002, 7.5));
        assert_eq!(st.latency_exponent, 2.5);
        let d2h = l.pageable_d2h_staging.unwrap();
        assert_eq!(d2h.memcpy_pace, crate::model::MemcpyPace::BesideStreams);
        assert_eq!(
            d2h.beside_streams.map(|c| c.points().to_vec()),
            Some(vec![(0.25, 0.95), (0.5, 0.84), (0.75, 0.8)])
        );
        // The curve without its pace, the pace without its curve, and a ratio above 1.
        let curve = "memcpy_beside_streams = [[0.250000, 0.950000], [0.500000, 0.840000], \
                     [0.750000, 0.800000]]";
        assert!(again.contains(curve), "{again}");
        for (bad, says) in [
            (
                again.replace(
                    "memcpy_pace = \"beside-streams\"",
                    "memcpy_pace = \"posted\"",
                ),
                "read only with memcpy_pace = \"beside-streams\"",
            ),
            (again.replace(curve, ""), "missing"),
            (
                again.replace(curve, "memcpy_beside_streams = [[0.5, 1.2]]"),
                "each ratio in (0, 1]",
            ),
        ] {
            let e = read_as_host(&bad).unwrap_err().to_string();
            assert!(
                e.contains("hardware.gpu.pageable_staging.d2h.memcpy_beside_streams")
                    && e.contains(says),
                "{e}"
            );
        }
        let bad = again.replace("memcpy_pace = \"latency-bound\"", "memcpy_pace = \"fast\"");
        let e = read_as_host(&bad).unwrap_err().to_string();
        assert!(
            e.contains("hardware.gpu.pageable_staging.h2d.memcpy_pace") && e.contains("posted"),
            "{e}"
        );
        for (value, says) in [("-0.5", "out of range"), ("9", "out of range")] {
            let bad = again.replace(
                "memcpy_latency_exponent = 2.5",
                &format!("memcpy_latency_exponent = {value}"),
            );
            let e = read_as_host(&bad).unwrap_err().to_string();
            assert!(
                e.contains("hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent")
                    && e.contains(says)
                    && e.contains("Little's law"),
                "{e}"
            );
        }
        let posted = again.replace(
            "memcpy_pace = \"latency-bound\"",
            "memcpy_pace = \"posted\"",
        );
        let e = read_as_host(&posted).unwrap_err().to_string();
        assert!(
            e.contains("memcpy_latency_exponent") && e.contains("posted"),
            "{e}"
        );
    }

    #[test]
    fn cpu_load_tables_round_trip_and_bad_ones_name_the_key() {
        let text = bundled();
        let mut file = CalibrationFile::parse(&text).unwrap();
        let table = CpuLoadTable {
            busy_per_cpu: vec![0.0, 0.5, 1.0],
            kernels: BTreeMap::from([
                ("msm:20".to_string(), vec![1.0, 1.3, 2.1]),
                ("ntt:22".to_string(), vec![1.0, 1.0, 1.1]),
            ]),
            threads: BTreeMap::from([("msm:20".to_string(), 4.25)]),
            next_to_streaming: None,
            next_to_chasing: Some(NeighbourCurves {
                busy_per_cpu: vec![0.0, 0.25, 1.0],
                kernels: BTreeMap::from([("msm:20".to_string(), vec![1.0, 1.05, 1.9])]),
            }),
        };
        file.hardware.gpu.as_mut().unwrap().cpu_load = Some(table.clone());
        let again = file.render().unwrap();
        assert!(again.contains("[hardware.gpu.cpu_load]\n"), "{again}");
        assert!(
            again.contains("[hardware.gpu.cpu_load.next_to_chasing]\n")
                && !again.contains("next_to_streaming"),
            "{again}"
        );
        assert!(
            again.contains("\"msm:20\" = [1.00000, 1.30000, 2.10000]"),
            "{again}"
        );
        assert!(
            again.contains("threads = { \"msm:20\" = 4.25000 }"),
            "{again}"
        );
        let read = CalibrationFile::parse(&again).unwrap();
        assert_eq!(read.hardware.gpu.unwrap().cpu_load, Some(table));
        let negative = again.replace("\"msm:20\" = 4.25000", "\"msm:20\" = -1");
        let e = read_as_host(&negative).unwrap_err().to_string();
        assert!(
            e.contains("hardware.gpu.cpu_load.threads") && e.contains("msm:20"),
            "{e}"
        );
        let bad = again.replace("[1.00000, 1.30000, 2.10000]", "[1.0, 1.3]");
        let e = read_as_host(&bad).unwrap_err().to_string();
        assert!(
            e.contains("hardware.gpu.cpu_load.kernels") && e.contains("msm:20"),
            "{e}"
        );
    }

    /// Optional `[hardware.gpu]` keys left out of a calibration take the scenario
    /// layer's defaults: the pageable rates a share of the pinned ones, the DMA factors 1,
    /// the pageable memcpy's 2, the rule set's typical latency shares.
    #[test]
    fn left_out_gpu_keys_take_the_scenario_defaults() {
        let text = bundled();
        let (head, rest) = text.split_once("[hardware.gpu]\n").unwrap();
        let end = rest.find("\n[").unwrap();
        let optional = [
            "pageable_h2d_gbps",
            "pageable_d2h_gbps",
            "h2d_dram_factor",
            "d2h_dram_factor",
            "pageable_copy_dram_factor",
            "pinned_h2d_latency_frac",
            "pageable_h2d_latency_frac",
            "pageable_d2h_latency_frac",
        ];
        let kept: Vec<&str> = (rest[..end].lines())
            .filter(|l| !optional.iter().any(|k| l.starts_with(&format!("{k} = "))))
            .collect();
        let trimmed = format!("{head}[hardware.gpu]\n{}{}", kept.join("\n"), &rest[end..]);
        let g = CalibrationFile::parse(&trimmed)
            .unwrap()
            .hardware
            .gpu
            .unwrap();
        assert_eq!((g.pageable_h2d_gbps, g.h2d_dram_factor), (None, None));
        let l = link_of(&trimmed);
        let share = PcieLink::DEFAULT_PAGEABLE_SHARE;
        assert_eq!(l.pageable_h2d_gbps, g.pcie_h2d_gbps * share);
        assert_eq!(l.pageable_d2h_gbps, g.pcie_d2h_gbps * share);
        assert_eq!((l.h2d_dram_factor, l.d2h_dram_factor), (1.0, 1.0));
        assert_eq!(l.pageable_copy_dram_factor, 2.0);
        let typical = crate::scenario::rules::Rules::default().copy_latency_frac();
        assert_eq!(l.latency_frac.pinned_h2d, typical.pinned_h2d);
        assert_eq!(l.latency_frac.pageable_h2d, typical.pageable_h2d);
        assert_eq!(
            l.latency_frac.pinned_d2h,
            g.pinned_d2h_latency_frac.unwrap()
        );
    }

    #[test]
    fn bad_files_name_the_key() {
        let e = CalibrationFile::parse("x = 1").unwrap_err().to_string();
        assert!(e.contains("hardware"), "{e}");
        let e = CalibrationFile::parse(
            "[hardware]\ncpu_cores = 4\n[hardware.dram]\ncapacity_gbps = 10.0\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(CalibrationFile::parse("not toml [").is_err());
    }
}
