//! Host facts (CPU model, cores, page size, transparent huge pages), thread pinning and
//! page-backed buffers that their owner thread first-touches.

use crate::calibrate::error::{ProbeError, Result};

pub use crate::calibrate::measurements::HostInfo;

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Reads a `/proc/meminfo` field in bytes (the file gives kB).
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

impl HostInfo {
    /// Gathers the host's facts; never fails (unknown fields say "unknown").
    pub fn gather() -> Self {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|s| s.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Self {
            hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            cpu_model,
            cores: allowed_cpus().len(),
            page_size: if page > 0 { page as u64 } else { 4096 },
            thp_enabled: read_trim("/sys/kernel/mm/transparent_hugepage/enabled")
                .unwrap_or_else(|| "unknown".into()),
            mem_total_bytes: meminfo_bytes("MemTotal").unwrap_or(0),
            kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        }
    }

    /// The THP mode in brackets, e.g. "madvise" out of "always [madvise] never".
    pub fn thp_mode(&self) -> &str {
        self.thp_enabled
            .split('[')
            .nth(1)
            .and_then(|s| s.split(']').next())
            .unwrap_or(&self.thp_enabled)
    }
}

/// Groups of SMT siblings (CPUs sharing one core) among `cpus`, from
/// /sys/devices/system/cpu/cpu*/topology/thread_siblings_list; one group per core, each
/// sorted, groups ordered by their first CPU. A CPU without the file is its own group.
pub fn smt_groups(cpus: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &c in cpus {
        if groups.iter().any(|g| g.contains(&c)) {
            continue;
        }
        let path = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        let mut g: Vec<usize> = std::fs::read_to_string(path)
            .ok()
            .map(|t| parse_cpu_list(t.trim()))
            .unwrap_or_default()
            .into_iter()
            .filter(|s| cpus.contains(s))
            .collect();
        if !g.contains(&c) {
            g.push(c);
        }
        g.sort_unstable();
        g.dedup();
        groups.push(g);
    }
    groups.sort_by_key(|g| g[0]);
    groups
}

/// Parses a kernel CPU list such as "0-3,8,10-11".
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.parse() {
                    v.push(a);
                }
            }
        }
    }
    v
}

/// CPU ids in this process's affinity mask, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            return (0..n).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to one CPU. Returns false if the kernel refused.
pub fn pin_to(cpu: usize) -> bool {
    // SAFETY: as above; the set is fully initialised before the call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The page-size advice given to a fresh mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAdvice {
    /// MADV_HUGEPAGE: transparent huge pages wanted.
    Huge,
    /// MADV_NOHUGEPAGE: base pages only.
    NoHuge,
    /// No advice: the system's THP mode decides.
    Default,
}

/// Linux's MADV_COLLAPSE (6.1 and later): collapse a range into huge pages now. Older
/// kernels answer EINVAL and leave the mapping as it was.
const MADV_COLLAPSE: libc::c_int = 25;

/// Share of a MADV_HUGEPAGE buffer that must be huge-page backed before it is trusted.
/// A VM slice with fragmented memory may back a fresh mapping with base pages only, and
/// a chase over base pages reads up to 2.7x slower (the page-walk misses): the latency
/// curve would then describe another memory system than the huge-page one it claims.
const HUGE_COVERAGE_WANTED: f64 = 0.95;

/// The huge-page share of a buffer advised MADV_HUGEPAGE (`advised`) when it is short of
/// [`HUGE_COVERAGE_WANTED`]; None when it is not short, not advised, or not known.
pub fn huge_shortfall(advised: bool, coverage: Option<f64>) -> Option<f64> {
    coverage.filter(|&c| advised && c < HUGE_COVERAGE_WANTED)
}

/// The share of the mappings overlapping [start, start + len) that `smaps` (the text of
/// `/proc/self/smaps`) shows backed by huge pages: the summed AnonHugePages over the
/// summed sizes of those mappings. None when no mapping overlaps the range.
pub fn huge_coverage_in(smaps: &str, start: usize, len: usize) -> Option<f64> {
    let end = start + len;
    let (mut size, mut huge) = (0u64, 0u64);
    let mut inside = false;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            inside = a < end && start < b;
            if inside {
                size += (b - a) as u64;
            }
            continue;
        }
        if inside && let Some(rest) = line.strip_prefix("AnonHugePages:") {
            let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
            huge += kb * 1024;
        }
    }
    (size > 0).then(|| huge as f64 / size as f64)
}

/// An anonymous mapping of `len` bytes, optionally advised to use huge pages, that the
/// creating thread first-touches (so its pages land near that thread).
pub struct Buf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: Buf owns its mapping exclusively; moving it between threads is sound.
unsafe impl Send for Buf {}
// SAFETY: through &Buf the mapping is only read (writes need &mut Buf).
unsafe impl Sync for Buf {}

impl Buf {
    /// Maps, advises and touches `len` bytes (rounded up to 2 MiB).
    pub fn new(len: usize, hugepages: bool) -> Result<Self> {
        let advice = if hugepages {
            PageAdvice::Huge
        } else {
            PageAdvice::Default
        };
        Self::with_advice(len, advice)
    }

