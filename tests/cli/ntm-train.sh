#!/usr/bin/env bash
# cost: 30
# ntm-train and ntm-run: a short copy training run that must reduce the cost, the model file,
# configuration (YAML, precedence, --dump-config), checkpoints and an exact resume, the NaN
# guard, data-set training, outputs, traces, evaluation by length, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok ntm-train
help_ok ntm-run

small="--task copy --width 4 --len-max 4 --hidden 32 --memory-rows 16 --memory-cols 8"
# A short run (seconds): Adam, 1500 sequences; the cost in bits per sequence must fall.
expect 0 ntm-train $small --optimizer adam --lr 3e-3 --eps 1e-8 --steps 1500 --log-every 250 \
  --seed 1 -o m.akm --log l.tsv
check_eq "$(head -1 l.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\tbits_per_seq')" "log header"
check_eq "$(wc -l <l.tsv)" 7 "6 log rows"
first=$(awk -F'\t' 'NR == 2 { print $6 }' l.tsv)
last=$(awk -F'\t' 'END { print $6 }' l.tsv)
check_eq "$(awk -v a="$first" -v b="$last" 'BEGIN { print (b < 0.7 * a) }')" 1 \
  "bits per sequence fall ($first -> $last)"
grep -q "ntm-train: step 1500/1500" "$T/err" || fail "no final progress line: $(cat "$T/err")"
CHECKS=$((CHECKS + 1))
# Same seed, same model, byte for byte (--threads 1).
expect 0 ntm-train $small --optimizer adam --lr 3e-3 --eps 1e-8 --steps 1500 --seed 1 -o m2.akm -q --threads 1
CHECKS=$((CHECKS + 1))
cmp -s m.akm m2.akm || fail "same seed gave different models"
[ -s "$T/err" ] && fail "--quiet wrote to stderr: $(cat "$T/err")"

# Evaluation on fresh episodes by length: the short sequences are copied better than chance.
expect 0 ntm-run --model m.akm --eval --count 50 -q
cp "$T/out" ev.tsv
check_eq "$(head -1 ev.tsv)" "$(printf 'length\tsequences\tbits_per_seq\twrong_fraction')" "eval header"
check_eq "$(cut -f1 ev.tsv | tail -n +2 | paste -sd,)" "1,2,3,4,all" "lengths of the training range"
check_eq "$(awk -F'\t' '$1 == "all" { print ($4 < 0.4) }' ev.tsv)" 1 "better than chance (0.5)"
expect 0 ntm-run --model m.akm --eval --lengths 2,8 --count 20 --seed 3 -q
check_eq "$(cut -f1,2 "$T/out" | tail -n +2 | paste -sd' ')" "$(printf '2\t20 8\t20 all\t40')" "--lengths"

# Outputs and the trace of one sequence.
expect 0 seqtask-gen --task copy --width 4 --len-min 3 --len-max 3 --count 2 --seed 5 -o d.npz
expect_err 1 "ntm-run: d.npz: input is [2, 7, 5], the model takes steps x 5" ntm-run --model m.akm -i d.npz:inputs
expect 0 tensor-convert -i d.npz:inputs -o seq.npy
expect 0 sh -c 'tensor-convert -i d.npz:inputs | head -7 > one.txt'
expect 0 ntm-run --model m.akm -i one.txt --trace tr.npz -o y.txt
check_eq "$(wc -l <y.txt) $(awk '{ print NF }' y.txt | sort -u)" "7 4" "outputs: 7 steps x 4"
check_eq "$(awk '{ for (i = 1; i <= NF; i++) if ($i < 0 || $i > 1) bad++ } END { print bad + 0 }' y.txt)" 0 \
  "outputs are probabilities"
expect 0 tensor-info tr.npz
for a in "read0	<f4	7x16" "write0	<f4	7x16" "erase0	<f4	7x8" "add0	<f4	7x8" "memory	<f4	7x16x8" "outputs	<f4	7x4"; do
  CHECKS=$((CHECKS + 1)); grep -qF "npz:$a" "$T/out" || fail "trace lacks $a: $(cat "$T/out")"
done
expect 0 tensor-convert -i tr.npz:write0
check_eq "$(awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (s < 0.9999 || s > 1.0001) bad++ } END { print bad + 0 }' "$T/out")" 0 \
  "write weightings sum to 1"
