#!/usr/bin/env bash
# cost: 140
# seq2seq-train: a short run that learns (dates, characters), reproducibility, --dry-run
# counts, --log columns, --config/--dump-config, checkpoints and --resume (same model as an
# uninterrupted run), the Transformer, aligned files, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
FRA="$ATTNKIT_TESTDATA/translation/fra-small.txt"

help_ok seq2seq-train

seqdata-gen --task dates -n 1500 --seed 3 -o dates.tsv
common=(-i dates.tsv --tokens chars --embed 24 --hidden 48 --lr 0.01 --batch-size 32 --seed 5 --threads 1 -q)
# Runs of N steps, checkpoints at H = N/2. Under the sanitizers, which are slow, 20 steps of a
# smaller model, validated on 30 pairs (the validation's decoding to the length limit took most
# of their time), and no check of how much the model learnt; every equality and error check
# runs.
N=120 H=60
sanitized && N=20 H=10 common=(-i dates.tsv --tokens chars --embed 8 --hidden 16 --lr 0.01 --batch-size 32 --seed 5 --threads 1 -q --valid-fraction 0.02)
expect 0 seq2seq-train "${common[@]}" --steps $N --eval-every $H --log log.tsv -o m1.akm
check_eq "$(head -1 log.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\ttokens\tvalid_loss\tvalid_bleu')" "--log header"
check_eq "$(tail -1 log.tsv | cut -f1)" $N "last log row is step $N"
# It learns: the loss falls a lot, and validation BLEU (characters) is high at the end.
if ! sanitized; then
  CHECKS=$((CHECKS + 1))
  awk -F'\t' 'NR == 2 { first = $3 } END { exit !($3 < first / 3 && $8 > 60) }' log.tsv ||
    fail "did not learn: $(sed -n '2p;$p' log.tsv | tr '\n' '|')"
fi
# Same seed, one thread: the same model file, byte for byte.
expect 0 seq2seq-train "${common[@]}" --steps $N --eval-every $H -o m2.akm
check_eq "$(cmp m1.akm m2.akm && echo same)" same "reproducible model file"

# Checkpoints and resume: stop after H of N steps (a run of --steps H writes the same
# checkpoint at step H), then resume to N: identical to the uninterrupted run.
expect 0 seq2seq-train "${common[@]}" --steps $N --eval-every $H --checkpoint-every $H -o m3.akm
# (The files differ in their stored settings, --checkpoint-every; the weights must not: the
# alignments of 50 translations depend on every weight.)
cut -f1 dates.tsv | head -n 50 > src.txt
same_weights() {
  seq2seq-translate -m "$1" -i src.txt -q --alignments "$1.npz" > "$1.out" &&
  seq2seq-translate -m "$2" -i src.txt -q --alignments "$2.npz" > "$2.out" &&
  cmp -s "$1.npz" "$2.npz" && cmp -s "$1.out" "$2.out" && echo same
}
check_eq "$(same_weights m1.akm m3.akm)" same "checkpointing does not change the model"
expect 0 seq2seq-train "${common[@]}" --steps $H --eval-every $H --checkpoint-every $H -o m4.akm
expect 0 seq2seq-train "${common[@]}" --steps $N --eval-every $H --checkpoint-every $H --resume -o m4.akm
check_eq "$(same_weights m1.akm m4.akm)" same "resumed run ends with the same model"

# --dry-run: per-layer counts; the LSTM layers are 4m(n+m+1).
expect 0 seq2seq-train -i dates.tsv --tokens chars --embed 24 --hidden 48 --dry-run
check_eq "$(awk -F'\t' '$1 == "encoder.l0" { print $2 }' "$T/out")" $((4 * 48 * (24 + 48 + 1))) "encoder.l0 count"
check_eq "$(awk -F'\t' '$1 != "total" && NR > 1 { s += $2 } END { print s }' "$T/out")" \
  "$(awk -F'\t' '$1 == "total" { print $2 }' "$T/out")" "total is the sum of the layers"

# --config / --dump-config: a YAML file sets keys, the command line wins.
printf 'hidden: 40\nembed: 20\ntokens: chars\n' > c.yaml
expect 0 seq2seq-train --config c.yaml --hidden 30 --dump-config
grep -qx 'hidden: 30' "$T/out" || fail "--hidden on the command line beats the file"
grep -qx 'embed: 20' "$T/out" || fail "embed from the file"
expect 0 seq2seq-train -i dates.tsv --config c.yaml --dry-run
check_eq "$(awk -F'\t' '$1 == "encoder.l0" { print $2 }' "$T/out")" $((4 * 40 * (20 + 40 + 1))) "--config sizes"

# The Transformer, on words of fra-small from two aligned files, with a --valid file.
cut -f1 "$FRA" | head -n 1800 > en.txt
cut -f2 "$FRA" | head -n 1800 > fr.txt
tail -n 200 "$FRA" > valid.tsv
expect 0 seq2seq-train --source en.txt --target fr.txt --valid valid.tsv --type transformer --layers 1 \
  --hidden 32 --heads 4 --ff 64 --steps 20 --warmup 10 --schedule inverse-sqrt -q -o t.akm
