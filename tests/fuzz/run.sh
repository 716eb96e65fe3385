#!/usr/bin/env bash
# Runs every libFuzzer harness built in BUILD/fuzz for SECONDS each, from the committed seed
# corpus (tests/fuzz/corpus/<harness>; new inputs go to a scratch copy, the corpus is not
# changed), JOBS harnesses at a time (each is one process on one core). Prints one line per
# harness: executions, seconds, and whether it found anything; a finding's input is kept as
# BUILD/fuzz-findings/<harness>-<crash|leak|oom|timeout>-* and the script exits 1.
#   tests/fuzz/run.sh [BUILD] [SECONDS] [JOBS]
#   (defaults build-sanitize, 30, the CPUs this process may use; make fuzz SECONDS=N)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-sanitize}
seconds=${2:-30}
jobs=${3:-$(nproc 2>/dev/null || echo 1)}
case $seconds in ''|*[!0-9]*) echo "run.sh: SECONDS must be a whole number" >&2; exit 2 ;; esac
case $jobs in ''|0|*[!0-9]*) echo "run.sh: JOBS must be a whole number above 0" >&2; exit 2 ;; esac
[ -d "$build/fuzz" ] || { echo "run.sh: no harnesses in $build/fuzz (make fuzz builds them)" >&2; exit 2; }
findings=$build/fuzz-findings
mkdir -p "$findings"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# fuzz_one NAME BIN: one harness; its result line goes to $scratch/NAME.row, its status to
# $scratch/NAME.rc.
fuzz_one() {
  local name=$1 bin=$2 start rc execs result
  mkdir -p "$scratch/$name"
  start=$(date +%s)
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/$name-" "$scratch/$name" \
    "$top/tests/fuzz/corpus/$name" >"$scratch/$name.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log" | tail -1)
  result=ok
  if [ "$rc" != 0 ]; then
    result="FOUND: $(grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error|out-of-memory|deadly signal' "$scratch/$name.log" | cut -c1-160)"
    cp "$scratch/$name.log" "$findings/$name.log"
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "${execs:-?}" "$(( $(date +%s) - start ))" "$result" \
    >"$scratch/$name.row"
  echo "$rc" >"$scratch/$name.rc"
}
names=()
for bin in "$build"/fuzz/fuzz-*; do
  name=${bin##*/fuzz-}
  names+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  fuzz_one "$name" "$bin" &
done
wait
status=0
printf 'harness\texecutions\tseconds\tresult\n'
for name in "${names[@]}"; do
  cat "$scratch/$name.row"
  [ "$(cat "$scratch/$name.rc")" = 0 ] || status=1
done
[ "$status" = 0 ] || echo "run.sh: findings in $findings (inputs and logs)" >&2
exit $status
