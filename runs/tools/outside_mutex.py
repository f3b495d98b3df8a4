#!/usr/bin/env python3
"""How many workers were outside the GPU mutex's queue (in a shape's CPU stage), from a
TIMELINE log of a replay or of `bwsim run --timeline-log`: the workers minus the jobs
between their GPU_START and GPU_END markers, averaged over time from the GPU_END that
ends the first quarter of them to the last. Usage: outside_mutex.py WORKERS LOG [LOG ...]."""
import sys


def mean_inside(path):
    events = []
    for line in open(path):
        if line.startswith("TIMELINE,"):
            f = line.strip().split(",")
            events.append((float(f[1]), f[2], f[3]))
    events.sort()
    ends = [t for t, e, _ in events if e == "GPU_END"]
    t0, t1 = ends[len(ends) // 4], ends[-1]
    inside, area, last = set(), 0.0, None
    for t, e, job in events:
        if last is not None:
            lo, hi = max(last, t0), min(t, t1)
            area += len(inside) * max(0.0, hi - lo)
        if e == "GPU_START":
            inside.add(job)
        elif e == "GPU_END":
            inside.discard(job)
        last = t
    return area / (t1 - t0)


def main():
    workers = int(sys.argv[1])
    for path in sys.argv[2:]:
        q = mean_inside(path)
        print(f"{path}: in the mutex's queue {q:.2f}, outside {workers - q:.2f}")


if __name__ == "__main__":
    main()
