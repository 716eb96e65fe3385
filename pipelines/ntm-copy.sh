#!/usr/bin/env bash
# The Neural Turing Machine's copy experiment (Graves, Wayne & Danihelka 2014, section 4.1):
# an LSTM controller of 100 units with one read and one write head on a 128 x 20 memory,
# batch 1, learns to copy sequences of 1-20 random 8-bit vectors, and the copy generalises to
# longer sequences than it was trained on.
#
# For each of 4 seeds the script trains 30,000 sequences (ntm-train, RMSProp in Graves' form at
# learning rate 3e-4) and evaluates bits per sequence on 1,000 fresh sequences of lengths 1-20
# (ntm-run --eval, 50 per length) and the fraction of wrong bits on 100 sequences of length
# 40 and of length 120; then it resumes the same run from its checkpoint up to 200,000
# sequences (still lengths 1-20; the same model as a run of 200,000 never stopped) and
# measures lengths 40 and 120 again. It prints a TSV on standard output:
#   seed  bits_per_seq  first_step_below_1bit  wrong_fraction_40  wrong_fraction_120
#         wrong_fraction_40_200000  wrong_fraction_120_200000
# (first_step_below_1bit: the first log row, every 500 sequences, with the training cost
# below 1 bit per sequence), keeps the learning curves (curve-<seed>.tsv) and draws, for the
# first seed after 30,000 sequences, the write and read weightings over one sequence of
# length 20 (write.png, read.png: time down, memory rows across — a copy writes along a
# diagonal and reads the same diagonal again) in --keep DIR, else the current folder.
#
# Claims checked (exit 1 when one fails): at least 3 of 4 seeds below 0.05 bits per sequence
# within 30,000 sequences; at least 3 of 4 seeds with at most 1% wrong bits at lengths 40
# and 120 after 200,000.
# The recipe: learning rate 3e-4 (the paper's 1e-4 left seeds 1-4 above 0.05 bits after
# 30,000), 200,000 sequences for the long lengths. Measured results and every remedy tried
# for the failures at length 120: doc/experiments/ntm-copy.md.
#   pipelines/ntm-copy.sh [--quick] [--seed S] [--keep DIR]
# --quick: one seed of a small copy task (4-bit vectors, length 1-4, 16 x 8 memory, Adam)
# for 5,000 sequences, resumed to 6,000 (seconds); claim: below 1 bit per sequence at lengths
# 1-4 (lengths 8 and 12 are reported, without a claim).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ntm-train ntm-run seqtask-gen attn-plot
work_dir
out=${keep:-.}

if [ "$quick" = 1 ]; then
  seeds=$seed
  train="--task copy --width 4 --len-max 4 --hidden 32 --memory-rows 16 --memory-cols 8
         --optimizer adam --lr 3e-3 --eps 1e-8"
  first_steps=5000 more_steps=6000
  eval_lengths=1,2,3,4 count=100 long=8 longer=12 need_ok=1 limit=1.0
else
  seeds="$seed $((seed + 1)) $((seed + 2)) $((seed + 3))"
  train="--task copy --lr 3e-4"
  first_steps=30000 more_steps=200000
  eval_lengths=$(seq -s, 1 20) count=50 long=40 longer=120 need_ok=3 limit=0.05
fi
generalise() { ntm_wrong "$1" --lengths "$long,$longer" --count 100 --seed 2000; }

printf 'seed\tbits_per_seq\tfirst_step_below_1bit\twrong_fraction_%s\twrong_fraction_%s\twrong_fraction_%s_%s\twrong_fraction_%s_%s\n' \
  "$long" "$longer" "$long" "$more_steps" "$longer" "$more_steps"
ok=0 gen_ok=0
for s in $seeds; do
  # The first $first_steps sequences, then the same run resumed from its checkpoint up to
  # $more_steps (bit for bit the model of a run of $more_steps never stopped).
  ntm-train $train --steps "$first_steps" --checkpoint-every "$first_steps" --checkpoint "$dir/copy$s.ckpt" \
    --seed "$s" -o "$dir/copy$s.akm" --log "$dir/curve-$s.tsv" --log-every 500 -q
  bits=$(ntm_bits "$dir/copy$s.akm" --lengths "$eval_lengths" --count "$count" --seed 1000)
  first=$(awk -F'\t' 'NR > 1 && $6 < 1 { print $1; exit }' "$dir/curve-$s.tsv")
  gen=$(generalise "$dir/copy$s.akm")
  ntm-train $train --steps "$more_steps" --checkpoint-every "$first_steps" --checkpoint "$dir/copy$s.ckpt" \
    --resume --seed "$s" -o "$dir/copy$s-more.akm" --log "$dir/curve-$s.tsv" --log-every 500 -q
  cp "$dir/curve-$s.tsv" "$out/curve-$s.tsv" 2>/dev/null || true
  gen_more=$(generalise "$dir/copy$s-more.akm")
  printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$bits" "${first:-none}" "$gen" "$gen_more"
  if awk -v b="$bits" -v l="$limit" 'BEGIN { exit !(b < l) }'; then ok=$((ok + 1)); fi
  if awk -v g="$gen_more" 'BEGIN { split(g, x, "\t"); exit !(x[1] <= 0.01 && x[2] <= 0.01) }'; then
    gen_ok=$((gen_ok + 1))
  fi
done

curves=()
for s in $seeds; do curves+=("$dir/curve-$s.tsv:bits_per_seq:seed $s"); done
learning_curve "$out/curve.png" "NTM copy: training cost, bits per sequence" "${curves[@]}"

# Traces of the first seed over one sequence of the longest training length.
s1=${seeds%% *}
maxlen=${eval_lengths##*,}
seqtask-gen --task copy $( [ "$quick" = 1 ] && echo --width 4 ) --count 1 --len-min "$maxlen" \
  --len-max "$maxlen" --seed 7 -o "$dir/one.npz"
ntm-run --model "$dir/copy$s1.akm" -i "$dir/one.npz" --trace "$dir/trace.npz" -o "$dir/out.npy"
attn-plot -i "$dir/trace.npz:write0" --title "copy: write weighting (time down, rows across)" -o "$out/write.png"
attn-plot -i "$dir/trace.npz:read0" --title "copy: read weighting (time down, rows across)" -o "$out/read.png"
echo "ntm-copy: traces in $out/write.png and $out/read.png" >&2

status=0
if [ "$ok" -lt "$need_ok" ]; then
  echo "ntm-copy: only $ok seed(s) reached $limit bits per sequence (need $need_ok)" >&2
  status=1
fi
if [ "$quick" = 0 ] && [ "$gen_ok" -lt "$need_ok" ]; then
  echo "ntm-copy: only $gen_ok seed(s) with at most 1% wrong bits at lengths $long and $longer after $more_steps sequences (need $need_ok)" >&2
  status=1
fi
exit $status
