#!/usr/bin/env bash
# labels: pipeline
# pipelines/exercise-8-4.sh --quick: the trainings (the set and the tree with the content and
# sorting tasks too), the NTM ones and the stack RNN run and the table has its 50 rows; the
# traces are drawn, the analysis written; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --quick --seed 2 --keep ex84
rows="task:model anbn:stack-rnn bigram-flip:deque bigram-flip:none bigram-flip:ntm bigram-flip:queue bigram-flip:set bigram-flip:stack bigram-flip:tree"
rows="$rows copy:deque copy:none copy:ntm copy:queue copy:set copy:stack copy:tree"
rows="$rows count-distinct:none count-distinct:queue count-distinct:set count-distinct:stack count-distinct:tree"
rows="$rows dedup:none dedup:queue dedup:set dedup:stack dedup:tree"
rows="$rows membership:none membership:queue membership:set membership:stack membership:tree"
rows="$rows merge:none merge:set merge:stack merge:tree"
rows="$rows reverse:deque reverse:none reverse:ntm reverse:queue reverse:set reverse:stack reverse:tree"
rows="$rows search:none search:set search:stack search:tree sort:none sort:set sort:stack sort:tree sort:tree-hard "
check_eq "$(cut -f1,2 "$T/out" | tr '\t\n' ': ')" "$rows" "table rows"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1))
[ -s ex84/stack-reverse.png ] && [ -s ex84/queue-copy.png ] || fail "the traces were not drawn"
CHECKS=$((CHECKS + 1))
[ -s ex84/set-membership.png ] && [ -s ex84/tree-sort.png ] || fail "the set's and the tree's traces were not drawn"
CHECKS=$((CHECKS + 1))
grep -q "sort (128 symbols): hard tree coarse [0-9. ]*, fine [0-9. ]*, elements [0-9. ]*; soft tree coarse" ex84/analysis.txt ||
  fail "the analysis lacks the trees' sort rows: $(grep sort ex84/analysis.txt)"
CHECKS=$((CHECKS + 1))
grep -q "NTM (ntm-train -i PAIRS.tsv): copy coarse [0-9. ]*, fine [0-9. ]*;" ex84/analysis.txt ||
  fail "the analysis lacks the NTM rows: $(cat ex84/analysis.txt)"
# run again with the same --keep: the rows there are kept; a missing one is trained again
awk -F'\t' '!($1 == "copy" && $2 == "queue")' ex84/results.tsv > kept.tsv
cp kept.tsv ex84/results.tsv
expect 0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --quick --seed 2 --keep ex84
grep -q "49 of 50 trainings already in" "$T/err" || fail "not resumed: $(head -3 "$T/err")"
check_eq "$(cut -f1,2 "$T/out" | tr '\t\n' ': ')" "$rows" "table rows, resumed"
check_eq "$(grep -c "^copy$(printf '\t')queue" ex84/results.tsv)" 1 "the missing row trained again, once"
check_eq "$(awk -F'\t' '!($1 == "copy" && $2 == "queue")' ex84/results.tsv | cmp - kept.tsv && echo same)" same "the kept rows unchanged"
echo "other settings" > ex84/recipe
expect 2 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --quick --seed 2 --keep ex84
grep -q "holds a run of other settings" "$T/err" || fail "other settings: $(cat "$T/err")"
expect 0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --bogus
expect 2 env EX84_JOBS=0 "$ATTNKIT_SRC/pipelines/exercise-8-4.sh" --quick
grep -q "EX84_JOBS needs a whole number" "$T/err" || fail "EX84_JOBS=0: $(cat "$T/err")"
finish
