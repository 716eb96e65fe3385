#!/usr/bin/env bash
# Exercise 8-1: the parameters of an LSTM layer with n inputs and m hidden units.
#
# Four gates (input, forget, cell, output), each with an m x n input matrix, an m x m
# recurrent matrix and a bias of m: 4m(n + m + 1). attnkit's LSTM keeps one bias vector per
# gate, which is exactly that formula. PyTorch's nn.LSTM keeps two (bias_ih and bias_hh, the
# cuDNN convention), so it counts 4m(n + m + 2): the extra 4m are redundant, since only the
# sum b_ih + b_hh enters the gates.
# For several n (the embedding size) and m (--hidden), `seq2seq-train --dry-run` prints the
# per-layer counts of an LSTM encoder-decoder; the first encoder layer (input n) and the
# second (input m) must match the formula. Exit 1 when one does not.
#   pipelines/exercise-8-1.sh [--quick] [--keep DIR]
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools seq2seq-train
work_dir
printf 'a b c\tx y z\nb c\ty z\n' > "$dir/pairs.tsv"
sizes="4:8 16:32 64:128 100:7"
[ "$quick" = 1 ] && sizes="4:8 64:128"
bad=0
printf 'n\tm\tlayer\tcounted\t4m(n+m+1)\tpytorch_4m(n+m+2)\n'
for nm in $sizes; do
  n=${nm%:*} m=${nm#*:}
  seq2seq-train -i "$dir/pairs.tsv" --valid-fraction 0 --cell lstm --layers 2 --attention none \
    --embed "$n" --hidden "$m" --dry-run > "$dir/count.tsv"
  for layer in encoder.l0 encoder.l1; do
    in=$n; [ $layer = encoder.l1 ] && in=$m
    got=$(awk -F'\t' -v l=$layer '$1 == l { print $2 }' "$dir/count.tsv")
    want=$((4 * m * (in + m + 1)))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$in" "$m" "$layer" "$got" "$want" $((4 * m * (in + m + 2)))
    [ "$got" = "$want" ] || { echo "exercise-8-1: $layer of n=$in m=$m counts $got, expected $want" >&2; bad=1; }
  done
done
[ $bad = 0 ] && echo "# every LSTM layer has 4m(n+m+1) parameters"
exit $bad
