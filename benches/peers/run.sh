#!/usr/bin/env bash
# Peer benchmark: bwsim vs SimPy vs nexosim on the same two models, and against the
# floor (a bare Rust M/M/16 loop, src/floor.rs), same machine, one run. Builds
# everything, runs each tool REPEATS times per model (the run with the median
# wall time is reported), measures peak RSS with /usr/bin/time -v, and prints
# one table (report.py).
#
#   benches/peers/run.sh                 # 10^6 jobs per model, 3 repeats
#   JOBS=100000 REPEATS=1 benches/peers/run.sh   # quick smoke run
#   BWSIM=/path/to/bwsim benches/peers/run.sh    # use that binary, do not build
#
# Exit status: 0 all agree; 1 disagreement or a peer failed; 3 bwsim could not
# be built or run (its rows are marked pending, the peers are still checked).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JOBS=${JOBS:-1000000}
WARMUP=${WARMUP:-10000}
SMALL_JOBS=${SMALL_JOBS:-100000}   # second bwsim run: RSS must not grow with jobs
SEED=${SEED:-1}
REPEATS=${REPEATS:-3}
SIMPY_VERSION=4.1.2
RES=$HERE/target/results
rm -rf "$RES" && mkdir -p "$RES"
printf '{"jobs": %d, "warmup": %d, "small_jobs": %d, "seed": %d}\n' \
    "$JOBS" "$WARMUP" "$SMALL_JOBS" "$SEED" > "$RES/params.json"

say() { echo "== $*" >&2; }

# --- tools -----------------------------------------------------------------
if [ ! -x /usr/bin/time ]; then
    say "installing GNU time (Debian package 'time') for peak RSS"
    { apt-get install -y time || { apt-get update && apt-get install -y time; }; } >/dev/null 2>&1
fi
[ -x /usr/bin/time ] || say "no /usr/bin/time: peak RSS will be reported as '-'"

if ! "$HERE/.venv/bin/python" -c "import simpy; assert simpy.__version__ == '$SIMPY_VERSION'" 2>/dev/null; then
    say "creating $HERE/.venv with simpy==$SIMPY_VERSION"
    python3 -m venv "$HERE/.venv" && "$HERE/.venv/bin/pip" install -q "simpy==$SIMPY_VERSION" || {
        say "could not install SimPy"; exit 1; }
fi
PY=$HERE/.venv/bin/python

say "building the nexosim peer (benches/peers, release)"
(cd "$HERE" && cargo build --release --quiet) || { say "nexosim peer build failed"; exit 1; }
NEXOSIM=$HERE/target/release/nexosim-peers
FLOOR=$HERE/target/release/floor-mm16

BWSIM_OK=1
if [ -n "${BWSIM:-}" ]; then
    say "using BWSIM=$BWSIM (not rebuilt)"
else
    say "building bwsim (release)"
    BWSIM=$ROOT/target/release/bwsim
    if ! (cd "$ROOT" && cargo build --release --quiet --bin bwsim); then
        say "bwsim did not build: its rows will be pending"
        BWSIM_OK=0
    fi
fi

# --- runs ------------------------------------------------------------------
# measure NAME CMD...: stdout -> NAME.json, stderr -> NAME.err, rusage -> NAME.time
measure() {
    local name=$1; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -v -o "$RES/$name.time" "$@" >"$RES/$name.json" 2>"$RES/$name.err"
    else
        "$@" >"$RES/$name.json" 2>"$RES/$name.err"
    fi
}

# bwsim on a committed scenario with this run's seed and job counts. --no-ideal:
# skip bwsim's second, contention-free run, its further replications and its what-if
# steps (none is part of engine.wall_s, and the peers compute nothing like them: one
# run of the model, as each peer does, keeps process CPU s comparable).
bwsim_run() { # name model jobs
    measure "$1" "$BWSIM" run "$HERE/scenarios/$2.toml" --format json --no-ideal --seed "$SEED" \
        --replications 1 --no-what-if \
        --set "arrivals.jobs=$3" --set "arrivals.warmup_jobs=$WARMUP"
}

for model in mm16 ps; do
    for r in $(seq 1 "$REPEATS"); do
        say "$model run $r/$REPEATS: SimPy"
        measure "simpy-$model.r$r" "$PY" "$HERE/simpy_models.py" $model "$JOBS" "$WARMUP" "$SEED" \
            || say "SimPy $model failed: $(head -c 400 "$RES/simpy-$model.r$r.err")"
        say "$model run $r/$REPEATS: nexosim"
        measure "nexosim-$model.r$r" "$NEXOSIM" $model "$JOBS" "$WARMUP" "$SEED" \
            || say "nexosim $model failed: $(head -c 400 "$RES/nexosim-$model.r$r.err")"
        if [ "$model" = mm16 ]; then
            say "$model run $r/$REPEATS: floor (bare Rust loop)"
            measure "floor-$model.r$r" "$FLOOR" "$JOBS" "$WARMUP" "$SEED" \
                || say "floor $model failed: $(head -c 400 "$RES/floor-$model.r$r.err")"
        fi
        if [ "$BWSIM_OK" = 1 ]; then
            say "$model run $r/$REPEATS: bwsim"
            if ! bwsim_run "bwsim-$model.r$r" $model "$JOBS"; then
                say "bwsim could not run the scenario: $(head -c 600 "$RES/bwsim-$model.r$r.err")"
                rm -f "$RES/bwsim-$model.r$r.json"
                BWSIM_OK=0
            fi
        fi
    done
done
if [ "$BWSIM_OK" = 1 ] && [ "$SMALL_JOBS" -lt "$JOBS" ]; then
    say "bwsim M/M/16 with $SMALL_JOBS jobs (peak RSS comparison)"
    bwsim_run "bwsim-mm16-small.r1" mm16 "$SMALL_JOBS" \
        || say "bwsim small run failed: $(head -c 400 "$RES/bwsim-mm16-small.r1.err")"
fi

# --- report ----------------------------------------------------------------
echo "# Peer benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), nproc=$(nproc)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates wall times)"
echo "params: jobs=$JOBS per model, warm-up $WARMUP jobs, seed $SEED, median of $REPEATS runs"
echo "versions: $(rustc --version); $("$PY" --version); simpy $("$PY" -c 'import simpy; print(simpy.__version__)');" \
     "nexosim $(sed -n '/^name = "nexosim"$/{n;s/^version = "\(.*\)"/\1/p}' "$HERE/Cargo.lock");" \
     "bwsim $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src Cargo.toml || echo '+dirty')"
echo
python3 "$HERE/report.py" "$RES"
