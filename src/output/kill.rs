//! A test hook for interrupt tests: with `BWSIM_TEST_KILL=SITE:N` in the environment,
//! the process kills itself (SIGKILL, as `kill -9` or a cluster's preemption would) the
//! N-th time it reaches SITE, so a test can interrupt a sweep exactly where it means to
//! (mid journal line, mid chart) without racing a clock. Unset, it costs one lookup.
//!
//! Sites: `point` (a sweep point was saved to the journal), `journal` (half of a journal
//! line is written), `write` (an output file's temporary copy is filled, not yet renamed
//! into place).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The site and count asked for, parsed once.
fn wanted() -> Option<&'static (String, usize)> {
    static WANTED: OnceLock<Option<(String, usize)>> = OnceLock::new();
    WANTED
        .get_or_init(|| {
            let v = std::env::var("BWSIM_TEST_KILL").ok()?;
            let (site, n) = v.split_once(':')?;
            Some((site.to_string(), n.trim().parse().ok()?))
        })
        .as_ref()
}

/// True (once) when this is the N-th time the asked-for `site` is reached; the caller
/// then leaves what it means to leave half-done and calls [`test_kill`].
pub fn test_kill_due(site: &str) -> bool {
    static REACHED: AtomicUsize = AtomicUsize::new(0);
    match wanted() {
        Some((s, n)) if s == site => REACHED.fetch_add(1, Ordering::AcqRel) + 1 == *n,
        _ => false,
    }
}

/// Kills this process at once, as an external SIGKILL would (no destructors, no
/// cleanup, no flushing).
pub fn test_kill() -> ! {
    #[cfg(unix)]
    // SAFETY: sending a signal to this very process.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}
