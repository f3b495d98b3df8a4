#!/usr/bin/env python3
"""Accuracy table from replay folders: per point, the mean of the interleaved measured
runs (each folder one run, or one folder with several), the prediction, the error, and
the runs' own spread. Usage: table.py LABEL DIR [DIR ...] (the DIRs hold replay.json; a
.txt file instead holds the table a replay printed, for a run whose folder was lost)."""
import json
import statistics
import sys


def main():
    label, dirs = sys.argv[1], sys.argv[2:]
    by_x = {}
    for d in dirs:
        if d.endswith(".txt"):
            for line in open(d):
                if line.startswith("params."):
                    f = line.split()
                    e = by_x.setdefault(float(f[0].split("=")[1]), {"runs": [], "pred": []})
                    e["runs"].append(float(f[2]))
                    e["pred"].append(float(f[3]))
            continue
        r = json.load(open(f"{d}/replay.json"))
        for p in r["points"]:
            e = by_x.setdefault(p["x"], {"runs": [], "pred": []})
            e["runs"] += [run["seconds_per_job"] for run in p["measured"]["runs"]]
            e["pred"].append(p["predicted"]["seconds_per_job"])
    print(f"| {label} | runs (s/job) | mean | predicted | error | runs' spread |")
    print("|---:|---|---:|---:|---:|---:|")
    errs = []
    for x in sorted(by_x):
        e = by_x[x]
        mean = statistics.mean(e["runs"])
        pred = statistics.mean(e["pred"])
        err = (pred - mean) / mean * 100
        spread = (max(e["runs"]) - min(e["runs"])) / mean * 100
        errs.append(abs(err))
        runs = ", ".join(f"{v:.3f}" for v in e["runs"])
        print(f"| {x:g} | {runs} | {mean:.3f} | {pred:.3f} | {err:+.1f}% | {spread:.1f}% |")
    print(f"\nmedian |error| {statistics.median(errs):.1f}%, max {max(errs):.1f}% over {len(errs)} points")


if __name__ == "__main__":
    main()