expect 0 attn-plot -i tr.npz:write0 -o w.png
# A data set: outputs for every episode, evaluation on its episodes.
expect 0 ntm-run --model m.akm -i d.npz -o yd.npy
expect 0 tensor-info yd.npy
grep -q "2x7x4" "$T/out" || fail "data-set outputs shape: $(cat "$T/out")"
CHECKS=$((CHECKS + 1))
expect 0 ntm-run --model m.akm --eval -i d.npz -q
check_eq "$(tail -1 "$T/out" | cut -f1,2)" "$(printf 'all\t2')" "eval on a data set"

# Training on a data set.
expect 0 seqtask-gen --task copy --width 4 --len-max 4 --count 20 --seed 2 -o train.npz
expect 0 ntm-train -i train.npz --hidden 16 --memory-rows 8 --memory-cols 4 --steps 30 -o dm.akm -q
# Batches over a shuffled data set, resumed across an epoch boundary: the same model.
dargs="-i train.npz --hidden 16 --memory-rows 8 --memory-cols 4 --batch-size 4 --threads 1 -q"
expect 0 ntm-train $dargs --steps 12 -o db.akm --checkpoint-every 4
expect 0 ntm-train $dargs --steps 4 -o db2.akm --checkpoint-every 4
expect 0 ntm-train -i train.npz --steps 12 -o db2.akm --checkpoint-every 4 --threads 1 -q --resume
CHECKS=$((CHECKS + 1))
cmp -s db.akm db2.akm || fail "data-set run resumed after an epoch boundary differs"
expect_err 2 "ntm-run: the model was trained on a data file: give --eval -i DATA.npz" ntm-run --model dm.akm --eval

# Configuration: YAML keys, the command line wins, --dump-config round-trips.
printf 'task: copy\nwidth: 4\nlen-max: 4\nhidden: 16\nmemory-rows: 8\nmemory-cols: 4\nsteps: 7\n' >c.yaml
expect 0 ntm-train --config c.yaml --steps 5 --dump-config
cp "$T/out" dump.yaml
grep -qx "steps: 5" dump.yaml || fail "command line does not override YAML: $(cat dump.yaml)"
grep -qx "memory-rows: 8" dump.yaml || fail "YAML key not applied"
CHECKS=$((CHECKS + 2))
expect 0 ntm-train --config dump.yaml --dump-config
check_eq "$(cat "$T/out")" "$(cat dump.yaml)" "--dump-config round-trips"
expect 0 ntm-train --config c.yaml -o cm.akm -q
# The model file keeps the key's stored name (doc/conventions.md): max-len, not len-max.
check_eq "$(grep -ac '^max-len: 4$' cm.akm) $(grep -ac '^len-max:' cm.akm)" "1 0" "the stored key of --len-max"
printf 'task: copy\nmemroy-rows: 8\n' >bad.yaml
expect_err 2 "ntm-train: bad.yaml:2: " ntm-train --config bad.yaml -o x.akm
no_file x.akm

# Checkpoints and an exact resume: 40 steps straight = 20, killed, resumed to 40.
args="$small --steps 40 --seed 4 --threads 1 -q"
expect 0 ntm-train $args -o full.akm --log full.tsv --log-every 10 --checkpoint-every 10
expect 0 ntm-train $small --steps 20 --seed 4 --threads 1 -q -o part.akm --log part.tsv --log-every 10 --checkpoint-every 10
[ -e part.akm.ckpt ] || fail "no checkpoint"
CHECKS=$((CHECKS + 1))
expect 0 ntm-train --steps 40 --threads 1 -q -o part.akm --log part.tsv --log-every 10 --checkpoint-every 10 --resume
CHECKS=$((CHECKS + 1))
cmp -s full.akm part.akm || fail "resumed model differs from the uninterrupted one"
check_eq "$(cat part.tsv)" "$(cat full.tsv)" "resumed log equals the uninterrupted log"
expect 0 ntm-train $small --steps 6 -q -o named.akm --checkpoint-every 3 --checkpoint my.ckpt
CHECKS=$((CHECKS + 1))
[ -s my.ckpt ] && [ ! -e named.akm.ckpt ] || fail "--checkpoint FILE not used"
expect 0 ntm-train --steps 9 -q -o named.akm --checkpoint my.ckpt --resume
expect_err 1 "ntm-train: nockpt.akm.ckpt: " ntm-train $small --steps 5 -o nockpt.akm --resume
# A --lr given with --resume replaces the checkpoint's rate from the checkpoint on; without
# it the checkpoint's rate goes on.
expect 0 ntm-train $small --steps 20 --seed 4 --threads 1 -q -o lr.akm --log lr.tsv --log-every 10 --checkpoint-every 10 --lr 2e-4
cp lr.akm.ckpt lr2.ckpt
expect 0 ntm-train --steps 30 --threads 1 -q -o lr.akm --log lr.tsv --log-every 10 --resume --lr 5e-5
check_eq "$(cut -f5 lr.tsv | paste -sd,)" "lr,2e-04,2e-04,5e-05" "--lr with --resume"
expect 0 ntm-train --steps 30 --threads 1 -q -o lr2.akm --checkpoint lr2.ckpt --log lr2.tsv --log-every 10 --resume
check_eq "$(tail -1 lr2.tsv | cut -f5)" "2e-04" "--resume without --lr keeps the checkpoint's rate"

