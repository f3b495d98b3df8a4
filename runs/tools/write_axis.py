#!/usr/bin/env python3
"""Run 10's write-fraction axis comparison, re-run with one host per calibration
(NOTEBOOK.md, run 10's addendum). Every replay of runs 8-13's shapes is re-predicted
with its boot's calibration four ways, then tabled against the mean of its repeats:

  merge-off  the calibration merged over the scenario, as `--calibration` did before
             (a key it lacks came from the bundled H200 calibration the shapes include)
  merge-on   the same, with the write-fraction latency axis switched on
  host-off   `--calibration`: the file is the whole host, a key it lacks its typical value
  host-on    the same, with the axis on

The axis is the calibration's read (0) and write (1/2) mixes' curves beside its copy
mix's (1/3), each as latency against achieved load with the load rising, as validate's
write-axis column built them.

Usage: runs/data restore accuracy/h200-run8 ... (each run below), then
  python3 runs/tools/write_axis.py BWSIM OUT [RUN ...]    re-predict into OUT, then table
  python3 runs/tools/write_axis.py --table OUT            table what OUT holds
"""
import glob
import os
import statistics
import subprocess
import sys
import tomllib

RAW = "runs/raw/accuracy"
RUNS = {
    "run8": ("h200-run8", "h200-run8/calibration-boot1.toml"),
    "run9": ("h200-run9", "h200-run9/calibration-boot1.toml"),
    "run10": ("h200-run10", "h200-run10/calibration-boot1.toml"),
    "run11-h200": ("h200-run11", "h200-run11/calibration-boot1.toml"),
    "run11-h100": ("h100-run11", "h100-run11/calibration-boot1.toml"),
    "run12-h100": ("h100-run12", "h100-run12/calibration-boot1.toml"),
    "run13-h100-A": ("h100-run13/c1", "h100-run13/c1/calibration.toml"),
    "run13-h100-B": ("h100-run13/c3", "h100-run13/c3/calibration.toml"),
}
# Runs 8-11's replay.json files predate the recorded overrides: each shape's own.
SHAPES = {
    "stream-pin": ("scenarios/shapes/stream-gpu-d2h.toml", ["params.stream_gbps=7"]),
    "stream-page": ("scenarios/shapes/stream-gpu-d2h.toml", ["params.stream_gbps=7", "params.pinned=false"]),
    "chase-pin": ("scenarios/shapes/chase-upload-msm.toml", []),
    "chase-page": ("scenarios/shapes/chase-upload-msm.toml", ["params.pinned=false"]),
    "copy-pin": ("scenarios/shapes/copy-upload-ntt.toml", []),
    "copy-page": ("scenarios/shapes/copy-upload-ntt.toml", ["params.pinned=false"]),
    "fill-pin": ("scenarios/shapes/copy-upload-ntt.toml", ["params.write_frac=0.5"]),
    "fill-page": ("scenarios/shapes/copy-upload-ntt.toml", ["params.write_frac=0.5", "params.pinned=false"]),
}
VARIANTS = ["recorded", "merge-off", "merge-on", "host-off", "host-on"]


def replays(run_dir, shape):
    """The run's replays of `shape` (one per repeat) whose replay.json came back."""
    found = glob.glob(f"{RAW}/{run_dir}/c*/{shape}-r*") + glob.glob(f"{RAW}/{run_dir}/{shape}-r*")
    return sorted(d for d in found if os.path.exists(f"{d}/replay.json"))


def axis_sets(cal):
    """`--set`s that switch the write-fraction axis on with `cal`'s own mixes."""
    with open(cal, "rb") as f:
        fitted = tomllib.load(f)["calibration"]["fitted"]["contention"]["offered_latency"]
    mixes = []
    for name, m in fitted.items():
        if name == "copy":
            continue
        pts = []
        for p in m["points"]:
            load = max(p["achieved_load"], 0.0)
            if not pts or load > pts[-1][0]:
                pts.append((load, p["latency_ns"]["median"]))
        if len(pts) >= 2:
            curve = ", ".join(f"[{x!r}, {y!r}]" for x, y in pts)
            mixes.append(f"{{ write_fraction = {m['write_fraction']!r}, curve = [{curve}] }}")
    return [
        "hardware.dram.latency_curve_write_fraction=0.3333333333333333",
        "hardware.dram.latency_mixes=[" + ", ".join(mixes) + "]",
    ]


