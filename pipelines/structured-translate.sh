#!/usr/bin/env bash
# Translation with segmentation attention (Kim, Denton, Hoang & Rush 2017, section 4.2):
# English -> French on fra.txt with translate-fra.sh's LSTM recipe (embeddings and hidden 256,
# 2 layers, dropout 0.2, Adam 0.001, EPOCHS epochs) and its held-out split (every 52nd pair,
# never trained on), one model per attention kind and seed:
#   pipelines/structured-translate.sh [--quick] [--seed S] [--keep DIR]
#   FRA=path/to/fra.txt (default ../shared/data/translation/fra.txt beside the repository)
#   EPOCHS=N (default 10), STRUCT_SEEDS=N (default 3: seeds S..S+N-1), STEPS=N (train N steps
#   instead of EPOCHS epochs: a shorter, indicative run; the claim is still checked)
# The kinds: bahdanau (the simple attention the issue compares with), structured (a linear-chain
# CRF over binary selections of the source words; the weights are its marginals p(z_j = 1),
# normalised to sum to 2) and sigmoid (the paper's baseline: independent σ(s_j)); structured and
# sigmoid score with luong-general's h_tᵀ W m_j and feed the attentional state back
# (seq2seq-train(1)). Each model translates the held-out sentences (beam 4, alpha 0.6), scored by
# corpus BLEU (the bleu tool). Prints one row per kind:
#   kind  mean_bleu  bleu_seed_S ...
# and checks the issue's claim: structured's mean BLEU is at least Bahdanau's minus 1.
# The first held-out sentence of 5 words or more (else the first): its segment marginals (one row per target word, one column per
# source word) are drawn by attn-plot to structured-translate-marginals.png (in --keep DIR, else
# the current folder).
# --quick: fra-small (2,000 pairs, every 10th held out), tiny models, 100 steps, one seed: the
# table and the picture, the claim not checked (its BLEU figures are smoke figures).
# STRUCT_JOBS=N: models trained at a time, one thread each (default 2, a 2-core machine's
# cores; 1: one at a time on every core). The models are the same bits either way.
# Stopping and starting again: with --keep DIR, a model whose training, translations and BLEU
# are in DIR is not redone, and a training that was stopped (killed, or the machine gone)
# goes on from its last checkpoint (every 500 steps, DIR/KIND-SEED.akm.ckpt, removed when the
# model is done) and ends with the same model as a run never stopped. Run the same command
# again until the table is whole.
# The order is seed by seed, Bahdanau and structured first, so that the claim's pair of each
# seed is done before the next seed starts; sigmoid's seeds come last.
# The data: absent, the script says so and exits 77 (skipped). Exits 1 when the claim fails.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools seq2seq-train seq2seq-translate bleu attn-plot
pipeline_jobs STRUCT_JOBS 2
work_dir
kinds="bahdanau structured sigmoid"
fra=${FRA:-$top/../shared/data/translation/fra.txt}
every=52
common=(--type rnn --cell lstm --embed 256 --hidden 256 --layers 2 --dropout 0.2 --lr 0.001)
run=(--epochs "${EPOCHS:-10}" --eval-every 500)
[ -z "${STEPS:-}" ] || run=(--steps "$STEPS" --eval-every "$STEPS")
seeds=$(seq "$seed" $((seed + ${STRUCT_SEEDS:-3} - 1)))
if [ "$quick" = 1 ]; then
  fra=$top/testdata/translation/fra-small.txt every=10 seeds=$seed
  common=(--type rnn --embed 24 --hidden 24 --lr 0.01)
  run=(--steps 100 --eval-every 100 --bleu-sentences 10)
fi
if [ ! -r "$fra" ]; then
  echo "$PIPELINE: skipped: cannot read $fra (set FRA=)" >&2
  exit 77
