#!/usr/bin/env bash
# Scaled-dot attention (lib/attnkit/attention) against the machine's raw sgemm, same run:
# for n = 1024, 2048, 4096 and d = 64 it times attend() (context of n queries over n keys)
# and the two plain sgemms of the same shapes (Q Kᵀ into an n x n matrix, then times V),
# and prints both rates; ratio = gemm time / attention time (1.0 = attention costs no more
# than its two matrix products). Needs a Release build in build/ (libattnkit.a).
#   bench/attn-score.sh [REPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTNKIT_BUILD:-$top/build}
lib=$(find "$build" -maxdepth 2 -name libattnkit.a | head -1)
[ -n "$lib" ] || { echo "attn-score.sh: no libattnkit.a under $build (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -std=c++17 -O3 -I"$top/lib" "$top/bench/attn_bench.cpp" "$lib" -lopenblas -lpthread \
  -o "$tmp/attn_bench"
"$tmp/attn_bench" "${1:-3}"
