#!/usr/bin/env bash
# Thread scaling of the training steps (issue 38): each trainer's bench program at 1 thread and
# at T threads, alternating, REPS times; prints each run and, per model, the best (shortest)
# seconds a step at each count and the speedup best(1) / best(T). On a shared machine the best
# of several alternating runs is the least disturbed figure; the load is printed beside it.
# The models are each bench's (the standard recipes' sizes): seq2seq LSTM + Bahdanau and
# Transformer (batch 64: 2 slices), the pointer network on TSP-10 (batch 128, 2 slices), the
# Stack-LSTM (batch 16: 1 slice), Show, Attend and Tell (batch 64, 4 slices), RAM (2 slices).
#   bench/threads.sh [REPS] [T] [STEPS]        (defaults 5, 2, 10; ONLY=regex of models)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
b=${ATTNKIT_BUILD:-$top/build}/bench
reps=${1:-5} T=${2:-2} steps=${3:-10}
bench_coretype
unset ATTNKIT_THREADS OMP_NUM_THREADS
cases=(
  "seq2seq-lstm|$b/bench-seq2seq train rnn $steps"
  "seq2seq-transformer|$b/bench-seq2seq train transformer $steps"
  "ptr-tsp10|$b/bench-ptrnet train 10 $steps"
  "stackmem-rev8|$b/bench-stackmem 8 $((steps * 10))"
  "caption|$b/bench-caption $steps"
  "ram|$b/bench-ram $steps"
)
[ -n "${ONLY:-}" ] && mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -E "^($ONLY)\|")
out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "# OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'model\trep\tthreads\tsec_per_step\n'
for r in $(seq 1 "$reps"); do
  for c in "${cases[@]}"; do
    name=${c%%|*} cmd=${c#*|}
    for t in 1 "$T"; do
      # shellcheck disable=SC2086
      s=$($cmd "$t" | awk -F'\t' '{ print $6 }')
      printf '%s\t%s\t%s\t%s\n' "$name" "$r" "$t" "$s" | tee -a "$out"
    done
  done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'model\tbest_1\tbest_%s\tspeedup\n' "$T"
awk -F'\t' -v T="$T" '
  { k = $1 "\t" $3; if (!(k in best) || $4 < best[k]) best[k] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
  END { for (i = 1; i <= n; i++) { m = order[i]; a = best[m "\t1"]; c = best[m "\t" T]
          printf "%s\t%.5f\t%.5f\t%.2fx\n", m, a, c, a / c } }' "$out"
# The same steps in CPU seconds (bench-step_cpu: seq2seq only), which a loaded machine changes
# far less than wall time: the CPU a step costs at 1 and at T threads (what parallelism adds)
# and the calling thread's share at T, whose inverse bounds the speedup an idle machine gives.
[ -n "${ONLY:-}" ] && ! echo "seq2seq-lstm seq2seq-transformer" | grep -qE "$ONLY" && exit 0
echo "# CPU seconds a step (best of $reps alternating runs each)"
printf 'model\tcpu_1\tcpu_%s\tmain_cpu_%s\tspeedup_bound\n' "$T" "$T"
for model in rnn transformer; do
  : >"$out"
  for r in $(seq 1 "$reps"); do
    for t in 1 "$T"; do "$b/bench-step_cpu" "$model" "$steps" "$t" >>"$out"; done
  done
  awk -F'\t' -v T="$T" -v m="$model" '
    $2 == 1 && (c1 == "" || $5 < c1) { c1 = $5 }
    $2 == T && (cT == "" || $5 < cT) { cT = $5 }
    $2 == T && (mT == "" || $6 < mT) { mT = $6 }
    END { printf "seq2seq-%s\t%.5f\t%.5f\t%.5f\t%.2fx\n", m, c1, cT, mT, c1 / mT }' "$out"
done
