//! nexosim implementations of the two peer-benchmark models:
//!
//! * `mm16`: M/M/16 FIFO queue (Poisson arrivals, exponential service).
//! * `ps`:   M/M/1 processor sharing: every job in the system gets an equal
//!           (max-min fair) share of one link, exponential sizes.
//!
//! Usage: `nexosim-peers <mm16|ps> <jobs> <warmup_jobs> <seed>`; prints one
//! JSON line that `report.py` reads.
//!
//! Both models are written as ONE nexosim model that schedules its own
//! arrival and departure events. Splitting source/queue/sink into separate
//! models connected by ports is more idiomatic nexosim but only adds message
//! passing; a peer benchmark should give the peer its fastest honest shape.
//! The executor runs on one thread (`SimInit::with_num_threads(1)`): nexosim
//! is only deterministic single-threaded, and bwsim's engine is
//! single-threaded too.

mod stats;

use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

use nexosim::model::{Context, Model, schedulable};
use nexosim::ports::QuerySource;
use nexosim::simulation::{EventKey, Mailbox, SimInit};
use nexosim::time::MonotonicTime;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use stats::ResponseStats;

// Model parameters; run.sh, simpy_models.py and the bwsim scenarios use the same.
const MM16_SERVERS: usize = 16;
const MM16_ARRIVAL_RATE: f64 = 14.4; // rho = 14.4 / (16 * 1.0) = 0.9
const MM16_MEAN_SERVICE_S: f64 = 1.0;
const PS_ARRIVAL_RATE: f64 = 0.9; // rho = 0.9
const PS_MEAN_SIZE_S: f64 = 1.0; // standalone transfer time on the idle link

/// Simulated seconds since the epoch (nexosim time is integer nanoseconds).
fn secs(t: MonotonicTime) -> f64 {
    t.duration_since(MonotonicTime::EPOCH).as_secs_f64()
}

/// A delay rounded to nexosim's nanosecond clock. nexosim refuses to schedule
/// an event at the current instant, so a draw that rounds to 0 ns becomes 1 ns
/// (probability ~1e-9 per draw; no effect on the means).
fn delay(s: f64) -> Duration {
    Duration::from_nanos(((s * 1e9).round() as u64).max(1))
}

// ---------------------------------------------------------------- M/M/16 ----

#[derive(Serialize, Deserialize)]
pub struct MmcQueue {
    rng: Pcg64Mcg,
    arrivals_left: u64,
    busy: usize,
    /// Arrival times (s) of the jobs waiting for a server, FIFO.
    waiting: VecDeque<f64>,
    stats: ResponseStats,
}

#[Model]
impl MmcQueue {
    #[nexosim(init)]
    async fn init(&mut self, cx: &Context<Self>) {
        self.schedule_next_arrival(cx);
    }

    fn schedule_next_arrival(&mut self, cx: &Context<Self>) {
        if self.arrivals_left == 0 {
            return;
        }
        self.arrivals_left -= 1;
        let gap = Exp::new(MM16_ARRIVAL_RATE).unwrap().sample(&mut self.rng);
        cx.schedule_event(delay(gap), schedulable!(Self::arrive), ()).unwrap();
    }

    fn start_service(&mut self, arrived_at: f64, cx: &Context<Self>) {
        let service = Exp::new(1.0 / MM16_MEAN_SERVICE_S).unwrap().sample(&mut self.rng);
        cx.schedule_event(delay(service), schedulable!(Self::depart), arrived_at)
            .unwrap();
    }

    #[nexosim(schedulable)]
    fn arrive(&mut self, _: (), cx: &Context<Self>) {
        let now = secs(cx.time());
        if self.busy < MM16_SERVERS {
            self.busy += 1;
            self.start_service(now, cx);
        } else {
            self.waiting.push_back(now);
        }
        self.schedule_next_arrival(cx);
    }

    #[nexosim(schedulable)]
    fn depart(&mut self, arrived_at: f64, cx: &Context<Self>) {
        self.stats.record(secs(cx.time()) - arrived_at);
        // The freed server goes straight to the head of the queue.
        match self.waiting.pop_front() {
            Some(next) => self.start_service(next, cx),
            None => self.busy -= 1,
        }
    }

    pub async fn results(&mut self, _: ()) -> ResponseStats {
        self.stats.clone()
    }
}

// ------------------------------------------------------------------ M/M/1-PS ----

/// Min-heap entry: a job finishes when the link's "virtual time" (service
/// attained by every job present since the start) reaches `finish_v`.
#[derive(Serialize, Deserialize, PartialEq, Clone, Copy)]
struct PsJob {
    finish_v: f64,
    arrived_at: f64,
}
impl Eq for PsJob {}
impl Ord for PsJob {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the smallest finish_v.
        o.finish_v.total_cmp(&self.finish_v)
    }
}
impl PartialOrd for PsJob {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// One link of capacity 1 shared equally by the n jobs present: each advances
/// at rate 1/n. Instead of updating n remaining sizes at every event we keep
/// one virtual clock V (dV/dt = 1/n); the next departure is then the heap
/// minimum and its real finish time is recomputed (and the pending departure
/// event cancelled and rescheduled) at every arrival and departure.
#[derive(Serialize, Deserialize)]
pub struct PsLink {
    rng: Pcg64Mcg,
    arrivals_left: u64,
    jobs: BinaryHeap<PsJob>,
    v: f64,
    v_updated_at: f64,
    next_departure: Option<EventKey>,
    stats: ResponseStats,
}

#[Model]
impl PsLink {
    #[nexosim(init)]
    async fn init(&mut self, cx: &Context<Self>) {
        self.schedule_next_arrival(cx);
    }

