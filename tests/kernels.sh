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
# The tests labelled text or noblas (checks of the tree's text, of option parsing, of file
# formats and error paths: no verdict there involves a kernel's arithmetic) run once, in make
# test. The families skipped are named with the flags they need. KERNELS="A B" replaces the choice;
# a family the CPU cannot execute is still skipped, never forced. KERNELS_SKIP_OWN=1 leaves
# out the family of the core OpenBLAS picks by itself here (asked from a built tool), for a
# run just after make test, which ran every test on that core already (.ci/run does this);
# KERNELS_SKIP_OWN=CORE names that core instead of asking (for tests). KERNELS_MAX=N then keeps
# the last N families of the list (the ones named later in the lists above: on an AVX2 machine
# whose own core is Zen, Sandybridge rather than Haswell), so that .ci/run's time does not grow
# with the CPU it lands on; the families left out are named.
# CTEST_ARGS, when given, replace the default selection (-LE '^(text|noblas)$'): make
# test-sanitize runs its own selection under a family this way (SANITIZE_KERNELS=1), and
# make test-kernels KERNELS_LABELS=REGEX runs only the tests with a label matching REGEX.
# KERNELS_ALWAYS=1: when no family is left to run, the tests still run once, as the CPU
# chooses (for the sanitizer stage, which must run whatever the CPU).
#   bash tests/kernels.sh BUILD_DIR JOBS [CTEST_ARGS...]
#   bash tests/kernels.sh --list        the families it would run, one line (for tests;
#                                       ATTNKIT_CPUINFO=FILE reads another CPU's description)
set -euo pipefail
list=0
[ "${1:-}" = --list ] && { list=1; shift; }
build=${1:-build}
jobs=${2:-2}
shift 2 2>/dev/null || shift $#
selection=("$@")
[ ${#selection[@]} -gt 0 ] || selection=(-LE '^(text|noblas)$')
once() {  # the selection once, on the core the CPU chooses
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "${selection[@]}"
}
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
  once
  exit
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
family() {  # the kernel family a core name belongs to
  case $1 in
    SkylakeX | Cooperlake | SapphireRapids) echo SkylakeX ;;
    *) echo "$1" ;;
  esac
}
if [ -n "${KERNELS_SKIP_OWN:-}" ] && [ "$KERNELS_SKIP_OWN" != 0 ]; then
  own=$KERNELS_SKIP_OWN
  if [ "$own" = 1 ]; then
    tool="$build/bin/tensor-rand"
    [ -x "$tool" ] || { echo "make test-kernels: no $tool to ask for OpenBLAS's own core (build first)" >&2; exit 1; }
    own=$(env -u OPENBLAS_CORETYPE -u ATTNKIT_SIMD "$tool" --version | sed -n 's/.*OpenBLAS core \([A-Za-z0-9_]*\).*/\1/p')
    [ -n "$own" ] || { echo "make test-kernels: no OpenBLAS core in '$tool --version'" >&2; exit 1; }
  fi
  kept=()
  for k in "${run[@]}"; do
    if [ "$(family "$k")" = "$(family "$own")" ]; then
      echo "make test-kernels: skipping $k: OpenBLAS's own choice here ($own), which make test ran"
    else
      kept+=("$k")
    fi
  done
  run=("${kept[@]}")
  if [ ${#run[@]} = 0 ]; then
    echo "make test-kernels: every family is OpenBLAS's own choice here ($own), which make test ran"
    [ $list = 1 ] && echo "run:"
    [ $list = 0 ] && [ "${KERNELS_ALWAYS:-0}" = 1 ] && { once; exit; }
    exit 0
  fi
fi
if [ -n "${KERNELS_MAX:-}" ]; then
  case $KERNELS_MAX in *[!0-9]* | 0) echo "make test-kernels: KERNELS_MAX must be a whole number above 0, not '$KERNELS_MAX'" >&2; exit 2 ;; esac
  while [ ${#run[@]} -gt "$KERNELS_MAX" ]; do
    echo "make test-kernels: skipping ${run[0]}: KERNELS_MAX=$KERNELS_MAX keeps the last of: ${run[*]}"
    run=("${run[@]:1}")
  done
fi
if [ $list = 1 ]; then echo "run: ${run[*]}"; exit 0; fi
for k in "${run[@]}"; do
  echo "== OPENBLAS_CORETYPE=$k ATTNKIT_SIMD=$(simd_cap "$k")"
  OPENBLAS_CORETYPE=$k ATTNKIT_SIMD=$(simd_cap "$k") once
done
