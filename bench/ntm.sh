#!/usr/bin/env bash
# NTM training speed on the copy task (LSTM 100, one read and one write head, 128 x 20
# memory, batch 1, RMSProp, clipping by value): attnkit (bench/ntm.cpp) against a PyTorch
# reference NTM of the same size (bench/ntm_torch.py), same run, same OPENBLAS_CORETYPE and
# thread budget, alternated and repeated. Prints TSV rows and the sequences/s ratio per round.
# PyTorch at 2 threads: the fastest of its thread splits (bench/lib.sh's torch_best; named in
# a last column).
#   bench/ntm.sh [SEQUENCES_ATTNKIT] [SEQUENCES_TORCH] [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-ntm"
[ -x "$bin" ] || { echo "ntm.sh: no $bin (build first: make)" >&2; exit 1; }
na=${1:-1000} nt=${2:-100} rounds=${3:-3}
bench_coretype
core=$OPENBLAS_CORETYPE
echo -e "impl\tthreads\tsequences\tsec\tseq_per_s\tbits_per_seq"
for th in 1 2; do
  for r in $(seq "$rounds"); do
    a=$(OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$th "$bin" "$na" "$th" "$r")
    echo "$a"
    if "$PYTHON" -c 'import torch' 2>/dev/null; then
      p=$(OPENBLAS_CORETYPE=$core torch_best 5 2 "$th" "$PYTHON" "$top/bench/ntm_torch.py" "$nt" @T "$r")
      echo "$p"
      paste <(echo "$a") <(echo "$p") |
        awk -F'\t' -v r="$r" '{ printf "# %s threads, round %s: attnkit / pytorch sequences/s = %.1fx\n", $2, r, $5 / $11 }'
    else
      echo "# PyTorch not importable by $PYTHON: peer skipped"
    fi
  done
done