def repredict(bwsim, out, only):
    root = os.getcwd()
    for run, (run_dir, cal) in RUNS.items():
        if only and run not in only:
            continue
        cal = os.path.join(root, RAW, cal)
        if not os.path.exists(cal):
            sys.exit(f"{cal} is missing: runs/data restore accuracy/{run_dir.split('/')[0]}")
        axis = axis_sets(cal)
        for shape, (scenario, sets) in SHAPES.items():
            for d in replays(run_dir, shape):
                tail = "/".join(d.split("/")[-2:])
                # The old merge: a scenario that includes the shape, then the calibration.
                merged = os.path.join(os.path.dirname(scenario), f".write-axis-{shape}.toml")
                with open(merged, "w") as f:
                    f.write(f'include = ["{os.path.join(root, scenario)}", "{cal}"]\n')
                try:
                    for variant, base, extra in [
                        ("merge-off", [merged], []),
                        ("merge-on", [merged], axis),
                        ("host-off", [scenario, "--calibration", cal], []),
                        ("host-on", [scenario, "--calibration", cal], axis),
                    ]:
                        args = [bwsim, "replay", *base, "--repredict", d]
                        args += ["--out", os.path.join(out, variant, run, tail)]
                        for s in sets + extra:
                            args += ["--set", s]
                        r = subprocess.run(args, capture_output=True, text=True)
                        if r.returncode != 0:
                            sys.exit(f"{' '.join(args)}\n{r.stderr}")
                finally:
                    os.remove(merged)


def table(out):
    import json
    summary, points = [], []
    for run, (run_dir, _) in RUNS.items():
        for shape in SHAPES:
            dirs = [d for d in replays(run_dir, shape)
                    if os.path.exists(f"{out}/host-on/{run}/{'/'.join(d.split('/')[-2:])}")]
            if not dirs:
                continue
            by_x = {}
            for d in dirs:
                tail = "/".join(d.split("/")[-2:])
                paths = {"recorded": f"{d}/replay.json"}
                paths.update({v: f"{out}/{v}/{run}/{tail}/replay.json" for v in VARIANTS[1:]})
                docs = {v: json.load(open(p)) for v, p in paths.items()}
                for i, p in enumerate(docs["recorded"]["points"]):
                    e = by_x.setdefault(p["x"], {"runs": [], **{v: [] for v in VARIANTS}})
                    e["runs"] += [r["seconds_per_job"] for r in p["measured"]["runs"]]
                    for v in VARIANTS:
                        e[v].append(docs[v]["points"][i]["predicted"]["seconds_per_job"])
            errs = {v: [] for v in VARIANTS}
            row = []
            for x in sorted(by_x):
                e = by_x[x]
                m = statistics.mean(e["runs"])
                cells = []
                for v in VARIANTS:
                    err = (statistics.mean(e[v]) - m) / m * 100
                    errs[v].append(err)
                    cells.append(f"{err:+.1f}")
                row.append(f"{x:g}: {m:.3f} " + " / ".join(cells))
            summary.append((run, shape, len(dirs), errs))
            points.append(f"- {run} {shape}: " + "; ".join(row))
    cell = lambda e: f"{statistics.median(abs(x) for x in e):.1f} / {max(abs(x) for x in e):.1f}%"
    print("| run | shape | repeats | " + " | ".join(VARIANTS) + " |")
    print("|---|---|---:|" + "---|" * len(VARIANTS))
    for run, shape, n, errs in summary:
        print(f"| {run} | {shape} | {n} | " + " | ".join(cell(errs[v]) for v in VARIANTS) + " |")
    groups = [
        ("every point", lambda run, shape: True),
        ("pinned", lambda run, shape: shape.endswith("-pin")),
        ("pageable", lambda run, shape: shape.endswith("-page")),
        ("the fills", lambda run, shape: shape.startswith("fill")),
        ("H200 boots", lambda run, shape: "h100" not in run),
        ("H100 boots", lambda run, shape: "h100" in run),
    ]
    for name, member in groups:
        print(f"\n{name}:")
        for v in VARIANTS:
            every = [abs(x) for run, shape, _, errs in summary if member(run, shape)
                     for x in errs[v]]
            within = lambda t: sum(x <= t for x in every) / len(every) * 100
            print(f"  {v}: {len(every)} points, median {statistics.median(every):.2f}%, max "
                  f"{max(every):.1f}%, within 5% {within(5):.0f}%, within 10% {within(10):.0f}%")
    better = sum(statistics.median(abs(x) for x in e["host-on"])
                 < statistics.median(abs(x) for x in e["host-off"]) - 0.3
                 for _, _, _, e in summary)
    worse = sum(statistics.median(abs(x) for x in e["host-on"])
                > statistics.median(abs(x) for x in e["host-off"]) + 0.3
                for _, _, _, e in summary)
    print(f"\nOne host, axis on against off, by median |error| per run and shape: {better} "
          f"better and {worse} worse by more than 0.3 points, {len(summary) - better - worse} "
          f"within 0.3, of {len(summary)}")
    print("\nPer point (workers: measured mean s/job, then each column's error %, in the order above):")
    print("\n".join(points))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--table":
        table(args[1])
    elif len(args) >= 2:
        repredict(args[0], args[1], args[2:])
        table(args[1])
    else:
        sys.exit(__doc__)
