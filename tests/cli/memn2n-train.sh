#!/usr/bin/env bash
# labels: slow
# cost: 22
# memn2n-train: a tiny task learned, the log, determinism, configs, joint training, best of
# runs, resume from a checkpoint, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
D="$ATTNKIT_TESTDATA/babi"
help_ok memn2n-train

expect_err 0 "train_error 0," memn2n-train -i "$D" --task 1 --no-ls --no-rn --hops 2 \
  --epochs 15 --seed 3 -o m.akm --log m.tsv
check_eq "$(head -1 m.tsv)" \
  "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\tlinear\ttrain_loss\ttrain_error\tval_loss\tval_error')" "log header"
check_eq "$(($(wc -l <m.tsv) - 1))" 15 "one log row per epoch"
expect 0 memn2n-eval --model m.akm -i "$D"
check_eq "$(awk '$1 == 1 { print $2, $3 }' "$T/out")" "0.0 yes" "task 1 learned"
# same seed, same model, byte for byte; --quiet is silent
expect 0 memn2n-train -q -i "$D" --task 1 --no-ls --no-rn --hops 2 --epochs 15 --seed 3 -o m2.akm --threads 1
[ -s "$T/err" ] && fail "--quiet wrote to stderr"
cmp -s m.akm m2.akm || fail "same seed gave different models"
expect 0 memn2n-train -q -i "$D" --task 1 --no-ls --no-rn --hops 2 --epochs 15 --seed 4 -o m3.akm
cmp -s m.akm m3.akm && fail "another seed gave the same model"
# --memory-size and --valid-fraction: the model file keeps their earlier keys
check_eq "$(grep -ac '^memory: 50$' m.akm) $(grep -ac '^memory-size:' m.akm)" "1 0" "the stored key of --memory-size"
check_eq "$(grep -ac '^val-fraction: 0.1$' m.akm)" 1 "the stored key of --valid-fraction"
# the retired switches --pe --te --ls --rn: gone, their keys stored first, false
check_eq "$(head -c 400 m.akm | tr '\n' ' ' | grep -ac ' pe: false te: false ls: false rn: false batch-size: ')" \
  1 "the retired switches' stored keys"
expect_err 2 "memn2n-train: --rn: did you mean --runs?" memn2n-train -i "$D" --rn -o x.akm

# YAML configuration: the command line wins; --dump-config round-trips; unknown keys fail
printf 'hops: 1\nepochs: 2\nno-pe: true\n' >c.yaml
expect 0 memn2n-train --config c.yaml --hops 2 -i "$D" -o x.akm --dump-config
grep -qx 'hops: 2' "$T/out" || fail "command line did not override the config"
grep -qx 'no-pe: true' "$T/out" || fail "config key not applied"
grep -q '^pe:' "$T/out" && fail "--dump-config has the retired key pe"
no_file x.akm
printf 'hopz: 1\n' >bad.yaml
expect_err 2 "unknown configuration key 'hopz'" memn2n-train --config bad.yaml -i "$D" -o x.akm
no_file x.akm

# joint training on two tasks, Key-Value and layer-wise variants, linear start
expect 0 memn2n-train -i "$D" --task 1,6 --joint --epochs 2 --ls-max-epochs 2 -o j.akm
expect 0 memn2n-eval --model j.akm -i "$D"
check_eq "$(cut -f1 "$T/out" | tr '\n' ' ')" "task 1 6 mean failed " "joint eval rows"
expect 0 memn2n-train -q -i "$D" --task 1 --kv --epochs 2 --ls-max-epochs 2 -o kv.akm
expect 0 memn2n-train -q -i "$D" --task 1 --tying layerwise --epochs 2 --ls-max-epochs 2 -o lw.akm
# the paper's printed position encoding gives a different model than the code's (default)
q2="--task 1 --epochs 2 --ls-max-epochs 2"
expect 0 memn2n-train -q -i "$D" $q2 -o pc.akm
expect 0 memn2n-train -q -i "$D" $q2 --pe-form paper -o pp.akm
cmp -s pc.akm pp.akm && fail "--pe-form paper made no difference"
expect 0 memn2n-train -q -i "$D" $q2 --mask-empty -o pm.akm
cmp -s pc.akm pm.akm && fail "--mask-empty made no difference"
expect 0 memn2n-train -q -i "$D" $q2 --clip-kind l2 -o pl.akm
cmp -s pc.akm pl.akm && fail "--clip-kind l2 made no difference"
expect 0 memn2n-train -q -i "$D" $q2 --pe-length longest -o pj.akm
cmp -s pc.akm pj.akm && fail "--pe-length longest made no difference"
for f in pe te ls rn; do
  expect 0 memn2n-train -q -i "$D" $q2 --no-$f -o no$f.akm
  cmp -s pc.akm no$f.akm && fail "--no-$f made no difference"
