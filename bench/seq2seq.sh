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
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-seq2seq"
[ -x "$bin" ] || { echo "seq2seq.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-10} reps=${2:-3} threads=${3:-1}
bench_coretype
py=
"$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
[ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cases=("train rnn $steps" "train transformer $steps" "decode rnn 1 50" "decode rnn 4 50"
       "decode transformer 1 20" "decode transformer 4 20")
echo -e "impl\ttask\tmodel\tthreads\tn\tsec\trate\textra"
# Each measurement goes to stdout and, after its repetition number, to $out.
measure() {
  local r=$1 line
  shift
  line=$("$@")
  echo "$line"
  echo -e "$r\t$line" >> "$out"
}
gemm="$build/bench/bench-gemm"
for r in $(seq "$reps"); do
  if [ "${ONLY:-}" != decode ]; then  # the machine's sgemm rate now, for the ceiling below
    for th in $threads; do
      g=$("$gemm" --size 1024 --threads "$th" --min-seconds 0.3 | awk -F'\t' 'NR == 2 { print $3 }')
      echo "# sgemm 1024x1024 at $th threads: $g GFLOP/s"
      echo -e "$r\tgemm\t$th\t$g" >> "$out"
    done
  fi
  for c in "${cases[@]}"; do
    [ -z "${ONLY:-}" ] || [ "${c%% *}" = "$ONLY" ] || continue
    for th in $threads; do
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=$th measure "$r" "$bin" $c "$th"
      # the step's own products replayed alone at their shapes (training cases): a ceiling
      # shellcheck disable=SC2086
      [ "${c%% *}" != train ] || measure "$r" "$bin" gemms ${c#train } "$th"
      # shellcheck disable=SC2086
      [ -z "$py" ] || measure "$r" torch_best 7 4 "$th" "$py" "$top/bench/seq2seq_torch.py" $c @T
    done
  done
done
[ -n "$py" ] || exit 0
# Columns of $out: repetition, then the TSV above (rate in column 8, threads in 5, the beam in
# 9 for decoding; attnkit's train lines also the GFLOP of a step in 10), and the sgemm lines
# (repetition, "gemm", threads, GFLOP/s).
# Ratios: pair each attnkit line with the PyTorch line after it (same threads); per
# repetition and case keep each side's best rate over the thread counts.
# The gemms lines (bench-seq2seq gemms: the products of one step, replayed alone at their
# own shapes, GFLOP/s in the rate column) give a nearer ceiling: their share of the sgemm
# rate, and the whole step's share of theirs (the rest of the step's cost: everything that is
# not a matrix product).
# The arithmetic ceiling of the training cases: attnkit counts the matrix products of one
# step; both sides do the same products, so each side's GFLOP/s is that count over its
# seconds a step. Set against the sgemm rate of 1024x1024 products measured in the same
# repetition (an upper bound for the smaller products of these models), "3x needs" is the
# share of that rate a side doing the same products would need to be 3x PyTorch at that
# thread count, and (with several thread counts) 3x PyTorch's best against the best sgemm
# rate of the repetition.
awk -F'\t' -v multi="$( [ "$(echo $threads | wc -w)" -gt 1 ] && echo 1 || echo 0 )" '
  # put: a value under a key (keys in order of first use); sorted: the values of a key in
  # ascending order (their count returned); a median is sorted value int((m + 1) / 2)
  function put(key, val) { if (!(key in nw)) order[++nk] = key; w[key, ++nw[key]] = val }
  function sorted(key,   m, x, y, t) {
    m = nw[key]
    for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (w[key, y] < w[key, x]) { t = w[key, x]; w[key, x] = w[key, y]; w[key, y] = t }
    return m
  }
  function med(key,   m) { m = sorted(key); return w[key, int((m + 1) / 2)] }
  $2 == "gemm" { peak[$1, $3] = $4; if ($4 > top[$1]) top[$1] = $4; next }
  $2 == "gemms" { put("c" SUBSEP $4 SUBSEP $5, $8 / peak[$1, $5]); put("s" SUBSEP $4 SUBSEP $5, $10 / a_sec / $8); next }
  {
    c = $3 " " $4 ($3 == "decode" ? " beam " $9 : "")
    if ($2 == "attnkit") {
      a = $8; if ($8 > ba[$1, c]) ba[$1, c] = $8
      if ($3 == "train") { g[$4] = $10; a_sec = $7; put("a" SUBSEP $4 SUBSEP $5, $10 / $7) }
      next
    }
    if ($2 != "pytorch") next
    put("r" SUBSEP c " threads " $5, a / $8)
    if ($8 > bp[$1, c]) bp[$1, c] = $8
    if (!((c) in cs)) { cs[c] = 1; corder[++nc] = c }
    reps[$1] = 1
    if ($3 != "train") next
    k = $4 SUBSEP $5
    if (!(k in tseen)) { tseen[k] = 1; torder[++nt] = k }
    put("p" SUBSEP k, g[$4] / $7); put("k" SUBSEP k, peak[$1, $5]); put("n" SUBSEP k, 3 * g[$4] / $7 / peak[$1, $5])
    if (g[$4] / $7 > best[$1, $4]) best[$1, $4] = g[$4] / $7
    if (!(($1, $4) in bseen)) { bseen[$1, $4] = 1; models[$4] = 1; brep[$4, ++nb[$4]] = $1 }
  }
  END {
    if (multi) for (i = 1; i <= nc; i++) for (r in reps) put("r" SUBSEP corder[i] " best", ba[r, corder[i]] / bp[r, corder[i]])
    for (i = 1; i <= nk; i++) {
      if (substr(order[i], 1, 2) != "r" SUBSEP) continue
      key = order[i]; m = sorted(key)
      printf "# %-36s attnkit / pytorch = %.2fx (median of %d; range %.2f-%.2f)\n", substr(key, 3), w[key, int((m + 1) / 2)], m, w[key, 1], w[key, m]
    }
    for (i = 1; i <= nt; i++) {
      split(torder[i], f, SUBSEP); k = torder[i]
      printf "# train %-11s threads %s: %.2f GFLOP a step; GFLOP/s attnkit %.0f, pytorch %.0f, sgemm 1024 %.0f; 3x pytorch needs %.0f%% of sgemm (medians of %d)\n",
        f[1], f[2], g[f[1]], med("a" SUBSEP k), med("p" SUBSEP k), med("k" SUBSEP k), 100 * med("n" SUBSEP k), nw["p" SUBSEP k]
      if (nw["c" SUBSEP k])
        printf "# train %-11s threads %s: the step'"'"'s products replayed alone at their shapes reach %.0f%% of sgemm 1024; attnkit'"'"'s whole step %.0f%% of that (medians of %d)\n",
          f[1], f[2], 100 * med("c" SUBSEP k), 100 * med("s" SUBSEP k), nw["c" SUBSEP k]
    }
    if (nt > length(models))
      for (mo in models) {
        for (j = 1; j <= nb[mo]; j++) { r = brep[mo, j]; put("b" SUBSEP mo, 3 * best[r, mo] / top[r]) }
        printf "# train %-11s best: 3x pytorch best needs %.0f%% of sgemm at the most threads (median of %d)\n", mo, 100 * med("b" SUBSEP mo), nb[mo]
      }
  }' "$out"
