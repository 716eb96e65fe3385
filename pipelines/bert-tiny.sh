#!/usr/bin/env bash
# A small BERT pretrained here (Devlin et al. 2019; Dive into Deep Learning 15.8-15.10) on the
# bAbI stories (Weston et al. 2015; the 20 tasks' English 1k training files; BABI=DIR holding
# en/, default ../shared/data/babi of this tree; pipelines/fetch-babi.sh): each story is a document,
# each line a sentence (a question followed by its answer: "Where is Mary? bathroom"). The
# held-out text is the first 30 stories of each task's test file. Not fra.txt: its English side
# has no documents, and next-sentence prediction needs them.
#
# Two runs of bert-pretrain:
#  1. d2l's recipe: 2 layers, hidden 128, 2 heads, FFN 256, batch 512, Adam 0.01, 50 steps
#     (dropout 0.2, min-freq 5, max-len 64 as d2l), and beside it the same recipe in PyTorch
#     (pipelines/bert_d2l_torch.py: d2l's model as the book writes it, independent of attnkit;
#     skipped without python3-torch). Claim: the MLM loss averaged over the 50 steps, as d2l
#     prints it, <= PyTorch's + 0.1. Issue 19's bar, <= 0.6 ln|V| (d2l prints 5.885 against
#     ln 20256 = 9.916 on WikiText-2), is reported, not checked: on this text neither
#     implementation comes near it (below).
#  2. The same model trained anew (2,400 steps of batch 128, 3.8 epochs, Adam 1e-3, dropout
#     0.1), timed: claim <= 30 minutes. Claims on the held-out stories: masked-token
#     accuracy >= 2x the majority-token baseline (always guessing the training text's most
#     frequent word, "the"), NSP accuracy >= 75%; and the masking over the whole run within 1
#     point of 15% chosen, and of 80/10/10 ([MASK]/random/kept).
# Prints a few bert-fill examples; draws the learning curve (curve.png: MLM and NSP loss and
# accuracy). Exit 1 when a claim fails.
# Measured results (dates, loads, earlier recipes): doc/experiments/bert-tiny.md.
# With --quick (a smoke run: a small model, a few steps on the tiny fixtures of testdata/babi)
# only the outputs' shapes are checked.
#   pipelines/bert-tiny.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools bert-pretrain bert-fill
work_dir
if [ "$quick" = 1 ]; then
  train_files=("$top"/testdata/babi/qa*_tiny_train.txt)
  test_files=("$top"/testdata/babi/qa*_tiny_test.txt)
else
  babi=${BABI:-$top/../shared/data/babi}
  [ -d "$babi/en" ] || { echo "$PIPELINE: no bAbI data in $babi (set BABI, or run pipelines/fetch-babi.sh)" >&2; exit 1; }
  train_files=() test_files=()
  for t in $(seq 1 20); do
    train_files+=("$babi"/en/qa${t}_*_train.txt)
    test_files+=("$babi"/en/qa${t}_*_test.txt)
  done
fi
# bAbI lines "N text" or "N question<TAB>answer<TAB>support"; a story starts at N = 1.
to_text='{ n = $1; sub(/^[0-9]+ /, ""); if (n == 1) { if (++stories > max) exit; if (NR > 1) print "" }
  if (index($0, "\t")) { split($0, f, "\t"); sub(/ +$/, "", f[1]); $0 = f[1] " " f[2] } print }'
: > "$dir/train.txt"; : > "$dir/valid.txt"
for f in "${train_files[@]}"; do
  { [ -s "$dir/train.txt" ] && echo; awk -v max=1000000 "$to_text" "$f"; } >> "$dir/train.txt"
done
for f in "${test_files[@]}"; do
  { [ -s "$dir/valid.txt" ] && echo; awk -v max=30 "$to_text" "$f"; } >> "$dir/valid.txt"
done
echo "$PIPELINE: $(grep -c . "$dir/train.txt") training sentences in $(($(grep -c '^$' "$dir/train.txt") + 1)) stories, $(grep -c . "$dir/valid.txt") held out" >&2

model="--layers 2 --hidden 128 --heads 2 --ff 256 --len-max 64 --min-freq 5"
if [ "$quick" = 1 ]; then
  model="--layers 1 --hidden 32 --heads 2 --ff 64 --len-max 64 --min-freq 5"
  d2l="--batch-size 64 --steps 5" long="--batch-size 64 --steps 20 --eval-every 10"
else
  d2l="--batch-size 512 --steps 50"
  long="--batch-size 128 --steps 2400 --eval-every 400"
fi
# shellcheck disable=SC2086
bert-pretrain -i "$dir/train.txt" $model $d2l --lr 0.01 --dropout 0.2 --seed "$seed" \
  --log-every 1 --log "$dir/d2l.tsv" -o "$dir/d2l.akm" 2> "$dir/d2l.err" || { cat "$dir/d2l.err" >&2; exit 1; }
V=$(sed -n 's/.*a vocabulary of \([0-9]*\) tokens.*/\1/p' "$dir/d2l.err")
# The peer: d2l's model and recipe written out in PyTorch (pipelines/bert_d2l_torch.py), on the
# same text, when Debian's python3-torch is there.
: > "$dir/d2l-torch.tsv"
if [ "$quick" = 0 ]; then
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 "$top/pipelines/bert_d2l_torch.py" "$dir/train.txt" --seed "$seed" \
      2> "$dir/d2l-torch.err" > "$dir/d2l-torch.tsv" || { cat "$dir/d2l-torch.err" >&2; exit 1; }
  else
    echo "$PIPELINE: python3-torch is not installed: no PyTorch peer for the d2l recipe" >&2
  fi
