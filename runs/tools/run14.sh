#!/usr/bin/env bash
# Accuracy run 14 on the device (runs/accuracy/PLAN-run14.md): one call's part.
# Usage: runs/tools/run14.sh BIN OUT PART
#   BIN: bwsim built with --features cuda; OUT: the folder to fill (tarred by the caller)
#   PART: a   (boot A: calibrate --quick, then each workload at one worker)
#         b1  (boot B: calibrate --quick, then the mini C2 at 1, 2, 4, 8 proofs)
#         b2  (boot B, same boot as b1: copy pinned and chase pinned at 1-16 workers)
set -uo pipefail
bin=$1; out=$2; part=$3
mkdir -p "$out"
facts() {
    date -u +%FT%TZ >"$out/$1.txt"
    cat /proc/sys/kernel/random/boot_id >"$out/boot_id-$1.txt"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv \
        >"$out/gpu-$1.txt" 2>&1
    nproc >"$out/nproc.txt"
}
calibrate() {
    local t0=$SECONDS
    "$bin" calibrate --quick --out "$out/calibration.toml" --json "$out/calibration-raw.json" \
        >"$out/calibrate.log" 2>&1
    echo "calibrate rc=$? after $((SECONDS - t0)) s" >>"$out/calls.txt"
}
replay() { # NAME SCENARIO PARAM [SET...]
    local name=$1 scenario=$2 param=$3
    shift 3
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    local t0=$SECONDS
    "$bin" replay "$scenario" --param "$param" "${sets[@]}" \
        --calibration "$out/calibration.toml" --out "$out/$name" >"$out/$name.log" 2>&1
    echo "$name rc=$? after $((SECONDS - t0)) s" >>"$out/calls.txt"
}
mini=scenarios/c2-mini-h200.toml
copy=scenarios/shapes/copy-upload-ntt.toml
chase=scenarios/shapes/chase-upload-msm.toml
case $part in
a)
    facts started
    calibrate
    replay mini-r1 $mini params.proofs_in_flight=1
    replay copy-pin-r1 $copy params.workers=1
    replay chase-pin-r1 $chase params.workers=1
    ;;
b1)
    facts started
    calibrate
    replay mini-r1 $mini params.proofs_in_flight=1,2,4,8
    ;;
b2)
    facts resumed
    replay copy-pin-r1 $copy params.workers=1,2,4,8,12,16
    replay chase-pin-r1 $chase params.workers=1,2,4,8,12,16
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
date -u +%FT%TZ >"$out/ended-$part.txt"
