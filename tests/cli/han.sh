#!/usr/bin/env bash
# cost: 25
# Document classifiers: han-train (every --arch, the same model for any --threads, a learned
# keyword task, --valid-fraction, --embeddings) and han-run (labels and probabilities, --eval,
# --alignments, --draw in PNG and HTML), and every documented refusal of bad documents.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok han-train
help_ok han-run

# Documents of 1 to 4 filler sentences and one deciding sentence (alpha: a, beta: b).
gen() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    f[0] = "The cat sat on the mat."; f[1] = "It rained all day long!"
    f[2] = "We went to the market."; f[3] = "Nothing much happened here?"
    for (i = 0; i < n; i++) {
      a = rand() < 0.5; k = 1 + int(rand() * 4); at = int(rand() * (k + 1)); d = ""
      for (j = 0; j <= k; j++) d = d (j == at ? (a ? "Then alpha came. " : "Then beta came. ") : f[int(rand() * 4)] " ")
      print (a ? "a" : "b") "\t" d
    } }'
}
gen 240 1 > train.tsv
gen 60 2 > test.tsv
opts="--embed 8 --hidden 8 --context 8 --min-freq 1 --batch-size 16 --lr 0.03 --seed 3 -q"
small="-i train.tsv $opts --epochs 4"
expect 0 han-train $small --threads 1 -o m1.akm --log m1.tsv --valid test.tsv
expect 0 han-train $small --threads 2 -o m2.akm --valid test.tsv
CHECKS=$((CHECKS + 1)); cmp -s m1.akm m2.akm || fail "the model depends on --threads"
check_eq "$(head -1 m1.tsv | tr '\t' '\n' | grep -c valid_accuracy)" 1 "validation accuracy logged"
# SIGTERM within a step: ATTNKIT_FAULT=slice:N (core/fault.h) makes the run send itself
# SIGTERM as its N-th slice pass starts (a step of 16 documents: 4 slices, a forward and a
# backward pass each, 8 passes); 158 is step 20's sixth. The run stops inside that step,
# drops it and leaves the checkpoint of step 19 (exit 130, no model). Then an exact resume
# with more epochs (the options, and the best epoch's parameters, come from the checkpoint).
expect_err 130 "interrupted at step 19;" env ATTNKIT_FAULT=slice:158 han-train -i train.tsv $opts --epochs 2 --threads 1 -o r.akm --log r.tsv --valid test.tsv --checkpoint-every 10
CHECKS=$((CHECKS + 1)); [ -s r.akm.ckpt ] || fail "no checkpoint after SIGTERM"
no_file r.akm
expect 0 han-train -i train.tsv --valid test.tsv --epochs 4 --threads 1 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s m1.akm r.akm || fail "resumed model differs"
check_eq "$(cat r.tsv)" "$(cat m1.tsv)" "resumed log"
expect 0 han-run -m m1.akm -i test.tsv --eval
check_eq "$(sed -n 1p "$T/out")" "$(printf 'documents\t60')" "--eval count"
acc=$(awk -F'\t' '$1 == "accuracy" { print $2 }' "$T/out")
CHECKS=$((CHECKS + 1))
awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }' || fail "the key word learned only to accuracy $acc"
check_eq "$(sed -n 3p "$T/out")" "$(printf 'class\tprecision\trecall\tsupport')" "--eval table"
check_eq "$(awk -F'\t' '$1 == "confusion" { c = 1; next } c { s += $2 + $3 } END { print s }' "$T/out")" 60 "confusion matrix sums to the documents"
# Labels with probabilities, with and without labels in the input.
cut -f2 test.tsv > bare.txt
expect 0 han-run -m m1.akm -i bare.txt -o labels.tsv
check_eq "$(wc -l < labels.tsv)" 60 "a line a document"
check_eq "$(awk -F'\t' 'NF != 4 || ($1 != "a" && $1 != "b") || ($2 + 0) < 0.5 { bad++ } END { print bad + 0 }' labels.tsv)" 0 "label, probability, the two classes"
check_eq "$(awk -F'\t' '{ s = $3 + $4; if (s < 0.999 || s > 1.001) bad++ } END { print bad + 0 }' labels.tsv)" 0 "probabilities sum to 1"
expect 0 sh -c "printf 'Then alpha came. The cat sat on the mat.\n' | han-run -m m1.akm -i -"
check_eq "$(cut -f1 "$T/out")" a "a review written by hand"
# Attention as arrays and drawn.
expect 0 han-run -m m1.akm -i test.tsv --alignments att.npz -o /dev/null
expect 0 tensor-info att.npz:s0
n0=$(head -1 test.tsv | cut -f2 | grep -o '[.!?]' | wc -l)
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" "$n0" "s0: one weight a sentence"
expect 0 han-run -m m1.akm -i test.tsv --draw fig.html --draw-count 3 -o /dev/null
check_eq "$(grep -c 'class="doc"' fig.html)" 3 "three documents drawn"
expect 0 han-run -m m1.akm -i test.tsv --draw fig.png -o /dev/null
check_eq "$(head -c 4 fig.png | tail -c 3)" PNG "a PNG"
expect_err 2 "han-run: --draw: the file must end in .png or .html" han-run -m m1.akm -i test.tsv --draw x.pdf
no_file x.pdf

