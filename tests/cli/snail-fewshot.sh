#!/usr/bin/env bash
# snail-train --task fewshot and snail-run with a few-shot model, on small synthetic
# pictures: the model does not depend on --threads (4 fixed slices); a resumed run equals an
# uninterrupted one; snail-run's table; the documented errors. The Fashion-MNIST run is
# pipelines/snail-fewshot.sh (its --quick form is tested in tests/cli/snail-fewshot-pipeline.sh).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
# 8 classes x 6 pictures of 16 x 16 (random), labels i mod 8.
expect 0 tensor-rand --shape 48,16,16 --seed 4 -o x.npy
awk 'BEGIN { for (i = 0; i < 48; i++) print i % 8 }' > y.txt
data="--task fewshot -i x.npy --ways 3"
sizes="--channels 2 --filters 2 --key-size 2 --value-size 2 --batch-size 8 --eval-episodes 20 --seed 3 -q"
small="$data --labels y.txt --classes 0,1,2,3 --shots 1 $sizes"
expect 0 snail-train $small --steps 6 --threads 1 -o t1.akm --log t1.tsv --log-every 2 --eval-every 3
expect 0 snail-train $small --steps 6 --threads 2 -o t2.akm
CHECKS=$((CHECKS + 1))
cmp -s t1.akm t2.akm || fail "the model depends on --threads"
check_eq "$(head -1 t1.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\taccuracy\teval_accuracy\teval_embed_nn')" "log header"
expect 0 snail-train $small --steps 3 --threads 1 -o r.akm --log r.tsv --log-every 2 --eval-every 3 --checkpoint-every 2
expect 0 snail-train --steps 6 --threads 1 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1))
cmp -s t1.akm r.akm || fail "resumed model differs from the uninterrupted one"
check_eq "$(cat r.tsv)" "$(cat t1.tsv)" "resumed log"

# snail-run: the held-out classes (4..7) by default; the same seed gives the same table.
expect 0 snail-run --model t1.akm -i x.npy --labels y.txt --episodes 30 --seed 5 -o a.tsv
check_eq "$(cut -f1 a.tsv | tr '\n' ' ')" "agent snail embed-nn pixel-nn chance " "agents"
check_eq "$(awk -F'\t' '$1 == "chance" { print $2 }' a.tsv)" "0.3333" "chance = 1/3"
check_eq "$(awk -F'\t' 'NR > 1 && ($2 < 0 || $2 > 1 || $4 != 30) { bad++ } END { print bad + 0 }' a.tsv)" 0 "accuracies in [0, 1] over 30 episodes"
expect 0 snail-run --model t1.akm -i x.npy --labels y.txt --episodes 30 --seed 5
check_eq "$(cat "$T/out")" "$(cat a.tsv)" "the same seed gives the same table"

# Errors.
expect_err 2 "3-way episodes need 3 training classes" snail-train $data --labels y.txt $sizes --classes 0,1 --steps 1 -o x.akm
expect_err 2 "--classes: expected class ids" snail-train $data --labels y.txt $sizes --classes 0,a --steps 1 -o x.akm
expect_err 2 "--arms is for --task bandit, not fewshot" snail-train $small --arms 3 --steps 1 -o x.akm
expect_err 2 "--shots must be from 1 to 100" snail-train $data --labels y.txt --classes 0,1,2,3 $sizes --shots 0 --steps 1 -o x.akm
awk 'BEGIN { for (i = 0; i < 48; i++) print i % 7 }' > y7.txt
expect_err 1 "class 9 has 0 pictures" snail-train $data --labels y7.txt --classes 0,1,9 --steps 1 -o x.akm
echo 1 2 3 > y123.txt
expect_err 1 "labels must be [48]" snail-train $data --labels y123.txt --steps 1 -o x.akm
no_file x.akm
expect_err 2 "--trace is for bandit models" snail-run --model t1.akm -i x.npy --labels y.txt --trace p.tsv
expect_err 2 "--input is for few-shot models" snail-run -i x.npy
expect_err 2 "--episodes must be >= 1" snail-run --model t1.akm -i x.npy --labels y.txt --episodes 0
expect 0 tensor-rand --shape 48,20,20 --seed 4 -o big.npy
expect_err 1 "pictures of 20 x 20 for a model of 16 x 16" snail-run --model t1.akm -i big.npy --labels y.txt
finish
