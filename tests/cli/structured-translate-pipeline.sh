#!/usr/bin/env bash
# labels: pipeline
# pipelines/structured-translate.sh --quick: Bahdanau, structured and sigmoid attention on
# fra-small (one seed, tiny models): the BLEU table, every held-out line translated, the
# segment marginals drawn; the claim is not checked.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --quick --seed 1 --keep q
check_eq "$(head -1 "$T/out")" "$(printf 'kind\tmean_bleu\tbleu_seed_1')" "table header"
check_eq "$(awk -F'\t' 'NR > 1 { print $1 }' "$T/out" | tr '\n' ' ')" "bahdanau structured sigmoid " "one row a kind"
check_eq "$(awk -F'\t' 'NR > 1 && !($2 ~ /^[0-9.]+$/ && $2 >= 0 && $2 <= 100 && $2 == $3) { print "bad " $0 }' "$T/out")" "" "BLEU cells"
for k in bahdanau structured sigmoid; do
  check_eq "$(wc -l < q/$k-1.out)" 200 "$k: a translation for every held-out line"
done
grep -q "== 1800 training pairs, 200 held-out pairs" "$T/err" || fail "split: $(head -1 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s q/structured-translate-marginals.png ] || fail "no picture of the marginals"
grep -q "PASS\|FAIL" "$T/err" && fail "--quick checked a claim"
# run again with the same --keep: what is there is kept; a missing model is made again, the same
# bits (the trainings run two at a time, one thread each, by default: one at a time here)
cp q/structured-1.akm structured-1.akm.first
rm q/structured-1.akm q/structured-1.bleu
expect 0 env STRUCT_JOBS=1 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --quick --seed 1 --keep q
check_eq "$(grep -c '^== .*, seed 1: seq2seq-train' "$T/err")" 1 "only the missing model trained again"
grep -q "^== structured, seed 1" "$T/err" || fail "the missing model not trained: $(cat "$T/err")"
CHECKS=$((CHECKS + 1)); cmp -s q/structured-1.akm structured-1.akm.first || fail "made again, another model"
check_eq "$(awk -F'\t' 'NR > 1 { print $1 }' "$T/out" | tr '\n' ' ')" "bahdanau structured sigmoid " "the table again"
expect 2 env STRUCT_JOBS=0 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --quick
grep -q "STRUCT_JOBS needs a whole number" "$T/err" || fail "STRUCT_JOBS=0: $(cat "$T/err")"
# a --keep DIR of other settings is refused, and left as it was
echo "other settings" > q/recipe
expect 2 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --quick --seed 1 --keep q
grep -q "holds a run of other settings" "$T/err" || fail "other settings: $(cat "$T/err")"
check_eq "$(cat q/recipe)" "other settings" "the refused DIR left as it was"
expect 0 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --help
grep -q "^Usage: pipelines/structured-translate.sh" "$T/out" || fail "--help: $(head -1 "$T/out")"
expect 2 "$ATTNKIT_SRC/pipelines/structured-translate.sh" --bogus
# no data: skipped with a message
expect 77 env FRA=/nonexistent "$ATTNKIT_SRC/pipelines/structured-translate.sh"
grep -q "skipped: cannot read /nonexistent" "$T/err" || fail "no skip message"
finish
