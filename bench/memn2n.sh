#!/usr/bin/env bash
# Training throughput of the End-To-End Memory Network at the paper's joint bAbI size (see
# bench/memn2n.cpp): attnkit against the same model in PyTorch (bench/memn2n_torch.py), in
# the same run, alternated REPS times, same OPENBLAS_CORETYPE and thread budget (PyTorch at 2
# threads: the fastest of its thread splits, bench/lib.sh's torch_best). Prints TSV
# rows and, per thread count, the examples/s ratio of every round and their spread.
#   bench/memn2n.sh [STEPS] [REPS]
# attnkit runs twice a round: clipping the global L2 norm at 40 like the peer, and clipping
# each weight group's spectral norm at 40, what memn2n-train does by default.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-memn2n"
[ -x "$bin" ] || { echo "memn2n.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-300}
reps=${2:-3}
bench_coretype
core=$OPENBLAS_CORETYPE
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "# PyTorch not importable by $PYTHON: peer skipped"; exit 0; }
echo -e "impl\tthreads\tsteps\tsec_per_step\texamples_per_s\tloss"
for th in 1 2; do
  ratios=() sratios=()
  for r in $(seq 1 "$reps"); do
    a=$(OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$th "$bin" "$steps" "$th")
    s=$(OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$th "$bin" "$steps" "$th" spectral)
    p=$(OPENBLAS_CORETYPE=$core torch_best 5 2 "$th" "$PYTHON" "$top/bench/memn2n_torch.py" "$steps" @T)
    echo "$a"; echo "$s"; echo "$p"
    ratios+=("$(paste <(echo "$a") <(echo "$p") | awk -F'\t' '{ printf "%.2f", $5 / $11 }')")
    sratios+=("$(paste <(echo "$s") <(echo "$p") | awk -F'\t' '{ printf "%.2f", $5 / $11 }')")
  done
  echo "# $th threads: attnkit / pytorch examples/s per round: ${ratios[*]}"
  echo "# $th threads: attnkit with memn2n-train's spectral clipping / pytorch: ${sratios[*]}"
done
