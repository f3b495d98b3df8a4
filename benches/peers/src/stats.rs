//! Streaming response-time statistics with batch means (constant memory).

use serde::{Deserialize, Serialize};

/// Number of batches for the standard error. 20 batches of ~50k jobs each are
/// far longer than the queues' relaxation times, so batch means are close to
/// independent; the same batching is used in simpy_models.py.
pub const BATCHES: u64 = 20;

#[derive(Clone, Serialize, Deserialize)]
pub struct ResponseStats {
    warmup: u64,
    batch_size: u64,
    pub completed: u64,
    batch_sums: Vec<f64>,
}

impl ResponseStats {
    pub fn new(jobs: u64, warmup: u64) -> Self {
        let batch_size = ((jobs - warmup) / BATCHES).max(1);
        Self { warmup, batch_size, completed: 0, batch_sums: vec![0.0; BATCHES as usize] }
    }

    /// Record one job's response time; the first `warmup` completions are dropped
    /// (bwsim's `warmup_jobs` also counts completions), and the leftover jobs
    /// beyond BATCHES * batch_size (fewer than BATCHES of them) are ignored.
    pub fn record(&mut self, response_s: f64) {
        self.completed += 1;
        if self.completed <= self.warmup {
            return;
        }
        let b = (self.completed - self.warmup - 1) / self.batch_size;
        if b < BATCHES {
            self.batch_sums[b as usize] += response_s;
        }
    }

    /// Grand mean and its standard error from the batch means.
    pub fn mean_and_se(&self) -> (f64, f64) {
        let n = BATCHES as f64;
        let means: Vec<f64> = self.batch_sums.iter().map(|s| s / self.batch_size as f64).collect();
        let mean = means.iter().sum::<f64>() / n;
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    }
}
