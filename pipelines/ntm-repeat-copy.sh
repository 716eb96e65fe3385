#!/usr/bin/env bash
# The Neural Turing Machine's repeat-copy experiment (Graves, Wayne & Danihelka 2014, section
# 4.2): a sequence of 1-10 random 8-bit vectors and a repeat count of 1-10 (given as a
# normalised scalar); the target is the sequence repeated that many times and an end marker.
#
# Trains 100,000 sequences (LSTM 100, one read and one write head, 128 x 20 memory, batch 1,
# RMSProp in Graves' form), evaluates bits per sequence on 1,000 fresh episodes (ntm-run
# --eval, 100 per length 1-10, repeats drawn 1-10), and prints a TSV on standard output:
#   seed  bits_per_seq  first_step_below_1bit
# with the learning curve curve.tsv and the write and read weightings over one episode
# (write.png, read.png: the read head loops over the stored sequence once per repeat) in
# --keep DIR, else the current folder.
# Claim checked (exit 1 when it fails): below 0.1 bits per sequence within 100,000.
# Measured results (dates, loads, earlier recipes): doc/experiments/ntm-repeat-copy.md.
#   pipelines/ntm-repeat-copy.sh [--quick] [--seed S] [--keep DIR]
# --quick: a small task (4-bit vectors, length 1-3, 1-3 repeats, 16 x 8 memory, Adam,
# 3,000 sequences, seconds); claim: the training cost falls below 60% of its first value.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ntm-train ntm-run seqtask-gen attn-plot
work_dir
out=${keep:-.}
if [ "$quick" = 1 ]; then
  task="--task repeat-copy --width 4 --len-max 3 --repeats-max 3"
  train="$task --hidden 32 --memory-rows 16 --memory-cols 8 --optimizer adam --lr 3e-3 --eps 1e-8 --steps 3000"
  gen="--width 4 --len-min 3 --len-max 3 --repeats-min 3 --repeats-max 3"
else
  task="--task repeat-copy"
  train="$task --steps 100000"
  gen="--len-min 10 --len-max 10 --repeats-min 5 --repeats-max 5"
fi
ntm-train $train --seed "$seed" -o "$dir/rc.akm" --log "$dir/curve.tsv" --log-every 500 -q
cp "$dir/curve.tsv" "$out/curve.tsv" 2>/dev/null || true
learning_curve "$out/curve.png" "NTM repeat copy: training cost, bits per sequence" "$dir/curve.tsv:bits_per_seq:seed $seed"
bits=$(ntm_bits "$dir/rc.akm" --count 100 --seed 1000)
first=$(awk -F'\t' 'NR > 1 && $6 < 1 { print $1; exit }' "$dir/curve.tsv")
printf 'seed\tbits_per_seq\tfirst_step_below_1bit\n%s\t%s\t%s\n' "$seed" "$bits" "${first:-none}"
seqtask-gen $gen --task repeat-copy --count 1 --seed 7 -o "$dir/one.npz"
ntm-run --model "$dir/rc.akm" -i "$dir/one.npz" --trace "$dir/trace.npz" -o "$dir/out.npy"
attn-plot -i "$dir/trace.npz:write0" --title "repeat copy: write weighting" -o "$out/write.png"
attn-plot -i "$dir/trace.npz:read0" --title "repeat copy: read weighting" -o "$out/read.png"
if [ "$quick" = 1 ]; then
  awk -F'\t' 'NR == 2 { a = $6 } END { exit !($6 < 0.6 * a) }' "$dir/curve.tsv" ||
    { echo "ntm-repeat-copy: the cost did not fall below 60% of its first value" >&2; exit 1; }
else
  awk -v b="$bits" 'BEGIN { exit !(b < 0.1) }' ||
    { echo "ntm-repeat-copy: $bits bits per sequence, not below 0.1" >&2; exit 1; }
fi
