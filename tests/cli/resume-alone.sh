#!/usr/bin/env bash
# labels: slow
# cost: 60
# --resume in every trainer (issue 36): a run stopped by Ctrl-C continues with
# `TRAINER --resume -o MODEL` alone: the checkpoint holds the run's data files (-i, --valid,
# ...), its --log and its configuration. A run resumed alone, stopped again and resumed
# ends with the model and the log of the same checkpoint resumed with every path given.
# The runs are far too long to finish, and each signal waits for log rows (steps taken), so
# every case is exercised whatever the machine's speed.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
unset ATTNKIT_THREADS OMP_NUM_THREADS
D=$ATTNKIT_TESTDATA
expect 0 seqdata-gen --task dates -n 200 --seed 3 -o dates.tsv
expect 0 seqdata-gen --task dates -n 40 --seed 4 -o dates-v.tsv
expect 0 ptrtask-gen --task sort --n 4 --count 200 --seed 1 -o sort.txt
expect 0 ptrtask-gen --task sort --n 4 --count 40 --seed 2 -o sort-v.txt
expect 0 transduce-gen --task reverse --len-min 2 --len-max 5 --symbols 6 --count 200 --seed 1 -o rev.tsv
expect 0 transduce-gen --task reverse --len-min 2 --len-max 5 --symbols 6 --count 40 --seed 2 -o rev-v.tsv
tiny_trainer_data

# NAME | the trainer's command with every path, without -o, --log and the run's length.
trainers=(
  "seq2seq|seq2seq-train -i dates.tsv --valid dates-v.tsv --tokens chars --embed 8 --hidden 16 --batch-size 20 --seed 4"
  "ptr|ptr-train --task sort -i sort.txt --valid sort-v.txt --embed 8 --hidden 16 --batch-size 20 --seed 3"
  "stackmem|stackmem-train -i rev.tsv --valid rev-v.tsv --embed 8 --hidden 16 --value-size 8 --batch-size 20 --seed 3"
  "ntm|ntm-train --task copy --width 4 --len-max 4 --hidden 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --seed 2"
  "memn2n|memn2n-train -i $D/babi --task 1 --ls-max-epochs 1 --seed 2"
  "bert|bert-pretrain -i text.txt --valid text.txt --layers 1 --hidden 16 --heads 2 --ff 32 --len-max 24 --batch-size 16 --min-freq 1 --seed 3"
  "caption|caption-train -i scenes.txt --captions caps.tsv --valid scenes.txt --valid-captions caps.tsv --embed 8 --hidden 16 --attention-size 8 --channels 4,4 --batch-size 8 --seed 3"
  "img|img-train -i $D/imgclass/train.npz --valid $D/imgclass/valid.npz --arch cnn-sagan --channels 4,8 --hidden 16 --batch-size 30 --seed 3"
  "ram|ram-train -i $D/ram/corner-train.npz --valid $D/ram/corner-test.npz --glimpse-size 3 --glimpse-scales 2 --glimpses 3 --glimpse-hidden 8 --hidden 16 --batch-size 16 --seed 3"
  "snail|snail-train --arms 3 --pulls 5 --embed 8 --filters 4 --key-size 4 --value-size 4 --batch-size 8 --eval-episodes 10 --seed 3"
  "fewshot|snail-train --task fewshot -i x.npy --labels y.txt --ways 3 --classes 0,1,2,3 --shots 1 --channels 2 --filters 2 --key-size 2 --value-size 2 --batch-size 8 --eval-episodes 10 --seed 3"
)

# Waits (up to 2 minutes) until FILE has more than N lines.
wait_lines() {
  for _ in $(seq 1 2400); do
    [ -s "$1" ] && [ "$(wc -l <"$1")" -gt "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
# stop_after LOG N CMD...: runs CMD in the background, SIGINT once LOG has more than N lines;
# checks that it stopped with status 130 and the checkpoint message.
stop_after() {
  local log=$1 n=$2 pid rc; shift 2
  "$@" 2>"$T/err" &
  pid=$!
  CHECKS=$((CHECKS + 1))
  wait_lines "$log" "$n" || fail "'$*': no log rows within 2 minutes"
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  check_eq "$rc" 130 "'$*' stopped by SIGINT ($(head -c 300 "$T/err"))"
  grep -q "holds it: resume with --resume" "$T/err" || fail "'$*': no resume message"
}

for entry in "${trainers[@]}"; do
  name=${entry%%|*}
  read -r -a cmd <<<"${entry#*|}"
  tool=${cmd[0]}
  if [ "$name" = memn2n ]; then long=(--epochs 100000); else long=(--steps 100000000); fi
  stop_after "$name.tsv" 2 "${cmd[@]}" "${long[@]}" --log-every 1 --log "$name.tsv" -q -o "$name.akm"
  cp "$name.akm.ckpt" "$name-b.akm.ckpt"
  cp "$name.tsv" "$name-b.tsv"
  rows=$(wc -l <"$name.tsv")
  # Resumed with -o alone: the same data, validation and log (a row more, at least).
  stop_after "$name.tsv" $((rows + 1)) "$tool" --resume -o "$name.akm"
  # The length: two steps past the last (an epoch more for memn2n, which has no --steps).
  step=$(tail -1 "$name.tsv" | cut -f1)
  epoch=$(tail -1 "$name.tsv" | cut -f2)
  if [ "$name" = memn2n ]; then to=(--epochs $((epoch + 1))); else to=(--steps $((step + 2))); fi
  expect 0 "$tool" --resume -o "$name.akm" "${to[@]}" -q
  expect 0 "${cmd[@]}" --resume -o "$name-b.akm" --log "$name-b.tsv" "${to[@]}" -q
  check_eq "$(cmp -s "$name.akm" "$name-b.akm" && echo same)" same "$name: resumed alone = resumed with every path"
  check_eq "$(cmp -s "$name.tsv" "$name-b.tsv" && echo same)" same "$name: its log = the log with every path"
done

# A resume that changes --batch-size is refused (the position in the epoch counts batches).
stop_after r.tsv 2 ptr-train --task sort -i sort.txt --embed 8 --hidden 16 --batch-size 20 \
  --steps 100000000 --log-every 1 --log r.tsv -q -o r.akm
expect_err 2 "--batch-size 40 is not the checkpoint's (20)" ptr-train --resume -o r.akm --batch-size 40
# A log of other columns (validation given at the start, not on resume) is refused before
# any step.
expect_err 1 "the log's columns" ptr-train --resume -o r.akm --valid sort-v.txt --steps 100000000
finish
