#!/usr/bin/env python3
"""Accuracy table from replay folders: per point, the mean of the interleaved measured
runs (each folder one run, or one folder with several), the prediction, the error, and
the runs' own spread. Usage: table.py [--before ROOT [--as NAME]] LABEL DIR [DIR ...]
(the DIRs hold replay.json, or replay.json.gz as runs/ keeps it; a .txt file instead
holds the table a replay printed, for a run whose folder was lost). With --before,
ROOT/<DIR's last two components>/replay.json holds a `replay --repredict` of each DIR
under another model, shown as a second prediction column (headed "before", or NAME with
--as: a re-prediction made after the runs is "post hoc"). Replays that looked at the host
before each run (`host_before`) get a last column with that chase's ns per step, run by
run. With --relative, every run and every prediction is divided by its own first point
(one worker): what is left is the error of the contention curve alone, without the level
that the first point sets (the host's state against the calibration, the replay's
sizing)."""
import statistics
import sys

from runfiles import load_json


def new_point():
    """One point's measured runs, predictions, re-predictions and host chases."""
    return {"runs": [], "pred": [], "old": [], "chase": []}


def main():
    args = sys.argv[1:]
    before, relative, name = None, False, "before"
    while args[0] in ("--before", "--relative", "--as"):
        if args[0] == "--before":
            before, args = args[1], args[2:]
        elif args[0] == "--as":
            name, args = args[1], args[2:]
        else:
            relative, args = True, args[1:]
    label, dirs = args[0], args[1:]
    by_x = {}
    for d in dirs:
        if d.endswith(".txt"):
            for line in open(d):
                if line.startswith("params."):
                    f = line.split()
                    e = by_x.setdefault(float(f[0].split("=")[1]), new_point())
                    e["runs"].append(float(f[2]))
                    e["pred"].append(float(f[3]))
            continue
        r = load_json(f"{d}/replay.json")
        # ROOT keeps each re-prediction under the DIR's last two components (call/run).
        tail = "/".join(d.rstrip("/").split("/")[-2:])
        old = load_json(f"{before}/{tail}/replay.json") if before else None
        first = r["points"][0]
        # One folder may hold several runs: each run is divided by its own first point.
        m1 = [run["seconds_per_job"] if relative else 1.0 for run in first["measured"]["runs"]]
        p1 = first["predicted"]["seconds_per_job"] if relative else 1.0
        o1 = old["points"][0]["predicted"]["seconds_per_job"] if old and relative else 1.0
        for i, p in enumerate(r["points"]):
            e = by_x.setdefault(p["x"], new_point())
            e["runs"] += [run["seconds_per_job"] / m for run, m in zip(p["measured"]["runs"], m1)]
            e["chase"].extend(
                run["host_before"]["chase_ns_per_step"]
                for run in p["measured"]["runs"]
                if "host_before" in run
            )
            e["pred"].append(p["predicted"]["seconds_per_job"] / p1)
            if old:
                e["old"].append(old["points"][i]["predicted"]["seconds_per_job"] / o1)
    extra = f" {name} | error |" if before else ""
    # Replays that look at the host before each run get its chase ns/step per run.
    chase = any(e["chase"] for e in by_x.values())
    print(f"| {label} | runs (s/job) | mean | predicted | error |{extra} runs' spread |"
          + (" host chase before each run |" if chase else ""))
    print("|---:|---|---:|---:|---:|" + ("---:|---:|" if before else "") + "---:|"
          + ("---|" if chase else ""))
    errs, old_errs = [], []
    for x in sorted(by_x):
        e = by_x[x]
        mean = statistics.mean(e["runs"])
        pred = statistics.mean(e["pred"])
        err = (pred - mean) / mean * 100
        spread = (max(e["runs"]) - min(e["runs"])) / mean * 100
        # Relative to the first point, the first point's error is 0 by construction.
        counted = not (relative and x == min(by_x))
        if counted:
            errs.append(abs(err))
        runs = ", ".join(f"{v:.3f}" for v in e["runs"])
        cols = ""
        if before:
            o = statistics.mean(e["old"])
            oerr = (o - mean) / mean * 100
            if counted:
                old_errs.append(abs(oerr))
            cols = f" {o:.3f} | {oerr:+.1f}% |"
        now = " " + ", ".join(f"{v:.0f} ns" for v in e["chase"]) + " |" if chase else ""
        print(f"| {x:g} | {runs} | {mean:.3f} | {pred:.3f} | {err:+.1f}% |{cols} {spread:.1f}% |{now}")
    print(f"\nmedian |error| {statistics.median(errs):.1f}%, max {max(errs):.1f}% over {len(errs)} points")
    if before:
        print(f"{name}: median |error| {statistics.median(old_errs):.1f}%, max {max(old_errs):.1f}%")


if __name__ == "__main__":
    main()