# The baselines train and run; they have no attention.
for arch in flat mean ngram-lr; do
  expect 0 han-train $small --arch "$arch" -o "$arch.akm" --valid-fraction 0.2
  expect 0 han-run -m "$arch.akm" -i test.tsv --eval
done
expect 0 han-run -m flat.akm -i test.tsv --alignments flat.npz -o /dev/null
expect 0 tensor-info flat.npz:w0
expect_err 2 "han-run: --draw: a mean model has no attention (han and flat have)" han-run -m mean.akm -i test.tsv --draw m.html
no_file m.html
expect_err 2 "han-train: --valid and --valid-fraction: give one" han-train $small --valid test.tsv --valid-fraction 0.1 -o x.akm
expect_err 2 "han-train: --arch: unknown architecture 'deep' (choose han, flat, mean or ngram-lr)" han-train $small --arch deep -o x.akm

# Embeddings from a word2vec text file (8 numbers a word); a bad line is refused.
printf '3 8\nalpha 1 0 0 0 0 0 0 0\nbeta 0 1 0 0 0 0 0 0\nunknownword 0 0 1 0 0 0 0 0\n' > vec.txt
expect 0 han-train $small -o e.akm --embeddings vec.txt
printf 'alpha 1 0 0\n' > short.txt
expect_err 1 "han-train: short.txt:1: 3 numbers after the word, expected 8 (--embed)" han-train $small -o x.akm --embeddings short.txt
no_file x.akm

# Bad documents: exit 1 naming the file and the line, nothing left behind.
printf 'a\tGood.\nb\t\n' > empty.tsv
expect_err 1 "han-train: empty.tsv:2: empty document (no word after the label)" han-train $opts -i empty.tsv -o x.akm
awk 'BEGIN { printf "a\tok.\nb\t"; for (i = 0; i < 10000; i++) printf "word "; print "" }' > long.tsv
expect_err 1 "han-train: long.tsv:2: sentence 1 has 10000 words, more than 1000 (split it with . ! ? or TABs)" han-train $opts -i long.tsv -o x.akm
printf 'a\tfine.\nb\tbad \377 byte.\n' > utf.tsv
expect_err 1 "han-train: utf.tsv:2: " han-train $opts -i utf.tsv -o x.akm
printf 'a\tfine.\nno label at all.\n' > nolabel.tsv
expect_err 1 "han-train: nolabel.tsv:2: no label: a document is LABEL<TAB>TEXT" han-train $opts -i nolabel.tsv -o x.akm
no_file x.akm
printf 'a\tfine.\nc\tunknown.\n' > unknown.tsv
expect_err 1 "han-run: unknown.tsv:2: unknown label 'c' (the model's labels: a, b)" han-run -m m1.akm -i unknown.tsv -o out.txt
no_file out.txt
expect_err 1 "han-run: bare.txt:1: no label: a document is LABEL<TAB>TEXT" han-run -m m1.akm -i bare.txt --eval
expect_err 1 "han-run: long.tsv:2: sentence 1 has 10000 words" han-run -m m1.akm -i long.tsv --draw d.png
no_file d.png
finish
