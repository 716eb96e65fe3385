#!/usr/bin/env bash
# attnkit's first demo (make demo): self-attention over sinusoidal positional encodings.
#
# posenc writes the encoding of 12 positions in 32 dimensions; attn-score lets every position
# attend to every other one (scaled dot-product, softmax over keys). The weights are printed
# as numbers and as a shaded picture: each position attends most to itself and then to its
# neighbours, falling off with the distance |i - j|, the same way in every row. The dot
# product of two sinusoidal encodings depends only on their distance, which is why a model
# can read relative position from them. Then exercise 8-2 in its quick form: why the scores
# are divided by sqrt(d_k).
#   pipelines/demo.sh [--keep DIR]     (the tools from ATTNKIT_BIN, build/bin, or PATH)
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools posenc attn-score
work_dir
work=$dir

L=12 D=32
posenc --length $L --dim $D > "$work/P.txt"
attn-score --query "$work/P.txt" --key "$work/P.txt" --score dot --output weights \
  > "$work/W.txt"

echo "== Self-attention of positional encodings: posenc --length $L --dim $D | attn-score --score dot"
echo "   weights (row i: how much position i attends to each position j; rows sum to 1)"
awk '{ printf "   %2d |", NR - 1; for (j = 1; j <= NF; j++) printf " %4.2f", $j; printf "\n" }' "$work/W.txt"
echo
echo "   the same weights as shades (darker = more attention):"
awk -v shades=' .:-=+*#%@' '
  { for (j = 1; j <= NF; j++) { w[NR, j] = $j; if ($j > max) max = $j } n = NF; rows = NR }
  END {
    for (i = 1; i <= rows; i++) {
      printf "   %2d |", i - 1
      for (j = 1; j <= n; j++) {
        k = int(w[i, j] / max * (length(shades) - 1) + 0.5)
        c = substr(shades, k + 1, 1); printf "%s%s", c, c
      }
      printf "|\n"
    }
  }' "$work/W.txt"
echo "   Look at the diagonal band: every position attends most to itself and its neighbours,"
echo "   and each row is the row above shifted by one (attention depends on |i - j| only)."
echo
echo "== Exercise 8-2 (quick): variance of q.k grows as d_k; dividing by sqrt(d_k) keeps it at 1"
bash "$top/pipelines/exercise-8-2.sh" --quick
