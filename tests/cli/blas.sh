#!/usr/bin/env bash
# The BLAS set-up every tool shares: the right OpenBLAS kernel by default (re-executing once
# with OPENBLAS_CORETYPE when OpenBLAS mis-detects the CPU), a user's own OPENBLAS_CORETYPE
# never replaced, --threads honoured, the default thread count (the affinity mask, the
# environment) and where it came from reported by --version.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

level() {  # SIMD level of an OpenBLAS core name, as lib/attnkit/core/blas.cpp ranks them
  case "$(echo "$1" | tr A-Z a-z)" in
    skylakex|cooperlake|sapphirerapids) echo 3 ;;
    haswell|zen|skylake) echo 2 ;;
    sandybridge|bulldozer|piledriver|steamroller|excavator) echo 1 ;;
    *) echo 0 ;;
  esac
}
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
want=0
if echo "$flags" | grep -qw avx512f && echo "$flags" | grep -qw avx512bw &&
   echo "$flags" | grep -qw avx512dq && echo "$flags" | grep -qw avx512vl &&
   echo "$flags" | grep -qw avx512cd; then want=3
elif echo "$flags" | grep -qw avx2 && echo "$flags" | grep -qw fma; then want=2
elif echo "$flags" | grep -qw avx; then want=1
fi

core_of() { sed -n 's/.*OpenBLAS core \([A-Za-z0-9]*\),.*/\1/p' "$T/out"; }

# No OPENBLAS_CORETYPE: the tool ends up on a kernel at least as good as the CPU allows.
expect 0 env -u OPENBLAS_CORETYPE tensor-rand --version
got=$(core_of)
CHECKS=$((CHECKS + 1))
[ "$(level "$got")" -ge "$want" ] || fail "auto-detected core '$got' is below the CPU's level $want"

# The user's own setting wins, even a slow one.
expect 0 env OPENBLAS_CORETYPE=Prescott tensor-rand --version
check_eq "$(core_of)" "Prescott" "OPENBLAS_CORETYPE=Prescott respected"

# The same output whatever the kernel (re-execution keeps argv and standard input).
tensor-rand --shape 3,4 --seed 5 > a.txt
env -u OPENBLAS_CORETYPE tensor-rand --shape 3,4 --seed 5 > b.txt
check_eq "$(cmp -s a.txt b.txt && echo same)" same "tensor-rand output across kernels"
printf '1 2\n3 4\n' | env -u OPENBLAS_CORETYPE tensor-convert - - > c.txt
check_eq "$(cat c.txt | tr '\n' ' ')" "1 2 3 4 " "stdin survives the re-execution"

# --threads
expect 0 tensor-rand --threads 1 --version
grep -q "1 thread from --threads)" "$T/out" || fail "--threads 1 not reported: $(cat "$T/out")"
expect 0 tensor-rand --threads 2 --version
grep -q "2 threads from --threads)" "$T/out" || fail "--threads 2 not reported: $(cat "$T/out")"
# The default: the CPUs this process may run on (its affinity mask), not the machine's; then
# the environment; --threads over all. OpenBLAS follows (a difference would be printed).
(
  unset ATTNKIT_THREADS OMP_NUM_THREADS
  if command -v taskset >/dev/null; then
    expect 0 taskset -c 0 tensor-rand --version
    grep -q "1 thread from the affinity mask)" "$T/out" || fail "taskset -c 0: $(cat "$T/out")"
    if [ "$(nproc --all)" -ge 2 ] && taskset -c 0,1 true 2>/dev/null; then
      expect 0 taskset -c 0,1 tensor-rand --version
      grep -q "2 threads from the affinity mask)" "$T/out" || fail "taskset -c 0,1: $(cat "$T/out")"
    fi
    expect 0 taskset -c 0 env OMP_NUM_THREADS=3 tensor-rand --version
    grep -q "3 threads from OMP_NUM_THREADS)" "$T/out" || fail "OMP_NUM_THREADS=3: $(cat "$T/out")"
  else
    echo "note: taskset is not installed (util-linux): the affinity checks are skipped"
  fi
  expect 0 env OMP_NUM_THREADS=5 ATTNKIT_THREADS=4 tensor-rand --version
  grep -q "4 threads from ATTNKIT_THREADS)" "$T/out" || fail "ATTNKIT_THREADS=4: $(cat "$T/out")"
  expect 0 env OMP_NUM_THREADS=5,2 tensor-rand --version
  grep -q "5 threads from OMP_NUM_THREADS)" "$T/out" || fail "OMP_NUM_THREADS=5,2: $(cat "$T/out")"
  expect 0 env ATTNKIT_THREADS=4 tensor-rand --threads 3 --version
  grep -q "3 threads from --threads)" "$T/out" || fail "--threads 3 over ATTNKIT_THREADS: $(cat "$T/out")"
  expect_err 2 "ATTNKIT_THREADS must be a whole number" env ATTNKIT_THREADS=many tensor-rand --shape 2
  exit $FAILED
) || FAILED=$((FAILED + 1))
expect_err 2 "tensor-rand: --threads" tensor-rand --threads -1 --shape 2
expect_err 2 "tensor-rand: " tensor-rand --threads many --shape 2
finish
