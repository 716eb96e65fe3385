#!/usr/bin/env bash
# conv2d forward + backward, attnkit (bench/conv.cpp) against torch.nn.functional.conv2d
# (bench/conv_torch.py), in one run, alternating the two sides, REPS times each, with the same
# OPENBLAS_CORETYPE. Cases: the first and second layers of a small CNN on 28×28 images (1→32
# and 32→64 channels, 3×3, padding 1, batch 64), a 3×3 layer on 14×14 maps, and a 1×1
# projection (SAGAN's f, g, h). PyTorch at N > 1 threads gets the best of torch N / OpenBLAS
# N, N / 1 and 1 / N (bench/lib.sh). Prints every measurement as TSV, then per case the
# median ratio of the rates attnkit / pytorch and the range of the per-repetition ratios.
#   bench/conv.sh [REPS] [THREADS]     (defaults 3 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-conv"
[ -x "$bin" ] || { echo "conv.sh: no $bin (build first: make)" >&2; exit 1; }
reps=${1:-3} th=${2:-2}
bench_coretype
py=
"$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
[ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "impl\tcase\tthreads\tsteps\tsec\trate\tgflops\tsetting"
# N C H W O K PAD STEPS
cases=("64 1 28 28 32 3 1 10" "64 32 28 28 64 3 1 5" "64 64 14 14 64 3 1 10" "64 64 14 14 8 1 0 20")
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    line=$(OMP_NUM_THREADS=$th "$bin" $c "$th"); echo "$line"; echo -e "$r\t$line" >> "$out"
    [ -n "$py" ] || continue
    # shellcheck disable=SC2086
    line=$(torch_best 6 3 "$th" "$py" "$top/bench/conv_torch.py" $c @T); echo "$line"; echo -e "$r\t$line" >> "$out"
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$3' 2 7 "$th"
