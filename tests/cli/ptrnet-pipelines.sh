#!/usr/bin/env bash
# labels: pipeline
# The pointer-network pipelines' --quick forms: each trains, its table has a row per test n
# and 'all', its picture is drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --quick --seed 2 --keep sort
check_eq "$(cut -f1 sort/table.tsv | tr '\n' ' ')" "n 5 10 15 all " "sort table rows"
grep -q "^checked (smoke)" "$T/err" || fail "sort: no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s sort/pointer.png ] || fail "sort: no pointer picture"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --bogus
finish
