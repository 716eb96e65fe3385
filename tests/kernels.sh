#!/usr/bin/env bash
# make test-kernels: every test again on each OpenBLAS kernel family that this CPU can
# execute, chosen from its flags. The families round differently, so a training takes another
# path: a test whose verdict hangs on the kernel's rounding fails here rather than on the next
# machine. Each family also caps attnkit's own hand-vectorised kernels (ATTNKIT_SIMD) at its
# instruction set, so an AVX-512 machine runs the AVX2 paths as an AVX2 machine would.
#   AVX-512 (avx512f avx512bw avx512vl avx512dq avx512cd):  Haswell SkylakeX
#   AVX2 + FMA:                     Haswell Sandybridge, and Zen too on an AMD (Zen) CPU
#   AVX only:                       Sandybridge Nehalem
#   older x86-64:                   Nehalem Prescott
# The families skipped are named with the flags they need. KERNELS="A B" replaces the choice;
# a family the CPU cannot execute is still skipped, never forced.
#   bash tests/kernels.sh BUILD_DIR JOBS
#   bash tests/kernels.sh --list        the families it would run, one line (for tests;
#                                       ATTNKIT_CPUINFO=FILE reads another CPU's description)
set -euo pipefail
list=0
[ "${1:-}" = --list ] && { list=1; shift; }
build=${1:-build}
jobs=${2:-2}
cpuinfo=${ATTNKIT_CPUINFO:-/proc/cpuinfo}
flags=" $(grep -m1 '^flags' "$cpuinfo" 2>/dev/null | cut -d: -f2) "
vendor=$(grep -m1 '^vendor_id' "$cpuinfo" 2>/dev/null | awk '{ print $3 }')
arch=${ATTNKIT_CPUINFO:+x86_64}
arch=${arch:-$(uname -m)}

has() { local f; for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
needs() {  # the CPU flags a family's kernels execute
  case $1 in
    SkylakeX | Cooperlake | SapphireRapids) echo "avx512f avx512bw avx512vl avx512dq avx512cd" ;;
    Haswell | Zen) echo "avx2 fma" ;;
    Sandybridge) echo "avx" ;;
    Nehalem) echo "sse4_2" ;;
    *) echo "sse3" ;;
  esac
}
simd_cap() {  # attnkit's own kernels at the family's instruction set
  case $1 in
    SkylakeX | Cooperlake | SapphireRapids) echo avx512 ;;
    Haswell | Zen) echo avx2 ;;
    *) echo portable ;;
  esac
}

if [[ $arch != x86_64 ]]; then
  echo "make test-kernels: OpenBLAS's x86 kernel families do not apply on $arch: every test once, as the CPU chooses"
  [ $list = 1 ] && exit 0
  exec ctest --test-dir "$build" --output-on-failure -j "$jobs"
fi

if [ -n "${KERNELS:-}" ]; then
  wanted=$KERNELS
elif has $(needs SkylakeX); then
  wanted="Haswell SkylakeX"
elif has $(needs Haswell); then
  wanted="Haswell Sandybridge"
  [[ $vendor == AuthenticAMD || $vendor == HygonGenuine ]] && wanted="$wanted Zen"
elif has $(needs Sandybridge); then
  wanted="Sandybridge Nehalem"
else
  wanted="Nehalem Prescott"
fi
for k in SkylakeX Haswell Zen Sandybridge; do
  [[ " $wanted " == *" $k "* ]] && continue
  if ! has $(needs "$k"); then
    echo "make test-kernels: skipping $k: it needs $(needs "$k"), which this CPU lacks"
  elif [ "$k" = Zen ] && [[ $vendor != AuthenticAMD && $vendor != HygonGenuine ]]; then
    echo "make test-kernels: skipping Zen: not an AMD CPU ($vendor)"
  else
    echo "make test-kernels: skipping $k: the families run ($wanted) already cover this CPU's instruction sets"
  fi
done
run=()
for k in $wanted; do
  if has $(needs "$k"); then run+=("$k"); else
    echo "make test-kernels: skipping $k (from KERNELS): it needs $(needs "$k"), which this CPU lacks"
  fi
done
[ ${#run[@]} -gt 0 ] || { echo "make test-kernels: no kernel family left to run" >&2; exit 1; }
if [ $list = 1 ]; then echo "run: ${run[*]}"; exit 0; fi
for k in "${run[@]}"; do
  echo "== OPENBLAS_CORETYPE=$k ATTNKIT_SIMD=$(simd_cap "$k")"
  OPENBLAS_CORETYPE=$k ATTNKIT_SIMD=$(simd_cap "$k") \
    ctest --test-dir "$build" --output-on-failure -j "$jobs"
done