done
# structured attention over the hops (--attention unary|crf): another model, the same for any
# --threads; the kind is stored, and memn2n-eval and memn2n-answer read it
expect 0 memn2n-train -q -i "$D" $q2 --attention crf -o crf.akm
cmp -s pc.akm crf.akm && fail "--attention crf made no difference"
expect 0 memn2n-train -q -i "$D" $q2 --attention crf --threads 1 -o crf1.akm
cmp -s crf.akm crf1.akm || fail "--attention crf: another model on 1 thread"
expect 0 memn2n-train -q -i "$D" $q2 --attention unary -o un.akm
cmp -s crf.akm un.akm && fail "--attention unary gave the crf's model"
expect 0 memn2n-eval --model crf.akm -i "$D"
check_eq "$(awk -F'\t' '$1 == 1 && $4 ~ /^[0-9]+\.[0-9]$/ { print "ok" }' "$T/out")" ok "crf model evaluated"
printf '1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n' >s.txt
expect 0 memn2n-answer --model crf.akm -i s.txt
expect_err 2 "attention" memn2n-train -i "$D" --attention binary -o x.akm
expect_err 2 "needs adjacent tying and no Key-Value" memn2n-train -i "$D" --attention crf --kv -o x.akm
expect_err 2 "needs adjacent tying and no Key-Value" memn2n-train -i "$D" --attention unary --tying layerwise -o x.akm
no_file x.akm
expect_err 2 "--clip-kind must be l2 or spectral" memn2n-train -i "$D" --clip-kind max -o x.akm
expect_err 2 "--pe-length must be sentence or longest" memn2n-train -i "$D" --pe-length 9 -o x.akm
no_file x.akm
# joint defaults: 30 epochs of linear start at 0.005, then 60 halved every 15 (the log's lr
# column)
expect 0 memn2n-train -q -i "$D" --task 1,6 --joint --log jd.tsv -o jd.akm
check_eq "$(awk -F'\t' 'NR > 1 { n++ } END { print n }' jd.tsv)" 90 "joint default epochs: 30 + 60"
check_eq "$(awk -F'\t' 'NR == 31 { print $6 }' jd.tsv)" 1 "joint: linear start for 30 epochs"
check_eq "$(awk -F'\t' 'NR == 46 { print $5 }' jd.tsv)" 0.005 "joint default: 0.005 to epoch 15 of the softmax"
check_eq "$(awk -F'\t' 'NR == 47 { print $5 }' jd.tsv)" 0.0025 "joint default halving at epoch 16"
# the rate: 0.01, or 0.005 with --ls in both phases (the paper, the authors' code); --lr
# sets the rate after linear start, --ls-lr the one during it
expect 0 memn2n-train -q -i "$D" --task 1 --ls-max-epochs 2 --epochs 2 --log lr.tsv -o lr.akm
check_eq "$(awk -F'\t' 'NR > 1 { printf "%s/%s ", $5, $6 }' lr.tsv)" "0.005/1 0.005/1 0.005/0 0.005/0 " \
  "linear start: rate 0.005 in both phases"
expect 0 memn2n-train -q -i "$D" --task 1 --ls-max-epochs 2 --epochs 2 --lr 0.02 \
  --ls-lr 0.001 --log lr.tsv -o lr.akm
check_eq "$(awk -F'\t' 'NR > 1 { printf "%s/%s ", $5, $6 }' lr.tsv)" "0.001/1 0.001/1 0.02/0 0.02/0 " \
  "--lr and --ls-lr"
expect 0 memn2n-train -q -i "$D" --task 1 --no-ls --epochs 1 --log lr.tsv -o lr.akm
check_eq "$(awk -F'\t' 'NR == 2 { print $5 }' lr.tsv)" 0.01 "--no-ls: rate 0.01"
# joint with 10k questions a task (5000 or more): the paper's 20 epochs halved every 5, 20 of
# linear start; a generated set of two tasks, 5000 questions each
mkdir -p big
for t in 1 6; do
  awk -v t="$t" 'BEGIN { for (i = 0; i < 2500; i++) { p = i % 2 ? "mary" : "john"; r = i % 3 ? "kitchen" : "garden";
    printf "1 %s went to the %s.\n2 where is %s?\t%s\t1\n3 %s went to the hall.\n4 where is %s?\thall\t3\n", p, r, p, r, p, p } }' \
    >"big/qa${t}_big_train.txt"
