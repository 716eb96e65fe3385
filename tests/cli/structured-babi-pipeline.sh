#!/usr/bin/env bash
# labels: pipeline
# pipelines/structured-babi.sh --quick: softmax, unary and crf memory networks on the tiny
# task-1 fixture, the table with the paper's figures beside (claims not checked).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/structured-babi.sh" --quick --seed 1 --keep q
check_eq "$(head -1 "$T/out")" "$(printf 'task\tK\tsoftmax\tunary\tcrf\tpaper-memn2n\tpaper-crf')" "table header"
check_eq "$(cut -f1,2 "$T/out" | tail -n +2 | tr '\t\n' ': ')" "1:2 " "one row: task 1, 2 hops"
# every cell answer%/facts% with numbers in [0, 100]
check_eq "$(awk -F'\t' 'NR == 2 { for (c = 3; c <= 5; c++) { split($c, a, "/");
  if (a[1] !~ /^[0-9.]+$/ || a[2] !~ /^[0-9.]+$/ || a[1] > 100 || a[2] > 100) print "bad " $c } }' "$T/out")" "" "cells"
# three models, each run recorded with its test and training error and its facts
check_eq "$(awk -F'\t' 'NR > 1 { print $2 }' q/runs.tsv | tr '\n' ' ')" "softmax unary crf " "the runs"
grep -q "PASS\|FAIL" "$T/err" && fail "--quick checked a claim"
expect 0 "$ATTNKIT_SRC/pipelines/structured-babi.sh" --help
grep -q "Table 4" "$T/out" || fail "--help"
expect 2 "$ATTNKIT_SRC/pipelines/structured-babi.sh" --bogus
expect 2 env STRUCT_JOBS=x "$ATTNKIT_SRC/pipelines/structured-babi.sh" --quick
grep -q "STRUCT_JOBS needs a whole number" "$T/err" || fail "STRUCT_JOBS=x: $(cat "$T/err")"
# no data: skipped with a message
expect 77 env BABI=/nonexistent "$ATTNKIT_SRC/pipelines/structured-babi.sh"
grep -q "skipped: no bAbI 1k data" "$T/err" || fail "no skip message"
finish
