#!/usr/bin/env bash
# ram-train and ram-run: the recurrent attention model. The model does not depend on
# --threads (2 fixed slices), with 1 or 2 glimpse paths an image; a resumed run equals an uninterrupted one; predictions, --eval,
# --trace and --draw; Monte-Carlo samples; the documented errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
D="$ATTNKIT_TESTDATA/ram"
data="-i $D/corner-train.npz --valid $D/corner-test.npz"
small="$data --glimpse-size 3 --glimpse-scales 2 --glimpses 3 --glimpse-hidden 8 --hidden 16 --batch-size 16 --seed 3 -q"
expect 0 ram-train $small --steps 24 --threads 1 -o t1.akm --log t1.tsv --log-every 8
expect 0 ram-train $small --steps 24 --threads 2 -o t2.akm
CHECKS=$((CHECKS + 1))
cmp -s t1.akm t2.akm || fail "the model depends on --threads"
check_eq "$(head -1 t1.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\treward\tsaturated\tloc_norm\tvalid_error')" "log header"
check_eq "$(cut -f1 t1.tsv | tr "\n" " ")" "step 8 16 24 " "log rows (every 8 steps; the evaluation at the epoch's end, 16, in its row)"
# Resume: 16 steps, checkpointed, continued to 24 = 24 straight.
expect 0 ram-train $small --steps 16 --threads 1 -o r.akm --log r.tsv --log-every 8 --checkpoint-every 4
expect 0 ram-train $data --steps 24 --threads 2 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1))
cmp -s t1.akm r.akm || fail "resumed model differs from the uninterrupted one"
check_eq "$(cat r.tsv)" "$(cat t1.tsv)" "resumed log"
# The location policy's training options: 2 paths an image (leave-one-out baseline), the
# probability reward, normalised advantages, the locator's own learning rate; still the same
# model for any --threads; a slower locator changes its weights less.
pol="--loc-samples 2 --reward prob --normalize-advantage"
expect 0 ram-train $small --steps 8 --threads 1 $pol -o m1.akm --log m1.tsv --log-every 8
expect 0 ram-train $small --steps 8 --threads 2 $pol -o m2.akm
CHECKS=$((CHECKS + 1))
cmp -s m1.akm m2.akm || fail "the model with --loc-samples 2 depends on --threads"
expect 0 ram-train $small --steps 8 --threads 1 $pol --loc-lr 1e-6 -o m3.akm --log m3.tsv --log-every 8
init_norm() { awk -F'\t' 'NR == 2 { print $8 }' "$1"; }
check_eq "$(awk -v a="$(init_norm m1.tsv)" -v b="$(init_norm m3.tsv)" 'BEGIN { print (a != b) }')" 1 "--loc-lr changes the locator's steps"
check_eq "$(awk -F'\t' 'NR == 2 { print ($6 >= 0 && $6 <= 1 && $7 >= 0 && $7 <= 1 && $8 > 0) }' m1.tsv)" 1 "reward and saturated are shares, loc_norm positive"
# Both cores and the ablation train.
expect 0 ram-train $small --steps 4 --core lstm -o lstm.akm
expect 0 ram-train $small --steps 4 --random-glimpses --loc-std 0.2 -o rand.akm
# The convolutional glimpse network trains, and ram-run reads it back.
expect 0 ram-train $small --steps 4 --glimpse-net conv --glimpse-channels 2 -o conv.akm
expect 0 ram-run --model conv.akm -i "$D/corner-test.npz" --seed 5 --eval