    fn schedule_next_arrival(&mut self, cx: &Context<Self>) {
        if self.arrivals_left == 0 {
            return;
        }
        self.arrivals_left -= 1;
        let gap = Exp::new(PS_ARRIVAL_RATE).unwrap().sample(&mut self.rng);
        cx.schedule_event(delay(gap), schedulable!(Self::arrive), ()).unwrap();
    }

    /// Bring the virtual clock up to `now` at the old share 1/n.
    fn advance(&mut self, now: f64) {
        if !self.jobs.is_empty() {
            self.v += (now - self.v_updated_at) / self.jobs.len() as f64;
        }
        self.v_updated_at = now;
    }

    /// The share changed: drop the pending departure, schedule the new first one.
    fn reschedule(&mut self, cx: &Context<Self>) {
        if let Some(key) = self.next_departure.take() {
            key.cancel();
        }
        if let Some(first) = self.jobs.peek() {
            let dt = (first.finish_v - self.v).max(0.0) * self.jobs.len() as f64;
            self.next_departure = Some(
                cx.schedule_keyed_event(delay(dt), schedulable!(Self::depart), ())
                    .unwrap(),
            );
        }
    }

    #[nexosim(schedulable)]
    fn arrive(&mut self, _: (), cx: &Context<Self>) {
        let now = secs(cx.time());
        self.advance(now);
        let size = Exp::new(1.0 / PS_MEAN_SIZE_S).unwrap().sample(&mut self.rng);
        self.jobs.push(PsJob { finish_v: self.v + size, arrived_at: now });
        self.reschedule(cx);
        self.schedule_next_arrival(cx);
    }

    #[nexosim(schedulable)]
    fn depart(&mut self, _: (), cx: &Context<Self>) {
        let now = secs(cx.time());
        self.advance(now);
        self.next_departure = None; // this event is the one the key pointed to
        let done = self.jobs.pop().expect("departure with an empty link");
        self.stats.record(now - done.arrived_at);
        self.reschedule(cx);
    }

    pub async fn results(&mut self, _: ()) -> ResponseStats {
        self.stats.clone()
    }
}

// ------------------------------------------------------------------ driver ----

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: nexosim-peers <mm16|ps> <jobs> <warmup_jobs> <seed>");
        std::process::exit(2);
    }
    let model = args[1].as_str();
    let jobs: u64 = args[2].parse().expect("jobs");
    let warmup: u64 = args[3].parse().expect("warmup_jobs");
    let seed: u64 = args[4].parse().expect("seed");
    let rng = Pcg64Mcg::seed_from_u64(seed);
    let stats = ResponseStats::new(jobs, warmup);

    // Build outside the timed region (bwsim's engine.wall_s likewise excludes
    // parsing), then time only the event loop.
    let (wall_s, out) = match model {
        "mm16" => {
            let mbox = Mailbox::new();
            let m = MmcQueue {
                rng,
                arrivals_left: jobs,
                busy: 0,
                waiting: VecDeque::new(),
                stats,
            };
            let mut bench = SimInit::with_num_threads(1);
            let q = QuerySource::new().connect(MmcQueue::results, &mbox).register(&mut bench);
            let mut sim = bench.add_model(m, mbox, "mm16").init(MonotonicTime::EPOCH).unwrap();
            let t0 = Instant::now();
            sim.run().unwrap();
            let wall = t0.elapsed().as_secs_f64();
            (wall, sim.process_query(&q, ()).unwrap())
        }
        "ps" => {
            let mbox = Mailbox::new();
            let m = PsLink {
                rng,
                arrivals_left: jobs,
                jobs: BinaryHeap::new(),
                v: 0.0,
                v_updated_at: 0.0,
                next_departure: None,
                stats,
            };
            let mut bench = SimInit::with_num_threads(1);
            let q = QuerySource::new().connect(PsLink::results, &mbox).register(&mut bench);
            let mut sim = bench.add_model(m, mbox, "ps").init(MonotonicTime::EPOCH).unwrap();
            let t0 = Instant::now();
            sim.run().unwrap();
            let wall = t0.elapsed().as_secs_f64();
            (wall, sim.process_query(&q, ()).unwrap())
        }
        other => {
            eprintln!("unknown model {other:?} (mm16 or ps)");
            std::process::exit(2);
        }
    };
    let (mean, se) = out.mean_and_se();
    assert_eq!(out.completed, jobs, "every job must leave before the event queue empties");
    // events = 2 per job (one arrival, one departure) for every tool, by definition.
    println!(
        "{{\"tool\":\"nexosim\",\"model\":\"{model}\",\"jobs\":{jobs},\"events\":{},\"wall_s\":{wall_s:.6},\"mean_response_s\":{mean:.6},\"se_s\":{se:.6}}}",
        2 * jobs
    );
}
