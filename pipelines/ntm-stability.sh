#!/usr/bin/env bash
# Stability of NTM training on the copy task: 10 seeds x 100,000 sequences each (LSTM 100,
# one read and one write head, 128 x 20 memory, batch 1, RMSProp in Graves' form with the
# learning rate of pipelines/ntm-copy.sh, 3e-4, the other settings ntm-train's defaults),
# run two at a time. ntm-train's guard stops a run whose loss,
# gradient norm or parameters become NaN or infinite (exit 1); the script counts those.
#
# Prints a TSV on standard output, one row per 1,000 sequences: the median training cost in
# bits per sequence over the seeds and the spread (minimum, maximum):
#   sequences  median_bits  min_bits  max_bits
# and on standard error, per seed: the sequences after which the training cost first fell
# below 1 bit, and the final model evaluated with ntm-run --eval on fresh sequences (bits per
# sequence over lengths 1-20, 50 a length; the fraction of wrong bits on 100 sequences of
# length 40 and of length 120, the generalisation of the copy experiment after 100,000
# sequences rather than 30,000). The curves and that table are kept in --keep DIR
# (curve-<seed>.tsv, seeds.tsv, m<seed>.akm), else discarded.
# Claim checked (exit 1 when it fails): no run stops on a NaN or infinity.
#   pipelines/ntm-stability.sh [--quick] [--seed S] [--keep DIR]
# --quick: 2 seeds x 2,000 sequences of a small copy task (seconds).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ntm-train ntm-run
work_dir
if [ "$quick" = 1 ]; then
  n=2 args="--task copy --width 4 --len-max 4 --hidden 32 --memory-rows 16 --memory-cols 8 --steps 2000"
  lengths=1,2,3,4 long=8 longer=12
else
  n=10 args="--task copy --lr 3e-4 --steps 100000"
  lengths=$(seq -s, 1 20) long=40 longer=120
fi
fails=0
for i in $(seq 0 2 $((n - 1))); do
  pids=()
  for j in $i $((i + 1)); do
    [ "$j" -lt "$n" ] || continue
    s=$((seed + j))
    ntm-train $args --seed "$s" --threads 1 -o "$dir/m$s.akm" --log "$dir/curve-$s.tsv" \
      --log-every 1000 -q 2>"$dir/err-$s" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
done
printf 'seed\tbelow_1bit_after\tbits_per_seq\twrong_fraction_%s\twrong_fraction_%s\n' "$long" "$longer" >"$dir/seeds.tsv"
for j in $(seq 0 $((n - 1))); do
  s=$((seed + j))
  first=$(awk -F'\t' 'NR > 1 && $6 < 1 { print $1; exit }' "$dir/curve-$s.tsv")
  [ -s "$dir/err-$s" ] && cat "$dir/err-$s" >&2
  bits=- gen="-	-"
  if [ -f "$dir/m$s.akm" ]; then
    bits=$(ntm_bits "$dir/m$s.akm" --lengths "$lengths" --count 50 --seed 1000)
    gen=$(ntm_wrong "$dir/m$s.akm" --lengths "$long,$longer" --count 100 --seed 2000)
  fi
  printf '%s\t%s\t%s\t%s\n' "$s" "${first:-never}" "$bits" "$gen" >>"$dir/seeds.tsv"
  echo "ntm-stability: seed $s: below 1 bit per sequence after ${first:-never} sequences;" \
    "fresh sequences: $bits bits; wrong bits at length $long, $longer: ${gen/	/, }" >&2
done
printf 'sequences\tmedian_bits\tmin_bits\tmax_bits\n'
cat "$dir"/curve-*.tsv | awk -F'\t' '$1 != "step" { print $1 "\t" $6 }' | sort -k1,1n -k2,2g |
  awk -F'\t' '{ v[$1] = v[$1] " " $2; c[$1]++ }
    END { for (k in v) { m = split(substr(v[k], 2), x, " ")
            med = (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
            printf "%s\t%.4g\t%.4g\t%.4g\n", k, med, x[1], x[m] } }' | sort -k1,1n
curves=()
for c in "$dir"/curve-*.tsv; do [ -s "$c" ] && curves+=("$c:bits_per_seq:seed $(basename "$c" .tsv | cut -d- -f2)"); done
[ ${#curves[@]} -eq 0 ] || learning_curve "${keep:-.}/stability.png" "NTM copy, every seed: bits per sequence" "${curves[@]}"
if [ "$fails" -gt 0 ]; then
  echo "ntm-stability: $fails of $n runs failed (NaN or infinity)" >&2
  exit 1
fi
