#!/usr/bin/env python3
"""Accuracy over several runs (boots): each run's error per point (its prediction, from its
own boot's calibration, against the mean of its repeats), then per point the mean of the
runs' errors. A model error repeats from boot to boot with one sign; a boot's noise does
not. Usage: pooled.py RUN_DIR [RUN_DIR ...], where RUN_DIR holds call folders (c1, c2, ...)
of replays named SHAPE-rN (runs/accuracy/h200-run10). Prints, per shape, the runs' own
median / max |error|, the pooled median / max |error| and the points whose error has one
sign in every run."""
import statistics
import sys

from noise import replays_by_shape


def run_errors(run):
    """{shape: {x: error %}} of one run: prediction against the mean of the repeats."""
    by_shape = {}
    for name, replays in replays_by_shape(run).items():
        pts = by_shape.setdefault(name, {})
        for r in replays:
            for p in r["points"]:
                e = pts.setdefault(p["x"], {"runs": [], "pred": []})
                e["runs"] += [m["seconds_per_job"] for m in p["measured"]["runs"]]
                e["pred"].append(p["predicted"]["seconds_per_job"])
    out = {}
    for name, pts in by_shape.items():
        out[name] = {}
        for x, e in pts.items():
            mean = statistics.mean(e["runs"])
            out[name][x] = (statistics.mean(e["pred"]) - mean) / mean * 100
    return out


def med_max(v):
    a = [abs(x) for x in v]
    return f"{statistics.median(a):.1f} / {max(a):.1f}%"


def main():
    runs = [(r.rstrip("/").split("/")[-1], run_errors(r)) for r in sys.argv[1:]]
    shapes = sorted({s for _, errs in runs for s in errs})
    print("| shape | runs | each run, median / max | pooled, median / max | one sign in every run |")
    print("|---|---|---|---|---|")
    for s in shapes:
        have = [(n, e[s]) for n, e in runs if s in e]
        xs = sorted(set.intersection(*(set(e) for _, e in have)))
        each = ", ".join(f"{n.replace('h200-', '')} {med_max(list(e.values()))}" for n, e in have)
        pooled = [statistics.mean(e[x] for _, e in have) for x in xs]
        same = [f"{x:g} ({'+' if pooled[i] > 0 else '-'})" for i, x in enumerate(xs)
                if len(have) > 1 and len({e[x] > 0 for _, e in have}) == 1]
        print(f"| {s} | {len(have)} | {each} | {med_max(pooled)} | "
              f"{', '.join(same) if same else 'none'} |")
    print()
    print("Per point, each run's error (in the order the runs are named) and their mean:")
    for s in shapes:
        have = [(n, e[s]) for n, e in runs if s in e]
        xs = sorted(set.intersection(*(set(e) for _, e in have)))
        cells = [", ".join(n.replace("h200-", "") for n, _ in have)]
        for x in xs:
            v = [e[x] for _, e in have]
            cells.append(f"{x:g}: " + " ".join(f"{y:+.1f}" for y in v)
                         + f" (mean {statistics.mean(v):+.1f})")
        print(f"- {s}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
