//! Progress of a sweep: an `indicatif` bar (points done / total, ETA) when stderr is a
//! terminal, otherwise a few plain lines (every 10%) so logs stay short.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A bar if stderr is a terminal, plain lines otherwise.
    Auto,
    /// Plain lines on stderr.
    Plain,
    /// Nothing (tests, library use).
    Hidden,
}

/// A progress display that worker threads update.
pub struct Progress {
    total: usize,
    kind: Kind,
}

enum Kind {
    Bar(ProgressBar),
    Plain { last_tenth: AtomicUsize },
    Hidden,
}

impl Progress {
    /// A display for `total` points.
    pub fn new(total: usize, mode: ProgressMode) -> Progress {
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => None,
            ProgressMode::Auto => Some(ProgressMode::Plain),
            m => Some(m),
        };
        let kind = match mode {
            None => {
                let bar =
                    ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} points (ETA {eta})",
                    )
                    .expect("static template"),
                );
                bar.set_prefix("sweep");
                bar.enable_steady_tick(std::time::Duration::from_millis(200));
                Kind::Bar(bar)
            }
            Some(ProgressMode::Plain) => Kind::Plain {
                last_tenth: AtomicUsize::new(0),
            },
            _ => Kind::Hidden,
        };
        Progress { total, kind }
    }

    /// `done` points of the total are finished (called once per point, any order).
    pub fn point_done(&self, done: usize) {
        match &self.kind {
            Kind::Bar(bar) => bar.set_position(done as u64),
            Kind::Plain { last_tenth } => {
                let tenth = done * 10 / self.total.max(1);
                if tenth > last_tenth.fetch_max(tenth, Ordering::Relaxed) {
                    eprintln!("sweep: {done}/{} points", self.total);
                }
            }
            Kind::Hidden => {}
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Kind::Bar(bar) = &self.kind {
            bar.finish_and_clear();
        }
    }
}
