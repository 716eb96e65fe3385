#!/usr/bin/env bash
# The Transformer's decoding cost per token against the sentence length, in one run: attnkit
# with its key-value cache (the default), attnkit recomputing the prefix every step
# (KV_CACHE=0, as before the cache), and PyTorch's same model (bench/seq2seq_torch.py, whose
# nn.TransformerDecoder recomputes the prefix: it has no cache). The bench's 2+2-layer
# Transformer (d_model 128, 4 heads, d_ff 512, vocabulary 1000), greedy and beam 4, source
# length 20, emitting exactly L tokens a sentence, one thread a side, alternating the sides
# REPS times. With the cache a token costs about the same at every position (the self-
# attention's share grows with L, but slowly); without it the cost grows with the prefix.
# Prints TSV rows (impl, beam, L, sec_per_token, median over REPS), the ratios PyTorch /
# attnkit at each L, and draws decode-length.png (ms per token against L) with gnuplot.
#   bench/decode-length.sh [REPS] [SENTENCES] [LENGTHS]     (defaults 3 10 "10 20 40 80 160")
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The PyTorch peer: PYTHON= any interpreter that imports torch (default Debian's).
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-seq2seq"
[ -x "$bin" ] || { echo "decode-length.sh: no $bin (build first: make)" >&2; exit 1; }
reps=${1:-3} n=${2:-10} lengths=${3:-10 20 40 80 160}
bench_coretype
py=
"$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
[ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped" >&2
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for r in $(seq "$reps"); do
  for beam in 1 4; do
    for L in $lengths; do
      s=$(DECODE_LEN=$L "$bin" decode transformer "$beam" "$n" 1 | cut -f6)
      echo -e "attnkit-cache\t$beam\t$L\t$(awk -v s="$s" -v n="$n" -v L="$L" 'BEGIN { printf "%.3e", s / (n * L) }')" >> "$raw"
      s=$(KV_CACHE=0 DECODE_LEN=$L "$bin" decode transformer "$beam" "$n" 1 | cut -f6)
      echo -e "attnkit-recompute\t$beam\t$L\t$(awk -v s="$s" -v n="$n" -v L="$L" 'BEGIN { printf "%.3e", s / (n * L) }')" >> "$raw"
      if [ -n "$py" ]; then
        s=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 DECODE_LEN=$L "$py" "$top/bench/seq2seq_torch.py" decode transformer "$beam" "$n" 1 | cut -f6)
        echo -e "pytorch\t$beam\t$L\t$(awk -v s="$s" -v n="$n" -v L="$L" 'BEGIN { printf "%.3e", s / (n * L) }')" >> "$raw"
      fi
    done
  done
done
echo -e "impl\tbeam\tL\tsec_per_token"
sort -t$'\t' -k1,1 -k2,2n -k3,3n -k4,4g "$raw" | awk -F'\t' '
  { k = $1 "\t" $2 "\t" $3; if (!(k in c)) order[++m] = k; c[k]++; v[k, c[k]] = $4 }
  END { for (i = 1; i <= m; i++) { k = order[i]; print k "\t" v[k, int((c[k] + 1) / 2)] } }' |
  sort -k1,1 -k2,2n -k3,3n | tee "$raw.med"
echo
echo -e "beam\tL\tpytorch_over_cache\trecompute_over_cache"
awk -F'\t' '{ t[$1, $2, $3] = $4; b[$2] = 1; l[$3] = 1 }
  END {
    for (bb in b) for (ll in l) if ((("attnkit-cache", bb, ll) in t))
      printf "%s\t%s\t%s\t%.2f\n", bb, ll,
        (("pytorch", bb, ll) in t) ? sprintf("%.2f", t["pytorch", bb, ll] / t["attnkit-cache", bb, ll]) : "-",
        t["attnkit-recompute", bb, ll] / t["attnkit-cache", bb, ll]
  }' "$raw.med" | sort -k1,1n -k2,2n
if command -v gnuplot >/dev/null; then
  for i in attnkit-cache attnkit-recompute pytorch; do
    for beam in 1 4; do
      awk -F'\t' -v i="$i" -v b="$beam" '$1 == i && $2 == b { print $3 "\t" $4 * 1000 }' "$raw.med" > "$raw.$i.$beam"
    done
  done
  gnuplot -e "set terminal png size 900,500; set output 'decode-length.png';
    set title 'Transformer decoding, 1 thread: cost per token against sentence length';
    set xlabel 'tokens emitted (L)'; set ylabel 'ms per token'; set logscale x 2; set grid; set key top left;
    plot '$raw.attnkit-cache.1' w lp lw 2 t 'attnkit, cache, greedy', '$raw.attnkit-cache.4' w lp lw 2 t 'attnkit, cache, beam 4',
         '$raw.attnkit-recompute.1' w lp t 'attnkit, recompute, greedy', '$raw.attnkit-recompute.4' w lp t 'attnkit, recompute, beam 4',
         '$raw.pytorch.1' w lp t 'PyTorch, greedy', '$raw.pytorch.4' w lp t 'PyTorch, beam 4'" 2>/dev/null &&
    echo "# decode-length.png written" >&2
  rm -f "$raw".*.[14]
fi
rm -f "$raw.med"
