//! The validation experiments to run on a host: which mixes of streaming threads, a
//! pointer-chase victim, PCIe copy loops and an upload / NTT / download pipeline, sized
//! to the mode and the core count.

use super::experiment::{Copy, Setup};
use crate::calibrate::probe::plan::Mode;
use crate::calibrate::probe::stream::Kernel;
use crate::model::CopyDir;

/// One experiment to run: its name (as in the table) and setup.
pub struct Exp {
    /// Name, e.g. "triad x3 + chase".
    pub name: String,
    /// What runs.
    pub setup: Setup,
}

/// The experiments of `mode` on a host with `cores` CPUs; the GPU ones only with one
/// GPU or more, and DMA on every GPU at once (next to 0..k copy streams, both
/// directions) with two or more.
pub fn experiments(mode: Mode, cores: usize, gpus: usize) -> Vec<Exp> {
    let gpu = gpus >= 1;
    // CPU 0: the chase; CPUs 1..=k: streams; at least one CPU left for the GPU harness.
    let kmax = cores.saturating_sub(2).max(1);
    let pick = |list: &[usize]| -> Vec<usize> {
        let mut v: Vec<usize> = list.iter().map(|&k| k.min(kmax)).collect();
        v.dedup();
        v
    };
    let mut out = Vec::new();
    let (triad, dma_k, pipe_k, lg) = match mode {
        Mode::Tiny => (pick(&[1]), pick(&[1]), pick(&[1]), 16u32),
        Mode::Quick => (
            pick(&[3, kmax / 2, kmax]),
            pick(&[kmax / 2, kmax]),
            pick(&[0, kmax]),
            24,
        ),
        Mode::Full => (
            pick(&[2, 5, kmax / 2, kmax]),
            pick(&[3, kmax / 2, kmax]),
            pick(&[0, kmax / 2, kmax]),
            25,
        ),
    };
    for k in triad {
        out.push(Exp {
            name: format!("triad x{k} + chase"),
            setup: Setup {
                streams: Some((Kernel::Triad, k)),
                chase: true,
                dma: None,
                pipe: None,
            },
        });
    }
    if !gpu {
        return out;
    }
    for &k in &dma_k {
        out.push(Exp {
            name: format!("copy x{k} + pinned h2d + chase"),
            setup: Setup {
                streams: Some((Kernel::Copy, k)),
                chase: true,
                dma: Some(Copy::one(CopyDir::H2d, true)),
                pipe: None,
            },
        });
    }
    if let Some(&k) = dma_k.last() {
        out.push(Exp {
            name: format!("read x{k} + pageable h2d + chase"),
            setup: Setup {
                streams: Some((Kernel::Read, k)),
                chase: true,
                dma: Some(Copy::one(CopyDir::H2d, false)),
                pipe: None,
            },
        });
    }
    if gpus >= 2 {
        let n = gpus as u32;
        for dir in CopyDir::BOTH {
            for k in std::iter::once(0).chain(dma_k.iter().copied()) {
                out.push(Exp {
                    name: if k == 0 {
                        format!("pinned {dir} on {n} GPUs + chase")
                    } else {
                        format!("copy x{k} + pinned {dir} on {n} GPUs + chase")
                    },
                    setup: Setup {
                        streams: (k > 0).then_some((Kernel::Copy, k)),
                        chase: true,
                        dma: Some(Copy {
                            dir,
                            pinned: true,
                            gpus: n,
                        }),
                        pipe: None,
                    },
                });
            }
        }
    }
    for k in pipe_k {
        out.push(Exp {
            name: format!("copy x{k} + pageable 2^{lg} upload/NTT/download + chase"),
            setup: Setup {
                streams: if k == 0 {
                    None
                } else {
                    Some((Kernel::Copy, k))
                },
                chase: true,
                dma: None,
                pipe: Some((lg, false)),
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experiment_list_fits_the_cores() {
        let e = experiments(Mode::Quick, 16, 1);
        assert!(
            e.iter()
                .all(|x| x.setup.streams.is_none_or(|(_, k)| k <= 14))
        );
        assert!(e.iter().any(|x| x.setup.pipe.is_some()));
        assert!(e.iter().all(|x| x.setup.dma.is_none_or(|c| c.gpus == 1)));
        let e = experiments(Mode::Quick, 16, 0);
        assert!(
            e.iter()
                .all(|x| x.setup.dma.is_none() && x.setup.pipe.is_none())
        );
    }

    #[test]
    fn several_gpus_add_all_gpu_dma_experiments_in_both_directions() {
        let e = experiments(Mode::Quick, 32, 4);
        let multi: Vec<_> = e
            .iter()
            .filter(|x| x.setup.dma.is_some_and(|c| c.gpus == 4))
            .collect();
        // Alone and next to each DMA stream count, per direction.
        assert_eq!(
            multi.len(),
            2 * 3,
            "{:?}",
            multi.iter().map(|x| &x.name).collect::<Vec<_>>()
        );
        assert!(
            multi
                .iter()
                .any(|x| x.setup.dma.unwrap().dir == CopyDir::D2h)
        );
        assert!(multi.iter().all(|x| x.setup.dma.unwrap().pinned));
    }
}
