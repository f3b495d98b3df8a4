//! The nvidia-smi view of "GPU busy": time is cut into sample windows of a fixed period
//! from the start of the measurement window, and a window counts as busy when any kernel
//! ran in it, however briefly. Streaming, constant memory: one open window per GPU.

/// Busy sample windows of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleWindows {
    period_s: f64,
    /// Index of the window that is still open (0 = the first after the origin).
    open: i64,
    open_busy: bool,
    /// Busy seconds of the windows already closed.
    closed_busy_s: f64,
}

impl SampleWindows {
    /// Windows of `period_s` seconds (> 0).
    pub fn new(period_s: f64) -> Self {
        Self {
            period_s,
            open: 0,
            open_busy: false,
            closed_busy_s: 0.0,
        }
    }

    /// Moves the open window to `k`, closing the one open so far.
    fn roll_to(&mut self, k: i64) {
        if k > self.open {
            if self.open_busy {
                self.closed_busy_s += self.period_s;
            }
            self.open = k;
            self.open_busy = false;
        }
    }

    /// A kernel ran from `from_s` to `to_s`, seconds after the origin.
    pub fn busy(&mut self, from_s: f64, to_s: f64) {
        if to_s.partial_cmp(&from_s) != Some(std::cmp::Ordering::Greater) {
            return;
        }
        let first = (from_s / self.period_s).floor() as i64;
        // A kernel ending exactly on a boundary does not touch the next window.
        let last = ((to_s / self.period_s).ceil() as i64 - 1).max(first);
        self.roll_to(first);
        self.open_busy = true;
        if last > first {
            self.closed_busy_s += self.period_s * (last - first) as f64;
            self.open = last;
        }
    }

    /// Busy seconds of the windows up to `end_s` (the last one cut at `end_s`).
    pub fn busy_s(&self, end_s: f64) -> f64 {
        let open_start = self.open as f64 * self.period_s;
        let open_part = if self.open_busy && end_s > open_start {
            (end_s - open_start).min(self.period_s)
        } else {
            0.0
        };
        (self.closed_busy_s + open_part).min(end_s.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_kernel_makes_its_whole_window_busy() {
        // Windows of 0.2 s over 1 s. Kernels at 0.05-0.06 (window 0), 0.41-0.62 (windows
        // 2 and 3) and 0.8-1.0 (window 4, ending on its boundary): 4 of 5 windows busy.
        let mut w = SampleWindows::new(0.2);
        w.busy(0.05, 0.06);
        w.busy(0.41, 0.62);
        w.busy(0.8, 1.0);
        assert!((w.busy_s(1.0) - 0.8).abs() < 1e-12);
        // Cut at 0.9: window 4 counts only its first 0.1 s.
        assert!((w.busy_s(0.9) - 0.7).abs() < 1e-12);
        // No kernel: nothing busy.
        assert_eq!(SampleWindows::new(0.2).busy_s(1.0), 0.0);
    }
}
