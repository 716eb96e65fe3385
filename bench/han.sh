#!/usr/bin/env bash
# Throughput of the Hierarchical Attention Network at the paper's sizes (see bench/han.cpp):
# training examples (documents) per second through han-train's step, and inference documents
# per second through han-run's prediction, attnkit against the same model in PyTorch
# (bench/han_torch.py), in the same run, alternated REPS times, same OPENBLAS_CORETYPE and
# thread budget (PyTorch at 2 threads: the fastest of its thread splits, bench/lib.sh's
# torch_best, by wall-clock rate). Prints TSV rows and, per mode and thread count, the ratio
# of every round, by the wall clock and (on a loaded machine the fairer one at 1 thread) by
# each process's CPU time.
#   bench/han.sh [STEPS] [REPS] [THREADS...]     (default 30 training steps of 64, 3, "1 2")
#   ONLY=train or ONLY=infer runs one mode (default both)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-han"
[ -x "$bin" ] || { echo "han.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-30}
reps=${2:-3}
shift 2 || shift $#
threads=${*:-1 2}
bench_coretype
core=$OPENBLAS_CORETYPE
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "# PyTorch not importable by $PYTHON: peer skipped"; exit 0; }
echo -e "impl\tmode\tthreads\titems\tsec\titems_per_s\tcpu_sec\titems_per_cpu_s\ttorch_setting"
for mode in ${ONLY:-train infer}; do
  # inference: whole passes over the 1,024 documents
  n=$steps
  [ "$mode" = infer ] && n=$(( (steps + 9) / 10 ))
  for th in $threads; do
    ratios=() cratios=()
    for r in $(seq 1 "$reps"); do
      a=$(OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$th "$bin" "$mode" "$n" "$th")
      p=$(OPENBLAS_CORETYPE=$core torch_best 6 3 "$th" "$PYTHON" "$top/bench/han_torch.py" "$mode" "$n" @T)
      echo "$a"; echo "$p"
      ratios+=("$(paste <(echo "$a") <(echo "$p") | awk -F'\t' '{ printf "%.2f", $6 / $14 }')")
      cratios+=("$(paste <(echo "$a") <(echo "$p") | awk -F'\t' '{ printf "%.2f", $8 / $16 }')")
    done
    echo "# $mode, $th threads: attnkit / pytorch per round, wall clock: ${ratios[*]}; CPU time: ${cratios[*]} (load: $(cut -d' ' -f1 /proc/loadavg))"
  done
done
