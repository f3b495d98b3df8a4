#!/usr/bin/env bash
# A bwsim sweep as a Slurm job array: array task I runs shard I of N of the grid
# (`bwsim sweep --shard I/N`), each into its own folder under $STUDY; then
# `sweep-array.sh merge` joins the shards into the sweep.csv, sweep.json and plots that
# one machine would have written. See docs/sweep.md.
#
#   jid=$(sbatch --parsable --array=0-99 deploy/slurm/sweep-array.sh)
#   sbatch --dependency=afterok:$jid --wrap 'deploy/slurm/sweep-array.sh merge'
#
# Settings come from the environment (sbatch passes it on), with these defaults:
#   BWSIM     the bwsim binary                 SCENARIO  the scenario file
#   PARAMS    the --param arguments            SEEDS     seeds per point
#   SETS      extra arguments (e.g. --set ...) STUDY     output root (shared filesystem)
#   SHARDS    N; defaults to the array's size, so --array=0-99 gives 100 shards. Give it
#             when one task is re-run alone: SHARDS=100 sbatch --array=17 <this script>
#             (that array's size is 1). N may exceed the grid's points: the spare tasks
#             write empty shards, which merge like the others.
# The merge step needs no N: it takes every $STUDY/shard-* folder, and names any shard
# of the sweep still missing.
#
#SBATCH --job-name=bwsim-sweep
#SBATCH --cpus-per-task=16
#SBATCH --mem=4G
#SBATCH --time=01:00:00
#SBATCH --output=bwsim-sweep-%A_%a.out
set -euo pipefail

BWSIM=${BWSIM:-bwsim}
SCENARIO=${SCENARIO:-scenarios/c2-32g-cuzk.toml}
PARAMS=${PARAMS:---param params.synthesis_concurrency=1..40 --param params.dram_channels=4,8,12}
SEEDS=${SEEDS:-3}
SETS=${SETS:-}
STUDY=${STUDY:-study}

if [ "${1:-}" = merge ]; then
    # Outside the array (sbatch --wrap): every shard folder there is; each shard.json
    # says how many shards the sweep has, so the merge knows which are missing.
    exec "$BWSIM" sweep merge "$STUDY"/shard-* --out "$STUDY/merged"
fi

: "${SLURM_ARRAY_TASK_ID:?submit with sbatch --array=0-<N-1>}"
SHARDS=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:?not an array task; give SHARDS}}
OUT="$STUDY/shard-$SLURM_ARRAY_TASK_ID"
if [ -d "$STUDY/.shard-$SLURM_ARRAY_TASK_ID.partial" ]; then
    # A requeued task finishes what the interrupted one saved.
    "$BWSIM" sweep --resume "$OUT" --jobs "${SLURM_CPUS_PER_TASK:-1}"
else
    # shellcheck disable=SC2086 # PARAMS and SETS are lists of arguments
    "$BWSIM" sweep "$SCENARIO" $PARAMS $SETS --replications "$SEEDS" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
        --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" --out "$OUT"
fi
