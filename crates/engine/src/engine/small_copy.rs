//! Copying a handful of table entries without a libc `memcpy` call: the per-job and
//! per-activity tables (dependency counts, lost seconds per rate resource) hold one to
//! a few entries, for which the call costs more than the copy itself.

/// Makes `dst` a copy of `src`, keeping `dst`'s buffer.
#[inline]
pub(crate) fn copy_small<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
    if dst.len() != src.len() {
        dst.clear();
        dst.extend_from_slice(src);
        return;
    }
    // Explicit arms: a loop over the entries would be turned back into a `memcpy` call.
    match (dst.as_mut_slice(), src) {
        ([], []) => {}
        ([d0], [s0]) => *d0 = *s0,
        ([d0, d1], [s0, s1]) => (*d0, *d1) = (*s0, *s1),
        ([d0, d1, d2], [s0, s1, s2]) => (*d0, *d1, *d2) = (*s0, *s1, *s2),
        ([d0, d1, d2, d3], [s0, s1, s2, s3]) => (*d0, *d1, *d2, *d3) = (*s0, *s1, *s2, *s3),
        (d, s) => d.copy_from_slice(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_length_into_any_buffer() {
        for len in 0..8 {
            let src: Vec<u32> = (1..=len).collect();
            for old in [0, len, len + 3] {
                let mut dst: Vec<u32> = vec![99; old as usize];
                copy_small(&mut dst, &src);
                assert_eq!(dst, src, "len {len}, old {old}");
            }
        }
    }
}
