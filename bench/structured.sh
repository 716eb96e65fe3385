#!/usr/bin/env bash
# Structured attention's cost (issue 34): the chain CRF's forward-backward and the tree CRF's
# inside-outside, marginals and their backward pass, in attnkit (bench/structured.cpp) and in
# a PyTorch peer of the same dynamic programmes, batched in log space with autograd
# (bench/structured_torch.py, checked against brute-force enumeration first), in the same
# run, alternated REPS rounds, same OPENBLAS_CORETYPE and thread count; then one memory-network
# training step with --attention crf against softmax. Prints the TSV rows and, per round, the
# peer/attnkit time ratios of the DPs and attnkit's crf/softmax step ratio. The issue's
# targets: the DPs >= 3x the peer, the crf step <= 3x the softmax one.
#   bench/structured.sh [ITERS] [REPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-structured"
[ -x "$bin" ] || { echo "structured.sh: no $bin (build first: make)" >&2; exit 1; }
iters=${1:-20}
reps=${2:-3}
bench_coretype
core=$OPENBLAS_CORETYPE
peer=1
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "# PyTorch not importable by $PYTHON: peer skipped"; peer=0; }
[ "$peer" = 0 ] || "$PYTHON" "$top/bench/structured_torch.py" check | sed 's/^/# /'
echo -e "impl\twhat\tsize\tms_per_iter"
for r in $(seq 1 "$reps"); do
  a=$(OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=1 "$bin" "$iters" 1)
  echo "$a" | grep -v '^#'
  echo "$a" | grep '^#' || true
  [ "$peer" = 1 ] || continue
  p=$(OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=1 "$PYTHON" "$top/bench/structured_torch.py" "$iters" 1)
  echo "$p"
  for w in chain tree; do
    echo "# round $r: $w: pytorch / attnkit time $(awk -F'\t' -v w="$w" '$2 == w { t[$1] = $4 } END { printf "%.2f", t["pytorch"] / t["attnkit"] }' <(echo "$a"; echo "$p"))"
  done
done
