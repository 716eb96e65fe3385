#!/usr/bin/env bash
# labels: pipeline
# pipelines/tree-transduce.sh --quick: simple (Bahdanau) and syntactic attention on
# infix-prefix depths 1-3 (one seed, tiny models): the table by depth with a winner per row,
# every held-out expression decoded, three expressions' trees printed and drawn, the attach
# table (how often the trees match the expressions' structure).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --quick --seed 1 --keep q
check_eq "$(head -1 "$T/out")" "$(printf 'depth\texpressions\tsimple\tsyntactic\twinner\tsimple_seed_1\tsyntactic_seed_1')" "table header"
check_eq "$(awk -F'\t' 'NR > 1 && NR <= 5 { print $1 }' "$T/out" | tr '\n' ' ')" "1 2 3 all " "one row a depth, then all"
check_eq "$(awk -F'\t' 'NR > 1 && NR <= 5 && !($3 >= 0 && $3 <= 1 && $4 >= 0 && $4 <= 1 && $3 == $6 && $4 == $7 &&
  $5 == ($3 > $4 ? "simple" : $4 > $3 ? "syntactic" : "tie")) { print "bad " $0 }' "$T/out")" "" "accuracies and winners"
for k in bahdanau syntactic; do
  for d in 1 2 3; do
    check_eq "$(wc -l < q/$k-1-$d.out)" "$(wc -l < q/test-$d.src)" "$k: an output for every held-out expression of depth $d"
  done
done
# held out: no test expression is in the training set
check_eq "$(cut -f1 q/train.tsv | sort -u | cat - q/test-*.src | sort | uniq -d | wc -l)" 0 "test expressions held out"
for k in 0 1 2; do
  CHECKS=$((CHECKS + 1)); [ -s q/tree-transduce-trees-$k.png ] || fail "no picture of the trees of expression $k"
done
# each text tree holds every source word once (the <eos> included)
check_eq "$(grep -c "the first decoder step's tree" "$T/out")" 3 "three text trees"
# how often the trees match: a row a depth, shares in [0, 1]; at depth 1 ("a op b") the chain
# trees get one head of three right, whatever the model
check_eq "$(grep -c "^attach$(printf '\t')[123]$(printf '\t')" "$T/out")" 3 "attach: a row a depth"
check_eq "$(awk -F'\t' '$1 == "attach" && $2 != "depth" && !($3 >= 1 && $4 >= $3 &&
  $5 >= 0 && $5 <= 1 && $6 >= 0 && $6 <= 1 && $7 >= 0 && $7 <= 1 && $8 >= 0 && $8 <= 1) { print "bad " $0 }' "$T/out")" "" "attach shares"
check_eq "$(awk -F'\t' '$1 == "attach" && $2 == 1 { print $7, $8 }' "$T/out")" "0.3333 0.3333" "attach: chains at depth 1"
# run again with the same --keep: what is there is kept; a missing model is made again, the same
# bits, and scored again
cp q/syntactic-1.akm syntactic-1.akm.first
rm q/syntactic-1.akm q/syntactic-1-2.acc
expect 0 env TREE_JOBS=1 "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --quick --seed 1 --keep q
check_eq "$(grep -c '^== .*, seed 1: seq2seq-train' "$T/err")" 1 "only the missing model trained again"
grep -q "^== syntactic, seed 1" "$T/err" || fail "the missing model not trained: $(cat "$T/err")"
CHECKS=$((CHECKS + 1)); cmp -s q/syntactic-1.akm syntactic-1.akm.first || fail "made again, another model"
check_eq "$(wc -l < q/syntactic-1-2.out)" "$(wc -l < q/test-2.src)" "scored again"
expect 2 env TREE_JOBS=x "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --quick
grep -q "TREE_JOBS needs a whole number" "$T/err" || fail "TREE_JOBS=x: $(cat "$T/err")"
# a --keep DIR of other settings is refused, and left as it was
echo "other settings" > q/recipe
expect 2 "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --quick --seed 1 --keep q
grep -q "holds a run of other settings" "$T/err" || fail "other settings: $(cat "$T/err")"
check_eq "$(cat q/recipe)" "other settings" "the refused DIR left as it was"
expect 0 "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --help
grep -q "^Usage: pipelines/tree-transduce.sh" "$T/out" || fail "--help: $(head -1 "$T/out")"
expect 2 "$ATTNKIT_SRC/pipelines/tree-transduce.sh" --bogus
finish
