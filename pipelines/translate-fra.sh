#!/usr/bin/env bash
# English -> French translation on the Tatoeba/manythings corpus (fra.txt, 51,976 pairs,
# CC-BY 2.0 FR): an LSTM encoder-decoder with Bahdanau attention and a Transformer at the
# textbook's size class (embeddings/hidden or d_model 256, 2 layers), scored by corpus BLEU
# (the bleu tool) on 1,000 held-out pairs never trained on (every 52nd line; the model's own
# validation split comes from the rest).
#   pipelines/translate-fra.sh [--quick] [--seed S] [--keep DIR]
#   FRA=path/to/fra.txt (default ../shared/data/translation/fra.txt beside the repository)
#   EPOCHS=N (default 10)
# --quick: fra-small (2,000 pairs, every 10th held out), small models, a few hundred steps:
# checks that the recipe runs end to end (one translation per held-out line, BLEU scored);
# its BLEU figures are smoke figures of tiny models, not results. Both trainings' learning
# curves go to translate-fra-learning-curve.png (in --keep DIR, else the current folder).
# The full run trains the two models side by side, about an hour on 2 cores. Checks: full —
# both BLEU scores above 10; both — a translation for every held-out line.
# Measured results (dates, machines, loads): doc/experiments/translate-fra.md.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools seq2seq-train seq2seq-translate bleu
work_dir
fra=${FRA:-$top/../shared/data/translation/fra.txt}
every=52 epochs=${EPOCHS:-10}
rnn=(--type rnn --cell lstm --embed 256 --hidden 256 --layers 2 --attention bahdanau --dropout 0.2 --lr 0.001)
tfm=(--type transformer --hidden 256 --heads 4 --ff 1024 --layers 2 --dropout 0.1 --lr 0.0005 --warmup 1000 --schedule inverse-sqrt --label-smoothing 0.1)
run=(--epochs "$epochs" --eval-every 500)
if [ "$quick" = 1 ]; then
  fra=$top/testdata/translation/fra-small.txt every=10
  rnn=(--type rnn --embed 32 --hidden 32 --attention bahdanau --lr 0.01)
  tfm=(--type transformer --hidden 32 --heads 4 --ff 64 --layers 1 --lr 0.003 --warmup 20)
  run=(--steps 60 --eval-every 20)
fi
[ -r "$fra" ] || { echo "$PIPELINE: cannot read $fra (set FRA=)" >&2; exit 1; }
awk -F'\t' -v k=$every 'NR % k != 0 { print $1 "\t" $2 }' "$fra" > "$dir/train.tsv"
awk -F'\t' -v k=$every 'NR % k == 0 { print $1 }' "$fra" > "$dir/test.en"
awk -F'\t' -v k=$every 'NR % k == 0 { print $2 }' "$fra" > "$dir/test.fr"
n=$(wc -l < "$dir/test.en")
echo "== $(wc -l < "$dir/train.tsv") training pairs, $n held-out pairs ($fra)"
status=0
for model in rnn transformer; do
  if [ $model = rnn ]; then opts=("${rnn[@]}"); else opts=("${tfm[@]}"); fi
  echo "== $model: seq2seq-train ${opts[*]} ${run[*]}"
  seq2seq-train -i "$dir/train.tsv" --min-freq 2 --len-max 20 --valid-fraction 0.02 --batch-size 64 \
    --clip 1 --seed "$seed" "${opts[@]}" "${run[@]}" --log "$dir/$model.log.tsv" -o "$dir/$model.akm"
  seq2seq-translate -m "$dir/$model.akm" -i "$dir/test.en" -k 4 --length-penalty 0.6 -q > "$dir/$model.out"
  seq2seq-translate -m "$dir/$model.akm" -i "$dir/test.fr" --tokenize-only > "$dir/test.ref"
  got=$(wc -l < "$dir/$model.out")
  [ "$got" = "$n" ] || { echo "$PIPELINE: $model: $got translations for $n sentences" >&2; status=1; }
  score=$(bleu -r "$dir/test.ref" "$dir/$model.out")
  echo "   $model: corpus BLEU on the held-out pairs (beam 4, alpha 0.6): $score"
  paste "$dir/test.en" "$dir/$model.out" | awk -F'\t' 'NR <= 5 { printf "     %-30s -> %s\n", $1, $2 }'
  if [ "$quick" = 0 ] && ! awk -v s="$score" 'BEGIN { exit !(s > 10) }'; then
    echo "$PIPELINE: $model BLEU $score is not above 10" >&2
    status=1
  fi
done
learning_curve "${keep:-.}/translate-fra-learning-curve.png" "English-French: validation loss per target token" \
  "$dir/rnn.log.tsv:valid_loss:LSTM + Bahdanau, validation" "$dir/rnn.log.tsv:loss:LSTM + Bahdanau, training" \
  "$dir/transformer.log.tsv:valid_loss:Transformer, validation" "$dir/transformer.log.tsv:loss:Transformer, training"
exit $status
