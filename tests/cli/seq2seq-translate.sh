#!/usr/bin/env bash
# cost: 110
# seq2seq-translate: a small dates model translates unseen dates, greedy and beam, threads do
# not change the output, alignments (.npz layout, token files, attn-plot renders them),
# --tokenize-only, and every documented error (status, message, no output file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok seq2seq-translate
# Under the sanitizers (slow) the models train a tenth as long, with no validation (its
# decoding to the length limit took most of their time), and the checks of how well they
# translate are left out; every equality, layout and error check runs.
steps=200 tsteps=300 vf=0.1
sanitized && steps=20 tsteps=30 vf=0

seqdata-gen --task dates -n 3000 --seed 3 -o dates.tsv
expect 0 seq2seq-train -i dates.tsv --tokens chars --embed 32 --hidden 64 --lr 0.01 --steps $steps \
  --valid-fraction $vf --seed 1 --threads 1 -q -o m.akm
seqdata-gen --task dates -n 100 --seed 77 -o test.tsv
cut -f1 test.tsv > src.txt
cut -f2 test.tsv > ref.txt
expect 0 seq2seq-translate -m m.akm -i src.txt -q --threads 1 -o greedy.txt
check_eq "$(wc -l < greedy.txt)" 100 "one translation a line"
right=$(paste ref.txt greedy.txt | awk -F'\t' '$1 == $2' | wc -l)
if ! sanitized; then
  CHECKS=$((CHECKS + 1))
  [ "$right" -ge 60 ] || fail "only $right of 100 unseen dates right"
fi
# Standard input and output; two threads give the same output; beam 4 is as good here.
run sh -c 'seq2seq-translate -m m.akm -q --threads 1 < src.txt'
check_eq "$(cat "$T/out")" "$(cat greedy.txt)" "standard input"
expect 0 seq2seq-translate -m m.akm -i src.txt -q --threads 2
check_eq "$(cat "$T/out")" "$(cat greedy.txt)" "--threads 2"
expect 0 seq2seq-translate -m m.akm -i src.txt -q -k 4 --length-penalty 0.6 -o beam.txt
rb=$(paste ref.txt beam.txt | awk -F'\t' '$1 == $2' | wc -l)
if ! sanitized; then
  CHECKS=$((CHECKS + 1))
  [ "$rb" -ge $((right - 5)) ] || fail "beam 4 got $rb, greedy $right"
fi
expect 0 seq2seq-translate -m m.akm -i src.txt -q -k 1 -o k1.txt
check_eq "$(cat k1.txt)" "$(cat greedy.txt)" "--beam 1 is greedy"
expect 0 seq2seq-translate -m m.akm -i src.txt -q --len-max 4
check_eq "$(awk 'length($0) != 4' "$T/out" | wc -l)" 0 "--len-max 4: cut at 4 characters"

# Alignments: s<i> is [target tokens + <eos>, source tokens + <eos>], rows sum to 1.
head -n 3 src.txt > s3.txt
expect 0 seq2seq-translate -m m.akm -i s3.txt -q --alignments al.npz --alignment-tokens tok -o t3.txt
expect 0 tensor-info -i al.npz:s0
len0=$(head -n 1 t3.txt | awk '{ print length($0) + 1 }')
src0=$(head -n 1 s3.txt | awk '{ print length($0) + 1 }')
grep -q "$len0 x $src0\|\[$len0, $src0\]\|$len0,$src0\|${len0}x${src0}" "$T/out" || fail "s0 shape: $(cat "$T/out")"
check_eq "$(wc -l < tok/0.rows)" "$len0" "rows file: one target token a line"
check_eq "$(wc -l < tok/0.cols)" "$src0" "cols file: one source token a line"
check_eq "$(tail -n 1 tok/0.cols)" "<eos>" "source ends with <eos>"
tensor-convert -i al.npz:s1 -o s1.txt
check_eq "$(awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (s < 0.999 || s > 1.001) bad++ } END { print bad + 0 }' s1.txt)" 0 "rows sum to 1"
expect 0 attn-plot -i al.npz:s2 --rows tok/2.rows --cols tok/2.cols -o a2.png
check_eq "$(head -c 4 a2.png | tail -c 3)" "PNG" "attn-plot renders an alignment"

