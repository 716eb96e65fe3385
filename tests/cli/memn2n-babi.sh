#!/usr/bin/env bash
# labels: pipeline
# pipelines/memn2n-babi.sh --quick: the table on the tiny fixtures, with its own claims.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/memn2n-babi.sh" --quick --seed 1
check_eq "$(head -1 "$T/out")" "$(printf 'task\tquick-task1\tquick-joint')" "table header"
check_eq "$(cut -f1 "$T/out" | tr '\n' ' ')" "task 1 6 mean failed " "table rows"
grep -q "ok: tiny task 1 learned" "$T/err" || fail "no claim checked"
expect 0 "$ATTNKIT_SRC/pipelines/memn2n-babi.sh" --help
grep -q "Table 1" "$T/out" || fail "--help"
expect 2 "$ATTNKIT_SRC/pipelines/memn2n-babi.sh" --bogus
finish
