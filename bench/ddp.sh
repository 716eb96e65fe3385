#!/usr/bin/env bash
# Data-parallel training throughput of the same models as bench/seq2seq.sh (LSTM + additive
# attention, and the 2-layer Transformer; global batch 64 x 20 tokens, Adam, clip 5), in one
# run, alternating, REPS times:
#   attnkit 1 process x 2 threads      bench-seq2seq train MODEL STEPS 2
#   attnkit 2 MPI ranks x 1 thread     mpirun -np 2 bench-seq2seq train MODEL STEPS 1
#   PyTorch DDP, 2 processes (gloo on 127.0.0.1), 32 rows each, at 1 thread per process
#   PyTorch 1 process at its best of three settings for 2 threads (bench/lib.sh torch_best)
# Prints every measurement (target tokens/s of the global batch), then per model the median
# over repetitions of each same-repetition ratio.
#   bench/ddp.sh [STEPS] [REPS]        (defaults 10 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-seq2seq"
[ -x "$bin" ] || { echo "ddp.sh: no $bin (build first: make)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "ddp.sh: mpirun not installed (make deps)" >&2; exit 1; }
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "ddp.sh: PyTorch not importable (make bench installs python3-torch)" >&2; exit 1; }
steps=${1:-10} reps=${2:-3}
bench_coretype
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo
py="$PYTHON $top/bench/seq2seq_torch.py"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "rep\tsetting\tmodel\tsec_per_step\ttokens_per_s"
row() {  # rep setting line-from-a-bench
  local r=$1 s=$2 line=$3
  echo "$line" | awk -F'\t' -v OFS='\t' -v r="$r" -v s="$s" '{ print r, s, $3, $6, $7 }' | tee -a "$out"
}
for r in $(seq "$reps"); do
  for model in rnn transformer; do
    row "$r" attnkit-1x2 "$("$bin" train "$model" "$steps" 2)"
    row "$r" attnkit-mpi-2x1 "$(mpirun -np 2 "$bin" train "$model" "$steps" 1)"
    # shellcheck disable=SC2086
    row "$r" pytorch-ddp-2x1 "$(torch_best 7 4 1 $py ddp "$model" "$steps" 2 @T)"
    # shellcheck disable=SC2086
    row "$r" pytorch-1x2-best "$(torch_best 7 4 2 $py train "$model" "$steps" @T)"
  done
done
echo
echo -e "model\tratio\tmedian\tmin\tmax"
awk -F'\t' '
  { rate[$1, $2, $3] = $5; models[$3] = 1; reps[$1] = 1 }
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function ratio(m, a, b, name,   r, n, x, lo, hi) { n = 0
    for (r in reps) if (rate[r, b, m] > 0) { x[++n] = rate[r, a, m] / rate[r, b, m] }
    lo = hi = x[1]; for (r = 1; r <= n; r++) { if (x[r] < lo) lo = x[r]; if (x[r] > hi) hi = x[r] }
    printf "%s\t%s\t%.2f\t%.2f\t%.2f\n", m, name, med(x, n), lo, hi }
  END { for (m in models) {
    ratio(m, "attnkit-mpi-2x1", "pytorch-ddp-2x1", "attnkit 2 ranks / PyTorch DDP 2 processes")
    ratio(m, "attnkit-1x2", "pytorch-ddp-2x1", "attnkit 1x2 threads / PyTorch DDP 2 processes")
    ratio(m, "attnkit-mpi-2x1", "attnkit-1x2", "attnkit 2 ranks / attnkit 1 process x 2 threads")
    ratio(m, "pytorch-ddp-2x1", "pytorch-1x2-best", "PyTorch DDP 2 processes / PyTorch 1 process best") } }' "$out"