# --tokenize-only: references in the model's form.
printf 'Friday, April 17 2020\n' > up.txt
expect_out "friday, april 17 2020" seq2seq-translate -m m.akm -i up.txt --tokenize-only

# Errors.
expect_err 2 "--beam must be at least 1" seq2seq-translate -m m.akm -i src.txt -k 0 -o o.txt
expect_err 2 "--len-max must be at least 1" seq2seq-translate -m m.akm -i src.txt --len-max 0 -o o.txt
expect_err 2 "--alignment-tokens needs --alignments" seq2seq-translate -m m.akm -i src.txt --alignment-tokens d -o o.txt
no_file o.txt
expect_err 1 "seq2seq-translate: missing.akm" seq2seq-translate -m missing.akm -i src.txt -o o.txt
printf 'not a model\n' > junk.akm
expect_err 1 "seq2seq-translate: junk.akm: not an attnkit model file" seq2seq-translate -m junk.akm -i src.txt -o o.txt
head -c 2000 m.akm > cut.akm
expect_err 1 "seq2seq-translate: cut.akm: truncated model file" seq2seq-translate -m cut.akm -i src.txt -o o.txt
no_file o.txt
printf 'ok\n\xff\xfe\n' > badutf.txt
expect_err 1 "seq2seq-translate: badutf.txt:2:" seq2seq-translate -m m.akm -i badutf.txt -o o.txt
no_file o.txt
expect 0 seq2seq-train -i dates.tsv --tokens chars --attention none --embed 8 --hidden 8 --steps 2 -q -o none.akm
expect_err 2 "the model has no attention" seq2seq-translate -m none.akm -i s3.txt --alignments n.npz -o o.txt
no_file o.txt
no_file n.npz
expect 1 seq2seq-translate -m m.akm -i s3.txt -o /dev/full
# A Transformer decodes with its keys and values cached (the default) or recomputing the
# prefix every step (--no-kv-cache): the same translations, greedy and beam 4.
expect 0 seq2seq-train -i dates.tsv --type transformer --tokens chars --hidden 32 --heads 2 \
  --ff 64 --layers 2 --lr 0.003 --steps $tsteps --valid-fraction $vf --seed 1 --threads 1 -q -o tm.akm
for k in 1 4; do
  expect 0 seq2seq-translate -m tm.akm -i src.txt -q -k $k -o cached$k.txt
  expect 0 seq2seq-translate -m tm.akm -i src.txt -q -k $k --no-kv-cache -o full$k.txt
  CHECKS=$((CHECKS + 1))
  cmp -s cached$k.txt full$k.txt || fail "beam $k: cached and recomputed decoding differ: $(diff cached$k.txt full$k.txt | head -4)"
done
rt=$(paste ref.txt cached1.txt | awk -F'\t' '$1 == $2' | wc -l)
# Only that the model decodes something worth comparing (seeds 1-4 give 42-54 here; an
# untrained one 0): far from the bar, whatever the BLAS kernel's rounding does to 300 steps.
if ! sanitized; then
  CHECKS=$((CHECKS + 1))
  [ "$rt" -ge 20 ] || fail "the small Transformer got only $rt of 100 dates right (a weak check)"
fi
# --shard K/N: slices of the input lines, greedy and beam; alignments keep the lines' numbers.
shard_ok seq2seq-translate -q -m m.akm -i src.txt
shard_ok seq2seq-translate -q -m m.akm -i src.txt --beam 3
shard_ok seq2seq-translate -q -m m.akm -i src.txt --tokenize-only
expect 0 seq2seq-translate -q -m m.akm -i src.txt --shard 2/3 --alignments a2.npz --alignment-tokens a2
expect 0 tensor-info a2.npz:s33
[ -f a2/33.rows ] && [ ! -f a2/0.rows ] || fail "alignment tokens of slice 2: $(ls a2 | head -3)"
finish
