#!/usr/bin/env bash
# labels: pipeline
# pipelines/exercise-8-4.sh --quick: the twelve trainings, the three NTM ones and the stack RNN
# run and the table has its rows; the traces are drawn, the analysis written; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --quick --seed 2 --keep ex84
check_eq "$(cut -f1,2 "$T/out" | tr '\t\n' ': ')" "task:model anbn:stack-rnn bigram-flip:deque bigram-flip:none bigram-flip:ntm bigram-flip:queue bigram-flip:stack copy:deque copy:none copy:ntm copy:queue copy:stack reverse:deque reverse:none reverse:ntm reverse:queue reverse:stack " "table rows"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1))
[ -s ex84/stack-reverse.png ] && [ -s ex84/queue-copy.png ] || fail "the traces were not drawn"
CHECKS=$((CHECKS + 1))
grep -q "NTM (ntm-train -i PAIRS.tsv): copy coarse [0-9. ]*, fine [0-9. ]*;" ex84/analysis.txt ||
  fail "the analysis lacks the NTM rows: $(cat ex84/analysis.txt)"
expect 0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --bogus
finish
