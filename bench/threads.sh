#!/usr/bin/env bash
# Thread scaling of the training steps (issue 38): each trainer's bench program at 1 thread and
# at T threads, alternating, REPS times; prints each run and, per model, the best (shortest)
# seconds a step at each count and the speedup best(1) / best(T). On a shared machine the best
# of several alternating runs is the least disturbed figure; the load is printed beside it.
# The models are each bench's (the standard recipes' sizes): seq2seq LSTM + Bahdanau and
# Transformer (batch 64: 2 slices), the pointer network on TSP-10 (batch 128, 2 slices), the
# Stack-LSTM (batch 16: 1 slice), Show, Attend and Tell (batch 64, 4 slices), RAM (2 slices),
# BERT on the bert-tiny recipe (batch 128, 4 slices).
#   bench/threads.sh [REPS] [T] [STEPS]        (defaults 5, 2, 10; ONLY=regex of models)
# Last, one more run of each at T threads with the training layer's thread trace
# (ATTNKIT_TRACE_THREADS, train/module.h), summed up per phase: where the threads wait.
# TRACE=0 leaves it out; TRACE_ONLY=1 runs only it (it needs no quiet machine: the busy and
# waiting shares are of the step's own time).
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
  "bert|$b/bench-bert $steps"
)
[ -n "${ONLY:-}" ] && mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -E "^($ONLY)\|")
out=$(mktemp) trace=$(mktemp); trap 'rm -f "$out" "$trace"' EXIT
# The trace at T threads (train/module.h), over the steps after the 3 warm-up steps, per model
# and phase: its share of the step's wall time, its mean wall time, its CPU time summed over
# the lanes (the work) and its busiest lane's (how long the phase takes when no thread waits
# for a CPU), in ms a step. Busy time is CPU time, so the work and the busiest lane hardly
# depend on the load; the wall time does. The line "serial" is the Amdahl serial fraction
# that the busiest lanes imply: s = (T crit / work - 1) / (T - 1), crit the sum over the
# phases of their busiest lane (s = 0: the work split evenly over T threads; 1: one lane);
# "serial_median" the median over the steps of the same fraction, step by step.
trace_table() {
  echo "# thread trace at $T threads ($steps steps after 3 warm-up steps, bert 25), load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf 'model\tphase\twall_share\twall_ms\twork_ms\tcrit_ms\n'
  for c in "${cases[@]}"; do
    name=${c%%|*} cmd=${c#*|}
    # shellcheck disable=SC2086
    ATTNKIT_TRACE_THREADS=$trace $cmd "$T" >/dev/null
    awk -F'\t' -v m="$name" -v T="$T" '
      NR == 1 || $1 < 3 { next }
      { if (!($2 in wall)) order[++n] = $2
        if ($3 == 0) { wall[$2] += $4; if ($2 == "step") steps++ }
        work[$2] += $5; k = $1 "\t" $2; if (!(k in top) || $5 > top[k]) top[k] = $5 }
      END { for (k in top) { split(k, a, "\t"); crit[a[2]] += top[k] }
        cs = 0; for (i = 1; i <= n; i++) if (order[i] != "step") cs += crit[order[i]]
        crit["step"] = cs
        for (i = 1; i <= n; i++) { p = order[i]
          printf "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\n", m, p, wall[p] / wall["step"], wall[p] / steps / 1e6,
                 work[p] / steps / 1e6, crit[p] / steps / 1e6 }
        printf "%s\tserial\t%.3f\n", m, (T * cs / work["step"] - 1) / (T - 1) }' "$trace"
    # The same fraction step by step, its median: a step whose CPU time a loaded machine
    # inflated (page zeroing, a busy sibling core) moves the mean, not the median.
    awk -F'\t' -v T="$T" '
      NR == 1 || $1 < 3 { next }
      $2 == "step" { work[$1] += $5; next }
      { k = $1 "\t" $2; if (!(k in top) || $5 > top[k]) top[k] = $5 }
      END { for (k in top) { split(k, a, "\t"); crit[a[1]] += top[k] }
        for (st in work) print (T * crit[st] / work[st] - 1) / (T - 1) }' "$trace" |
      sort -g | awk -v m="$name" '{ v[NR] = $1 } END { printf "%s\tserial_median\t%.3f\n", m, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
  done
}
if [ "${TRACE_ONLY:-0}" = 1 ]; then
  trace_table
  exit 0
fi
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
[ "${TRACE:-1}" = 1 ] && trace_table
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
