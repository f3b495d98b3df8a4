//! The replay's holdable resources as real blocking semaphores, granted by the engine's
//! own rule: one thread owns an [`Holdables`] table (all-or-nothing, strict FIFO per
//! instance, per-GPU families where the first GPU that fits binds the partition) and
//! answers the stage threads' requests in arrival order. Sharing the rule, not copying it,
//! keeps a replay's waits and GPU choices what the simulation assumes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use super::error::{ExecutorFault, Result};

use crate::engine::holdable::{Grant, HoldIndex, HoldSlot, Holdables, Request};

/// How often a waiter looks at the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(100);

/// A request's answer: the GPU it was granted on (None: no per-GPU need and not bound).
type Reply = Sender<Option<u32>>;

enum Msg {
    Acquire {
        needs: Vec<(HoldSlot, u64)>,
        gpu: Option<u32>,
        reply: Reply,
    },
    Release(Vec<(HoldIndex, u64)>),
}

/// The client side: cheap to share between stage threads.
pub struct HoldClient {
    tx: Mutex<Option<Sender<Msg>>>,
}

/// The table's side: run it on its own thread.
pub struct HoldServer {
    rx: mpsc::Receiver<Msg>,
}

/// Runs the table until the client is closed.
pub fn serve(capacity: Vec<u64>, gpus: u32, server: HoldServer) {
    let rx = server.rx;
    let mut table: Holdables<Reply> = Holdables::new(capacity, gpus);
    let mut granted: Vec<Grant<Reply>> = Vec::new();
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Acquire { needs, gpu, reply } => table.request(
                Request {
                    token: reply,
                    needs: needs.into(),
                    gpu,
                    blocked_on: None,
                },
                &mut granted,
            ),
            Msg::Release(taken) => table.release(&taken, &mut granted),
        }
        // Answer every grant; a waiter that gave up (abort) hands its grant straight back.
        while let Some(g) = granted.pop() {
            if g.token.send(g.gpu).is_err() {
                let taken: Vec<_> = g.taken().collect();
                table.release(&taken, &mut granted);
            }
        }
    }
}

/// A client and the server it talks to; run [`serve`] with the server.
pub fn channel() -> (HoldClient, HoldServer) {
    let (tx, rx) = mpsc::channel();
    (
        HoldClient {
            tx: Mutex::new(Some(tx)),
        },
        HoldServer { rx },
    )
}

impl HoldClient {
    fn send(&self, msg: Msg) -> Result<()> {
        let tx = self.tx.lock().expect("hold client poisoned");
        tx.as_ref()
            .ok_or(ExecutorFault::HoldTableClosed)?
            .send(msg)
            .map_err(|_| ExecutorFault::HoldTableStopped.into())
    }

    /// Blocks until `needs` are granted together; returns the GPU chosen (or kept).
    /// Gives up with an error when `abort` is raised.
    pub fn acquire(
        &self,
        needs: &[(HoldSlot, u64)],
        gpu: Option<u32>,
        abort: &AtomicBool,
    ) -> Result<Option<u32>> {
        if needs.is_empty() {
            return Ok(gpu);
        }
        let (reply, answer) = mpsc::channel();
        self.send(Msg::Acquire {
            needs: needs.to_vec(),
            gpu,
            reply,
        })?;
        loop {
            match answer.recv_timeout(ABORT_POLL) {
                Ok(g) => return Ok(g),
                Err(RecvTimeoutError::Timeout) if abort.load(Ordering::Relaxed) => {
                    return Err(ExecutorFault::AbortedWaitingForHolds.into());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ExecutorFault::HoldTableStopped.into());
                }
            }
        }
    }

    /// Hands back instances taken by a grant.
    pub fn release(&self, taken: Vec<(HoldIndex, u64)>) {
        // A closed table means the replay is over: nothing waits for these any more.
        let _ = self.send(Msg::Release(taken));
    }

    /// Closes the client so that [`serve`] returns once the queue is drained.
    pub fn close(&self) {
        self.tx.lock().expect("hold client poisoned").take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(
        capacity: Vec<u64>,
        gpus: u32,
    ) -> (std::sync::Arc<HoldClient>, std::thread::JoinHandle<()>) {
        let (client, rx) = channel();
        let h = std::thread::spawn(move || serve(capacity, gpus, rx));
        (std::sync::Arc::new(client), h)
    }

    #[test]
    fn holds_are_fifo_per_resource_and_all_or_nothing() {
        let (t, server) = start(vec![2, 1], 0);
        let no = AtomicBool::new(false);
        t.acquire(&[(HoldSlot::Global(0), 2)], None, &no).unwrap();
        // A waiter short of instance 0 blocks later waiters on 0 but not on 1.
        let t2 = t.clone();
        let waiter = std::thread::spawn(move || {
            t2.acquire(
                &[(HoldSlot::Global(0), 1), (HoldSlot::Global(1), 1)],
                None,
                &AtomicBool::new(false),
            )
            .unwrap();
        });
        std::thread::sleep(Duration::from_millis(50));
        // Instance 1 is free, and the waiter did not take it: all-or-nothing.
        t.acquire(&[(HoldSlot::Global(1), 1)], None, &no).unwrap();
        t.release(vec![(1, 1)]);
        t.release(vec![(0, 1)]);
        waiter.join().unwrap();
        t.close();
        server.join().unwrap();
    }

    #[test]
    fn per_gpu_requests_bind_to_the_first_gpu_that_fits() {
        // Two GPUs, one mutex per GPU (instances 0 and 1).
        let (t, server) = start(vec![1, 1], 2);
        let no = AtomicBool::new(false);
        let a = t.acquire(&[(HoldSlot::PerGpu(0), 1)], None, &no).unwrap();
        let b = t.acquire(&[(HoldSlot::PerGpu(0), 1)], None, &no).unwrap();
        assert_eq!((a, b), (Some(0), Some(1)));
        // Bound to GPU 1, a request waits for GPU 1's mutex even though it is the one asked.
        let t2 = t.clone();
        let waiter = std::thread::spawn(move || {
            t2.acquire(
                &[(HoldSlot::PerGpu(0), 1)],
                Some(1),
                &AtomicBool::new(false),
            )
            .unwrap()
        });
        std::thread::sleep(Duration::from_millis(50));
        t.release(vec![(0, 1)]);
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !waiter.is_finished(),
            "GPU 0's release must not serve a GPU 1 waiter"
        );
        t.release(vec![(1, 1)]);
        assert_eq!(waiter.join().unwrap(), Some(1));
        t.close();
        server.join().unwrap();
    }

    #[test]
    fn an_aborted_wait_returns_an_error_and_its_late_grant_is_handed_back() {
        let (t, server) = start(vec![1], 0);
        let no = AtomicBool::new(false);
        t.acquire(&[(HoldSlot::Global(0), 1)], None, &no).unwrap();
        let abort = AtomicBool::new(true);
        assert!(
            t.acquire(&[(HoldSlot::Global(0), 1)], None, &abort)
                .is_err()
        );
        // The abandoned request is granted on release and handed straight back, so the
        // instance is free again for the next caller.
        t.release(vec![(0, 1)]);
        t.acquire(&[(HoldSlot::Global(0), 1)], None, &no).unwrap();
        t.close();
        server.join().unwrap();
    }
}
