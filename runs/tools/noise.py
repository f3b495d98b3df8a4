#!/usr/bin/env python3
"""How noisy a run's measurements are, apart from any model: per shape, the standard error
of each point's mean over its interleaved repeats (sample standard deviation / sqrt(n), in %
of the mean), and each single run against the mean of the others. A perfect model would
still show errors of about this size. Usage: noise.py RUN_DIR [RUN_DIR ...], where RUN_DIR
holds call folders (c1, c2, ...) of replays named SHAPE-rN (runs/accuracy/h200-run9)."""
import glob
import math
import statistics
import sys

from runfiles import load_json


def replays_by_shape(run):
    """{shape: [replay.json, ...]} of a run folder's replays (call folders c1, c2, ...
    holding SHAPE-rN), each shape's repeats in folder order."""
    shapes = {}
    for d in sorted(glob.glob(f"{run}/c*/*-r[0-9]")):
        name = d.rstrip("/").split("/")[-1].rsplit("-r", 1)[0]
        shapes.setdefault(name, []).append(load_json(f"{d}/replay.json"))
    return shapes


def main():
    print("| run | shape | repeats | standard error of the mean, median / max | one run vs the others, median / max |")
    print("|---|---|---:|---|---|")
    for run in sys.argv[1:]:
        shapes = {
            name: [{p["x"]: p["measured"]["seconds_per_job"] for p in r["points"]} for r in replays]
            for name, replays in replays_by_shape(run).items()
        }
        for name, runs in sorted(shapes.items()):
            if len(runs) < 2:
                continue
            se, loo = [], []
            for x in runs[0]:
                v = [r[x] for r in runs if x in r]
                if len(v) < 2:
                    continue
                m = statistics.mean(v)
                se.append(statistics.stdev(v) / m / math.sqrt(len(v)) * 100)
                for i in range(len(v)):
                    others = statistics.mean(v[:i] + v[i + 1:])
                    loo.append(abs(v[i] / others - 1) * 100)
            print(f"| {run.rstrip('/').split('/')[-1]} | {name} | {len(runs)} | "
                  f"{statistics.median(se):.1f} / {max(se):.1f}% | "
                  f"{statistics.median(loo):.1f} / {max(loo):.1f}% |")


if __name__ == "__main__":
    main()
