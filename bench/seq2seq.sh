#!/usr/bin/env bash
# Seq2seq speed, attnkit (bench/seq2seq.cpp) against the same models in PyTorch
# (bench/seq2seq_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE and thread count:
#   training throughput in target tokens/s — LSTM encoder-decoder with additive attention
#   (vocab 1000, embedding 64, hidden 128, batch 64, length 20, Adam) and the 2-layer
#   Transformer (d_model 128, 4 heads, d_ff 512);
#   decoding in sentences/s — greedy and beam 4, 20 tokens a sentence, one sentence at a time.
# Prints every measurement as TSV, then per case and thread count the median ratio
# attnkit / pytorch and the range of the per-repetition ratios. THREADS may list several
# counts ("1 2"): each repetition then runs every case at each of them, both sides, one after
# the other, and a "best" line per case divides attnkit's best rate of the repetition (over
# the thread counts) by PyTorch's best of the same repetition — best against best measured
# minutes apart, not runs apart (the machine's speed drifts by tens of percent over an hour).
# DROPOUT=P (environment) trains the Transformer with dropout P on both sides, as real
# training does (embeddings, sublayer outputs, feed-forward hidden units, attention weights).
# ONLY=train or ONLY=decode runs those cases alone.
# PyTorch at N > 1 threads: Debian's torch runs OpenMP threads and OpenBLAS's own pthreads,
# and with both at N on N cores they oversubscribe (3-4x slower than 1 thread here). So each
# PyTorch measurement at N > 1 tries three settings — torch N / OpenBLAS N, torch N /
# OpenBLAS 1, torch 1 / OpenBLAS N — and keeps the fastest, named in a last column.
#   bench/seq2seq.sh [STEPS] [REPS] [THREADS]     (defaults 10 3 1; e.g. 10 3 "1 2")
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-seq2seq"
[ -x "$bin" ] || { echo "seq2seq.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-10} reps=${2:-3} threads=${3:-1}
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
py=
/usr/bin/python3 -c 'import torch' 2>/dev/null && py=/usr/bin/python3
[ -n "$py" ] || echo "# PyTorch not importable by /usr/bin/python3: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cases=("train rnn $steps" "train transformer $steps" "decode rnn 1 50" "decode rnn 4 50"
       "decode transformer 1 20" "decode transformer 4 20")
echo -e "impl\ttask\tmodel\tthreads\tn\tsec\trate\textra"
# PyTorch's fastest of the thread settings above for a budget of $th threads (the last
# argument): its TSV line with the threads column set to the budget and the setting appended.
torch_best() {
  local th=${!#} best= brate=0 line rate s omp blas
  local settings=("1 1")
  [ "$th" -gt 1 ] && settings=("$th $th" "$th 1" "1 $th")
  for s in "${settings[@]}"; do
    read -r omp blas <<< "$s"
    line=$(OMP_NUM_THREADS=$omp OPENBLAS_NUM_THREADS=$blas "$py" "$top/bench/seq2seq_torch.py" "${@:1:$#-1}" "$omp" 2>/dev/null)
    rate=$(echo "$line" | cut -f7)
    if awk -v a="$rate" -v b="$brate" 'BEGIN { exit !(a > b) }'; then
      brate=$rate
      best=$(echo "$line" | awk -F'\t' -v OFS='\t' -v th="$th" -v s="torch $omp/openblas $blas" '{ $4 = th; print $0, s }')
    fi
  done
  echo "$best"
}
# Each measurement goes to stdout and, after its repetition number, to $out.
measure() {
  local r=$1 line
  shift
  line=$("$@")
  echo "$line"
  echo -e "$r\t$line" >> "$out"
}
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    [ -z "${ONLY:-}" ] || [ "${c%% *}" = "$ONLY" ] || continue
    for th in $threads; do
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=$th measure "$r" "$bin" $c "$th"
      # shellcheck disable=SC2086
      [ -z "$py" ] || measure "$r" torch_best $c "$th"
    done
  done
done
[ -n "$py" ] || exit 0
# Columns of $out: repetition, then the TSV above (rate in column 8, threads in 5, the beam in
# 9 for decoding). Pair each attnkit line with the PyTorch line after it (same threads); per
# repetition and case keep each side's best rate over the thread counts.
awk -F'\t' -v multi="$( [ "$(echo $threads | wc -w)" -gt 1 ] && echo 1 || echo 0 )" '
  function push(key, r) { n[key]++; v[key, n[key]] = r; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  {
    c = $3 " " $4 ($3 == "decode" ? " beam " $9 : "")
    if ($2 == "attnkit") { a = $8; if ($8 > ba[$1, c]) ba[$1, c] = $8; next }
    if ($2 == "pytorch") {
      push(c " threads " $5, a / $8)
      if ($8 > bp[$1, c]) bp[$1, c] = $8
      if (!((c) in cs)) { cs[c] = 1; corder[++nc] = c }
      reps[$1] = 1
    }
  }
  END {
    if (multi) for (i = 1; i <= nc; i++) for (r in reps) push(corder[i] " best", ba[r, corder[i]] / bp[r, corder[i]])
    for (i = 1; i <= k; i++) {
      key = order[i]; m = n[key]
      for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (v[key, y] < v[key, x]) { t = v[key, x]; v[key, x] = v[key, y]; v[key, y] = t }
      printf "# %-36s attnkit / pytorch = %.2fx (median of %d; range %.2f-%.2f)\n", key, v[key, int((m + 1) / 2)], m, v[key, 1], v[key, m]
    }
  }' "$out"
