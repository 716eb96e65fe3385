#!/usr/bin/env bash
# bleu: hand-worked corpus and sentence scores, the textbook's score, the output options,
# standard input, help, and every documented error (status, message, no output file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
FRA="$ATTNKIT_TESTDATA/translation/fra-small.txt"

help_ok bleu

printf 'il est riche .\n' >h1.txt
printf 'il est calme .\n' >r1.txt
# The textbook's example: sqrt(3/4) (1/3)^(1/4) = 0.658037.
expect_out "0.6580" bleu --ref r1.txt h1.txt --textbook --ngrams 2 --fraction
expect_out "65.80" bleu --ref r1.txt h1.txt --textbook --ngrams 2
expect_out "65.803701" bleu --ref r1.txt h1.txt --textbook --ngrams 2 --decimals 6
# sacreBLEU's sentence score of the same pair: p = 3/4, 1/3, then 0/2 and 0/1 smoothed to
# 1/(2·2) and 1/(4·1): (3/4 · 1/3 · 1/4 · 1/4)^(1/4) = 0.353553.
expect_out "35.36" bleu --ref r1.txt h1.txt --sentence
expect_out "0.00" bleu --ref r1.txt h1.txt --sentence --smooth none

# A two-line corpus by hand: p = 7/8, 4/6, 1/4, 0/3; c = 8, r = 9, BP = exp(-1/8).
printf 'the cat sat on the mat\na dog\n' >h2.txt
printf 'the cat is on the mat\na dog runs\n' >r2.txt
expect_out "34.84" bleu --ref r2.txt h2.txt                     # 0/3 smoothed to 1/6
expect_out "0.00" bleu --ref r2.txt h2.txt --smooth none
expect_out "67.40" bleu --ref r2.txt h2.txt --ngrams 2 --smooth none
expect_out "0.3484" bleu -r r2.txt h2.txt --fraction
expect_out "$(printf 'bleu\tp1\tp2\tp3\tp4\tbp\tratio\thyp_len\tref_len\n34.84\t87.50\t66.67\t25.00\t16.67\t0.8825\t0.8889\t8\t9')" \
  bleu -r r2.txt h2.txt --details
# Standard input, --hyp and the positional argument agree; -o writes a file.
run sh -c 'bleu -r r2.txt < h2.txt'
check_eq "$(cat "$T/out")" "34.84" "hypotheses on standard input"
expect_out "34.84" bleu -r r2.txt --hyp h2.txt
expect_out "34.84" bleu -r r2.txt - <h2.txt
expect 0 bleu -r r2.txt h2.txt -o score.txt
check_eq "$(cat score.txt)" "34.84" "-o score.txt"
expect 0 bleu -r r2.txt h2.txt --sentence
check_eq "$(wc -l <"$T/out")" 2 "--sentence: one line per pair"

# A real corpus against itself is 100; a corrupted copy scores lower, and per-sentence
# scores are one per line.
cut -f2 "$FRA" >fr.txt
expect_out "100.00" bleu -r fr.txt fr.txt
sed 's/ !$/ ?/' fr.txt >fr2.txt
expect 0 bleu -r fr.txt fr2.txt
CHECKS=$((CHECKS + 1))
awk '{ exit !($1 > 50 && $1 < 100) }' "$T/out" || fail "corrupted copy: $(cat "$T/out")"
expect 0 bleu -r fr.txt fr2.txt --sentence --textbook --ngrams 2
check_eq "$(wc -l <"$T/out")" 2000 "per-sentence lines of fra-small"

# Goldens from an independent implementation (testdata/translation/make_bleu_golden.py):
# corpus scores of damaged French sentences for several corpus sizes, orders and both
# smoothings (some orders have no match), and all 2000 per-sentence scores.
G="$ATTNKIT_TESTDATA/translation"
cut -f2 "$FRA" >ref.txt
tail -n +2 "$G/bleu-golden.tsv" >golden.tsv
n=0
while IFS=$'\t' read -r lines maxn smooth want; do
  n=$((n + 1))
  head -n "$lines" ref.txt >r.txt
  head -n "$lines" "$G/bleu-hyp.txt" >h.txt
  expect_out "$want" bleu -r r.txt h.txt --ngrams "$maxn" --smooth "$smooth" --decimals 6
done <golden.tsv
check_eq "$n" 42 "golden corpus cases"
expect 0 bleu -r ref.txt "$G/bleu-hyp.txt" --sentence --decimals 6
cp "$T/out" s_exp.txt
expect 0 bleu -r ref.txt "$G/bleu-hyp.txt" --sentence --smooth none --decimals 6
cp "$T/out" s_none.txt
expect 0 bleu -r ref.txt "$G/bleu-hyp.txt" --sentence --textbook --ngrams 2 --decimals 6
cp "$T/out" s_book.txt
paste s_exp.txt s_none.txt s_book.txt >sentence.tsv
close_enough sentence.tsv "$G/bleu-sentence.tsv" 2e-6

# Errors: mismatched line counts name both files; bad data and bad usage; no output left.
printf 'a\nb\nc\n' >three.txt
expect_err 1 "bleu: h2.txt has 2 lines but three.txt has 3: hypotheses and references must be aligned line by line" \
  bleu -r three.txt h2.txt -o out.txt
no_file out.txt
run sh -c 'bleu -r three.txt < h2.txt'
check_eq "$RC" 1 "mismatch on standard input: status"
grep -qF "standard input has 2 lines but three.txt has 3" "$T/err" || fail "mismatch on stdin: $(cat "$T/err")"
printf 'ok\n\303(\n' >bad.txt
expect_err 1 "bleu: bad.txt:2: invalid UTF-8 at byte 1 of the line" bleu -r r2.txt bad.txt -o out.txt
no_file out.txt
expect_err 1 "bleu: missing.txt: cannot open" bleu -r missing.txt h2.txt
expect_err 2 "bleu: the option '--ref' is required" bleu h2.txt
expect_err 2 "bleu: --ngrams must be between 1 and 100" bleu -r r2.txt h2.txt --ngrams 0 -o out.txt
no_file out.txt
expect_err 2 "bleu: --smooth: unknown smoothing 'add-k' (choose exp or none)" bleu -r r2.txt h2.txt --smooth add-k
expect_err 2 "bleu: --smooth does not apply to --textbook" bleu -r r2.txt h2.txt --textbook --smooth none
expect_err 2 "bleu: --details is for the corpus score, not --sentence" bleu -r r2.txt h2.txt --sentence --details
expect_err 2 "bleu: --decimals must be between 0 and 15" bleu -r r2.txt h2.txt --decimals 16
expect_err 2 "standard input ('-') can be read only once" bleu -r - - <h2.txt

# Write errors.
expect_err 1 "bleu: /dev/full: write error" bleu -r r2.txt h2.txt -o /dev/full
run sh -c 'bleu -r r2.txt h2.txt >/dev/full'
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "bleu: .*write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
expect_err 1 "bleu: nodir/s.txt: cannot create" bleu -r r2.txt h2.txt -o nodir/s.txt
# Two positional files, the natural guess (multi-bleu.perl's and sacrebleu's order, the
# references first): the hint keeps that order, the references going with --ref.
expect_err 2 "bleu: the references go with --ref: bleu --ref r2.txt h2.txt" bleu r2.txt h2.txt
expect_err 2 "bleu: one hypothesis file, not 2" bleu --ref r2.txt h2.txt r2.txt
finish
