#!/usr/bin/env bash
# cost: 21
# image-gen over Debian's Fashion-MNIST (skipped when absent): every task's arrays and shapes,
# plain = the IDX's pixels / 255, seeds reproducible, pairs balanced, scenes' captions naming
# their cells and the compositional split, every documented error (no output file left).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
help_ok image-gen
F=/usr/share/datasets/fashion-mnist
# Errors that need no data set come first.
expect_err 2 "image-gen: --task: unknown task 'scene' (choose plain, translated, cluttered, pairs or scenes)" image-gen --task scene -o x.npz
expect_err 2 "image-gen: --count must be >= 1" image-gen --task pairs --count 0 -o x.npz
expect_err 2 "image-gen: --canvas must be >= 56 (two items side by side)" image-gen --task pairs --canvas 50 -o x.npz
expect_err 2 "image-gen: --canvas must be >= 28 + clutter-size (40)" image-gen --task cluttered --clutter-size 12 --canvas 39 -o x.npz
expect_err 2 "image-gen: --clutter-size must be in 1..28" image-gen --task cluttered --clutter-size 0 -o x.npz
expect_err 2 "image-gen: --canvas: scenes are 56x56" image-gen --task scenes --canvas 64 -o x.npz
expect_err 2 "image-gen: --split: unknown split 'valid' (choose train or test)" image-gen --task plain --split valid -o x.npz
expect_err 2 "image-gen: --captions: only scenes have captions" image-gen --task pairs --captions c.tsv -o x.npz
expect_err 2 "image-gen: --clutter/--clutter-size: only cluttered has clutter" image-gen --task translated --clutter 3 -o x.npz
expect_err 2 "image-gen: --sample: only plain takes a sample of the split" image-gen --task pairs --sample -o x.npz
expect_err 2 "image-gen: -o: the output must be a FILE.npz" image-gen --task pairs -o x.npy
expect_err 2 "image-gen: --captions: the captions must be a FILE.tsv" image-gen --task scenes --captions c.txt -o x.npz
expect_err 1 "image-gen: /nonexistent/t10k-images-idx3-ubyte.gz: no such file (Fashion-MNIST: install the Debian package dataset-fashion-mnist" image-gen --task pairs --split test --fmnist /nonexistent -o x.npz
no_file x.npz
expect_err 1 "image-gen: no/x.npz" image-gen --task pairs --fmnist /nonexistent -o no/x.npz
if [ ! -f "$F/t10k-images-idx3-ubyte.gz" ]; then
  echo "SKIPPED: the rest needs Fashion-MNIST in $F (the Debian package dataset-fashion-mnist; make deps)"
  finish
fi
shape() { expect 0 tensor-info "$1"; awk -F'\t' 'NR == 2 { print $4 }' "$T/out"; }

# plain: the first N test images / 255 and their labels.
expect 0 image-gen --task plain --split test --count 3 -o p.npz
check_eq "$(shape p.npz:images)" 3x28x28 "plain images"
tensor-convert "$F/t10k-images-idx3-ubyte.gz" -o all.npy
expect 0 tensor-convert p.npz:images --reshape 3,784 -o p.txt
tensor-convert all.npy --reshape 10000,784 -o - | head -3 | awk '{ for (i = 1; i <= NF; i++) $i = $i / 255; print }' > want.txt
close_enough p.txt want.txt 1e-6
expect 0 tensor-convert p.npz:labels -o -
check_eq "$(cat "$T/out")" "$(tensor-convert "$F/t10k-labels-idx1-ubyte.gz" -o - | awk '{ print $1, $2, $3 }')" "plain labels"
expect_err 2 "image-gen: --count 10001 is more than the 10000 items of the split" image-gen --task plain --split test --count 10001 -o big.npz
no_file big.npz

