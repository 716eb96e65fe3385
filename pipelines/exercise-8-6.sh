#!/usr/bin/env bash
# Exercise 8.6: the energy E(s) = -1/2 s'Ws - b's of a Hopfield network never increases under
# asynchronous updates (W symmetric, zero diagonal): flipping s_i to sign(h_i) changes E by
# -2|h_i| <= 0. Synchronous updates have no such guarantee and can oscillate.
#
# 1. Over many random nets (Hebb, Storkey and pseudo-inverse nets of random patterns, and
#    nets with Gaussian symmetric weights made by hand), runs asynchronous recall from random
#    probes with a trace of every flip (hopfield-recall --trace-flips, the energy recomputed
#    from its definition) and checks that the energy falls at every single flip.
# 2. Shows a 2-cycle: the 4 x 4 checkerboard stored alone, probed with exactly 8 of its 16
#    pixels flipped: a synchronous step maps s to -s and the next one back to s, forever;
#    asynchronous updates from the same probe settle. Also counts sync 2-cycles over the
#    random nets.
# Prints a TSV on standard output (net, kind, N, probes, flips, increases, sync_cycles) and
# exits 1 when the energy ever rises or no 2-cycle appears.
#   pipelines/exercise-8-6.sh [--quick] [--seed S] [--keep DIR]
# --quick: 12 nets instead of 60. Needs the attnkit tools (ATTNKIT_BIN or build/bin).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools tensor-rand tensor-convert hopfield-store hopfield-recall pattern-noise
if [ "$quick" = 1 ]; then nets=12; else nets=60; fi
work_dir

printf 'net\tkind\tN\tprobes\tflips\tincreases\tsync_cycles\n' >"$dir/energy.tsv"
kinds=(hebb storkey pseudo-inverse gaussian)
for k in $(seq 1 "$nets"); do
  s=$((seed * 1000 + k))
  kind=${kinds[$((k % 4))]}
  n=$((16 + (k * 7) % 49))
  if [ "$kind" = gaussian ]; then
    # W = A + A' with a zero diagonal, A Gaussian: symmetric, not made by any rule.
    tensor-rand --shape "$n,$n" --seed "$s" -o "$dir/A.txt"
    awk '{ for (j = 1; j <= NF; j++) a[NR, j] = $j; n = NF }
      END { for (i = 1; i <= n; i++) { l = ""; for (j = 1; j <= n; j++) l = l (j > 1 ? " " : "") (i == j ? 0 : a[i, j] + a[j, i]); print l } }' \
      "$dir/A.txt" >"$dir/W.txt"
    tensor-convert -i "$dir/W.txt" "$dir/net.npz:W"
  else
    tensor-rand --shape "$((n / 6 + 1)),$n" --dist sign --seed "$s" -o "$dir/p.txt"
    hopfield-store -q --rule "$kind" -i "$dir/p.txt" -o "$dir/net.npz"
  fi
  tensor-rand --shape "8,$n" --dist sign --seed $((s + 500)) -o "$dir/probes.txt"
  hopfield-recall -q -m "$dir/net.npz" -i "$dir/probes.txt" --seed "$s" \
    --trace "$dir/flips.tsv" --trace-flips -o /dev/null
  hopfield-recall -m "$dir/net.npz" -i "$dir/probes.txt" --mode sync -o /dev/null 2>"$dir/sync.err"
  cycles=$(sed -n 's/.* \([0-9]*\) cycled.*/\1/p' "$dir/sync.err")
  awk -F'\t' -v k="$k" -v kind="$kind" -v n="$n" -v c="$cycles" '
    NR > 1 { if ($1 == p) { f++; if ($5 > e) up++ } ; p = $1; e = $5 }
    END { printf "%d\t%s\t%d\t8\t%d\t%d\t%s\n", k, kind, n, f, up, c }' "$dir/flips.tsv" >>"$dir/energy.tsv"
done
cat "$dir/energy.tsv"

# The 2-cycle of synchronous updates: the checkerboard with 8 flipped pixels.
printf 'P1\n4 4\n1 0 1 0\n0 1 0 1\n1 0 1 0\n0 1 0 1\n' >"$dir/checkerboard.pbm"
hopfield-store -q -i "$dir/checkerboard.pbm" -o "$dir/cb.npz"
pattern-noise -q -i "$dir/checkerboard.pbm" --flip-count 8 --seed "$seed" -o "$dir/n8.txt"
hopfield-recall -q -m "$dir/cb.npz" -i "$dir/n8.txt" --mode sync --max-steps 4 --trace "$dir/cycle.tsv" -o "$dir/s4.txt"
hopfield-recall -m "$dir/cb.npz" -i "$dir/n8.txt" --mode sync -o /dev/null 2>"$dir/cb.err"
hopfield-recall -m "$dir/cb.npz" -i "$dir/n8.txt" --seed "$seed" -o "$dir/async.txt" 2>"$dir/cba.err"
{
  echo "sync from the checkerboard with 8 flipped pixels (energy, flips per step):"
  cut -f2-4 "$dir/cycle.tsv" | sed 's/^/  /'
  grep -o 'probe 1.*\|1 probes.*' "$dir/cb.err" | sed 's/^/  sync:  /' || true
  grep -o '1 probes.*' "$dir/cba.err" | sed 's/^/  async: /' || true
} >&2

awk -F'\t' 'NR > 1 { nets++; flips += $5; up += $6; cyc += $7 }
  END {
    if (up > 0) { printf "claim failed: the energy rose at %d of %d async flips\n", up, flips; bad++ }
    if (flips < 10 * nets) { printf "claim failed: too few flips (%d) to test anything\n", flips; bad++ }
    if (bad) exit 1
    printf "checked: over %d random nets the energy fell at every one of %d async flips; %d sync runs entered a 2-cycle\n", nets, flips, cyc
  }' "$dir/energy.tsv" >&2
grep -q "0 converged, 1 cycled" "$dir/cb.err" ||
  { echo "claim failed: the checkerboard with 8 flipped pixels did not cycle under sync updates" >&2; exit 1; }
grep -q "1 converged, 0 cycled" "$dir/cba.err" ||
  { echo "claim failed: async updates from the same probe did not settle" >&2; exit 1; }
echo "checked: sync updates oscillate (s -> -s -> s) where async ones settle" >&2
