#!/usr/bin/env python3
"""The GPU harness's own cost per request, from the trace it writes with
BWSIM_GPU_TRACE (one line per reply: read time s, host ms from read to reply, command,
reply). Usage: harness_cost.py TRACE [TRACE ...]. Per command kind (copy h2d/d2h pinned or
pageable, ntt, msm, spin): count, median device ms, median host ms minus device ms (the
harness's thread, launches and sync), and the median gap from its reply to the next request
read (the replay's side: its threads waking, the pipe), taken only where the next request
follows within 5 ms. The first request of each kind (lazy set-up) is left out."""
import statistics
import sys


def kind(cmd):
    f = cmd.split()
    if f[0] == "copy":
        return f"copy {f[1]} {'pinned' if f[3] == '1' else 'pageable'}"
    return f[0]


def main():
    rows = {}
    for path in sys.argv[1:]:
        lines = []
        for line in open(path):
            f = line.split(None, 2)
            at, host = float(f[0]), float(f[1])
            cmd, _, reply = f[2].partition(' "ok"')
            gpu = None
            if '"gpu_ms":' in reply:
                gpu = float(reply.split('"gpu_ms":')[1].split(",")[0].rstrip("}\n"))
            lines.append((at, host, cmd.strip(), gpu))
        lines.sort()
        seen = set()
        for i, (at, host, cmd, gpu) in enumerate(lines):
            k = kind(cmd)
            if gpu is None or k.split()[0] not in ("copy", "ntt", "msm", "spin"):
                continue
            if k not in seen:
                seen.add(k)
                continue
            r = rows.setdefault(k, {"gpu": [], "over": [], "gap": []})
            r["gpu"].append(gpu)
            r["over"].append(host - gpu)
            done = at + host / 1e3
            nxt = [a for a, *_ in lines[i + 1:i + 4] if a >= done]
            if nxt and (nxt[0] - done) * 1e3 < 5:
                r["gap"].append((nxt[0] - done) * 1e3)
    print("| request | count | device ms (median) | harness ms over device (median) | reply to next request ms (median, n) |")
    print("|---|---:|---:|---:|---:|")
    for k in sorted(rows):
        r = rows[k]
        gap = f"{statistics.median(r['gap']):.3f} ({len(r['gap'])})" if r["gap"] else "-"
        print(f"| {k} | {len(r['gpu'])} | {statistics.median(r['gpu']):.3f} | "
              f"{statistics.median(r['over']):.3f} | {gap} |")


if __name__ == "__main__":
    main()
