#!/usr/bin/env bash
# Pointer-network speed, attnkit (bench/ptrnet.cpp) against the same model in PyTorch
# (bench/ptrnet_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE: training examples/s (TSP-N, batch 128, embed and hidden 128, Adam)
# and decoding problems/s (greedy in batches of 64; beam 4 one problem at a time). PyTorch
# at N > 1 threads gets the best of torch N / OpenBLAS N, N / 1 and 1 / N (bench/lib.sh).
# Prints every measurement as TSV, then per case the median ratio attnkit / pytorch and the
# range of the per-repetition ratios.
#   bench/ptrnet.sh [N] [REPS] [THREADS]     (defaults 10 3 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-ptrnet"
[ -x "$bin" ] || { echo "ptrnet.sh: no $bin (build first: make)" >&2; exit 1; }
n=${1:-10} reps=${2:-3} th=${3:-2}
bench_coretype
py=
"$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
[ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "impl\ttask\tmodel\tthreads\tn\tsec\trate\textra\tsetting"
cases=("train $n 20" "decode $n 512 1" "decode $n 64 4")
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    line=$(OMP_NUM_THREADS=$th "$bin" $c "$th"); echo "$line"; echo -e "$r\t$c\t$line" >> "$out"
    [ -n "$py" ] || continue
    # shellcheck disable=SC2086
    line=$(torch_best 7 4 "$th" "$py" "$top/bench/ptrnet_torch.py" $c @T); echo "$line"; echo -e "$r\t$c\t$line" >> "$out"
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$4 " " $5 ($4 == "decode" ? " beam " $10 : "")' 3 9 "$th"
