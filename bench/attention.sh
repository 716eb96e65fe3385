#!/usr/bin/env bash
# Scaled-dot attention and multi-head attention, attnkit against PyTorch (PYTHON=, default
# Debian's /usr/bin/python3; F.scaled_dot_product_attention where that PyTorch has it, else the
# materialised softmax(q kᵀ/√d) v, named in the output), side by side in one run: same thread
# count (ATTNKIT_THREADS, default 2), same OpenBLAS core type for both (the tools' own choice
# for this CPU, or the user's OPENBLAS_CORETYPE: bench/lib.sh's bench_coretype; PyTorch's own
# CPU kernels detect the CPU themselves).
# Each case runs in its own process so its peak RSS is its own. Prints TSV and, per N, the
# ratio attnkit/PyTorch and attnkit's share of the machine's sgemm GFLOP/s and of its fp32 FMA
# peak (bench-gemm's FMA loop) from this run, and
# a profile line: the time of the Q Kᵀ products, the online softmax and the P V products.
#   bench/attention.sh [--quick]      (--quick: small sizes, one rep: a smoke test)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-attention"
[ -x "$bin" ] || { echo "attention.sh: no $bin (build first: make)" >&2; exit 1; }
# Both sides get the same core type: the tools' own choice, or the user's OPENBLAS_CORETYPE.
bench_coretype
export ATTNKIT_THREADS=${ATTNKIT_THREADS:-2}
export OPENBLAS_NUM_THREADS=$ATTNKIT_THREADS OMP_NUM_THREADS=$ATTNKIT_THREADS
PY=$PYTHON
sizes="256 1024 4096 8192 16384"; big=65536; reps=3; mha="1024 8 512 4"
if [ "${1:-}" = --quick ]; then sizes="128 256"; big=2048; reps=2; mha="64 8 64 2"; fi
torch_sdpa() {  # a killed or failed run still gets its line
  $PY "$top/bench/attention_torch.py" sdpa "$@" ||
    printf 'torch-sdpa\t%s\t%s\t%s\tfail\t-\t-\t%s\n' "$1" "$2" "$3" "$ATTNKIT_THREADS"
}
have_torch=1; $PY -c 'import torch' 2>/dev/null || have_torch=0
out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "# OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE threads=$ATTNKIT_THREADS"
if [ $have_torch = 1 ]; then $PY "$top/bench/attention_torch.py" peer; else echo "# PyTorch not importable by $PY: peer skipped"; fi
printf 'impl\tN\theads\td\tseconds\tGFLOPs\tpeak_RSS_MB\tthreads\n'
"$bin" sgemm 4096 "$reps" | tee -a "$out"
# The fp32 FMA peak of these threads (bench-gemm's FMA loop), for the share of peak below.
"$build/bench/bench-gemm" --threads "$ATTNKIT_THREADS" --size 64 --min-seconds 0.3 |
  awk -F'\t' '$1 == "peak" { printf "fma-peak\t-\t-\t-\t%s\t%s\t-\t%s\n", $2, $3, $5 }' | tee -a "$out"
# Where the streaming kernel's time goes (one thread, one head), as a comment line.
prof_n=4096; [ "${1:-}" = --quick ] && prof_n=512
"$bin" profile "$prof_n" 64 "$reps" | sed 's/^profile\t[^\t]*\t[^\t]*\t[^\t]*\t/# profile N='"$prof_n"' d=64: /'
for n in $sizes; do
  r=$reps; [ "$n" -ge 8192 ] && r=1
  "$bin" fused "$n" 8 64 "$r" | tee -a "$out"
  if [ $have_torch = 1 ]; then torch_sdpa "$n" 8 64 "$r" | tee -a "$out"; fi
done
"$bin" fused "$big" 1 64 1 | tee -a "$out"
if [ $have_torch = 1 ]; then torch_sdpa "$big" 1 64 1 | tee -a "$out"; fi
"$bin" mha $mha "$reps" | tee -a "$out"
if [ $have_torch = 1 ]; then $PY "$top/bench/attention_torch.py" mha $mha "$reps" | tee -a "$out"; fi
echo "# ratios (PyTorch seconds / attnkit seconds), attnkit GFLOP/s / sgemm GFLOP/s and / the FMA peak"
awk -F'\t' '$1 == "sgemm" { peak = $6 } $1 == "fma-peak" { fma = $6 }
  $1 == "attnkit-fused" { a[$2 "/" $3] = $5; g[$2 "/" $3] = $6 }
  $1 == "torch-sdpa" { t[$2 "/" $3] = $5 }
  $1 == "attnkit-mha" { am = $5 } $1 == "torch-mha" { tm = $5 }
  END { for (k in a) { r = (k in t && t[k] != "fail") ? sprintf("%.2fx", t[k] / a[k]) : (k in t ? "torch failed" : "-")
          printf "N/heads %s\tvs torch %s\t%.0f%% of sgemm\t%.0f%% of the FMA peak\n", k, r, 100 * g[k] / peak, 100 * g[k] / fma }
        if (am && tm) printf "mha\tvs torch %.2fx\n", tm / am }' "$out" | sort -t/ -k1,1n
