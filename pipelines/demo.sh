#!/usr/bin/env bash
# attnkit's first demo (make demo): self-attention over sinusoidal positional encodings.
#
# posenc writes the encoding of 12 positions in 32 dimensions; attn-score lets every position
# attend to every other one (scaled dot-product, softmax over keys). The weights are printed
# as numbers and as a shaded picture: each position attends most to itself and then to its
# neighbours, falling off with the distance |i - j|, the same way in every row. The dot
# product of two sinusoidal encodings depends only on their distance, which is why a model
# can read relative position from them. Then exercise 8-2 in its quick form: why the scores
# are divided by sqrt(d_k).
# Last, a translation model with attention: seq2seq-train fits an LSTM encoder-decoder with
# Bahdanau attention to the synthetic dates task (seqdata-gen --task dates: "friday, april 17
# 2020" -> "2020-04-17", characters as tokens) in seconds, seq2seq-translate
# converts dates it has never seen, and attn-plot draws one sentence's alignment as a PNG
# (demo-alignment.png in the current folder, or in --keep DIR), beside its learning curve
# (demo-learning-curve.png).
#   pipelines/demo.sh [--quick] [--keep DIR]   (the tools from ATTNKIT_BIN, build/bin, or PATH)
#   --quick: a smaller training run (seconds) for the test suite
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools posenc attn-score seqdata-gen seq2seq-train seq2seq-translate attn-plot
work_dir
work=$dir

L=12 D=32
posenc --length $L --dim $D > "$work/P.txt"
attn-score --query "$work/P.txt" --key "$work/P.txt" --score dot --emit weights \
  > "$work/W.txt"

echo "== Self-attention of positional encodings: posenc --length $L --dim $D | attn-score --score dot"
echo "   weights (row i: how much position i attends to each position j; rows sum to 1)"
awk '{ printf "   %2d |", NR - 1; for (j = 1; j <= NF; j++) printf " %4.2f", $j; printf "\n" }' "$work/W.txt"
echo
echo "   the same weights as shades (darker = more attention):"
awk -v shades=' .:-=+*#%@' '
  { for (j = 1; j <= NF; j++) { w[NR, j] = $j; if ($j > max) max = $j } n = NF; rows = NR }
  END {
    for (i = 1; i <= rows; i++) {
      printf "   %2d |", i - 1
      for (j = 1; j <= n; j++) {
        k = int(w[i, j] / max * (length(shades) - 1) + 0.5)
        c = substr(shades, k + 1, 1); printf "%s%s", c, c
      }
      printf "|\n"
    }
  }' "$work/W.txt"
echo "   Look at the diagonal band: every position attends most to itself and its neighbours,"
echo "   and each row is the row above shifted by one (attention depends on |i - j| only)."
echo
echo "== Exercise 8-2 (quick): variance of q.k grows as d_k; dividing by sqrt(d_k) keeps it at 1"
bash "$top/pipelines/exercise-8-2.sh" --quick

echo
echo "== Attention that learns: a date-normalising translator (seq2seq-train, seq2seq-translate)"
pairs=12000 epochs=5
[ "$quick" = 1 ] && pairs=3000 epochs=4
seqdata-gen --task dates -n $pairs --seed "$seed" -o "$work/dates.tsv"
echo "   training pairs (seqdata-gen --task dates -n $pairs), e.g.:"
head -n 3 "$work/dates.tsv" | sed 's/\t/  ->  /; s/^/     /'
seq2seq-train -i "$work/dates.tsv" --tokens chars --embed 32 --hidden 64 --attention bahdanau \
  --epochs $epochs --lr 0.01 --seed "$seed" --threads 1 -q --log "$work/dates.log.tsv" \
  --log-every 20 --eval-every 60 -o "$work/dates.akm"
learning_curve "${keep:-.}/demo-learning-curve.png" "date translator: training and validation loss" \
  "$work/dates.log.tsv:loss:training loss" "$work/dates.log.tsv:valid_loss:validation loss"
# New examples (another seed): sources to translate, targets to check against.
seqdata-gen --task dates -n 200 --seed $((seed + 1000)) -o "$work/test.tsv"
cut -f1 "$work/test.tsv" > "$work/test.src"
seq2seq-translate -m "$work/dates.akm" -i "$work/test.src" -q --threads 1 \
  --alignments "$work/align.npz" --alignment-tokens "$work/tok" > "$work/test.out"
echo "   translations of dates it has never seen:"
paste "$work/test.src" "$work/test.out" | awk -F'\t' 'NR <= 6 { printf "     %-28s -> %s\n", $1, $2 }'
right=$(cut -f2 "$work/test.tsv" | paste - "$work/test.out" | awk -F'\t' '$1 == $2' | wc -l)
echo "   exactly right: $right of 200"
png=${keep:-.}/demo-alignment.png
attn-plot -i "$work/align.npz:s0" --rows "$work/tok/0.rows" --cols "$work/tok/0.cols" \
  --title "$(head -n 1 "$work/test.src")" -o "$png"
echo "   alignment of the first sentence: $png"
echo "   Look at the picture: each output character (rows) attends to the source characters"
echo "   it is copied or derived from (columns): the year digits to the year, the month digits"
echo "   to the month's name or number, the day to the day. Attention learns the alignment"
echo "   without ever being told it."
