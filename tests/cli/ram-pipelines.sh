#!/usr/bin/env bash
# labels: pipeline
# cost: 36
# pipelines/ram.sh --quick: trains the three RAM models on small image-gen canvases, writes
# the table, traces and pictures; the usage. Skipped while image-gen (the vision branch's) is
# not built.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
if ! command -v image-gen >/dev/null; then
  echo "SKIPPED: image-gen is not built (it comes with the vision branch)"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/ram.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/ram.sh" --bogus
expect 0 "$ATTNKIT_SRC/pipelines/ram.sh" --quick --seed 2 --keep ram
grep -q "^checked (smoke)" "$T/err" || fail "ram.sh: no smoke check: $(tail -3 "$T/err")"
check_eq "$(cut -f2,3 ram/table.tsv | tr '\t\n' ': ')" "model:samples ram-learned:1 ram-learned:2 ram-random:1 ram-random:2 ram:1 ram:2 ram-plain:1 ram-plain:2 mlp:1 cnn:1 " "table rows (--quick: 1 and 2 samples; img-train's baselines once)"
for f in translated.png cluttered.png plain.png translated-trace.tsv cluttered-trace.tsv plain-trace.tsv; do
  CHECKS=$((CHECKS + 1)); [ -s "ram/$f" ] || fail "no ram/$f"
done
finish
