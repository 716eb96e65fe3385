#!/usr/bin/env bash
# memn2n-eval: the per-task table, task choice, the pass threshold, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
D="$ATTNKIT_TESTDATA/babi"
help_ok memn2n-eval
memn2n-train -q -i "$D" --task 1 --hops 2 --epochs 15 --seed 3 -o m.akm || fail "training"

expect 0 memn2n-eval --model m.akm -i "$D"
check_eq "$(cut -f1-3 "$T/out" | tr '\t\n' ' |')" "task error pass|1 0.0 yes|mean 0.0 yes|failed 0 -|" "the table"
# the fourth column: supporting-fact selection in percent (task 1 marks one fact a question)
check_eq "$(awk -F'\t' 'NR == 1 { print $4 } $1 == "failed" { print $4 }' "$T/out" | tr '\n' ' ')" "facts - " "facts column"
check_eq "$(awk -F'\t' '$1 == 1 && $4 ~ /^[0-9]+\.[0-9]$/ && $4 <= 100 { print "ok" }' "$T/out")" ok "task 1's facts"
check_eq "$(awk -F'\t' '$1 == 1 { a = $4 } $1 == "mean" { b = $4 } END { print (a == b) }' "$T/out")" 1 "mean facts"
# a task the model never saw: its answers (yes/no) are not in the vocabulary → all wrong
expect 0 memn2n-eval --model m.akm -i "$D" --task 1,6 -o t.tsv
check_eq "$(awk '$1 == 6 { print $2, $3 } $1 == "failed" { print $2 }' t.tsv | tr '\n' ' ')" \
  "100.0 no 1 " "unseen task fails"
check_eq "$(awk '$1 == "mean" { print $2 }' t.tsv)" "50.0" "mean of the two"
expect 0 memn2n-eval --model m.akm -i "$D" --split train --pass 0
check_eq "$(awk '$1 == 1 { print $3 }' "$T/out")" "yes" "train split"

# errors
expect_err 2 "--split: unknown split 'dev' (choose test or train)" memn2n-eval --model m.akm -i "$D" --split dev
expect_err 2 "bad task list" memn2n-eval --model m.akm -i "$D" --task 1-x
expect_err 2 "memn2n-eval: " memn2n-eval --model m.akm
expect_err 1 "no qa2_*_test.txt here" memn2n-eval --model m.akm -i "$D" --task 2 -o o.tsv
no_file o.tsv
expect_err 1 "not an attnkit model file" memn2n-eval --model "$D/qa1_tiny_test.txt" -i "$D"
expect 1 memn2n-eval --model m.akm -i "$D" -o /dev/full
finish