expect 0 seq2seq-translate -m t.akm -i en.txt -q --len-max 5
check_eq "$(wc -l < "$T/out")" 1800 "transformer translates every line"
expect 0 seq2seq-train --source en.txt --target fr.txt --type transformer --shared-embeddings --dry-run
grep -q '^embedding	' "$T/out" || fail "shared embeddings: one table"

# Structured attention (a chain CRF's marginals) and its sigmoid baseline (Kim et al. 2017):
# each trains to the same model at 1 and 2 threads, and its alignments (the marginals, or the
# sigmoids) lie in [0, 1] with no row forced to sum to 1.
for a in structured sigmoid syntactic; do
  small=(-i dates.tsv --tokens chars --embed 12 --hidden 16 --lr 0.01 --batch-size 32 --seed 7 -q
    --steps 8 --eval-every 8 --valid-fraction 0.02 --attention "$a")
  expect 0 seq2seq-train "${small[@]}" --threads 1 -o "$a-1.akm"
  expect 0 seq2seq-train "${small[@]}" --threads 2 -o "$a-2.akm"
  check_eq "$(same_weights "$a-1.akm" "$a-2.akm")" same "$a: the same model at 1 and 2 threads"
  check_eq "$(tensor-info --no-header "$a-1.akm.npz" |
    awk -F'\t' '!($5 >= 0 && $6 <= 1 && $9 == 0 && $10 == 0) { print "bad " $0 }')" "" "$a: alignments in [0, 1]"
done

# Syntactic attention's arc potentials per step (seq2seq-translate --trace): one S x S array a
# step; refused for a model without it.
head -2 dates.tsv | cut -f1 >two.txt
expect 0 seq2seq-translate -m syntactic-1.akm -i two.txt --len-max 4 --trace tr.npz -q
# (S: the characters and <eos>; T: the tokens emitted, 1 to 4)
check_eq "$(tensor-info --no-header tr.npz | awk -F'\t' '{ split($4, d, "x"); print $2, (d[1] >= 1 && d[1] <= 4), d[2] "x" d[3] }' | tr '\n' ' ')" \
  "$(awk '{ printf "npz:s%d 1 %dx%d ", NR - 1, length($0) + 1, length($0) + 1 }' two.txt)" "--trace: [T, S, S] a line"
expect_err 2 "--trace: the model has no syntactic attention" seq2seq-translate -m sigmoid-1.akm -i two.txt --trace x.npz
no_file x.npz

