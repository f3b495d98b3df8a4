"""Collects the peer-benchmark results written by run.sh into one table.

Usage: python3 report.py <results_dir>   (standard library only)

Exit status: 0 all tools ran and agree; 1 a tool disagrees with the analytic
value or with another tool; 3 bwsim could not be run (peers checked only).

Fairness rules, applied to every tool alike:
* event = one arrival or one departure, 2 per job. Tools count their own
  internal events very differently (SimPy: process starts, resource requests
  and releases, timeouts; bwsim: stage ready/start/end ...), so events/s is
  2 * jobs / wall s for every tool; bwsim's native engine.events is shown
  beside it for information.
* wall s = the event loop only, timed inside each program (bwsim's
  engine.wall_s; perf_counter around env.run() in SimPy; Instant around
  Simulation::run() in nexosim). Process start-up, parsing and the Python
  interpreter start are excluded.
* peak RSS = /usr/bin/time -v of the whole process.

Agreement: each tool's mean response time must lie within Z standard errors
of the analytic value, and every pair of tools within Z standard errors of
their difference. SimPy and nexosim estimate their SE by batch means (20
batches). bwsim reports means only, so it is given the larger of the two
peers' SEs for the same model: same model, same number of jobs, same
warm-up, so the same sampling error.
"""

import json
import math
import os
import re
import sys

Z = 3.0
TOOLS = ("bwsim", "simpy", "nexosim", "floor")
NAMES = {"bwsim": "bwsim", "simpy": "SimPy", "nexosim": "nexosim", "floor": "floor (bare Rust loop)"}
# The floor is a bare event loop written for M/M/16 only (src/floor.rs).
FLOOR_MODELS = ("mm16",)
MODELS = {
    # model: (label, stage name in the bwsim scenario)
    "mm16": ("M/M/16 FIFO, rho=0.9", "service"),
    "ps": ("M/M/1-PS (one link), rho=0.9", "transfer"),
}
MIB = 1024.0


def erlang_c_response(c, lam, mu):
    """Mean response time of M/M/c (Erlang C waiting + service)."""
    a = lam / mu
    rho = a / c
    head = sum(a**k / math.factorial(k) for k in range(c))
    tail = a**c / math.factorial(c) / (1.0 - rho)
    p_wait = tail / (head + tail)
    return p_wait / (c * mu - lam) + 1.0 / mu


ANALYTIC = {
    "mm16": erlang_c_response(16, 14.4, 1.0),
    "ps": 1.0 / (1.0 - 0.9),  # M/G/1-PS: E[S] / (1 - rho)
}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def cpu_s(path):
    """User + system CPU seconds of the whole process (start-up included)."""
    text = read(path)
    u = text and re.search(r"User time \(seconds\): ([\d.]+)", text)
    k = text and re.search(r"System time \(seconds\): ([\d.]+)", text)
    return float(u.group(1)) + float(k.group(1)) if u and k else None


def peak_rss_kib(path):
    text = read(path)
    m = text and re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return int(m.group(1)) if m else None


def parse_peer(text, name):
    r = json.loads(text.strip().splitlines()[-1])
    r["native_events"] = None
    return r


def parse_bwsim(text, name, stage):
    """bwsim's own JSON report -> the common result shape (None if unusable).

    Response time = the single stage's mean_wait_s + mean_s (mean_s includes
    the slow-down from sharing the link). bwsim also reports the job-level
    response.mean_s; with one stage both must be the same number.
    """
    try:
        rep = json.loads(text)
        stages = rep["stages"]
        st = stages[stage] if stage in stages else next(iter(stages.values()))
        resp = float(st["mean_wait_s"]) + float(st["mean_s"])
        job_level = (rep.get("response") or {}).get("mean_s")
        # Tiny differences are expected: the stage and job statistics apply the
        # warm-up to slightly different sets (the first stage completions vs the
        # first job completions); a real discrepancy would be far larger.
        if job_level is not None and abs(job_level - resp) > 1e-3 * resp:
            print(f"note: {name}: stage wait + duration {resp:.6f} s != response.mean_s {job_level:.6f} s")
        return {
            "tool": "bwsim",
            "jobs_completed": rep.get("jobs_completed"),
            "jobs": None,  # the caller fills jobs and events from the run's parameters
            "events": None,
            "native_events": rep["engine"]["events"],
            "wall_s": float(rep["engine"]["wall_s"]),
            "mean_response_s": resp,
            "se_s": None,
        }
    except (ValueError, KeyError, TypeError, StopIteration) as e:
        print(f"{name}.json is not the expected report ({type(e).__name__}: {e})")
        return None


