//! Several GPUs on one host: pinned PCIe copies on each GPU alone and on all GPUs at
//! once (H2D, D2H, both), and pinned DMA from every GPU at once next to k copy streams.
//! This is where the host's DRAM meets 2-4 x 55 GB/s of DMA, and where the DMA sharing
//! rules fitted on one GPU are put to the test.
//!
//! Each GPU gets its own harness process that sees only that GPU (`CUDA_VISIBLE_DEVICES`),
//! as a prover's per-GPU workers do. "At once" means every harness is told to start and
//! the results are read after all have announced their start, so the copy loops overlap
//! for all but a few milliseconds of their seconds-long runs.

use std::borrow::BorrowMut;

use serde_json::Value;

use super::harness::{GpuProbe, Skip, harness_cpus, num};
use super::plan::{Plan, bar};
use super::stream::{Kernel, Workers};
use super::sys::visible_device;
use crate::calibrate::error::Result;
use crate::calibrate::measurements::{Measurements, MultiDmaStreamPoint, MultiPciePoint};

/// One probe per GPU: `first` (GPU 0, the calibration's own harness) and siblings for
/// GPUs 1.. of `first.devices`. A sibling that cannot start ends the list there, with
/// the reason in `skipped`.
pub fn siblings(first: &GpuProbe, skipped: &mut Vec<String>) -> Vec<GpuProbe> {
    let n = first.devices;
    let mut out = Vec::new();
    for i in 1..n {
        let started = visible_device(i, n)
            .map_err(Skip)
            .and_then(|d| first.sibling(&d, &harness_cpus()));
        match started {
            Ok(p) => out.push(p),
            Err(Skip(why)) => {
                skipped.push(format!(
                    "multi-GPU probes: GPU {i} of {n} did not start ({why}); using {} GPU(s)",
                    1 + out.len()
                ));
                break;
            }
        }
    }
    out
}

/// Commands started on several probes by [`begin_all`], one result per probe.
pub struct Begun(Vec<Result<()>>);

/// Sends `cmd` to every probe and waits until each has announced its start; the caller
/// may measure meanwhile, then calls [`end_all`].
pub fn begin_all<P: BorrowMut<GpuProbe>>(probes: &mut [P], cmd: &str) -> Begun {
    Begun(
        probes
            .iter_mut()
            .map(|p| p.borrow_mut().begin(cmd))
            .collect(),
    )
}

/// Collects every reply of a [`begin_all`], in order. Every probe is drained even when
/// one fails, so none is left mid-command.
pub fn end_all<P: BorrowMut<GpuProbe>>(
    probes: &mut [P],
    begun: Begun,
    cmd: &str,
) -> Result<Vec<Value>> {
    let mut replies = Vec::with_capacity(probes.len());
    let mut first_err = None;
    for (p, b) in probes.iter_mut().zip(begun.0) {
        match b.and_then(|()| p.borrow_mut().end(cmd)) {
            Ok(v) => replies.push(v),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(replies),
    }
}

/// Runs `cmd` on every probe at once and returns their replies in order.
pub fn all_at_once<P: BorrowMut<GpuProbe>>(probes: &mut [P], cmd: &str) -> Result<Vec<Value>> {
    let begun = begin_all(probes, cmd);
    end_all(probes, begun, cmd)
}

/// The copy command of one pinned loop.
fn pcie_cmd(dir: &str, secs: f64, mib: u64) -> String {
    format!("pcie {dir} 1 {secs} {mib}")
}

fn rates(replies: &[Value]) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut h = Vec::new();
    let mut d = Vec::new();
    for v in replies {
        h.push(num(v, "h2d_gbps")?);
        d.push(num(v, "d2h_gbps")?);
    }
    Ok((h, d))
}

