#!/usr/bin/env bash
# Translation quality, attnkit against PyTorch, on fra.txt (English -> French): the models of
# pipelines/translate-fra.sh (LSTM + Bahdanau attention, embedding/hidden 256, 2 layers,
# dropout 0.2, lr 1e-3; Transformer d_model 256, 4 heads, d_ff 1024, 2 layers, dropout 0.1,
# lr 5e-4, 1000 warm-up steps then inverse-sqrt, label smoothing 0.1; both batch 64, clip 1,
# max length 20, min-freq 2) trained by seq2seq-train and by bench/seq2seq_bleu_torch.py on
# the same pairs with the same vocabularies (vocab-build), greedy decoding of the same 1,000
# held-out sources (every 52nd line), corpus BLEU of both with the bleu tool against the
# same tokenised references.
#   bench/seq2seq-bleu.sh [EPOCHS] [OUTDIR]      (defaults 10, a temporary directory kept)
#   FRA=path/to/fra.txt   MODELS="rnn transformer"   THREADS=1 (per side)
#   STEPS=N (instead of epochs, for a quick check)   SEED=S (both sides; default 1)
# Per model the two sides train at the same time (one process each, THREADS threads each).
# Both trained models are kept: $OUTDIR/MODEL.akm (attnkit) and $OUTDIR/MODEL.pytorch.pt
# (the PyTorch state_dict; bench/seq2seq_xcheck.py evaluates either).
# Validation split: every 50th remaining line (--valid, logged only; not used by either
# side's training).
set -euo pipefail
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
build=${ATTNKIT_BUILD:-$top/build}
PATH="$build/bin:$PATH"
epochs=${1:-10}
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/seq2seq-bleu.XXXXXX")}
mkdir -p "$dir"
fra=${FRA:-$top/../shared/data/translation/fra.txt}
[ -r "$fra" ] || fra=/work/shared/data/translation/fra.txt
th=${THREADS:-1} models=${MODELS:-rnn transformer} steps=${STEPS:-0}
py=$PYTHON
every=52
awk -F'\t' -v k=$every 'NR % k != 0 { if (++n % 50 == 0) print $1 "\t" $2 > "/dev/stderr"; else print $1 "\t" $2 }' \
  "$fra" > "$dir/train.tsv" 2> "$dir/valid.tsv"
awk -F'\t' -v k=$every 'NR % k == 0 { print $1 }' "$fra" > "$dir/test.en"
awk -F'\t' -v k=$every 'NR % k == 0 { print $2 }' "$fra" > "$dir/test.fr"
vocab-build -i "$dir/train.tsv" --side source --min-freq 2 -o "$dir/src.vocab"
vocab-build -i "$dir/train.tsv" --side target --min-freq 2 -o "$dir/tgt.vocab"
echo "== $(wc -l < "$dir/train.tsv") training pairs, $(wc -l < "$dir/test.en") held-out pairs; vocabularies" \
  "$(wc -l < "$dir/src.vocab") / $(wc -l < "$dir/tgt.vocab"); epochs $epochs${STEPS:+ (steps $steps)}; output in $dir"
# (the PyTorch script's names: --max-len for --len-max, --d-model and --d-ff for a Transformer's
# --hidden and --ff)
common=(--len-max 20 --batch-size 64 --clip 1 --seed "${SEED:-1}")
tcommon=("${common[@]/#--len-max/--max-len}")
if [ "$steps" -gt 0 ]; then run=(--steps "$steps"); else run=(--epochs "$epochs"); fi
for model in $models; do
  if [ "$model" = rnn ]; then
    opts=(--embed 256 --hidden 256 --layers 2 --dropout 0.2 --lr 0.001)
    topts=("${opts[@]}")
    ak=(--type rnn --cell lstm --attention bahdanau "${opts[@]}")
  else
    opts=(--hidden 256 --heads 4 --ff 1024 --layers 2 --dropout 0.1 --lr 0.0005 --warmup 1000
          --schedule inverse-sqrt --label-smoothing 0.1)
    topts=("${opts[@]/#--hidden/--d-model}")
    topts=("${topts[@]/#--ff/--d-ff}")
    ak=(--type transformer "${opts[@]}")
  fi
  echo "== $model: ${opts[*]} ${run[*]}"
  ( start=$(date +%s)
    seq2seq-train -i "$dir/train.tsv" --valid "$dir/valid.tsv" --min-freq 2 --threads "$th" -q \
      "${common[@]}" "${ak[@]}" "${run[@]}" --log "$dir/$model.attnkit.log.tsv" -o "$dir/$model.akm"
    echo "attnkit	$model	train $(( $(date +%s) - start )) s" > "$dir/$model.attnkit.time"
    seq2seq-translate -m "$dir/$model.akm" -i "$dir/test.en" -k 1 --len-max 50 -q > "$dir/$model.attnkit.out"
  ) &
  a=$!
  ( OMP_NUM_THREADS=$th "$py" "$top/bench/seq2seq_bleu_torch.py" --model "$model" --train "$dir/train.tsv" \
      --src-vocab "$dir/src.vocab" --tgt-vocab "$dir/tgt.vocab" --test "$dir/test.en" \
      --out "$dir/$model.pytorch.out" --save "$dir/$model.pytorch.pt" --threads "$th" "${tcommon[@]}" "${topts[@]}" "${run[@]}" \
      --max-length 50 > "$dir/$model.pytorch.time" 2> "$dir/$model.pytorch.log"
  ) &
  p=$!
  wait $a
  wait $p
  [ -f "$dir/test.ref" ] || seq2seq-translate -m "$dir/$model.akm" -i "$dir/test.fr" --tokenize-only > "$dir/test.ref"
  for side in attnkit pytorch; do
    echo "   $model $side: $(cat "$dir/$model.$side.time"); greedy corpus BLEU $(bleu -r "$dir/test.ref" "$dir/$model.$side.out")"
  done
done