fi
start=$(date +%s)
# shellcheck disable=SC2086
bert-pretrain -i "$dir/train.txt" --valid "$dir/valid.txt" $model $long --lr 0.001 \
  --dropout 0.1 --seed "$seed" --log-every 50 --log "$dir/train.tsv" -q -o "$dir/bert.akm"
secs=$(($(date +%s) - start))
learning_curve "$dir/curve.png" "BERT on bAbI stories: training (window means) and held-out" \
  "$dir/train.tsv:mlm_loss:MLM loss" "$dir/train.tsv:nsp_loss:NSP loss" \
  "$dir/train.tsv:mlm_acc:MLM accuracy" "$dir/train.tsv:nsp_acc:NSP accuracy" \
  "$dir/train.tsv:valid_mlm_acc:held-out MLM accuracy" "$dir/train.tsv:valid_nsp_acc:held-out NSP accuracy"

cat > "$dir/fill.txt" <<'TEXT'
Mary went to the [MASK].
Where is [MASK]? kitchen
John picked up the [MASK].
The kitchen is [MASK] of the garden.
Is Daniel in the office? [MASK]
TEXT
bert-fill --model "$dir/bert.akm" -i "$dir/fill.txt" --top-k 3 -o "$dir/fill.tsv"
awk -F'\t' 'NR == FNR { s[FNR] = $0; next } FNR > 1 { out[$1] = out[$1] sprintf("  %s %.3f", $4, $5) }
  END { for (i = 1; i in s; i++) print "bert-fill: " s[i] " ->" out[i] }' "$dir/fill.txt" "$dir/fill.tsv" >&2

col() { head -1 "$2" | tr '\t' '\n' | grep -nx -- "$1" | cut -d: -f1; }
awk -F'\t' -v quick="$quick" -v V="$V" -v secs="$secs" \
  -v cm="$(col mlm_loss "$dir/d2l.tsv")" -v cs="$(col mask_share "$dir/train.tsv")" \
  -v cv="$(col valid_mlm_acc "$dir/train.tsv")" '
  FNR == 1 { file++; if (file < 3) next }
  file == 1 { d2l += $cm; n++ }
  file == 3 { peer[$1] = $2; next }
  file == 2 { share = $cs; mask = $(cs + 1); rnd = $(cs + 2); kept = $(cs + 3)
              vm = $(cv - 2); acc = $cv; nsp = $(cv + 1); maj = $(cv + 2) }
  END {
    if (n < 1 || V < 6 || acc == "" || acc == "nan") { print "claim failed: no log rows or no evaluation"; exit 1 }
    d2l /= n; bar = 0.6 * log(V)
    printf "measured: %d s; d2l recipe: mean MLM loss over %d steps %.3f, ln|V| = ln %d = %.3f\n", secs, n, d2l, V, log(V)
    printf "measured: held-out MLM accuracy %.4f (majority baseline %.4f), NSP accuracy %.4f, MLM loss %.3f\n", acc, maj, nsp, vm
    printf "measured: masking over the run: %.4f chosen; %.4f [MASK], %.4f random, %.4f kept\n", share, mask, rnd, kept
    if (quick) { print "checked (smoke): the logs, the evaluation and the masking columns"; exit 0 }
    if ("mean_mlm_loss" in peer) {
      printf "measured: PyTorch, d2l model and recipe, same text: mean MLM loss %.3f (|V| %d); the masked words unigram entropy %.3f\n", peer["mean_mlm_loss"], peer["vocab"], peer["unigram_entropy"]
      if (d2l > peer["mean_mlm_loss"] + 0.1) { printf "claim failed: d2l recipe MLM loss %.3f > PyTorch %.3f + 0.1\n", d2l, peer["mean_mlm_loss"]; bad++ }
      else printf "checked: d2l recipe MLM loss %.3f <= PyTorch %.3f + 0.1\n", d2l, peer["mean_mlm_loss"]
    } else print "not checked: the d2l recipe against PyTorch (no python3-torch)"
    if (d2l > bar) printf "not met (reported, not a claim; see the header): d2l recipe MLM loss %.3f > 0.6 ln|V| = %.3f\n", d2l, bar
    if (acc < 2 * maj) { printf "claim failed: held-out MLM accuracy %.4f < 2 x majority %.4f\n", acc, maj; bad++ }
    if (nsp < 0.75) { printf "claim failed: held-out NSP accuracy %.4f < 0.75\n", nsp; bad++ }
    if (share < 0.14 || share > 0.16 || mask < 0.79 || mask > 0.81 || rnd < 0.09 || rnd > 0.11 || kept < 0.09 || kept > 0.11) {
      print "claim failed: masking statistics outside 15% +-1 and 80/10/10 +-1"; bad++ }
    if (secs > 1800) { printf "claim failed: %d s > 30 minutes\n", secs; bad++ }
    if (bad) exit 1
    printf "checked: MLM accuracy %.4f >= 2 x %.4f; NSP %.4f >= 0.75; masking within 1 point; %d s <= 1800\n", acc, maj, nsp, secs
  }' "$dir/d2l.tsv" "$dir/train.tsv" "$dir/d2l-torch.tsv" >&2
