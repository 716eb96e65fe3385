#!/usr/bin/env bash
# Seq2seq speed, attnkit (bench/seq2seq.cpp) against the same models in PyTorch
# (bench/seq2seq_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE and thread count:
#   training throughput in target tokens/s — LSTM encoder-decoder with additive attention
#   (vocab 1000, embedding 64, hidden 128, batch 64, length 20, Adam) and the 2-layer
#   Transformer (d_model 128, 4 heads, d_ff 512);
#   decoding in sentences/s — greedy and beam 4, 20 tokens a sentence, one sentence at a time.
# Prints every measurement as TSV, then per case the median ratio attnkit / pytorch and the
# range of the per-repetition ratios.
#   bench/seq2seq.sh [STEPS] [REPS] [THREADS]     (defaults 10 3 1)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-seq2seq"
[ -x "$bin" ] || { echo "seq2seq.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-10} reps=${2:-3} th=${3:-1}
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX} OMP_NUM_THREADS=$th
py=
/usr/bin/python3 -c 'import torch' 2>/dev/null && py=/usr/bin/python3
[ -n "$py" ] || echo "# PyTorch not importable by /usr/bin/python3: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cases=("train rnn $steps" "train transformer $steps" "decode rnn 1 50" "decode rnn 4 50"
       "decode transformer 1 20" "decode transformer 4 20")
echo -e "impl\ttask\tmodel\tthreads\tn\tsec\trate\textra"
for r in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    "$bin" $c "$th" | tee -a "$out"
    # shellcheck disable=SC2086
    [ -z "$py" ] || "$py" "$top/bench/seq2seq_torch.py" $c "$th" 2>/dev/null | tee -a "$out"
  done
done
[ -n "$py" ] || exit 0
# Pair each attnkit line with the PyTorch line after it; rate is column 7 (tokens/s or
# sentences/s), the beam column 8 for decoding.
awk -F'\t' '
  $1 == "attnkit" { key = $2 " " $3 ($2 == "decode" ? " beam " $8 : ""); a = $7; next }
  $1 == "pytorch" { r = a / $7; n[key]++; v[key, n[key]] = r; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END {
    for (i = 1; i <= k; i++) {
      key = order[i]; m = n[key]
      for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (v[key, y] < v[key, x]) { t = v[key, x]; v[key, x] = v[key, y]; v[key, y] = t }
      printf "# %-24s attnkit / pytorch = %.2fx (median of %d; range %.2f-%.2f)\n", key, v[key, int((m + 1) / 2)], m, v[key, 1], v[key, m]
    }
  }' "$out"