    /// Maps `len` bytes (rounded up to 2 MiB), applies `advice`, and touches them.
    pub fn with_advice(len: usize, advice: PageAdvice) -> Result<Self> {
        let align = 2 << 20;
        let len = len.div_ceil(align).max(1) * align;
        // SAFETY: anonymous private mapping; result checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(ProbeError::Map {
                mib: len >> 20,
                error: std::io::Error::last_os_error(),
            }
            .into());
        }
        let flag = match advice {
            PageAdvice::Huge => Some(libc::MADV_HUGEPAGE),
            PageAdvice::NoHuge => Some(libc::MADV_NOHUGEPAGE),
            PageAdvice::Default => None,
        };
        if let Some(flag) = flag {
            // SAFETY: ptr/len is our own mapping. Failure only means the advice is ignored.
            unsafe {
                libc::madvise(ptr, len, flag);
            }
        }
        let buf = Self {
            ptr: ptr as *mut u8,
            len,
        };
        // First touch: write every page from this thread.
        // SAFETY: the mapping is len bytes, writable.
        unsafe { std::ptr::write_bytes(buf.ptr, 1, len) };
        if huge_shortfall(advice == PageAdvice::Huge, buf.huge_coverage()).is_some() {
            // The fault path fell back to base pages (fragmented memory): ask the
            // kernel to collapse the range now rather than measure a base-page buffer.
            // SAFETY: ptr/len is our own mapping; failure leaves it as it was.
            unsafe {
                libc::madvise(ptr, len, MADV_COLLAPSE);
            }
        }
        Ok(buf)
    }

    /// The share of this buffer's mapping backed by huge pages (None where
    /// `/proc/self/smaps` cannot be read).
    pub fn huge_coverage(&self) -> Option<f64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        huge_coverage_in(&smaps, self.ptr as usize, self.len)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (a mapping is at least 2 MiB).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer as f64 values.
    pub fn as_f64_mut(&mut self) -> &mut [f64] {
        // SAFETY: page-aligned, len bytes, initialised by the first touch.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut f64, self.len / 8) }
    }

    /// The mapping's first byte (page-aligned, `len()` bytes, initialised).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The mapping's first byte, for reading.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The buffer as u64 values.
    pub fn as_u64_mut(&mut self) -> &mut [u64] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut u64, self.len / 8) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// The `CUDA_VISIBLE_DEVICES` entry that makes a one-GPU process see GPU `i` of the `n`
/// this process may use: the `i`-th entry of the caller's own `CUDA_VISIBLE_DEVICES`, else
/// CUDA device `i`. `Err` says why GPU `i` does not exist.
pub fn visible_device(i: usize, n: usize) -> Result<String, String> {
    match std::env::var("CUDA_VISIBLE_DEVICES") {
        Ok(v) => {
            let list: Vec<&str> = v
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .collect();
            list.get(i).map(|d| d.to_string()).ok_or_else(|| {
                format!(
                    "{n} GPUs are needed, but CUDA_VISIBLE_DEVICES={v} lists {}",
                    list.len()
                )
            })
        }
        Err(_) => Ok(i.to_string()),
    }
}

/// Unit tests that time real work on the CPUs (probes, synthetic kernels) hold this
/// lock, so that on a 2-core CI box they do not run at once and slow each other down.
#[cfg(test)]
pub(crate) fn cpu_timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_info_has_cores_and_pages() {
        let h = HostInfo::gather();
        assert!(h.cores >= 1);
        assert!(h.page_size >= 4096);
    }

    #[test]
    fn thp_mode_picks_bracketed_word() {
        let mut h = HostInfo::gather();
        h.thp_enabled = "always [madvise] never".into();
        assert_eq!(h.thp_mode(), "madvise");
    }

    #[test]
    fn huge_coverage_sums_the_overlapping_mappings() {
        let smaps = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
7f0000800000-7f0000a00000 r-xp 00000000 08:01 12 /usr/lib/x.so
AnonHugePages:         0 kB
";
        // The first mapping alone: half of it huge.
        let c = huge_coverage_in(smaps, 0x7f00_0000_0000, 0x40_0000).unwrap();
        assert!((c - 0.5).abs() < 1e-12);
        // Both anonymous mappings: 6 of 8 MiB.
        let c = huge_coverage_in(smaps, 0x7f00_0010_0000, 0x40_0000).unwrap();
        assert!((c - 0.75).abs() < 1e-12);
        // No mapping there.
        assert!(huge_coverage_in(smaps, 0x1000, 0x1000).is_none());
    }

    #[test]
    fn a_shortfall_needs_advice_and_a_known_low_share() {
        assert_eq!(huge_shortfall(true, Some(0.4)), Some(0.4));
        assert_eq!(huge_shortfall(true, Some(1.0)), None);
        assert_eq!(huge_shortfall(false, Some(0.4)), None);
        assert_eq!(huge_shortfall(true, None), None);
    }

    #[test]
    fn buf_reports_a_coverage_share() {
        let b = Buf::new(4 << 20, true).unwrap();
        if let Some(c) = b.huge_coverage() {
            assert!((0.0..=1.0).contains(&c), "coverage {c}");
        }
    }

    #[test]
    fn buf_is_rounded_and_touched() {
        let mut b = Buf::new(1000, true).unwrap();
        assert_eq!(b.len(), 2 << 20);
        assert!(b.as_u64_mut().iter().all(|&x| x == 0x0101_0101_0101_0101));
    }
}