# --write-penalty: the cost gains λ × the writes' change of stored values. 0 is the run without
# it, byte for byte; λ > 0 trains another model whose writes change stored values less (the
# trace of one sequence: Σ |M_t−1| |M_t − M_t−1| over the steps, memory starting at 1e-6), also
# when given on --resume.
expect 0 ntm-train $small --optimizer adam --lr 3e-3 --eps 1e-8 --steps 1500 --seed 1 -o wp0.akm -q --threads 1 --write-penalty 0
CHECKS=$((CHECKS + 1))
cmp -s m2.akm wp0.akm || fail "--write-penalty 0 changed the model"
expect 0 ntm-train $small --optimizer adam --lr 3e-3 --eps 1e-8 --steps 1500 --seed 1 -o wp.akm -q --threads 1 --write-penalty 0.05
change() {  # Σ_t Σ_ij |M_t−1| |M_t − M_t−1| of a trace's memory [T, N, M] as text (a blank line between steps)
  tensor-convert -i "$1":memory | awk 'NF == 0 { t++; r = 0; next }
    { r++; for (j = 1; j <= NF; j++) { p = (t ? prev[r, j] : 1e-6); d = $j - p; s += (p < 0 ? -p : p) * (d < 0 ? -d : d); prev[r, j] = $j } }
    END { printf "%.6f\n", s }'
}
expect 0 ntm-run --model wp.akm -i one.txt --trace trwp.npz -o ywp.txt
c0=$(change tr.npz) c1=$(change trwp.npz)
check_eq "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print (b < 0.7 * a) }')" 1 "--write-penalty: memory change falls ($c0 -> $c1)"
expect 0 ntm-train $small --steps 10 --seed 4 --threads 1 -q -o wr.akm --checkpoint-every 10 --checkpoint wr1.ckpt
cp wr1.ckpt wr2.ckpt
expect 0 ntm-train --steps 30 --threads 1 -q -o wr1.akm --checkpoint wr1.ckpt --resume --write-penalty 0.05
expect 0 ntm-train --steps 30 --threads 1 -q -o wr2.akm --checkpoint wr2.ckpt --resume
CHECKS=$((CHECKS + 1))
cmp -s wr1.akm wr2.akm && fail "--write-penalty given with --resume had no effect"
expect_err 2 "ntm-train: --write-penalty must be >= 0" ntm-train --task copy --write-penalty -1 -o x.akm

# The NaN guard: an absurd learning rate blows up; the run fails naming the step, no model.
expect_err 1 "at step" ntm-train $small --optimizer adam --lr 1e30 --clip-value 0 --steps 200 -o nan.akm
grep -q "became" "$T/err" || fail "NaN guard message: $(cat "$T/err")"
CHECKS=$((CHECKS + 1))
no_file nan.akm

# Errors.
expect_err 2 "ntm-train: give either --task or -i" ntm-train -o x.akm
expect_err 2 "ntm-train: give either --task or -i" ntm-train --task copy -i train.npz -o x.akm
expect_err 2 "ntm-train: -o MODEL is required" ntm-train --task copy
expect_err 2 "ntm-train: unknown task 'sort' (choose copy, repeat-copy or associative-recall)" ntm-train --task sort -o x.akm
expect_err 2 "ntm-train: --controller: unknown kind 'gru' (lstm, feedforward)" ntm-train --task copy --controller gru -o x.akm
expect_err 2 "ntm-train: --memory-init: unknown kind 'zero'" ntm-train --task copy --memory-init zero -o x.akm
expect_err 2 "ntm-train: --optimizer: unknown optimiser 'sgd' (rmsprop, adam)" ntm-train --task copy --optimizer sgd -o x.akm
expect_err 2 "ntm-train: --steps must be at least 1" ntm-train --task copy --steps 0 -o x.akm
expect_err 2 "ntm-train: --shift-range must be >= 0 with 2R+1 <= memory rows" ntm-train --task copy --memory-rows 2 -o x.akm
no_file x.akm
expect_err 1 "ntm-train: nothere.npz: " ntm-train -i nothere.npz -o x.akm
expect 0 tensor-rand --shape 3,3 -o r.npz:x
expect_err 1 "ntm-train: r.npz: no array 'inputs'" ntm-train -i r.npz -o x.akm
no_file x.akm
expect_err 1 "ntm-train: /dev/full: " ntm-train $small --steps 3 -o /dev/full

