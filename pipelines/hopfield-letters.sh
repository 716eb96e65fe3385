#!/usr/bin/env bash
# Letters in a Hopfield network, as pictures: store a few 10 x 10 letter images, recall them
# from noisy copies, and look at the before/after sheet.
#
# The letters A, C, E, F, H, L, O and T (drawn below) are stored by the Hebb rule, by the
# Storkey rule and by the pseudo-inverse (projection) rule (hopfield-store). Each letter gets
# 8 of its 100 pixels flipped (pattern-noise) and is recalled asynchronously
# (hopfield-recall). Letter pictures are strongly correlated (a white background, shared
# strokes: E and F differ in 4 pixels), which the Hebb rule handles badly: it confuses E
# and F and blurs the others into mixtures, while the projection rule, which makes every
# stored letter a fixed point, recovers them all.
#
# Prints a TSV on standard output (rule, letter, the stored letter nearest the recalled
# state, their overlap, whether the recall is exact) and writes letters.pbm, a sheet whose rows are: the letters, the noisy
# probes, then what each rule recalled (and letters.png when pnmtopng or ImageMagick is
# installed) into --keep DIR (default: the current folder). Exits 1 when the projection rule
# fails on a letter or the Hebb rule does not confuse E and F.
#   pipelines/hopfield-letters.sh [--quick] [--seed S] [--keep DIR]
# --quick is accepted for symmetry (the run takes a second either way).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools hopfield-store hopfield-recall pattern-noise
out=${keep:-.}
mkdir -p "$out"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

names=(A C E F H L O T)
# Ten rows of ten pixels per letter, '#' black.
cat >"$dir/letters.art" <<'ART'
....##....
...####...
..##..##..
.##....##.
.##....##.
.########.
.##....##.
.##....##.
.##....##.
..........

..######..
.##....##.
.##.......
.##.......
.##.......
.##.......
.##.......
.##....##.
..######..
..........

.########.
.##.......
.##.......
.##.......
.######...
.##.......
.##.......
.##.......
.########.
..........

.########.
.##.......
.##.......
.##.......
.######...
.##.......
.##.......
.##.......
.##.......
..........

.##....##.
.##....##.
.##....##.
.##....##.
.########.
.##....##.
.##....##.
.##....##.
.##....##.
..........

.##.......
.##.......
.##.......
.##.......
.##.......
.##.......
.##.......
.##.......
.########.
..........

..######..
.##....##.
.##....##.
.##....##.
.##....##.
.##....##.
.##....##.
.##....##.
..######..
..........

.########.
....##....
....##....
....##....
....##....
....##....
....##....
....##....
....##....
..........
ART
# One pattern per row: '#' -> 1, '.' -> -1.
awk 'NF == 0 { if (row != "") print row; row = ""; next }
  { for (i = 1; i <= length($0); i++) row = row (row == "" ? "" : " ") (substr($0, i, 1) == "#" ? 1 : -1) }
  END { if (row != "") print row }' "$dir/letters.art" >"$dir/letters.txt"
pattern-noise -q -i "$dir/letters.txt" --flip-count 8 --seed "$seed" -o "$dir/noisy.txt"

printf 'rule\tletter\tnearest\toverlap\texact\n' >"$dir/letters.tsv"
sheet=("$dir/letters.txt" "$dir/noisy.txt")
for rule in hebb storkey pseudo-inverse; do
  hopfield-store -q --rule "$rule" -i "$dir/letters.txt" -o "$dir/$rule.npz"
  hopfield-recall -m "$dir/$rule.npz" -i "$dir/noisy.txt" --patterns "$dir/letters.txt" \
    --seed "$seed" -o "$dir/$rule.txt" 2>"$dir/$rule.err"
  # "probe K: ... pattern J (overlap M[, exact])": the stored letter nearest the final state.
  sed -n 's/^hopfield-recall: probe \([0-9]*\): .*pattern \([0-9]*\) (overlap \([^,)]*\).*/\1 \2 \3/p' "$dir/$rule.err" |
    awk -v rule="$rule" -v names="${names[*]}" 'BEGIN { split(names, nm, " ") }
      { printf "%s\t%s\t%s\t%s\t%s\n", rule, nm[$1], nm[$2], $3, ($3 == 1 && $1 == $2) ? "yes" : "no" }' \
    >>"$dir/letters.tsv"
  sheet+=("$dir/$rule.txt")
done
cat "$dir/letters.tsv"
cat "${sheet[@]}" >"$dir/sheet.txt"
pattern-noise -q -i "$dir/sheet.txt" --flip-count 0 --image-size 10x10 --tiles-per-row ${#names[@]} \
  --pixel-size 8 -o "$out/letters.pbm"
echo "picture: $out/letters.pbm (rows: letters, noisy probes, recalled by hebb, storkey, pseudo-inverse)" >&2
if command -v pnmtopng >/dev/null; then
  pnmtopng "$out/letters.pbm" >"$out/letters.png" && echo "picture: $out/letters.png" >&2
elif convert -version >/dev/null 2>&1; then
  convert "$out/letters.pbm" "$out/letters.png" && echo "picture: $out/letters.png" >&2
fi
echo "Look at E and F: the Hebb rule cannot tell them apart, the projection rule can." >&2

awk -F'\t' 'NR == 1 { next }
  $1 == "pseudo-inverse" && $5 != "yes" { printf "claim failed: pseudo-inverse did not recall %s\n", $2; bad++ }
  $1 == "hebb" && ($2 == "E" || $2 == "F") { if ($5 == "no") confused++; near[$2] = $3 }
  $1 == "hebb" && $5 == "yes" { hebb_ok++ }
  $1 == "storkey" && $5 == "yes" { storkey_ok++ }
  END {
    if (!confused) { print "claim failed: the Hebb rule recalled both E and F"; bad++ }
    if (bad) exit 1
    printf "checked: pseudo-inverse recalled all 8 letters, storkey %d, hebb %d (noisy E ended nearest %s, noisy F nearest %s)\n", storkey_ok, hebb_ok, near["E"], near["F"]
  }' "$dir/letters.tsv" >&2
