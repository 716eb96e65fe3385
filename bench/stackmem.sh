#!/usr/bin/env bash
# Stack-LSTM training speed, attnkit (bench/stackmem.cpp) against the same model in PyTorch
# (bench/stackmem_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE: training sequences/s (reversal of LEN of 10 symbols, batch 16,
# embed 32, hidden 64, width 16, Adam, clipping at 5: exercise 8-4's Stack-LSTM). PyTorch at
# N > 1 threads gets the best of torch N / OpenBLAS N, N / 1 and 1 / N (bench/lib.sh).
# Prints every measurement as TSV, then per case the median ratio attnkit / pytorch and the
# range of the per-repetition ratios.
#   bench/stackmem.sh [REPS] [THREADS]     (defaults 3 2; lengths 8 and 16)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-stackmem"
[ -x "$bin" ] || { echo "stackmem.sh: no $bin (build first: make)" >&2; exit 1; }
reps=${1:-3} th=${2:-2}
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
py=
/usr/bin/python3 -c 'import torch' 2>/dev/null && py=/usr/bin/python3
[ -n "$py" ] || echo "# PyTorch not importable by /usr/bin/python3: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "impl\ttask\tmodel\tthreads\tsteps\tsec\trate\tloss\tsetting"
for r in $(seq "$reps"); do
  for len in 8 16; do
    line=$(OMP_NUM_THREADS=$th "$bin" $len 20 "$th"); echo "$line"; echo -e "$r\t$line" >> "$out"
    [ -n "$py" ] || continue
    line=$(torch_best 7 4 "$th" "$py" "$top/bench/stackmem_torch.py" $len 10 @T); echo "$line"; echo -e "$r\t$line" >> "$out"
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$4' 2 8 "$th"