def load_median(d, name, parse):
    """Of the repeated runs NAME.r1, NAME.r2, ... keep the one with the median
    wall time (the same seed gives the same statistics in every repeat), with
    the peak RSS of that same process."""
    runs = []
    for f in sorted(os.listdir(d)):
        m = re.fullmatch(re.escape(name) + r"\.r(\d+)\.json", f)
        text = m and read(os.path.join(d, f))
        r = text and parse(text, f[:-5])
        if r:
            r["rss_kib"] = peak_rss_kib(os.path.join(d, f[:-5] + ".time"))
            r["cpu_s"] = cpu_s(os.path.join(d, f[:-5] + ".time"))
            runs.append(r)
    if not runs:
        return None
    runs.sort(key=lambda r: r["wall_s"])
    return runs[(len(runs) - 1) // 2]


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    d = sys.argv[1]
    jobs_cfg = json.loads(read(os.path.join(d, "params.json")))
    failures = []
    bwsim_missing = False
    rows = []
    results = {}
    for model, (label, stage) in MODELS.items():
        res = {}
        for tool in TOOLS:
            if tool == "floor" and model not in FLOOR_MODELS:
                continue
            if tool == "bwsim":
                r = load_median(d, f"bwsim-{model}", lambda t, n, s=stage: parse_bwsim(t, n, s))
            else:
                r = load_median(d, f"{tool}-{model}", parse_peer)
            if r is None:
                if tool == "bwsim":
                    bwsim_missing = True
                else:
                    failures.append(f"{tool} {model}: no result")
                continue
            if tool == "bwsim":
                r["jobs"] = jobs_cfg["jobs"]
                r["events"] = 2 * jobs_cfg["jobs"]
                if r["jobs_completed"] != jobs_cfg["jobs"]:
                    failures.append(f"bwsim {model}: {r['jobs_completed']} jobs completed, expected {jobs_cfg['jobs']}")
            res[tool] = r
        peer_se = [res[t]["se_s"] for t in ("simpy", "nexosim") if t in res]
        if "bwsim" in res and peer_se:
            res["bwsim"]["se_s"] = max(peer_se)
            res["bwsim"]["se_borrowed"] = True
        results[model] = res
        a = ANALYTIC[model]
        for tool in TOOLS:
            if tool == "floor" and model not in FLOOR_MODELS:
                continue
            r = res.get(tool)
            if r is None:
                rows.append([label, NAMES[tool], "-", "-", "-", "-", "-", "-", "pending", "-", f"{a:.4f}", "-", "-"])
                continue
            z = (r["mean_response_s"] - a) / r["se_s"] if r["se_s"] else None
            ok = z is not None and abs(z) <= Z
            if not ok:
                failures.append(f"{tool} {model}: mean {r['mean_response_s']:.4f} vs analytic {a:.4f} (z={fmt(z, '.2f')})")
            eps = r["events"] / r["wall_s"]
            r["events_per_s"] = eps
            se = fmt(r["se_s"], ".4f") + ("*" if r.get("se_borrowed") else "")
            rows.append([
                label, NAMES[tool], f"{r['jobs']:,}", f"{r['events']:,}", fmt(r["native_events"], ","),
                f"{r['wall_s']:.3f}", fmt(r["cpu_s"], ".2f"), f"{eps / 1e6:.3f}", f"{r['mean_response_s']:.4f}", se,
                f"{a:.4f}", fmt(z, "+.2f"),
                fmt(r["rss_kib"] and r["rss_kib"] / MIB, ".1f"),
            ])
        # Pairwise agreement.
        present = [t for t in TOOLS if t in res]
        for i, t1 in enumerate(present):
            for t2 in present[i + 1:]:
                r1, r2 = res[t1], res[t2]
                se = math.hypot(r1["se_s"], r2["se_s"])
                diff = r1["mean_response_s"] - r2["mean_response_s"]
                if abs(diff) > Z * se:
                    failures.append(f"{model}: {t1} and {t2} differ by {diff:+.4f} s (> {Z} x {se:.4f})")

    head = ["model", "tool", "jobs", "events (2/job)", "native events", "wall s", "process CPU s",
            "M events/s", "mean resp s", "SE s", "analytic s", "z", "peak RSS MiB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("events = arrivals + departures (2 per job) for every tool; events/s = that / wall s of the")
    print("event loop alone. native events = bwsim's engine.events (its own count). SE = batch-means")
    print(f"standard error (20 batches); * = bwsim reports no SE, the larger peer SE is used. z = (mean -")
    print(f"analytic) / SE; agreement requires |z| <= {Z:g} for each tool and for each pair's difference.")
    print("process CPU s = user + system time of the whole process (start-up included), less")
    print("sensitive than wall s to other load on the machine.")
    print()

    for model, (label, _) in MODELS.items():
        res = results[model]
        if "bwsim" not in res:
            print(f"{label}: bwsim/SimPy and bwsim/nexosim pending (bwsim not run)")
            continue
        b = res["bwsim"]["events_per_s"]
        peers = [t for t in ("simpy", "nexosim") if t in res]
        parts = [f"bwsim/{NAMES[t]} = {b / res[t]['events_per_s']:.2f}x" for t in peers]
        print(f"{label}: " + ", ".join(parts) + " in events/s (issue 14 target: >= 100x SimPy)")
        if "floor" in res:
            print(f"{' ' * len(label)}  bwsim = {100 * b / res['floor']['events_per_s']:.0f}% of the floor"
                  f" ({b / 1e6:.2f} vs {res['floor']['events_per_s'] / 1e6:.2f} M events/s; issue 14 target: >= 50%),"
                  f" nexosim = {100 * res['nexosim']['events_per_s'] / res['floor']['events_per_s']:.0f}%" if "nexosim" in res else "")
        else:
            floor = results["mm16"].get("floor")
            if floor:
                print(f"{' ' * len(label)}  bwsim = {100 * b / floor['events_per_s']:.0f}% of the M/M/16 floor's events/s"
                      " (no PS floor: a reference only)")
        # The same ratio from CPU time (events are equal, so it is a CPU-time ratio).
        if res["bwsim"].get("cpu_s") and all(res[t].get("cpu_s") for t in peers):
            cpu = [f"bwsim/{NAMES[t]} = {res[t]['cpu_s'] / res['bwsim']['cpu_s']:.2f}x" for t in peers]
            print(f"{' ' * len(label)}  " + ", ".join(cpu) + " by process CPU s")

    # Memory: the 10^6-job run against a 10^5-job run of the same scenario.
    big = results["mm16"].get("bwsim", {}).get("rss_kib")
    small = peak_rss_kib(os.path.join(d, "bwsim-mm16-small.r1.time"))
    if big is not None:
        print()
        small_txt = f"{jobs_cfg['small_jobs']:,} jobs {small / MIB:.1f} MiB; " if small else ""
        print(f"bwsim M/M/16 peak RSS: {small_txt}"
              f"{jobs_cfg['jobs']:,} jobs {big / MIB:.1f} MiB (target < 50 MiB: {'met' if big < 50 * MIB else 'MISSED'})")
        if small:
            print(f"  growth from {jobs_cfg['small_jobs']:,} to {jobs_cfg['jobs']:,} jobs: {(big - small) / MIB:+.1f} MiB")

    print()
    if failures:
        print("AGREEMENT CHECK FAILED:")
        for f in failures:
            print("  - " + f)
        sys.exit(1)
    if bwsim_missing:
        print("SimPy and nexosim agree with the analytic values; bwsim's rows are PENDING (bwsim could not be run, see above).")
        sys.exit(3)
    print(f"All tools agree with the analytic mean response times and with each other (|z| <= {Z:g}).")


if __name__ == "__main__":
    main()