done
expect 0 memn2n-train -q -i big --task 1,6 --joint --epochs 6 --embed 4 --hops 1 --log big.tsv -o big.akm
check_eq "$(awk -F'\t' 'NR > 1 { n++ } END { print n }' big.tsv)" 26 "10k joint: 20 epochs of linear start"
check_eq "$(awk -F'\t' 'NR == 22 { print $6 }' big.tsv)" 0 "10k joint: the softmax from epoch 21"
check_eq "$(awk -F'\t' 'NR == 27 { print $5 }' big.tsv)" 0.0025 "10k joint: halved at epoch 6 of the softmax phase"
check_eq "$(awk -F'\t' 'NR == 26 { print $5 }' big.tsv)" 0.005 "10k joint: not before"
# best of runs: the per-run files are removed
expect_err 0 "best of 2 runs" memn2n-train -i "$D" $q2 --runs 2 -o r.akm
[ -e r.akm.run1 ] || [ -e r.akm.run2 ] || [ -e r.akm.run1.ckpt ] && fail "per-run files left behind"
[ -s r.akm ] || fail "no model from --runs"

# --runs interrupted in its second run (Ctrl-C), resumed: the first run is not trained again,
# the second continues, and the best of the two is the uninterrupted choice, byte for byte.
rr="-i $D --task 1 --epochs 60 --ls-max-epochs 5 --runs 2 --seed 3 -q"
expect 0 memn2n-train $rr -o rrfull.akm
# The signal is sent while the run is stopped (SIGSTOP) as soon as its second run's first
# checkpoint exists, 50 steps into 60 epochs: it lands in the second run whatever the
# machine's speed, so the case cannot pass without being exercised (issue 36, item 26).
memn2n-train $rr -o rr.akm --checkpoint-every 50 2>rr.err &
pid=$!
while alive "$pid" && [ ! -e rr.akm.run2.ckpt ]; do sleep 0.02; done
kill -STOP "$pid" 2>/dev/null
kill -INT "$pid" 2>/dev/null
kill -CONT "$pid" 2>/dev/null
wait "$pid"; rc=$?
check_eq "$rc" 130 "interrupted --runs: exit status ($(head -c 300 rr.err))"
grep -q "interrupted at step" rr.err || fail "no interrupt message: $(cat rr.err)"
CHECKS=$((CHECKS + 1))
expect 0 memn2n-train -i "$D" --task 1 --runs 2 --resume -q -o rr.akm
check_eq "$(cmp -s rr.akm rrfull.akm && echo same)" same "--runs resumed in its second run = uninterrupted"
[ -e rr.akm.run1 ] || [ -e rr.akm.run2 ] || [ -e rr.akm.run2.ckpt ] && fail "per-run files left after the resume"

# a checkpointed run extended with --resume = the uninterrupted run
expect 0 memn2n-train -q -i "$D" --task 1 --no-ls --epochs 6 --seed 5 -o full.akm
expect 0 memn2n-train -q -i "$D" --task 1 --no-ls --epochs 3 --seed 5 --checkpoint-every 7 -o part.akm
[ -s part.akm.ckpt ] || fail "no checkpoint"
expect 0 memn2n-train -q -i "$D" --task 1 --epochs 6 --resume -o part.akm
cmp -s full.akm part.akm || fail "resumed run differs from the uninterrupted one"
expect_err 1 "none.akm.ckpt" memn2n-train -i "$D" --task 1 --resume -o none.akm

# errors
expect_err 2 "memn2n-train: " memn2n-train --task 1 -o x.akm
expect_err 2 "bad task list '0'" memn2n-train -i "$D" --task 0 -o x.akm
expect_err 2 "add --joint" memn2n-train -i "$D" --task 1,6 -o x.akm
expect_err 2 "unknown weight tying 'foo'" memn2n-train -i "$D" --tying foo -o x.akm
expect_err 2 "--runs must be at least 1" memn2n-train -i "$D" --runs 0 -o x.akm
expect_err 2 "unknown position-encoding form 'foo'" memn2n-train -i "$D" --pe-form foo -o x.akm
expect_err 2 "out of range" memn2n-train -i "$D" --ls-patience -1 -o x.akm
expect_err 2 "out of range" memn2n-train -i "$D" --anneal-every -2 -o x.akm
expect_err 1 "no qa2_*_train.txt here" memn2n-train -i "$D" --task 2 -o x.akm
mkdir bad && printf '1 Mary went home.\n3 Where is Mary?\thome\t1\n' >bad/qa1_bad_train.txt
expect_err 1 "bad/qa1_bad_train.txt:2: ID 3 follows ID 1" memn2n-train -i bad -o x.akm
expect_err 1 "not a directory" memn2n-train -i nowhere -o x.akm
no_file x.akm
expect 1 memn2n-train -q -i "$D" --epochs 1 -o /dev/full
finish
