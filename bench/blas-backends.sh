#!/usr/bin/env bash
# sgemm through the three BLAS libraries Debian offers on x86-64, side by side in one run:
# OpenBLAS (attnkit's, with the core type the tools choose for this CPU: bench/lib.sh's
# bench_coretype), oneDNN's dnnl_sgemm (libdnnl-dev: what PyTorch uses on the CPU) and BLIS
# (libblis-dev), each built from bench/blas_backends.c into a temporary folder; shapes SHAPES,
# C [M, N] = A [M, K] B or, with T, A Bᵀ (default: the squares 512 1000 1024 2048, 1000 beside
# 1024 for a power-of-two stride's cost, and the fused attention's block products at d = 64:
# Q Kᵀ 256x256x64T and P V 256x64x256), at 1 thread and at THREADS, the libraries alternated
# REPS times. Prints every run as TSV, then per shape and thread count each library's best
# GFLOP/s, its ratio to OpenBLAS's, and its share of the fp32 FMA peak that bench-gemm
# measures on the same threads (a build of attnkit first: make; without it the share is left
# out).
#   bench/blas-backends.sh [REPS] [THREADS] [SECONDS]     (defaults 3 2 0.5)
# Needs libdnnl-dev and libblis-dev, which `make bench` installs (no tool uses them, so make
# deps does not); run alone without them, it exits 1 naming what is missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
reps=${1:-3} T=${2:-2} secs=${3:-0.5}
shapes=${SHAPES:-512x512x512 1000x1000x1000 1024x1024x1024 2048x2048x2048 256x256x64T 256x64x256}
for h in /usr/include/oneapi/dnnl/dnnl.h:libdnnl-dev /usr/include/x86_64-linux-gnu/blis.h:libblis-dev \
  /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h:libopenblas-dev; do
  [ -e "${h%%:*}" ] || { echo "blas-backends.sh: no ${h%%:*} (apt-get install ${h##*:})" >&2; exit 1; }
done
bench_coretype
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$top/bench/blas_backends.c
cc -O2 -o "$tmp/openblas" "$src" -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -lm
cc -O2 -DUSE_DNNL -o "$tmp/onednn" "$src" -ldnnl -lm
cc -O2 -DUSE_BLIS -I/usr/include/x86_64-linux-gnu -o "$tmp/blis" "$src" -lblis -lm
gemm=${ATTNKIT_BUILD:-$top/build}/bench/bench-gemm
echo "# OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'lib\tshape\tthreads\tgflops\tchecksum\n'
for r in $(seq "$reps"); do
  for n in $shapes; do
    for t in 1 "$T"; do
      for lib in openblas onednn blis; do
        OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t BLIS_NUM_THREADS=$t "$tmp/$lib" "$n" "$secs" |
          tee -a "$tmp/runs.tsv"
      done
    done
  done
done
: >"$tmp/peak"
if [ -x "$gemm" ]; then
  for t in 1 "$T"; do
    "$gemm" --size 64 --threads "$t" --min-seconds 0.2 | awk -F'\t' -v t="$t" '$1 == "peak" { print t "\t" $3 }' >>"$tmp/peak"
  done
fi
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# best GFLOP/s of $reps runs; ratio: to OpenBLAS's best at the same size and threads; peak: bench-gemm's FMA loop"
printf 'shape\tthreads\tlib\tgflops\tratio\tpeak_share\n'
awk -F'\t' 'NR == FNR { peak[$1] = $2; next }
  { k = $2 "\t" $3 "\t" $1; if (!(k in best) || $4 > best[k]) best[k] = $4
    if (!(($2 "\t" $3) in seen)) { seen[$2 "\t" $3] = 1; order[++n] = $2 "\t" $3 } }
  END { split("openblas onednn blis", libs, " ")
    for (i = 1; i <= n; i++) { split(order[i], a, "\t"); o = best[order[i] "\topenblas"]
      for (j = 1; j <= 3; j++) { g = best[order[i] "\t" libs[j]]
        printf "%s\t%s\t%.1f\t%.2f\t%s\n", order[i], libs[j], g, g / o, (a[2] in peak) ? sprintf("%.2f", g / peak[a[2]]) : "-" } } }' \
  "$tmp/peak" "$tmp/runs.tsv"
