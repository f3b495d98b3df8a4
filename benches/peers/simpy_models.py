"""SimPy implementations of the two peer-benchmark models.

Usage: python simpy_models.py <mm16|ps> <jobs> <warmup_jobs> <seed>
Prints one JSON line that report.py reads.

* mm16: M/M/16 FIFO queue written the way SimPy's documentation teaches it:
  a process per job that requests a `simpy.Resource(capacity=16)` and holds
  it for an exponential service time.
* ps:   M/M/1 processor sharing (every job present gets an equal share of one
  link). SimPy has no rate-shared resource, so it is written by hand: a
  server process sleeps until the next departure and is interrupted by each
  arrival, which changes everyone's share and so the next departure time.
  As in the nexosim version, a virtual clock V (service attained by each job
  present, dV/dt = 1/n) avoids touching every job at every event.

Parameters are the same as in the nexosim program and the bwsim scenarios.
"""

import heapq
import json
import random
import sys
import time

import simpy

MM16_SERVERS = 16
MM16_ARRIVAL_RATE = 14.4  # rho = 0.9
MM16_MEAN_SERVICE_S = 1.0
PS_ARRIVAL_RATE = 0.9  # rho = 0.9
PS_MEAN_SIZE_S = 1.0
BATCHES = 20  # batch means for the standard error; same as the nexosim program


class ResponseStats:
    """Streaming batch means; drops the first `warmup` completions like bwsim."""

    def __init__(self, env, jobs, warmup):
        self.jobs = jobs
        self.done = env.event()  # triggered by the last departure
        self.warmup = warmup
        self.batch_size = max(1, (jobs - warmup) // BATCHES)
        self.completed = 0
        self.sums = [0.0] * BATCHES

    def record(self, response_s):
        self.completed += 1
        k = self.completed - self.warmup - 1
        if k >= 0:
            b = k // self.batch_size
            if b < BATCHES:
                self.sums[b] += response_s
        if self.completed == self.jobs:
            self.done.succeed()

    def mean_and_se(self):
        means = [s / self.batch_size for s in self.sums]
        mean = sum(means) / BATCHES
        var = sum((m - mean) ** 2 for m in means) / (BATCHES - 1)
        return mean, (var / BATCHES) ** 0.5


def mm16(env, jobs, rng, stats):
    server = simpy.Resource(env, capacity=MM16_SERVERS)

    def job(env):
        arrived = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(1.0 / MM16_MEAN_SERVICE_S))
        stats.record(env.now - arrived)

    def source(env):
        for _ in range(jobs):
            yield env.timeout(rng.expovariate(MM16_ARRIVAL_RATE))
            env.process(job(env))

    env.process(source(env))


def ps(env, jobs, rng, stats):
    st = {"v": 0.0, "v_at": 0.0}
    present = []  # heap of (finish_v, arrival_time)

    def advance():
        # Bring the virtual clock up to now at the old share 1/n.
        if present:
            st["v"] += (env.now - st["v_at"]) / len(present)
        st["v_at"] = env.now

    def server(env):
        while True:
            try:
                if present:
                    dt = max(0.0, present[0][0] - st["v"]) * len(present)
                    yield env.timeout(dt)
                    advance()
                    _, arrived = heapq.heappop(present)
                    stats.record(env.now - arrived)
                else:
                    yield env.event()  # idle until an arrival interrupts us
            except simpy.Interrupt:
                pass  # the arrival already joined; loop recomputes the next departure

    srv = env.process(server(env))

    def source(env):
        for _ in range(jobs):
            yield env.timeout(rng.expovariate(PS_ARRIVAL_RATE))
            advance()
            size = rng.expovariate(1.0 / PS_MEAN_SIZE_S)
            heapq.heappush(present, (st["v"] + size, env.now))
            srv.interrupt()

    env.process(source(env))


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("mm16", "ps"):
        sys.exit("usage: simpy_models.py <mm16|ps> <jobs> <warmup_jobs> <seed>")
    model, jobs, warmup, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    env = simpy.Environment()
    stats = ResponseStats(env, jobs, warmup)
    {"mm16": mm16, "ps": ps}[model](env, jobs, rng, stats)
    t0 = time.perf_counter()
    # The PS server process never ends, so run until the last job has left
    # instead of until the event queue is empty.
    env.run(until=stats.done)
    wall = time.perf_counter() - t0
    mean, se = stats.mean_and_se()
    print(json.dumps({
        "tool": "simpy", "model": model, "jobs": jobs, "events": 2 * jobs,
        "wall_s": round(wall, 6), "mean_response_s": round(mean, 6), "se_s": round(se, 6),
    }))


if __name__ == "__main__":
    main()
