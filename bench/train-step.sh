#!/usr/bin/env bash
# One training step of an LSTM encoder-decoder with additive attention (vocab 1000, emb 64,
# hidden 128, batch 64, length 20, Adam): attnkit's tape (bench/train_step.cpp) against the
# same model in PyTorch (bench/torch_train_step.py), same run, same OPENBLAS_CORETYPE and
# thread count. Prints TSV rows and the tokens/s ratio per thread count.
#   bench/train-step.sh [STEPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-train_step"
[ -x "$bin" ] || { echo "train-step.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-20}
bench_coretype
core=$OPENBLAS_CORETYPE
echo -e "impl\tthreads\tsteps\tsec_per_step\ttokens_per_s\tloss"
for th in 1 2; do
  a=$(OPENBLAS_CORETYPE=$core "$bin" "$steps" "$th")
  echo "$a"
  if "$PYTHON" -c 'import torch' 2>/dev/null; then
    p=$(OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$th "$PYTHON" "$top/bench/torch_train_step.py" "$steps" "$th")
    echo "$p"
    paste <(echo "$a") <(echo "$p") | awk -F'\t' '{printf "# %s threads: attnkit / pytorch tokens/s = %.2fx\n", $2, $5/$11}'
  else
    echo "# PyTorch not importable by $PYTHON: peer skipped"
  fi
done