# Errors: usage (2) and data (1), no model file left behind.
expect_err 2 "give the corpus as -i PAIRS or as --source and --target" seq2seq-train -o x.akm
expect_err 2 "-o MODEL is required" seq2seq-train -i dates.tsv
expect_err 2 "unknown attention 'cosine'" seq2seq-train -i dates.tsv --attention cosine -o x.akm
expect_err 2 "unknown model type 'lstm'" seq2seq-train -i dates.tsv --type lstm -o x.akm
expect_err 2 "--heads (3) must divide the width (hidden, 32)" seq2seq-train -i dates.tsv --type transformer --hidden 32 --heads 3 -o x.akm
expect_err 2 "--tokens: " seq2seq-train -i dates.tsv --tokens bytes -o x.akm
expect_err 2 "--valid-fraction must be in [0, 1)" seq2seq-train -i dates.tsv --valid-fraction 1 -o x.akm
expect_err 2 "--teacher-forcing must be in [0, 1]" seq2seq-train -i dates.tsv --teacher-forcing 2 -o x.akm
printf 'hidden: [1, 2]\n' > bad.yaml
expect 2 seq2seq-train -i dates.tsv --config bad.yaml -o x.akm
no_file x.akm
printf 'a b\tc d\nno tab here\n' > bad.tsv
expect_err 1 "seq2seq-train: bad.tsv:2: no tab" seq2seq-train -i bad.tsv -o x.akm
expect_err 1 "seq2seq-train: missing.tsv" seq2seq-train -i missing.tsv -o x.akm
head -n 5 en.txt > en5.txt
expect_err 1 "seq2seq-train: " seq2seq-train --source en5.txt --target fr.txt -o x.akm
no_file x.akm
expect_err 1 "seq2seq-train: " seq2seq-train "${common[@]}" --steps 2 --resume -o nockpt.akm
# --lr with --resume: the checkpoint's rate is replaced from the checkpoint on; without
# --lr the checkpoint's rate goes on.
lrsize=(--embed 24 --hidden 48)
sanitized && lrsize=(--embed 8 --hidden 16)
lrargs=(-i dates.tsv --tokens chars "${lrsize[@]}" --batch-size 32 --seed 5 --threads 1 -q --log-every 10)
expect 0 seq2seq-train "${lrargs[@]}" --lr 0.01 --steps 20 --checkpoint-every 10 --log lr.tsv -o lr.akm
cp lr.akm.ckpt lr-keep.akm.ckpt
expect 0 seq2seq-train "${lrargs[@]}" --lr 0.002 --steps 30 --checkpoint-every 10 --log lr.tsv --resume -o lr.akm
lrcol() { awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lr") c = i; next } { printf "%s%s", s, $c; s = "," }' "$1"; }
check_eq "$(lrcol lr.tsv)" "0.01,0.01,0.002" "--lr with --resume"
expect 0 seq2seq-train "${lrargs[@]}" --steps 30 --checkpoint-every 10 --log lr-keep.tsv --resume -o lr-keep.akm
check_eq "$(lrcol lr-keep.tsv)" "0.01" "--resume without --lr keeps the checkpoint's rate"
no_file nockpt.akm
# A run that diverges stops with status 1 and writes no model.
expect_err 1 "seq2seq-train: " seq2seq-train -i dates.tsv --tokens chars --steps 30 --lr 1e30 --clip 0 -q -o nan.akm
no_file nan.akm
expect 1 seq2seq-train "${common[@]}" --steps 2 -o /dev/full
# Output paths are checked before the first step: a typo costs nothing.
expect_err 1 "nodir/x.akm" seq2seq-train -i dates.tsv --tokens chars --steps 100000 -q -o nodir/x.akm
expect_err 1 "nodir/log.tsv" seq2seq-train -i dates.tsv --tokens chars --steps 100000 -q --log nodir/log.tsv -o x.akm
expect_err 1 "nodir/c.ckpt" seq2seq-train -i dates.tsv --tokens chars --steps 100000 -q --checkpoint nodir/c.ckpt -o x.akm
no_file x.akm
# Ctrl-C: the run ends after its step with a checkpoint, says how to resume, exits 130; the
# resumed run ends with the model of an uninterrupted one. The signals are sent while the run
# is stopped (SIGSTOP) once its log has rows, so that they land mid-run whatever the
# machine's speed: each case is always exercised (issue 36, item 26).
# A small model: the runs' length, not their size, leaves the signals time to land. (Under the
# sanitizers a run of 150 steps, which they slow enough for the signal to arrive.)
steps=1500
sanitized && steps=150
sig=(-i dates.tsv --tokens chars --embed 8 --hidden 16 --batch-size 32 --seed 6 --threads 1 -q --steps $steps --log-every 1)
expect 0 seq2seq-train "${sig[@]}" --log full.tsv -o full.akm
seq2seq-train "${sig[@]}" --log int.tsv -o int.akm 2>int.err &
pid=$!
rows() { [ -s "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
while alive "$pid" && ! rows int.tsv 5; do sleep 0.02; done
kill -STOP "$pid" 2>/dev/null
kill -INT "$pid" 2>/dev/null
kill -CONT "$pid" 2>/dev/null
wait "$pid"; rc=$?
check_eq "$rc" 130 "exit status after SIGINT ($(head -c 300 int.err))"
grep -q "interrupted at step [0-9]*; .*resume with --resume" int.err || fail "no interrupt message: $(cat int.err)"
CHECKS=$((CHECKS + 1)); [ -s int.akm.ckpt ] || fail "no checkpoint after SIGINT"
no_file int.akm
expect 0 seq2seq-train "${sig[@]}" --log int.tsv --resume -o int.akm
check_eq "$(cmp -s int.akm full.akm && echo same)" same "resumed after SIGINT = uninterrupted"
check_eq "$(cmp -s int.tsv full.tsv && echo same)" same "the resumed log = the uninterrupted log"
# A second signal ends the run at once: no checkpoint written for it, no interrupt message,
# no model. Two signals sent to a stopped process would merge into one (standard signals do
# not queue), so the second is a SIGTERM (handled as SIGINT is): both pending, the kernel
# runs the two handlers nested, and the one that runs second ends the run by its signal:
# status 130 or 143 (128 + 2 or 15), whichever it is, and never the first one's exit.
seq2seq-train "${sig[@]}" --log int2.tsv -o int2.akm 2>int2.err &
pid=$!
while alive "$pid" && ! rows int2.tsv 5; do sleep 0.02; done
kill -STOP "$pid" 2>/dev/null
kill -INT "$pid" 2>/dev/null
kill -TERM "$pid" 2>/dev/null
kill -CONT "$pid" 2>/dev/null
wait "$pid"; rc=$?
check_eq "$(case $rc in 130 | 143) echo by-signal ;; *) echo "$rc" ;; esac)" by-signal \
  "exit status after a second signal ($(head -c 300 int2.err))"
CHECKS=$((CHECKS + 1))
if grep -q "interrupted at step" int2.err; then fail "a second signal still wrote a checkpoint: $(cat int2.err)"; fi
CHECKS=$((CHECKS + 1)); [ -e int2.akm.ckpt ] && fail "a checkpoint after the second signal"
no_file int2.akm
finish
