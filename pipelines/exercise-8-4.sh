#!/usr/bin/env bash
# Exercise 8-4: external memory organised as a stack, a queue or a deque, against the LSTM
# without one (Grefenstette et al. 2015, "Learning to Transduce with Unbounded Memory").
#
# For copy and reversal (transduce-gen, 10 symbols), trains the Stack-, Queue- and DeQue-LSTM
# and the plain LSTM (stackmem-train) on source lengths 8-16 and tests them on 17-32, twice
# the training lengths (the paper: 8-64 then 65-128, 128 symbols, hours of training), and
# prints the table: task, memory, test coarse and fine accuracy (stackmem-run --eval).
# It draws the stack's strengths over time for one reversal and the queue's for one copy
# (attn-plot: stack-reverse.png, queue-copy.png in --keep DIR).
#
# Why: a stack hands back the newest value first, which is what reversal needs; a queue
# hands back the oldest, which is what copying needs; a deque does either. Their access
# order does not depend on the length, so what is learned on short sequences holds on long
# ones; the LSTM has to squeeze the whole sequence into its state and does not.
# Claims checked (exit 1 when one fails): queue on copy and stack on reversal reach test
# coarse >= 0.95; the plain LSTM stays <= 0.10 on both; the queue on reversal <= 0.10.
# With --quick (a smoke run: lengths 2-5 then 6-10, 400 pairs, 3 epochs) only the table is
# made and its shape checked.
#   pipelines/exercise-8-4.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools transduce-gen stackmem-train stackmem-run attn-plot

if [ "$quick" = 1 ]; then
  lo=2 hi=5 tlo=6 thi=10 count=400 epochs=3
else
  lo=8 hi=16 tlo=17 thi=32 count=5000 epochs=40
fi
work_dir

printf 'task\tmemory\tcoarse\tfine\n' > "$dir/table.tsv"
for task in copy reverse; do
  transduce-gen --task $task --len-min $lo --len-max $hi --symbols 10 --count $count --seed "$seed" -o "$dir/$task-train.tsv"
  transduce-gen --task $task --len-min $tlo --len-max $thi --symbols 10 --count 200 --seed $((seed + 1)) -o "$dir/$task-test.tsv"
  for mem in stack queue deque none; do
    stackmem-train --train "$dir/$task-train.tsv" --memory $mem --epochs $epochs --lr 0.003 \
      --width 16 --seed "$seed" --threads 2 -q -o "$dir/$task-$mem.akm"
    stackmem-run --model "$dir/$task-$mem.akm" -i "$dir/$task-test.tsv" --eval |
      awk -F'\t' -v t=$task -v m=$mem '$1 == "all" { printf "%s\t%s\t%s\t%s\n", t, m, $3, $4 }' >> "$dir/table.tsv"
  done
done
cat "$dir/table.tsv"

# The memories at work: strengths over time (rows: steps; columns: slots, bottom first).
stackmem-run --model "$dir/reverse-stack.akm" -i "$dir/reverse-test.tsv" --trace "$dir/stack-trace.npz" -o /dev/null
stackmem-run --model "$dir/copy-queue.akm" -i "$dir/copy-test.tsv" --trace "$dir/queue-trace.npz" -o /dev/null
attn-plot -i "$dir/stack-trace.npz:strengths" -o "$dir/stack-reverse.png" 2>/dev/null || true
attn-plot -i "$dir/queue-trace.npz:strengths" -o "$dir/queue-copy.png" 2>/dev/null || true
[ -s "$dir/stack-reverse.png" ] && echo "$PIPELINE: the stack's strengths on a reversal: $dir/stack-reverse.png" >&2

awk -F'\t' -v quick="$quick" '
  NR > 1 { c[$1, $2] = $3; n++ }
  END {
    if (n != 8) { print "claim failed: the table has " n " rows, not 8"; exit 1 }
    if (quick) { print "checked (smoke): 8 rows"; exit 0 }
    if (c["copy", "queue"] < 0.95) { printf "claim failed: queue on copy %.3f < 0.95\n", c["copy", "queue"]; bad++ }
    if (c["reverse", "stack"] < 0.95) { printf "claim failed: stack on reversal %.3f < 0.95\n", c["reverse", "stack"]; bad++ }
    if (c["copy", "none"] > 0.10) { printf "claim failed: the LSTM on copy %.3f > 0.10\n", c["copy", "none"]; bad++ }
    if (c["reverse", "none"] > 0.10) { printf "claim failed: the LSTM on reversal %.3f > 0.10\n", c["reverse", "none"]; bad++ }
    if (c["reverse", "queue"] > 0.10) { printf "claim failed: the queue on reversal %.3f > 0.10\n", c["reverse", "queue"]; bad++ }
    if (bad) exit 1
    printf "checked: queue/copy %.2f, stack/reverse %.2f >= 0.95; LSTM %.2f and %.2f, queue/reverse %.2f <= 0.10\n", c["copy", "queue"], c["reverse", "stack"], c["copy", "none"], c["reverse", "none"], c["reverse", "queue"]
  }' "$dir/table.tsv" >&2
