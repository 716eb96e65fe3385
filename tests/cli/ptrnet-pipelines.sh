#!/usr/bin/env bash
# labels: pipeline
# The pointer-network pipelines' --quick forms: each trains, its table has a row per test n
# and 'all', its picture is drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --quick --seed 2 --keep sort
check_eq "$(cut -f1 sort/table.tsv | tr '\n' ' ')" "n 5 10 15 all " "sort table rows"
grep -q "^checked (smoke)" "$T/err" || fail "sort: no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s sort/pointer.png ] || fail "sort: no pointer picture"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-tsp.sh" --quick --seed 2 --keep tsp
check_eq "$(cut -f1 tsp/table.tsv | tr '\n' ' ')" "n 5 10 15 20 all " "tsp table rows"
check_eq "$(awk -F'\t' '$1 == "all" { print $4 }' tsp/table.tsv tsp/table-beam4.tsv | tr '\n' ' ')" "1.0000 1.0000 " "every masked output a tour"
grep -q "^checked (smoke)" "$T/err" || fail "tsp: no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s tsp/tours.png ] || fail "tsp: no picture of tours"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-hull.sh" --quick --seed 2 --keep hull
check_eq "$(cut -f1 hull/table.tsv | tr '\n' ' ')" "n 5 10 20 50 all " "hull table rows"
grep -q "^checked (smoke)" "$T/err" || fail "hull: no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s hull/hulls.png ] || fail "hull: no picture of hulls"
expect 0 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/ptrnet-sort.sh" --bogus
finish