expect_err 2 "ntm-run: the option '--model' is required" ntm-run -i one.txt
expect_err 2 "ntm-run: give -i INPUT (or --eval)" ntm-run --model m.akm
expect_err 2 "ntm-run: --lengths: 'x' is not a whole number" ntm-run --model m.akm --eval --lengths 2,x
expect_err 2 "ntm-run: --count must be >= 1" ntm-run --model m.akm --eval --count 0
expect_err 1 "ntm-run: nomodel.akm: " ntm-run --model nomodel.akm -i one.txt
head -c 100 m.akm >trunc.akm
expect_err 1 "ntm-run: trunc.akm: " ntm-run --model trunc.akm -i one.txt
expect_err 1 "ntm-run: one.txt: not an attnkit model file" ntm-run --model one.txt -i one.txt
echo "1 0 1" >narrow.txt
expect_err 1 "ntm-run: narrow.txt: input is [1, 3], the model takes steps x 5" ntm-run --model m.akm -i narrow.txt -o o.txt
no_file o.txt
expect_err 1 "ntm-run: /dev/full: write error" ntm-run --model m.akm -i one.txt -o /dev/full
expect_err 1 "ntm-run: nodir/t.npz: cannot create" ntm-run --model m.akm -i one.txt --trace nodir/t.npz -o o.txt
no_file o.txt
# ntm-run --shard K/N: slices of a data set's episodes (text; a later slice starts with the
# blank line between two episodes); not with --eval, --trace, one sequence or .npy.
expect 0 seqtask-gen --task copy --width 4 --len-min 2 --len-max 4 --count 7 --seed 6 -o d7.npz
shard_ok ntm-run --model m.akm -i d7.npz
expect_err 2 "--shard does not apply to --eval" ntm-run --model m.akm -i d7.npz --eval --shard 1/2
expect_err 2 "--shard does not apply to --trace" ntm-run --model m.akm -i d7.npz --trace t.npz --shard 1/2
expect_err 2 "--shard takes the episodes of a data set" ntm-run --model m.akm -i one.txt --shard 1/2
expect_err 2 "--shard writes text" ntm-run --model m.akm -i d7.npz -o y.npy --shard 1/2
# The training layer's manners, here too: output paths checked before the first step; a run
# extended from its end checkpoint (7 steps, not a multiple of --log-every 5) ends with the
# model of a run never stopped. (Logs resumed after kills between two rows: kill-resume.sh.)
expect_err 1 "nodir/x.akm" ntm-train $small --steps 100000 -q -o nodir/x.akm
expect_err 1 "nodir/l.tsv" ntm-train $small --steps 100000 -q --log nodir/l.tsv -o x.akm
no_file x.akm
cad="$small --seed 8 --threads 1 -q --checkpoint-every 7 --log-every 5"
expect 0 ntm-train $cad --steps 21 -o c1.akm --log c1.tsv
expect 0 ntm-train $cad --steps 7 -o c2.akm --log c2.tsv
expect 0 ntm-train $cad --steps 21 -o c2.akm --log c2.tsv --resume
check_eq "$(grep -c . c2.tsv)" "$(($(grep -c . c1.tsv) + 1))" "the extended log: the first run's closing row at step 7, then the same steps"
check_eq "$(cmp -s c1.akm c2.akm && echo same)" same "resumed model = uninterrupted model"
# The old spellings are gone (doc/conventions.md): usage errors.
expect_err 2 "unrecognised option '--max-len'" ntm-train $small --steps 3 --max-len 2 -o x.akm
expect_err 2 "unrecognised option '--clip-norm'" ntm-train $small --steps 3 --clip-norm 5 -o x.akm
no_file x.akm
: >empty.npz
expect_err 1 "empty.npz: not a data set from seqtask-gen" ntm-run --model m.akm --eval -i empty.npz
expect_err 1 "m.akm: not a data set from seqtask-gen" ntm-run --model m.akm --eval -i m.akm
finish
