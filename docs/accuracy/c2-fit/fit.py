#!/usr/bin/env python3
"""C2 fit harness: runs the bundled C2 reference scenarios at every load in targets.csv
and prints target, source, model and error per row, then the worst |error| per source.

Usage (from the repository root, after `cargo build --release`):
  python3 docs/accuracy/c2-fit/fit.py                 # the bundled scenarios
  python3 docs/accuracy/c2-fit/fit.py --cuzk FILE     # another cuzk scenario (a trial fit)
  python3 docs/accuracy/c2-fit/fit.py --proxy         # recompute the proxy targets from
                                                      # old-fit.toml and rewrite targets.csv
  --set KEY=VALUE (repeatable) applies to every cuzk run; --bin PATH picks the binary.

targets.csv columns: name, source (S = published in docs/reference/c2-pipeline.md §4;
proxy = the pre-refit fit under rules = "v1", which the reviewer found within 3% of the
reference box at these loads), scenario (cuzk | stock), sets (space-separated --set
overrides), metric, target, band_pct (the tolerance tests/c2_fit.rs holds).

Metrics: spj (mean s/proof over the replications), stage:NAME (that stage's mean_s),
gpu_stages (the GPU region's stage means summed), bracketed / sampled (GPU busy fractions),
synth_span (per proof, first SYNTH_START to last SYNTH_END, from the TIMELINE log),
stock_gpu (s/proof minus the synthesis stage's mean).
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = os.path.join(HERE, "targets.csv")
OLD_FIT = os.path.join(HERE, "old-fit.toml")
SCENARIOS = {"cuzk": "scenarios/c2-32g-cuzk.toml", "stock": "scenarios/c2-32g-stock.toml"}
# Enough proofs and seeds that seed noise stays well inside the 3% proxy band.
RUN_SETS = ["arrivals.jobs=40", "arrivals.warmup_jobs=8"]
REPLICATIONS = "4"
GPU_STAGES = ["gpu_setup", "upload_abc", "ntt", "h_msm", "batch_add", "tail_msm"]


def synth_span(log_path):
    first, last = {}, {}
    for line in open(log_path):
        parts = line.strip().split(",")
        if len(parts) < 4 or parts[0] != "TIMELINE":
            continue
        t, event, job = float(parts[1]) / 1000, parts[2], parts[3]
        if event == "SYNTH_START":
            first[job] = min(first.get(job, t), t)
        elif event == "SYNTH_END":
            last[job] = max(last.get(job, t), t)
    spans = [last[j] - first[j] for j in last if j in first]
    return statistics.mean(spans)


def run(binary, scenario, sets, metric):
    args = [binary, "run", scenario, "--format", "json", "--no-what-if", "--no-ideal"]
    args += ["--replications", REPLICATIONS]
    for s in RUN_SETS + sets:
        args += ["--set", s]
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "timeline.log")
        if metric == "synth_span":
            args += ["--timeline-log", log]
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{' '.join(args)} failed:\n{out.stderr}")
        report = json.loads(out.stdout)
        stages = report["stages"]
        if metric == "spj":
            return report["replications"]["seconds_per_job"]["mean"]
        if metric.startswith("stage:"):
            return stages[metric[len("stage:"):]]["mean_s"]
        if metric == "gpu_stages":
            return sum(stages[s]["mean_s"] for s in GPU_STAGES)
        if metric == "bracketed":
            return report["gpu"]["bracketed_busy_frac"]
        if metric == "sampled":
            return report["gpu"]["sampled_busy_frac"]
        if metric == "stock_gpu":
            spj = report["replications"]["seconds_per_job"]["mean"]
            return spj - stages["synthesize"]["mean_s"]
        if metric == "synth_span":
            return synth_span(log)
        sys.exit(f"targets.csv: unknown metric {metric!r}")


def main():
    argv = sys.argv[1:]
    binary, proxy, cuzk, extra = "target/release/bwsim", False, SCENARIOS["cuzk"], []
    while argv:
        a = argv.pop(0)
        if a == "--proxy":
            proxy = True
        elif a == "--bin":
            binary = argv.pop(0)
        elif a == "--cuzk":
            cuzk = argv.pop(0)
        elif a == "--set":
            extra.append(argv.pop(0))
        else:
            sys.exit(f"unknown argument {a!r} (see the docstring)")
    rows = list(csv.DictReader(open(TARGETS)))
    if proxy:
        for r in rows:
            if r["source"] == "proxy":
                r["target"] = f"{run(binary, OLD_FIT, r['sets'].split(), r['metric']):.3f}"
        with open(TARGETS, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        print(f"rewrote the proxy targets in {TARGETS}")
        return
    worst = {}
    print("| target | source | load | metric | target value | model | error | band |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        scenario = cuzk if r["scenario"] == "cuzk" else SCENARIOS[r["scenario"]]
        sets = r["sets"].split() + (extra if r["scenario"] == "cuzk" else [])
        model = run(binary, scenario, sets, r["metric"])
        target = float(r["target"])
        err = (model / target - 1) * 100
        key = r["source"]
        worst[key] = max(worst.get(key, 0.0), abs(err))
        flag = "" if abs(err) <= float(r["band_pct"]) else " OUT"
        load = r["sets"].replace("params.", "") or "defaults"
        print(f"| {r['name']} | {key} | {load} | {r['metric']} | {target:.3f} | {model:.3f} "
              f"| {err:+.1f}% | ±{r['band_pct']}%{flag} |")
    for key, w in sorted(worst.items()):
        print(f"worst |error| {key}: {w:.1f}%")


if __name__ == "__main__":
    main()
