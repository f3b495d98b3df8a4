#!/usr/bin/env python3
"""Device ms of each point's copies, from a replay's harness trace (BWSIM_GPU_TRACE: one
line per reply: read time s, host ms, command, reply). A point starts at its
`nvml_start`. Usage: copy_times.py DIR_OR_TRACE [...] [--dir h2d|d2h] [--pinned].
Prints, per trace, each point's median copy ms and its count: how fast this boot's
copies really ran, to set beside the calibration's rate."""
import json
import os
import statistics
import sys


def points(path, direction, pinned):
    segs, seg = [], None
    for line in open(path):
        f = line.split(" ", 3)
        if len(f) < 4:
            continue
        cmd_and_reply = f[2] + " " + f[3]
        if f[2] == "nvml_start":
            seg = []
            segs.append(seg)
            continue
        words = cmd_and_reply.split()
        if seg is None or words[0] != "copy" or words[1] != direction:
            continue
        if words[3] != ("1" if pinned else "0"):
            continue
        reply = json.loads("{" + cmd_and_reply.split(" ", 4)[4].strip() + "}")
        seg.append(reply["gpu_ms"])
    return [s for s in segs if s]


def main():
    args = sys.argv[1:]
    direction, pinned = "h2d", False
    if "--dir" in args:
        i = args.index("--dir")
        direction = args[i + 1]
        del args[i : i + 2]
    if "--pinned" in args:
        args.remove("--pinned")
        pinned = True
    if not args:
        sys.exit(__doc__)
    for a in args:
        path = a if os.path.isfile(a) else f"{a}/harness-trace.txt"
        cells = [f"{statistics.median(s):.1f} ({len(s)})" for s in points(path, direction, pinned)]
        print(f"{path}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
