#!/usr/bin/env bash
# SAGAN's self-attention block forward + backward to the input, attnkit (bench/attn2d.cpp,
# nn/attn2d.h) against the same block in PyTorch (bench/attn2d_torch.py), in one run,
# alternating the two sides, REPS times each, with the same OPENBLAS_CORETYPE. Cases: batches
# of feature maps where a small CNN would put the block (32 and 64 channels at 16x16, L = 256
# positions; 32 channels at 32x32, L = 1,024). PyTorch at N > 1 threads gets the best of torch
# N / OpenBLAS N, N / 1 and 1 / N (bench/lib.sh). Prints every measurement as TSV, then per
# case the median ratio of the rates attnkit / pytorch and the range of the per-repetition
# ratios.
#   bench/attn2d.sh [REPS] [THREADS]     (defaults 3 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-attn2d"
[ -x "$bin" ] || { echo "attn2d.sh: no $bin (build first: make)" >&2; exit 1; }
reps=${1:-3} th=${2:-2}
bench_coretype
py=
"$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
[ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "impl\tcase\tthreads\tsteps\tsec\trate\tsetting"
# N C H W STEPS
cases=("32 32 16 16 10" "32 64 16 16 10" "8 32 32 32 5")
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    line=$(OMP_NUM_THREADS=$th "$bin" $c "$th"); echo "$line"; echo -e "$r\t$line" >> "$out"
    [ -n "$py" ] || continue
    # shellcheck disable=SC2086
    line=$(torch_best 6 3 "$th" "$py" "$top/bench/attn2d_torch.py" $c @T); echo "$line"; echo -e "$r\t$line" >> "$out"
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$3' 2 7 "$th"
