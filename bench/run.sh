#!/usr/bin/env bash
# attnkit benchmarks, each side by side with its peer in the same run.
#   bench/run.sh            (make bench) — tools and bench programs from build/
# Results are TSV on stdout; ratios are printed at the end of each section.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
B=${ATTNKIT_BUILD:-$top/build}
export PATH="$B/bin:$PATH"
PY=$PYTHON
sizes="512 1024 2048"

echo "== sgemm: the OpenBLAS kernel trap (2 cores, float32, square matrices)"
echo "-- OpenBLAS forced to its generic kernel (OPENBLAS_CORETYPE=Prescott), as on a mis-detected CPU"
OPENBLAS_CORETYPE=Prescott "$B/bench/bench-gemm" --size $sizes | tee /tmp/attnkit-gemm-prescott.tsv
echo "-- attnkit's own choice (OPENBLAS_CORETYPE unset: tools detect the CPU and re-execute)"
env -u OPENBLAS_CORETYPE "$B/bench/bench-gemm" --size $sizes | tee /tmp/attnkit-gemm-auto.tsv
if $PY -c 'import numpy' 2>/dev/null; then
  echo "-- NumPy float32 matmul, same OPENBLAS_CORETYPE as the previous line's core"
  core=$(awk 'NR==2{print $4}' /tmp/attnkit-gemm-auto.tsv)
  OPENBLAS_CORETYPE=$core $PY "$top/bench/numpy_gemm.py" $sizes | tee /tmp/attnkit-gemm-numpy.tsv
  echo "-- ratios per size: attnkit-auto / generic kernel, attnkit-auto / NumPy"
  paste /tmp/attnkit-gemm-auto.tsv /tmp/attnkit-gemm-prescott.tsv /tmp/attnkit-gemm-numpy.tsv |
    awk -F'\t' 'NR>1{printf "%s\t%.2fx vs generic\t%.2fx vs numpy\n", $1, $3/$8, $3/$13}'
else
  echo "-- NumPy not installed: peer skipped"
fi
for extra in "$top"/bench/*.sh; do
  [ "$(basename "$extra")" = run.sh ] && continue
  [ -e "$extra" ] || continue
  echo
  echo "== $(basename "$extra")"
  bash "$extra"
done
