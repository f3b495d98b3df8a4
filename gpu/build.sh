#!/usr/bin/env bash
# Builds a bwsim GPU harness (gpu/probe.cu, or gpu/replay.cu) against the sppark and blst
# sources.
# Usage: gpu/build.sh OUT_BINARY SPPARK_DIR BLST_DIR [NVCC] [SOURCE]
#   SPPARK_DIR: the sppark crate's folder (holds sppark/ntt, sppark/msm, ...)
#   BLST_DIR:   the blst crate's folder (holds blst/src, blst/build, blst/bindings)
#   NVCC:       nvcc to use (default: $NVCC, else nvcc on PATH)
#   SOURCE:     the harness source in gpu/ (default probe.cu; replay.cu for `bwsim replay`)
# Env: CUDA_ARCH (default 90), NVCC_LIBDIR (extra -L for cudart_static, e.g. pip wheels).
set -euo pipefail
out=$1; sppark=$2; blst=$3; nvcc=${4:-${NVCC:-nvcc}}; source=${5:-probe.cu}
here=$(cd "$(dirname "$0")" && pwd)
arch=${CUDA_ARCH:-90}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
"$cc" -O2 -fno-builtin -mno-avx -D__ADX__ -fPIC -c "$blst/blst/src/server.c" -o "$work/server.o"
"$cc" -O2 -D__ADX__ -fPIC -c "$blst/blst/build/assembly.S" -o "$work/assembly.o"
extra=()
if [ -n "${NVCC_LIBDIR:-}" ]; then extra+=(-L"$NVCC_LIBDIR"); fi
"$nvcc" -O2 -std=c++17 -gencode "arch=compute_${arch},code=sm_${arch}" \
    -DFEATURE_BLS12_381 -D__ADX__ -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
    -I"$sppark/sppark" -I"$blst/blst/src" -I"$blst/blst/bindings" \
    -Xcompiler -O2 -cudart static "${extra[@]}" \
    "$here/$source" "$sppark/sppark/util/all_gpus.cpp" "$work/server.o" "$work/assembly.o" \
    -o "$out" -lpthread -ldl
echo "built $out"
