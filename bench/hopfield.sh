#!/usr/bin/env bash
# Classic Hopfield recall, attnkit against a straightforward NumPy implementation of the same
# dynamics, in the same run, on the same data: N = 4096 neurons, P = 400 random patterns
# (Hebb rule), 1000 probes with 10% of their bits flipped. Both sides run with the same
# OPENBLAS_CORETYPE and thread count. NumPy's async loop runs on the first ASYNC_PROBES
# probes only (it is slow in Python): compare per_probe_ms. Prints both TSVs, then the
# speed ratio (NumPy time per probe / attnkit's) and the recall quality of each side.
#   bench/hopfield.sh [ASYNC_PROBES]       (default 20)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-hopfield_bench"
PY=$PYTHON
[ -x "$bin" ] || { echo "hopfield.sh: no $bin (build first: make)" >&2; exit 1; }
bench_coretype
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$(nproc)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "-- OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, $OPENBLAS_NUM_THREADS threads; N=4096 P=400, 1000 probes, 10% flipped"
echo "-- attnkit (lib/attnkit/memory recall)"
"$bin" "$dir" 4096 400 1000 | tee "$dir/attnkit.tsv"
if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "-- NumPy not installed: peer skipped"
  exit 0
fi
echo "-- NumPy (bench/numpy_hopfield.py)"
$PY "$top/bench/numpy_hopfield.py" "$dir" "${1:-20}" | tee "$dir/numpy.tsv"
echo "-- ratio = NumPy per-probe time / attnkit per-probe time; quality = bit error, exact recalls"
paste "$dir/attnkit.tsv" "$dir/numpy.tsv" | awk -F'\t' 'NR > 1 {
  printf "%s\t%.1fx faster\tattnkit bit error %s exact %s\tNumPy bit error %s exact %s (%s probes)\n",
    $1, $10 / $4, $5, $6, $11, $12, $8 }'
