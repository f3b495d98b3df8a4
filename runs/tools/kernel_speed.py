#!/usr/bin/env python3
"""The H100 : H200 speed of sppark's kernels (BLS12-381 NTT and G1 MSM), from every
committed calibration: per kernel and size, each GPU's median time over its
calibrations, their spread, and the ratio of the medians; then the ratio over the sizes
a C2 proof runs (2^24 and up) against what the kernel-speed rule of scenarios/hosts/
predicts (SMs x boost clock: 132 x 1.98 GHz on both, so 1).

Reads every calibration under the folders given (default runs/): a raw measurements file
(`*raw*.json`, kept gzipped) or, for a calibration that kept none, its TOML's
[calibration.measurements]; one calibration counted once (by its date).

Usage: python3 runs/tools/kernel_speed.py [FOLDER ...]
"""
import glob
import gzip
import json
import math
import os
import statistics
import sys
import tomllib


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if ".json" in path:
        return json.loads(data)
    return tomllib.loads(data.decode()).get("calibration", {}).get("measurements")


def calibrations(folders):
    """(gpu, file, {(kernel, lg): ms}) per calibration, each once."""
    seen = {}
    for folder in folders:
        files = sorted(glob.glob(f"{folder}/**/*raw*.json*", recursive=True))
        files += sorted(glob.glob(f"{folder}/**/*.toml*", recursive=True))
        for path in files:
            try:
                m = read(path)
            except (ValueError, OSError):
                continue
            if not m or not m.get("gpu") or not m.get("ntt") or m.get("date") in seen:
                continue
            times = {("ntt " + p["variant"], p["lg"]): p["ms"] for p in m["ntt"]}
            times.update({("msm", p["lg"]): p["ms"] for p in m.get("msm", [])})
            seen[m["date"]] = (m["gpu"]["name"], m["gpu"].get("sms"), path, times)
    return list(seen.values())


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    folders = sys.argv[1:] or ["runs"]
    cals = calibrations(folders)
    by_gpu = {}
    for name, sms, path, times in cals:
        gpu = "H100" if "H100" in name else "H200" if "H200" in name else name
        by_gpu.setdefault(gpu, []).append((name, sms, path, times))
    if set(by_gpu) != {"H100", "H200"}:
        sys.exit(f"found {sorted(by_gpu)}; need calibrations of both an H100 and an H200")
    for gpu, cs in sorted(by_gpu.items()):
        names = sorted({c[0] for c in cs})
        sms = sorted({c[1] for c in cs})
        print(f"{gpu}: {len(cs)} calibrations ({', '.join(names)}, {sms} SMs)")
    keys = sorted(set.intersection(*(set(c[3]) for cs in by_gpu.values() for c in cs)))
    print("\n| kernel | size | H100 median ms (spread) | H200 median ms (spread) | H100 / H200 time |")
    print("|---|---:|---:|---:|---:|")
    ratio = {}
    med = {}
    for k in keys:
        cells = []
        for gpu in ("H100", "H200"):
            v = [c[3][k] for c in by_gpu[gpu]]
            med[gpu, k] = statistics.median(v)
            cells.append(f"{med[gpu, k]:.3f} ({(max(v) - min(v)) / med[gpu, k] * 100:.1f}%)")
        ratio[k] = med["H100", k] / med["H200", k]
        print(f"| {k[0]} | 2^{k[1]} | {cells[0]} | {cells[1]} | {ratio[k]:.3f} |")
    big = [k for k in keys if k[1] >= 24]
    for label, ks in (("every size", keys), ("2^24 and up", big)):
        rs = [ratio[k] for k in ks]
        print(f"\n{label}: {len(rs)} kernel sizes, H100 / H200 time geometric mean "
              f"{geomean(rs):.4f} (from {min(rs):.3f} to {max(rs):.3f})")
    print("\nEach calibration's kernels (2^24 and up) against the H200 median, time ratio:")
    for gpu in ("H100", "H200"):
        per = [geomean([c[3][k] / med["H200", k] for k in big]) for c in by_gpu[gpu]]
        print(f"  {gpu}: " + " ".join(f"{x:.3f}" for x in per)
              + f"  (sd {statistics.pstdev(per) * 100:.2f}%)")
    rule = 1.0  # 132 SMs x 1.98 GHz on both (NVIDIA's H100 SXM5 and H200 SXM specs)
    g = geomean([ratio[k] for k in big])
    print(f"\nThe rule (SMs x boost clock) predicts an H100 / H200 time of {rule:.3f}; "
          f"measured {g:.4f}: the rule's error {abs(g - rule) / g * 100:.2f}% "
          f"(at most {max(abs(ratio[k] - rule) / ratio[k] for k in keys) * 100:.1f}% "
          "for one kernel size)")


if __name__ == "__main__":
    main()
