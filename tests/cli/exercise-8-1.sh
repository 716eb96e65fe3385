#!/usr/bin/env bash
# labels: pipeline
# pipelines/exercise-8-1.sh --quick: LSTM layers count 4m(n+m+1) parameters.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 bash "$ATTNKIT_SRC/pipelines/exercise-8-1.sh" --quick
grep -q "every LSTM layer has 4m(n+m+1) parameters" "$T/out" || fail "no conclusion line"
check_eq "$(grep -c '^[0-9]*	[0-9]*	encoder.l[01]	' "$T/out")" 4 "four layers checked"
finish
