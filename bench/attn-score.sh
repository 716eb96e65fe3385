#!/usr/bin/env bash
# Scaled-dot attention (lib/attnkit/attention) against the machine's raw sgemm, same run:
# for n = 1024, 2048, 4096 and d = 64 it times attend() (context of n queries over n keys)
# and the two plain sgemms of the same shapes (Q Kᵀ into an n x n matrix, then times V),
# and prints both rates; ratio = gemm time / attention time (1.0 = attention costs no more
# than its two matrix products). Needs a Release build in build/ (CMake builds bench/attn_bench.cpp).
#   bench/attn-score.sh [REPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-attn_bench"
[ -x "$bin" ] || { echo "attn-score.sh: no $bin (build first: make)" >&2; exit 1; }
"$bin" "${1:-3}"
