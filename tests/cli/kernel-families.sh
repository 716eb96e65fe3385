#!/usr/bin/env bash
# labels: text
# No script forces a kernel the CPU may lack: make test-kernels picks OpenBLAS kernel families
# from the CPU's flags (tests/kernels.sh, checked here on described CPUs: AVX-512, an AVX2
# AMD EPYC, an AVX2 Intel, an AVX-only CPU), and no script of the tree sets OPENBLAS_CORETYPE
# to an AVX-512 core by name (the benches ask the tools, bench/lib.sh's bench_coretype).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
cpu() {  # cpu VENDOR FLAGS...: a one-CPU /proc/cpuinfo
  printf 'processor\t: 0\nvendor_id\t: %s\nflags\t\t: fpu sse sse2 sse3 ssse3 sse4_1 sse4_2 %s\n' \
    "$1" "${*:2}" > "$T/cpuinfo"
}
families() { ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS="${1:-}" bash "$ATTNKIT_SRC/tests/kernels.sh" --list 2>&1; }
avx512="avx avx2 fma avx512f avx512bw avx512vl avx512dq avx512cd"

cpu GenuineIntel $avx512
out=$(families)
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Haswell SkylakeX" "AVX-512 Intel"
cpu AuthenticAMD avx avx2 fma
out=$(families)
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Haswell Sandybridge Zen" "AVX2 AMD EPYC"
CHECKS=$((CHECKS + 1))
echo "$out" | grep -q 'skipping SkylakeX: it needs avx512f' || fail "AVX2 machine: SkylakeX not named as skipped: $out"
cpu GenuineIntel avx avx2 fma
check_eq "$(families | sed -n 's/^run: //p')" "Haswell Sandybridge" "AVX2 Intel"
cpu GenuineIntel avx
check_eq "$(families | sed -n 's/^run: //p')" "Sandybridge Nehalem" "AVX-only CPU"
# KERNELS replaces the choice, but a family the CPU lacks is skipped, never forced.
cpu AuthenticAMD avx avx2 fma
out=$(families "SkylakeX Haswell")
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Haswell" "KERNELS=SkylakeX Haswell on AVX2"
CHECKS=$((CHECKS + 1))
echo "$out" | grep -q 'skipping SkylakeX (from KERNELS)' || fail "KERNELS' SkylakeX not named as skipped: $out"
CHECKS=$((CHECKS + 1))
ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS=SkylakeX bash "$ATTNKIT_SRC/tests/kernels.sh" --list > "$T/out" 2>&1 &&
  fail "KERNELS=SkylakeX alone on AVX2 should fail: $(cat "$T/out")"
# After make test (KERNELS_SKIP_OWN), the family of OpenBLAS's own core is left out: it ran.
own() { ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS_SKIP_OWN=$1 bash "$ATTNKIT_SRC/tests/kernels.sh" --list 2>&1; }
cpu AuthenticAMD $avx512
out=$(own Cooperlake)
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Haswell" "AVX-512, own core Cooperlake"
CHECKS=$((CHECKS + 1))
echo "$out" | grep -q 'skipping SkylakeX: OpenBLAS.s own choice here (Cooperlake)' ||
  fail "the own family not named as skipped: $out"
cpu AuthenticAMD avx avx2 fma
check_eq "$(own Zen | sed -n 's/^run: //p')" "Haswell Sandybridge" "AVX2 AMD, own core Zen"
cpu GenuineIntel avx avx2 fma
check_eq "$(own Haswell | sed -n 's/^run: //p')" "Sandybridge" "AVX2 Intel, own core Haswell"
check_eq "$(own 0 | sed -n 's/^run: //p')" "Haswell Sandybridge" "KERNELS_SKIP_OWN=0"
# KERNELS_MAX=N: the last N of what would run, the others named; a bad N is a usage error.
cpu AuthenticAMD avx avx2 fma
out=$(ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS_SKIP_OWN=Zen KERNELS_MAX=1 bash "$ATTNKIT_SRC/tests/kernels.sh" --list 2>&1)
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Sandybridge" "AVX2 AMD, own core Zen, KERNELS_MAX=1"
CHECKS=$((CHECKS + 1))
echo "$out" | grep -q 'skipping Haswell: KERNELS_MAX=1 keeps the last of: Haswell Sandybridge' ||
  fail "the family KERNELS_MAX left out is not named: $out"
out=$(ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS_MAX=2 bash "$ATTNKIT_SRC/tests/kernels.sh" --list 2>&1)
check_eq "$(echo "$out" | sed -n 's/^run: //p')" "Sandybridge Zen" "AVX2 AMD, KERNELS_MAX=2"
cpu GenuineIntel $avx512
check_eq "$(ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS_SKIP_OWN=SkylakeX KERNELS_MAX=1 bash "$ATTNKIT_SRC/tests/kernels.sh" --list 2>&1 | sed -n 's/^run: //p')" \
  "Haswell" "AVX-512, KERNELS_MAX=1 with one family left"
expect_err 2 "KERNELS_MAX must be a whole number" env ATTNKIT_CPUINFO="$T/cpuinfo" KERNELS_MAX=0 bash "$ATTNKIT_SRC/tests/kernels.sh" --list
# The own core asked from the built tool: never a family of this run's list.
CHECKS=$((CHECKS + 1))
real=$(KERNELS_SKIP_OWN=1 bash "$ATTNKIT_SRC/tests/kernels.sh" --list "$ATTNKIT_BUILD" 2>&1) ||
  fail "KERNELS_SKIP_OWN=1 --list failed: $real"
core=$(env -u OPENBLAS_CORETYPE "$ATTNKIT_BUILD/bin/tensor-rand" --version | sed -n 's/.*OpenBLAS core \([A-Za-z0-9_]*\).*/\1/p')
case $core in SkylakeX | Cooperlake | SapphireRapids) core=SkylakeX ;; esac
[[ " $(echo "$real" | sed -n 's/^run: //p') " != *" $core "* ]] || fail "own core $core still run: $real"

# No script sets OPENBLAS_CORETYPE (or a variable ending in CORETYPE) to an AVX-512 core by name.
cd "$ATTNKIT_SRC" || exit 1
scripts=$(git ls-files '*.sh' '*.py' '*.mk' Makefile '.ci/*' '*CMakeLists.txt' 2>/dev/null) ||
  scripts=$(find bench pipelines tests .ci -name '*.sh' -o -name '*.py'; echo Makefile)
# shellcheck disable=SC2086
re="CORETYPE[A-Za-z_]*[]\"']*[[:space:]]*(=|:-|:=)[[:space:]]*[\"']?(skylakex|cooperlake|sapphirerapids)"
# shellcheck disable=SC2086
hits=$(grep -nEi "$re" $scripts | grep -v '^tests/cli/kernel-families.sh:')
# The pattern finds the forms used before (a default, a plain and a Python assignment).
for form in 'x=${OPENBLAS_CORETYPE:-SkylakeX}' 'OPENBLAS_CORETYPE=Cooperlake cmd' \
            'os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"'; do
  check_eq "$(echo "$form" | grep -Eic "$re")" 1 "the pattern finds $form"
done
CHECKS=$((CHECKS + 1))
[ -z "$hits" ] || fail "scripts force an AVX-512 OpenBLAS core without asking the CPU: $hits"
finish
