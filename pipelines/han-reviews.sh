#!/usr/bin/env bash
# Hierarchical attention on Amazon fine-food reviews (Yang et al. 2016; the textbook's section
# on attention variants): HAN, flat attention (one biGRU and attention over all words), the
# mean of word embeddings and n-gram logistic regression, trained on the 4,000 training
# reviews of small_fine_foods (make data; 10% held out for validation) and scored on the 1,000
# test reviews (great or other), 3 seeds each, the best validation epoch kept: test accuracy
# mean +- sd (table.tsv). HAN and flat attention run on han-train's defaults (dropout 0.5,
# embeddings from N(0, 0.1^2), Adam 1e-3, batches of similar length, clipping at 5) for 5
# epochs (the validation accuracy peaks after 2-3).
# The paper's recipe: the embeddings start from word2vec vectors trained on the training and
# validation reviews (the 4,000 of train.tsv, never the test reviews) by the word2vec tool
# (skip-gram, negative sampling, its defaults but --min-freq 2, han-train's, so that every word
# of the HAN's vocabulary has a vector; one set of vectors per seed). HAN, flat attention and
# the mean of embeddings run with them too: the rows han-w2v, flat-w2v and mean-w2v.
# Draws five test reviews with the HAN's attention (fig5.png, fig5.html).
#
# Claims, on the seeds' mean test accuracy, each stated PASS or FAIL with its figures, for
# the paper's recipe (the -w2v rows) and for random embeddings (exit 1 when one of the
# paper's recipe fails):
#   HAN >= the majority class + 15 points; HAN >= mean of embeddings + 2 points;
#   HAN >= flat attention - 1 point.
# Measured results (dates, loads, earlier recipes): doc/experiments/han-reviews.md.
# Skips (exit 77) with a message when the reviews are not installed (make data).
# With --quick (a smoke run: 600 training and 200 test reviews, 1 seed, 1 epoch, small
# models) only the table's shape is checked.
#   pipelines/han-reviews.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools han-train han-run word2vec
need_reviews
work_dir

if [ "$quick" = 1 ]; then
  head -600 "$reviews/train.tsv" > "$dir/train.tsv"
  head -200 "$reviews/test.tsv" > "$dir/test.tsv"
  seeds=$seed epochs=1 rnn_epochs=1 size="--embed 32 --hidden 16 --context 16" w2v="--embed 32 --epochs 1"
else
  cp "$reviews/train.tsv" "$reviews/test.tsv" "$dir"/
  seeds="$seed $((seed + 1)) $((seed + 2))" epochs=10 rnn_epochs=5 size="" w2v=""
fi
common="-i $dir/train.tsv --valid-fraction 0.1 --min-freq 2 -q"
ngram_opts="--lr 0.02 --epochs $epochs --batch-size 32" mean_opts="--lr 0.003 --epochs $epochs $size"
rnn_opts="--epochs $rnn_epochs $size"  # han-train's defaults otherwise
# The paper's vectors: word2vec on the training (and validation) reviews only.
for s in $seeds; do
  # shellcheck disable=SC2086
  word2vec -i "$dir/train.tsv" --min-freq 2 $w2v --seed "$s" -q -o "$dir/w2v-$s.vec"
done
han_models "$seeds" "han flat mean ngram-lr han-w2v flat-w2v mean-w2v"
first=$(echo "$seeds" | cut -d' ' -f1)
head -5 "$dir/test.tsv" > "$dir/five.tsv"
han-run -m "$dir/han-w2v-$first.akm" -i "$dir/five.tsv" --draw "$dir/fig5.png" -o /dev/null
han-run -m "$dir/han-w2v-$first.akm" -i "$dir/five.tsv" --draw "$dir/fig5.html" -o /dev/null
echo "$PIPELINE: five test reviews drawn: $dir/fig5.png, $dir/fig5.html" >&2

awk -F'\t' -v quick="$quick" '
  NR > 1 { a[$1] = $3; rows++ }
  function claim(name, ok, text) {
    printf "%s: %s: %s\n", ok ? "PASS" : "FAIL", name, text
    return !ok
  }
  END {
    if (rows != 8) { print "claim failed: the table has " rows " rows, not 8"; exit 1 }
    if (quick) { print "checked (smoke): 8 rows"; exit 0 }
    bad = 0
    for (r = 1; r <= 2; r++) {
      x = r == 1 ? "-w2v" : ""; name = r == 1 ? "word2vec embeddings (the paper)" : "random embeddings"
      h = a["han" x]; f = a["flat" x]; m = a["mean" x]; maj = a["majority"]
      failed = claim(name, h >= maj + 0.15, sprintf("HAN %.4f >= majority %.4f + 0.15 = %.4f", h, maj, maj + 0.15))
      failed += claim(name, h >= m + 0.02, sprintf("HAN %.4f >= mean of embeddings %.4f + 0.02 = %.4f", h, m, m + 0.02))
      failed += claim(name, h >= f - 0.01, sprintf("HAN %.4f >= flat attention %.4f - 0.01 = %.4f", h, f, f - 0.01))
      if (r == 1) bad = failed
    }
    printf "n-gram LR %.4f\n", a["ngram-lr"]
    if (bad) { print "claim failed: the claims of the paper recipe above"; exit 1 }
    print "checked: the claims of the paper recipe hold"
  }' "$dir/table.tsv" >&2
