#!/usr/bin/env bash
# The Neural Turing Machine's associative-recall experiment (Graves, Wayne & Danihelka 2014,
# section 4.3): 2-6 items of three random 6-bit vectors, then a query item; the target is
# the item that followed the query in the list.
#
# Trains 100,000 episodes (LSTM 100, one read and one write head, 128 x 20 memory, batch 1,
# RMSProp in Graves' form), evaluates bits per sequence on 1,000 fresh episodes (200 per
# item count 2-6) and on 100 episodes of 12 items (generalisation), and prints a TSV on
# standard output:
#   seed  bits_per_seq  bits_per_seq_12_items  first_step_below_1bit
# with the learning curve curve.tsv and the head weightings over one episode (write.png,
# read.png) in --keep DIR, else the current folder.
# Claims checked (exit 1 when one fails): below 0.05 bits per sequence within 100,000
# episodes, at most 1 bit per sequence with 12 items.
# Measured results (dates, loads, earlier recipes): doc/experiments/ntm-assoc-recall.md.
#   pipelines/ntm-assoc-recall.sh [--quick] [--seed S] [--keep DIR]
# --quick: 2-3 items of 2 four-bit vectors, 16 x 8 memory, Adam, 3,000 episodes (seconds);
# claim: the training cost falls below 70% of its first value.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ntm-train ntm-run seqtask-gen attn-plot
work_dir
out=${keep:-.}
if [ "$quick" = 1 ]; then
  task="--task associative-recall --width 4 --len-max 3 --item-len 2"
  train="$task --hidden 32 --memory-rows 16 --memory-cols 8 --optimizer adam --lr 3e-3 --eps 1e-8 --steps 3000"
  gen="--width 4 --item-len 2" many=4 per=100
else
  task="--task associative-recall"
  train="$task --steps 100000"
  gen="" many=12 per=200
fi
ntm-train $train --seed "$seed" -o "$dir/ar.akm" --log "$dir/curve.tsv" --log-every 500 -q
cp "$dir/curve.tsv" "$out/curve.tsv" 2>/dev/null || true
learning_curve "$out/curve.png" "NTM associative recall: training cost, bits per sequence" "$dir/curve.tsv:bits_per_seq:seed $seed"
bits=$(ntm_bits "$dir/ar.akm" --count "$per" --seed 1000)
bits_many=$(ntm_bits "$dir/ar.akm" --lengths "$many" --count 100 --seed 2000)
first=$(awk -F'\t' 'NR > 1 && $6 < 1 { print $1; exit }' "$dir/curve.tsv")
printf 'seed\tbits_per_seq\tbits_per_seq_%s_items\tfirst_step_below_1bit\n%s\t%s\t%s\t%s\n' \
  "$many" "$seed" "$bits" "$bits_many" "${first:-none}"
seqtask-gen --task associative-recall $gen --count 1 --len-min 6 --len-max 6 --seed 7 -o "$dir/one.npz"
ntm-run --model "$dir/ar.akm" -i "$dir/one.npz" --trace "$dir/trace.npz" -o "$dir/out.npy"
attn-plot -i "$dir/trace.npz:write0" --title "associative recall: write weighting" -o "$out/write.png"
attn-plot -i "$dir/trace.npz:read0" --title "associative recall: read weighting" -o "$out/read.png"
if [ "$quick" = 1 ]; then
  awk -F'\t' 'NR == 2 { a = $6 } END { exit !($6 < 0.7 * a) }' "$dir/curve.tsv" ||
    { echo "ntm-assoc-recall: the cost did not fall" >&2; exit 1; }
else
  awk -v b="$bits" -v m="$bits_many" 'BEGIN { exit !(b < 0.05 && m <= 1) }' ||
    { echo "ntm-assoc-recall: $bits bits per sequence (12 items: $bits_many); claims: < 0.05 and <= 1" >&2; exit 1; }
fi