fi
# One model: trained (or resumed from its checkpoint), then its held-out translations and
# their BLEU (DIR/KIND-SEED.bleu); each stage skipped when its output is already there.
model() {
  local kind=$1 s=$2 m=$dir/$1-$2.akm resume=()
  if [ ! -s "$m" ]; then
    [ -s "$m.ckpt" ] && resume=(--resume)
    echo "== $kind, seed $s: seq2seq-train ${common[*]} --attention $kind ${run[*]} ${resume[*]}" >&2
    seq2seq-train -i "$dir/train.tsv" --min-freq 2 --len-max 20 --valid-fraction 0.02 \
      --batch-size 64 --clip 1 --seed "$s" "${common[@]}" --attention "$kind" "${run[@]}" -q \
      --checkpoint-every 500 "${resume[@]}" --threads "$threads" --log "$dir/$kind-$s.log.tsv" \
      -o "$m" || return 1
    rm -f "$m.ckpt"
  fi
  if [ ! -s "$dir/$kind-$s.bleu" ]; then
    seq2seq-translate -m "$m" -i "$dir/test.en" -k 4 --length-penalty 0.6 -q --threads "$threads" \
      >"$dir/$kind-$s.out" || return 1
    local got
    got=$(wc -l <"$dir/$kind-$s.out")
    [ "$got" = "$n" ] || { echo "$PIPELINE: $kind: $got translations for $n sentences" >&2; return 1; }
    # the references in the models' tokens (one data set, so one tokenisation for all)
    if [ ! -s "$dir/test.ref" ]; then
      seq2seq-translate -m "$m" -i "$dir/test.fr" --tokenize-only >"$dir/test.ref.$kind-$s"
      mv -f "$dir/test.ref.$kind-$s" "$dir/test.ref"
    fi
    bleu -r "$dir/test.ref" "$dir/$kind-$s.out" >"$dir/$kind-$s.bleu.tmp"
    mv "$dir/$kind-$s.bleu.tmp" "$dir/$kind-$s.bleu"
  fi
}
# the settings and model's code: a --keep DIR of another recipe is refused before anything is
# written to it
keep_recipe "$(cksum <"$fra") every $every ${common[*]} ${run[*]}" model
awk -F'\t' -v k=$every 'NR % k != 0 { print $1 "\t" $2 }' "$fra" >"$dir/train.tsv"
awk -F'\t' -v k=$every 'NR % k == 0 { print $1 }' "$fra" >"$dir/test.en"
awk -F'\t' -v k=$every 'NR % k == 0 { print $2 }' "$fra" >"$dir/test.fr"
n=$(wc -l <"$dir/test.en")
echo "== $(wc -l <"$dir/train.tsv") training pairs, $n held-out pairs ($fra)" >&2
order=()
for s in $seeds; do order+=("bahdanau $s" "structured $s"); done
for s in $seeds; do order+=("sigmoid $s"); done
run_parallel "$njobs" model "${order[@]}" ||
  { echo "$PIPELINE: a model failed (above); run the same command again to go on" >&2; exit 1; }
status=0
printf 'kind\tmean_bleu' >"$dir/table.tsv"
for s in $seeds; do printf '\tbleu_seed_%s' "$s" >>"$dir/table.tsv"; done
echo >>"$dir/table.tsv"
for kind in $kinds; do
  scores=()
  for s in $seeds; do scores+=("$(cat "$dir/$kind-$s.bleu")"); done
  printf '%s\t%s' "$kind" "$(printf '%s\n' "${scores[@]}" | awk '{ s += $1 } END { printf "%.2f", s / NR }')" >>"$dir/table.tsv"
  printf '\t%s' "${scores[@]}" >>"$dir/table.tsv"
  echo >>"$dir/table.tsv"
done
cat "$dir/table.tsv"
# the segment marginals of the first held-out sentence of 5 words or more, from the first
# seed's structured model
first=$(echo "$seeds" | head -1)
awk 'NF >= 5 { print; exit }' "$dir/test.en" >"$dir/one.en"  # no pipe: head's early exit would be SIGPIPE under pipefail
[ -s "$dir/one.en" ] || head -1 "$dir/test.en" >"$dir/one.en"  # fra-small's are short
seq2seq-translate -m "$dir/structured-$first.akm" -i "$dir/one.en" -q \
  --alignments "$dir/one.npz" --alignment-tokens "$dir/tok" >"$dir/one.out"
png=${keep:-.}/structured-translate-marginals.png
attn-plot -i "$dir/one.npz:s0" --rows "$dir/tok/0.rows" --cols "$dir/tok/0.cols" \
  --title "p(z_j = 1): $(cat "$dir/one.en")" -o "$png"
echo "== segment marginals of \"$(cat "$dir/one.en")\" -> \"$(cat "$dir/one.out")\": $png" >&2
if [ "$quick" = 0 ]; then
  b=$(awk -F'\t' '$1 == "bahdanau" { print $2 }' "$dir/table.tsv")
  st=$(awk -F'\t' '$1 == "structured" { print $2 }' "$dir/table.tsv")
  if awk -v a="$st" -v b="$b" 'BEGIN { exit !(a >= b - 1) }'; then
    echo "$PIPELINE: PASS: structured attention's mean BLEU $st is within 1 of Bahdanau's $b or better" >&2
  else
    echo "$PIPELINE: FAIL: structured attention's mean BLEU $st is more than 1 below Bahdanau's $b" >&2
    status=1
  fi
fi
exit $status