# translated / cluttered: shapes, boxes inside the canvas, the same seed the same file.
expect 0 image-gen --task cluttered --split test --count 200 --seed 4 -o c1.npz
expect 0 image-gen --task cluttered --split test --count 200 --seed 4 -o c2.npz -q
CHECKS=$((CHECKS + 1)); cmp -s c1.npz c2.npz || fail "the same seed gave other images"
expect 0 image-gen --task cluttered --split test --count 200 --seed 5 -o c3.npz
CHECKS=$((CHECKS + 1)); cmp -s c1.npz c3.npz && fail "another seed gave the same images"
check_eq "$(shape c1.npz:images)" 200x60x60 "cluttered images"
check_eq "$(shape c1.npz:boxes)" 200x4 "boxes"
tensor-convert c1.npz:boxes -o b.txt
check_eq "$(awk '$1 < 0 || $2 < 0 || $1 + $3 > 60 || $2 + $4 > 60 || $3 < 1 || $4 < 1 { bad++ } END { print bad + 0 }' b.txt)" 0 "boxes inside the canvas"
expect 0 image-gen --task translated --split test --count 10 --canvas 40 -o t.npz
check_eq "$(shape t.npz:images)" 10x40x40 "translated images"
# The pixels outside a translated item's box are background.
tensor-convert t.npz:images --reshape 400,40 -o ti.txt
tensor-convert t.npz:boxes -o tb.txt
check_eq "$(awk 'NR == FNR { t[NR - 1] = $1; l[NR - 1] = $2; h[NR - 1] = $3; w[NR - 1] = $4; next }
  { i = int((FNR - 1) / 40); r = (FNR - 1) % 40
    for (k = 0; k < 40; k++) if ($(k + 1) != 0 && (r < t[i] || r >= t[i] + h[i] || k < l[i] || k >= l[i] + w[i])) bad++ }
  END { print bad + 0 }' tb.txt ti.txt)" 0 "nothing outside the boxes"

# pairs: balanced labels.
expect 0 image-gen --task pairs --split test --count 101 -o pr.npz
check_eq "$(shape pr.npz:images)" 101x64x64 "pairs images"
check_eq "$(tensor-convert pr.npz:labels -o - | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s }')" 50 "half the pairs same"

# scenes: captions name the cells; the compositional split.
for s in train test; do
  expect 0 image-gen --task scenes --split $s --count 300 --seed 2 -o s-$s.npz --captions s-$s.tsv
  check_eq "$(shape s-$s.npz:cells)" 300x4 "cells"
  check_eq "$(wc -l < s-$s.tsv)" 300 "a caption an image"
  tensor-convert s-$s.npz:cells -o cells-$s.txt
  names="tshirt trouser pullover dress coat sandal shirt sneaker bag boot"
  check_eq "$(paste cells-$s.txt s-$s.tsv | awk -F'\t' -v names="$names" '
    BEGIN { split(names, nm, " ") }
    { split($1, c, " "); nt = split($2, tok, " "); nc = split($3, tc, " ")
      if (nt != nc) bad++
      for (i = 1; i <= nt; i++) if (tc[i] >= 0 && tok[i] != nm[c[tc[i] + 1] + 1]) bad++
      n = 0; for (k = 1; k <= 4; k++) if (c[k] >= 0) n++
      m = 0; for (i = 1; i <= nt; i++) if (tc[i] >= 0) m++
      if (n != m || n < 2 || n > 3) bad++ }
    END { print bad + 0 }')" 0 "$s: nouns name their cells"
done
held='$1 == 1 || $2 == 8 || $3 == 7 || $4 == 3'
check_eq "$(awk "$held { n++ } END { print n + 0 }" cells-train.txt)" 0 "train scenes hold no held-out pair"
check_eq "$(awk "$held { n++ } END { print n + 0 }" cells-test.txt)" 300 "every test scene holds one"

# An unwritable captions file: nothing read or written.
expect_err 1 "image-gen: no/c.tsv" image-gen --task scenes --split test -o s.npz --captions no/c.tsv
no_file s.npz
finish
