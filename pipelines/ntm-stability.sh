#!/usr/bin/env bash
# Stability of NTM training on the copy task: 10 seeds x 100,000 sequences each (LSTM 100,
# one read and one write head, 128 x 20 memory, batch 1, RMSProp in Graves' form, the
# defaults of ntm-train), run two at a time. ntm-train's guard stops a run whose loss,
# gradient norm or parameters become NaN or infinite (exit 1); the script counts those.
#
# Prints a TSV on standard output, one row per 1,000 sequences: the median training cost in
# bits per sequence over the seeds and the spread (minimum, maximum):
#   sequences  median_bits  min_bits  max_bits
# and on standard error, per seed, the sequences after which the cost first fell below
# 1 bit. The curves are kept in --keep DIR (curve-<seed>.tsv), else discarded.
# Claim checked (exit 1 when it fails): no run stops on a NaN or infinity.
#   pipelines/ntm-stability.sh [--quick] [--seed S] [--keep DIR]
# --quick: 2 seeds x 2,000 sequences of a small copy task (seconds).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ntm-train
work_dir
if [ "$quick" = 1 ]; then
  n=2 args="--task copy --width 4 --max-len 4 --controller-size 32 --memory-rows 16 --memory-cols 8 --steps 2000"
else
  n=10 args="--task copy --steps 100000"
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
for j in $(seq 0 $((n - 1))); do
  s=$((seed + j))
  first=$(awk -F'\t' 'NR > 1 && $4 < 1 { print $2; exit }' "$dir/curve-$s.tsv")
  echo "ntm-stability: seed $s: below 1 bit per sequence after ${first:-never} sequences" >&2
  [ -s "$dir/err-$s" ] && cat "$dir/err-$s" >&2
done
printf 'sequences\tmedian_bits\tmin_bits\tmax_bits\n'
cat "$dir"/curve-*.tsv | awk -F'\t' '$1 != "step" { print $2 "\t" $4 }' | sort -k1,1n -k2,2g |
  awk -F'\t' '{ v[$1] = v[$1] " " $2; c[$1]++ }
    END { for (k in v) { m = split(substr(v[k], 2), x, " ")
            med = (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
            printf "%s\t%.4g\t%.4g\t%.4g\n", k, med, x[1], x[m] } }' | sort -k1,1n
if [ "$fails" -gt 0 ]; then
  echo "ntm-stability: $fails of $n runs failed (NaN or infinity)" >&2
  exit 1
fi