# ram-run: a row a test image; the error; the same numbers for any --threads.
expect 0 ram-run --model t1.akm -i "$D/corner-test.npz" --seed 5 --threads 1 -o p1.tsv --trace tr.tsv --draw path.png --draw-count 3
expect 0 ram-run --model t1.akm -i "$D/corner-test.npz" --seed 5 --threads 2 -o p2.tsv --trace tr2.tsv
CHECKS=$((CHECKS + 1))
cmp -s p1.tsv p2.tsv || fail "predictions depend on --threads"
CHECKS=$((CHECKS + 1))
cmp -s tr.tsv tr2.tsv || fail "the trace depends on --threads"
check_eq "$(head -1 p1.tsv)" "$(printf 'image\tlabel\tpredicted\tprobability')" "predictions header"
check_eq "$(grep -c . p1.tsv)" 101 "a row per image"
check_eq "$(head -1 tr.tsv)" "$(printf 'image\tglimpse\tx\ty\ttop1\tleft1\tside1\ttop2\tleft2\tside2')" "trace header"
check_eq "$(grep -c . tr.tsv)" 301 "trace rows (100 images x 3 glimpses + header)"
# Locations in [-1, 1]; boxes centred on them: side 3 and 6; top = floor((y+1)*6 - side/2 + 1/2).
check_eq "$(awk -F'\t' 'NR > 1 && ($3 < -1 || $3 > 1 || $4 < -1 || $4 > 1 || $7 != 3 || $10 != 6) { bad++ } END { print bad + 0 }' tr.tsv)" 0 "trace locations and sides"
check_eq "$(awk -F'\t' 'function fl(v) { return v == int(v) ? v : (v < 0 ? int(v) - 1 : int(v)) } NR > 1 && ($5 != fl(($4 + 1) * 6 - 1.5 + 0.5) || $9 != fl(($3 + 1) * 6 - 3 + 0.5)) { bad++ } END { print bad + 0 }' tr.tsv)" 0 "trace boxes"
check_eq "$(head -c 8 path.png | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a" "the picture is a PNG"
expect 0 ram-run --model t1.akm -i "$D/corner-test.npz" --seed 5 --eval
check_eq "$(head -1 "$T/out")" "$(printf 'images\tsamples\terror\taccuracy')" "eval header"
err=$(awk -F'\t' 'NR == 2 { print $3 }' "$T/out")
check_eq "$(awk -F'\t' 'NR > 1 && $2 != $3 { w++ } END { printf "%.4f", w / 100 }' p1.tsv)" "$err" "the error is the predictions' share of wrong rows"
# Monte-Carlo samples average probabilities: other numbers than one sample.
expect 0 ram-run --model t1.akm -i "$D/corner-test.npz" --seed 5 --samples 4 -o p4.tsv
CHECKS=$((CHECKS + 1))
cmp -s p1.tsv p4.tsv && fail "--samples 4 gave the same probabilities as 1"

# Errors.
expect_err 2 "core" ram-train $data -q --steps 1 --core gru -o x.akm
no_file x.akm
expect_err 2 "glimpses must be from 1 to 64" ram-train $data -q --steps 1 --glimpses 0 -o x.akm
expect_err 2 "glimpse-net" ram-train $data -q --steps 1 --glimpse-net cnn -o x.akm
expect_err 2 "--glimpse-channels: channels: expected comma-separated" ram-train $data -q --steps 1 --glimpse-net conv --glimpse-channels 2,x -o x.akm
expect_err 2 "glimpse-size 3 is too small for 2 conv blocks" ram-train $data -q --steps 1 --glimpse-size 3 --glimpse-net conv --glimpse-channels 2,2 -o x.akm
expect_err 2 "loc-std must be in (0, 10]" ram-train $data -q --steps 1 --loc-std 0 -o x.akm
expect_err 2 "loc-samples must be from 1 to 64" ram-train $data -q --steps 1 --loc-samples 0 -o x.akm
expect_err 2 "reward" ram-train $data -q --steps 1 --reward accuracy -o x.akm
expect_err 2 "--loc-lr must be > 0" ram-train $data -q --steps 1 --loc-lr 0 -o x.akm
no_file x.akm
expect_err 2 "glimpse-size must be from 1 to 256" ram-train $data -q --steps 1 --glimpse-size 0 -o x.akm
expect_err 2 "must be at most 4096 pixels wide" ram-train $data -q --steps 1 --glimpse-size 256 --glimpse-scales 8 --glimpse-factor 8 -o x.akm
expect_err 1 "nolabels.npz: no array 'labels' [N] in the archive" ram-train -i "$D/nolabels.npz" --steps 1 -o x.akm
no_file x.akm
expect_err 1 "the validation images are" ram-train -i "$D/corner-train.npz" --valid "$D/size10.npz" --steps 1 -o x.akm
expect_err 1 "missing.npz" ram-train -i missing.npz --steps 1 -o x.akm
expect_err 2 "the option '--input' is required" ram-train --steps 1 -o x.akm
expect_err 1 "size10.npz: the images are 10 x 10 pixels; the model reads 12 x 12" ram-run --model t1.akm -i "$D/size10.npz"
expect_err 1 "label7.npz: label 3 (7) is not one of the model's 2 classes" ram-run --model t1.akm -i "$D/label7.npz"
expect_err 2 "--samples must be >= 1" ram-run --model t1.akm -i "$D/corner-test.npz" --samples 0
expect_err 2 "--draw-count must be >= 1" ram-run --model t1.akm -i "$D/corner-test.npz" --draw-count 0
expect_err 2 "--draw: the file must end in .png" ram-run --model t1.akm -i "$D/corner-test.npz" --draw x.svg
expect_err 1 "nothing.akm" ram-run --model nothing.akm -i "$D/corner-test.npz"
expect 0 tensor-rand --shape 2 -o notmodel.npy
expect_err 1 "not an attnkit model file" ram-run --model notmodel.npy -i "$D/corner-test.npz"
expect_err 1 "/nonexistent/dir/p.tsv: cannot create a file" ram-run --model t1.akm -i "$D/corner-test.npz" -o /nonexistent/dir/p.tsv
finish
