#!/usr/bin/env bash
# img-train and img-run on a toy set (testdata/imgclass, made by make_imgclass_toy.py):
# every architecture learns it, the same model for any --threads, an exact resume, the
# --eval table and predictions, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
D="$ATTNKIT_TESTDATA/imgclass"
help_ok img-train
help_ok img-run
small="-i $D/train.npz --valid $D/valid.npz --channels 4,8 --hidden 16 --batch-size 30 --lr 0.01 --seed 3 -q"
for a in mlp cnn cnn-sagan cnn-nonlocal; do
  expect 0 img-train $small --arch $a --epochs 6 -o $a.akm --attn-after 1
  expect 0 img-run --model $a.akm -i "$D/valid.npz" --eval
  acc=$(awk -F'\t' '$1 == "all" { print $4 }' "$T/out")
  CHECKS=$((CHECKS + 1))
  awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || fail "$a learned the toy task only to $acc (chance 0.33)"
done
check_eq "$(head -1 "$T/out")" "$(printf 'class\timages\tcorrect\taccuracy')" "--eval header"
check_eq "$(wc -l < "$T/out")" 5 "a row a class and all"
expect 0 img-run --model cnn.akm -i "$D/valid.npz" -o pred.txt
check_eq "$(wc -l < pred.txt)" 150 "a prediction an image"
check_eq "$(sort -u pred.txt | tr '\n' ' ')" "0 1 2 " "predicted classes"
expect 0 img-run --model cnn.akm -i "$D/nolabels.npz" --threads 2
check_eq "$(cat "$T/out")" "$(cat pred.txt)" "predictions without labels, at 2 threads"

# The same model for any --threads; an exact resume.
expect 0 img-train $small --arch cnn-sagan --epochs 2 --threads 1 -o t1.akm --log t1.tsv
expect 0 img-train $small --arch cnn-sagan --epochs 2 --threads 2 -o t2.akm
CHECKS=$((CHECKS + 1)); cmp -s t1.akm t2.akm || fail "the model depends on --threads"
expect 0 img-train $small --arch cnn-sagan --epochs 1 --threads 1 -o r.akm --log r.tsv --checkpoint-every 4
expect 0 img-train -i "$D/train.npz" --valid "$D/valid.npz" --epochs 2 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s t1.akm r.akm || fail "resumed model differs"
check_eq "$(cat r.tsv)" "$(cat t1.tsv)" "resumed log"

# Errors.
expect_err 2 "img-train: --arch: unknown architecture 'rnn' (choose mlp, cnn, cnn-sagan or cnn-nonlocal)" img-train -i "$D/train.npz" --arch rnn -o x.akm
expect_err 2 "img-train: --hidden: '64,' is not a list of sizes" img-train -i "$D/train.npz" --hidden 64, -o x.akm
expect_err 2 "img-train: --attn-after must be a block 1-2" img-train -i "$D/train.npz" --arch cnn-sagan --channels 4,8 --attn-after 3 -o x.akm
expect_err 1 "img-train: $D/nolabels.npz: no array 'labels' [N] in the archive" img-train -i "$D/nolabels.npz" -o x.akm
expect_err 1 "img-train: $D/train.npz: validation images are [6, 10, 10], training images 8x8" img-train -i "$D/train.npz" --valid "$D/big.npz" -o x.akm
no_file x.akm
expect_err 1 "img-run: $D/big.npz: the model classifies images of 8x8, given [6, 10, 10]" img-run --model cnn.akm -i "$D/big.npz"
expect_err 1 "img-run: $D/nolabels.npz: no array 'labels' [N] in the archive" img-run --model cnn.akm -i "$D/nolabels.npz" --eval
expect_err 1 "img-run: $D/train.npz: not an attnkit model file" img-run --model "$D/train.npz" -i "$D/valid.npz"
finish