/// Runs the multi-GPU probes when the host has two or more GPUs; records why not
/// otherwise. `first` is GPU 0's probe.
pub fn multi_gpu_probes(
    m: &mut Measurements,
    plan: &Plan,
    first: &mut GpuProbe,
    workers: &Workers,
) -> Result<()> {
    if first.devices < 2 {
        m.skipped.push(format!(
            "multi-GPU probes: this host shows {} GPU(s); they need 2 or more",
            first.devices
        ));
        return Ok(());
    }
    let mut others = siblings(first, &mut m.skipped);
    if others.is_empty() {
        return Ok(());
    }
    let mut all: Vec<&mut GpuProbe> = std::iter::once(first).chain(others.iter_mut()).collect();
    let n = all.len();
    let (secs, mib) = (plan.pcie_secs, plan.pcie_mib);
    let dirs = ["h2d", "d2h", "both"];
    let pb = bar((dirs.len() * (n + 1)) as u64, "multi-gpu pcie");
    for dir in dirs {
        let cmd = pcie_cmd(dir, secs, mib);
        for (g, p) in all.iter_mut().enumerate() {
            pb.set_message(format!("{dir} GPU {g} alone"));
            let v = p.request(&cmd)?;
            let (h, d) = rates(std::slice::from_ref(&v))?;
            m.multi_pcie.push(MultiPciePoint {
                dir: dir.into(),
                mib,
                first_gpu: g,
                gpus: 1,
                h2d_gbps: h,
                d2h_gbps: d,
            });
            pb.inc(1);
        }
        pb.set_message(format!("{dir} {n} GPUs at once"));
        let replies = all_at_once(&mut all, &cmd)?;
        let (h, d) = rates(&replies)?;
        m.multi_pcie.push(MultiPciePoint {
            dir: dir.into(),
            mib,
            first_gpu: 0,
            gpus: n,
            h2d_gbps: h,
            d2h_gbps: d,
        });
        pb.inc(1);
    }
    pb.finish_with_message("done");

    let pb = bar((2 * plan.dma_threads.len()) as u64, "multi-gpu dma+streams");
    for dir in ["h2d", "d2h"] {
        let cmd = pcie_cmd(dir, plan.dma_secs, mib);
        let key = if dir == "h2d" { "h2d_gbps" } else { "d2h_gbps" };
        for &k in &plan.dma_threads {
            let k = k.min(workers.len().saturating_sub(1));
            pb.set_message(format!("{dir} x{n} GPUs + copy x{k}"));
            workers.run(1..1 + k, Some(Kernel::Copy));
            std::thread::sleep(plan.warm);
            let s0 = workers.snapshot();
            std::thread::sleep(plan.dur);
            let stream_alone = workers.snapshot().gbps_since(&s0);
            let s0 = workers.snapshot();
            let replies = all_at_once(&mut all, &cmd);
            let stream_with = workers.snapshot().gbps_since(&s0);
            workers.idle();
            let dma = replies?
                .iter()
                .map(|v| num(v, key))
                .collect::<Result<Vec<f64>>>()?;
            m.multi_dma_stream.push(MultiDmaStreamPoint {
                dir: dir.into(),
                gpus: n,
                stream_threads: k,
                stream_alone_gbps: stream_alone,
                stream_with_gbps: stream_with,
                dma_with_gbps: dma,
            });
            pb.inc(1);
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::probe::harness::Source;
    use std::io::Write as _;

    /// A stand-in harness: announces `devices` GPUs, answers `info`, and runs `pcie`
    /// as begin + a reply whose rate is 50 GB/s divided by the harnesses copying at
    /// once (counted through a shared folder midway through a 0.6 s copy), so "at once"
    /// is visible in the result.
    fn fake_harness(dir: &std::path::Path, devices: usize) -> std::path::PathBuf {
        let path = dir.join("fake-probe.sh");
        let lock = dir.join("copying");
        std::fs::create_dir_all(&lock).unwrap();
        let script = format!(
            r#"#!/bin/sh
echo '{{"ok":true,"ready":true,"devices":{devices}}}'
while read -r cmd rest; do
  case "$cmd" in
    info) echo '{{"ok":true,"gpu":"fake","vis":"'"$CUDA_VISIBLE_DEVICES"'"}}' ;;
    pcie)
      me="{lock}/$$"; touch "$me"; echo '{{"event":"begin"}}'
      sleep 0.3; n=$(ls "{lock}" | wc -l); sleep 0.3; rm -f "$me"
      echo '{{"ok":true,"h2d_gbps":'$((50 / n))',"d2h_gbps":'$((40 / n))',"h2d_s":0.3,"d2h_s":0.3}}' ;;
    quit) exit 0 ;;
    *) echo '{{"ok":false,"error":"unknown"}}' ;;
  esac
done
"#,
            lock = lock.display()
        );
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(script.as_bytes()).unwrap();
        drop(f);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn siblings_see_one_gpu_each_and_copy_at_once() {
        if std::env::var_os("CUDA_VISIBLE_DEVICES").is_some() {
            eprintln!("skipping: CUDA_VISIBLE_DEVICES is set in this environment");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let exe = fake_harness(dir.path(), 3);
        let first = GpuProbe::start(Source::Path(exe), &[]).unwrap();
        assert_eq!(first.devices, 3);
        let mut skipped = Vec::new();
        let mut others = siblings(&first, &mut skipped);
        assert!(skipped.is_empty(), "{skipped:?}");
        let vis: Vec<String> = others
            .iter()
            .map(|p| p.info["vis"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(vis, ["1", "2"]);
        let mut first = first;
        let mut all: Vec<&mut GpuProbe> = std::iter::once(&mut first)
            .chain(others.iter_mut())
            .collect();
        let replies = all_at_once(&mut all, "pcie h2d 1 0.3 64").unwrap();
        // Three copying at once: each saw the other two (50 / 3 = 16 GB/s).
        let (h, _) = rates(&replies).unwrap();
        assert_eq!(h, vec![16.0, 16.0, 16.0]);
        let alone = all[1].request("pcie h2d 1 0.3 64").unwrap();
        assert_eq!(num(&alone, "h2d_gbps").unwrap(), 50.0);
    }

    #[test]
    fn one_gpu_hosts_record_why_the_probes_did_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let exe = fake_harness(dir.path(), 1);
        let mut first = GpuProbe::start(Source::Path(exe), &[]).unwrap();
        let mut m = Measurements::default();
        let plan = Plan::new(crate::calibrate::probe::plan::Mode::Tiny, 2);
        let workers = Workers::start(&[], 1 << 16, false).unwrap();
        multi_gpu_probes(&mut m, &plan, &mut first, &workers).unwrap();
        assert!(m.multi_pcie.is_empty());
        assert!(m.skipped[0].contains("1 GPU(s)"), "{:?}", m.skipped);
    }
}
