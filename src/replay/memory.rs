//! The replay kernels' buffers, on huge pages where the host allows it: `bwsim calibrate`
//! measures DRAM latency on buffers advised to use huge pages, so a replay run on 4 KiB
//! pages would pay page walks that the calibration (and so the prediction) never saw.

use crate::calibrate::probe::sys::Buf;
use std::ops::{Deref, DerefMut};

/// `len` values of `T`, in a mapping advised to use huge pages, else on the heap.
pub enum Backing<T: Copy> {
    /// An anonymous mapping advised `MADV_HUGEPAGE` (and first-touched).
    Mapped {
        buf: Buf,
        len: usize,
        _t: std::marker::PhantomData<T>,
    },
    /// A plain allocation (small test buffers, or when mapping failed).
    Heap(Vec<T>),
}

impl<T: Copy> Backing<T> {
    /// `len` values, value `i` = `f(i)`, on huge pages when `huge` and the mapping works.
    pub fn new(len: usize, huge: bool, f: impl Fn(usize) -> T) -> Backing<T> {
        if huge
            && len > 0
            && let Ok(mut buf) = Buf::new(len * std::mem::size_of::<T>(), true)
        {
            {
                // SAFETY: the mapping holds at least len values of T, page-aligned (so
                // aligned for T), and is owned by `buf`, which the slice does not outlive.
                let vals =
                    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut T, len) };
                for (i, v) in vals.iter_mut().enumerate() {
                    *v = f(i);
                }
                return Backing::Mapped {
                    buf,
                    len,
                    _t: std::marker::PhantomData,
                };
            }
        }
        Backing::Heap((0..len).map(f).collect())
    }

    /// The share of the values on huge pages (None where unknown, 0 on the heap).
    pub fn huge_coverage(&self) -> Option<f64> {
        match self {
            Backing::Mapped { buf, .. } => buf.huge_coverage(),
            Backing::Heap(_) => Some(0.0),
        }
    }
}

impl<T: Copy> Deref for Backing<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            // SAFETY: see `new`; `buf` lives as long as `self`.
            Backing::Mapped { buf, len, .. } => unsafe {
                std::slice::from_raw_parts(buf.as_ptr() as *const T, *len)
            },
            Backing::Heap(v) => v,
        }
    }
}

impl<T: Copy> DerefMut for Backing<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
            Backing::Mapped { buf, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut T, *len)
            },
            Backing::Heap(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_laid_out_alike_mapped_or_on_the_heap() {
        let mapped = Backing::new(1 << 16, true, |i| i as u64 * 3);
        let heap = Backing::new(1 << 16, false, |i| i as u64 * 3);
        assert_eq!(mapped.len(), 1 << 16);
        assert_eq!(&mapped[..], &heap[..]);
        assert_eq!(heap.huge_coverage(), Some(0.0));
        let mut m = mapped;
        m[5] = 7;
        assert_eq!(m[5], 7);
    }
}
