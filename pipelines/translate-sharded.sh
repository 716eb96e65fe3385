#!/usr/bin/env bash
# Sharded batch translation: the corpus is cut into N contiguous slices, GNU parallel runs
# seq2seq-translate --shard K/N on each, the slices' outputs are concatenated in order, and
# the result is checked against one whole run of the same model (exit 1 if they differ). The
# model is trained first on the bundled testdata/translation/fra-small.txt (a small LSTM
# with Bahdanau attention, a few hundred steps), or taken with --model.
#   pipelines/translate-sharded.sh [--quick] [--seed S] [--keep DIR] [--model MODEL]
#                                  [--input FILE] [--shards N] [--jobs J]
# --model MODEL  translate with this model from seq2seq-train instead of training one
# --input FILE   the sentences to translate, one a line (default: the English side of the
#                2,000 fra-small pairs)
# --shards N     the number of slices (default 8; --quick: 3)
# --jobs J       slices run at a time (default: one per core, GNU parallel's default)
# --quick: a smaller model trained for 60 steps and 100 sentences (for the tests).
# Greedy and beam 4 both; the merged translations go to DIR/translations.txt with --keep.
# On several machines the slices run the same way, then are concatenated in order:
#   parallel --sshlogin 4/node1,4/node2 --workdir . --transferfile m.akm --transferfile src.txt \
#     --return out.{} "seq2seq-translate -q -m m.akm -i src.txt --shard {}/8 -o out.{}" ::: $(seq 8)
#   sbatch --array=1-8 --wrap 'seq2seq-translate -q -m m.akm -i src.txt \
#     --shard $SLURM_ARRAY_TASK_ID/8 -o out.$SLURM_ARRAY_TASK_ID'
#   for k in $(seq 8); do cat out.$k; done > translations.txt
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
model= input= shards= jobs=
rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --model|--input|--shards|--jobs)
      [ $# -ge 2 ] || { echo "$PIPELINE: $1 needs a value" >&2; exit 2; }
      case $1 in
        --model) model=$2 ;;
        --input) input=$2 ;;
        --shards) shards=$2 ;;
        --jobs) jobs=$2 ;;
      esac
      shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
pipeline_args ${rest[@]+"${rest[@]}"}
case ${shards:-8} in ''|*[!0-9]*|0) echo "$PIPELINE: --shards needs a number from 1" >&2; exit 2 ;; esac
case ${jobs:-1} in ''|*[!0-9]*|0) echo "$PIPELINE: --jobs needs a number from 1" >&2; exit 2 ;; esac
need_tools seq2seq-train seq2seq-translate
command -v parallel >/dev/null || { echo "$PIPELINE: GNU parallel not found (make deps installs it)" >&2; exit 1; }
work_dir
fra=$top/testdata/translation/fra-small.txt
if [ -z "$shards" ]; then shards=8; [ "$quick" = 1 ] && shards=3; fi
if [ -z "$input" ]; then
  input=$dir/source.txt
  if [ "$quick" = 1 ]; then head -n 100 "$fra" | cut -f1; else cut -f1 "$fra"; fi > "$input"
fi
[ -r "$input" ] || { echo "$PIPELINE: cannot read $input" >&2; exit 1; }
if [ -z "$model" ]; then
  model=$dir/model.akm
  steps=300
  [ "$quick" = 1 ] && steps=60
  echo "== training: an LSTM with Bahdanau attention on fra-small, $steps steps"
  seq2seq-train -i "$fra" --type rnn --embed 32 --hidden 32 --attention bahdanau --lr 0.01 \
    --steps "$steps" --batch-size 32 --len-max 20 --seed "$seed" -q -o "$model"
fi
[ -r "$model" ] || { echo "$PIPELINE: cannot read $model" >&2; exit 1; }
n=$(wc -l < "$input")
status=0
for beam in 1 4; do
  echo "== $n sentences, beam $beam: $shards slices with GNU parallel"
  parallel --will-cite --halt now,fail=1 ${jobs:+-j "$jobs"} \
    seq2seq-translate -q -m "$model" -i "$input" -k "$beam" --threads 1 --shard {}/"$shards" \
    -o "$dir/slice.{}" ::: $(seq "$shards")
  for k in $(seq "$shards"); do cat "$dir/slice.$k"; done > "$dir/merged.txt"
  seq2seq-translate -q -m "$model" -i "$input" -k "$beam" -o "$dir/whole.txt"
  got=$(wc -l < "$dir/merged.txt")
  if cmp -s "$dir/merged.txt" "$dir/whole.txt"; then
    echo "   the $shards slices merged ($got lines) equal the whole run"
  else
    echo "$PIPELINE: beam $beam: the merged slices differ from the whole run: $(cmp "$dir/merged.txt" "$dir/whole.txt" 2>&1 | head -1)" >&2
    status=1
  fi
  rm -f "$dir"/slice.*
  [ "$beam" = 4 ] && mv "$dir/merged.txt" "$dir/translations.txt"
done
paste "$input" "$dir/translations.txt" | awk -F'\t' 'NR <= 3 { printf "   %-30s -> %s\n", $1, $2 }'
exit $status
