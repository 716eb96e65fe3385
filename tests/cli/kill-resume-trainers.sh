#!/usr/bin/env bash
# labels: slow
# cost: 60
# The kill-resume property (tests/cli/kill-resume.sh, seq2seq-train's) for every other
# trainer, on tiny models (issue 36, item 26): kill -9 mid-step or mid-checkpoint-write (a
# checkpoint every step) leaves the previous or the new checkpoint, never a damaged one and
# no temporary a resume does not clean up; a run killed and resumed each time ends with the
# model and the log of a run never stopped. The kills are placed, not timed: ATTNKIT_FAULT
# (lib/attnkit/core/fault.h) makes a run send itself SIGKILL
# - after step 3's log row, before its checkpoint (the log is a row ahead of the checkpoint);
# - halfway through its third checkpoint write after a resume (a half-written temporary).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
unset ATTNKIT_THREADS OMP_NUM_THREADS
D=$ATTNKIT_TESTDATA
expect 0 ptrtask-gen --task sort --n 4 --count 200 --seed 1 -o sort.txt
expect 0 transduce-gen --task reverse --len-min 2 --len-max 5 --symbols 6 --count 200 --seed 1 -o rev.tsv
tiny_trainer_data

# NAME | the trainer's command and its length (memn2n has epochs, no --steps).
trainers=(
  "ptr|ptr-train --task sort -i sort.txt --embed 8 --hidden 16 --batch-size 20 --seed 3 --steps 12"
  "stackmem|stackmem-train -i rev.tsv --embed 8 --hidden 16 --value-size 8 --batch-size 20 --seed 3 --steps 12"
  "ntm|ntm-train --task copy --width 4 --len-max 4 --hidden 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --seed 2 --steps 12"
  "memn2n|memn2n-train -i $D/babi --task 1 --ls-max-epochs 1 --seed 2 --epochs 3"
  "bert|bert-pretrain -i text.txt --layers 1 --hidden 16 --heads 2 --ff 32 --len-max 24 --batch-size 16 --min-freq 1 --seed 3 --steps 12"
  "caption|caption-train -i scenes.txt --captions caps.tsv --embed 8 --hidden 16 --attention-size 8 --channels 4,4 --batch-size 8 --seed 3 --steps 12"
  "img|img-train -i $D/imgclass/train.npz --arch cnn-sagan --channels 4,8 --hidden 16 --batch-size 30 --seed 3 --steps 12"
  "ram|ram-train -i $D/ram/corner-train.npz --glimpse-size 3 --glimpse-scales 2 --glimpses 3 --glimpse-hidden 8 --hidden 16 --batch-size 16 --seed 3 --steps 12"
  "snail|snail-train --arms 3 --pulls 5 --embed 8 --filters 4 --key-size 4 --value-size 4 --batch-size 8 --eval-episodes 10 --seed 3 --steps 12"
  "fewshot|snail-train --task fewshot -i x.npy --labels y.txt --ways 3 --classes 0,1,2,3 --shots 1 --channels 2 --filters 2 --key-size 2 --value-size 2 --batch-size 8 --eval-episodes 10 --seed 3 --steps 12"
)
if ls "$D"/babi/qa1_* >/dev/null 2>&1; then :; else
  echo "note: no bAbI files in $D/babi: memn2n-train left out"
fi

for entry in "${trainers[@]}"; do
  name=${entry%%|*}
  read -r -a cmd <<<"${entry#*|}"
  [ "$name" = memn2n ] && ! ls "$D"/babi/qa1_* >/dev/null 2>&1 && continue
  common=("${cmd[@]}" --threads 1 -q --checkpoint-every 1 --log-every 1)
  expect 0 "${common[@]}" --log "$name-ref.tsv" -o "$name-ref.akm"
  # Killed after step 3's log row: the checkpoint holds step 2, the log has 3 rows.
  expect 137 env ATTNKIT_FAULT=step:3 "${common[@]}" --log "$name.tsv" -o "$name.akm"
  check_eq "$([ -e "$name.akm.ckpt" ] && [ ! -e "$name.akm" ] && echo ok)" ok \
    "$name: killed mid-run: a checkpoint and no model"
  # Resumed, and killed halfway through its third checkpoint write.
  expect 137 env ATTNKIT_FAULT=write:3 "${common[@]}" --resume --log "$name.tsv" -o "$name.akm"
  check_eq "$(ls -a | grep -c "^\.$name\.akm\.ckpt\.tmp\.")" 1 \
    "$name: killed mid-write: its half-written temporary"
  expect 0 "${common[@]}" --resume --log "$name.tsv" -o "$name.akm"
  check_eq "$(cmp -s "$name.akm" "$name-ref.akm" && echo same)" same "$name: killed twice and resumed = never stopped"
  check_eq "$(cmp -s "$name.tsv" "$name-ref.tsv" && echo same)" same "$name: its log = the log of a run never stopped"
  check_eq "$(ls -a | grep -c "^\.$name\.akm\.ckpt\.tmp\.")" 0 "$name: no checkpoint temporary left"
done
# A malformed ATTNKIT_FAULT is a usage error, not a silent run without the kill.
expect_err 2 "ATTNKIT_FAULT" env ATTNKIT_FAULT=step ptr-train --task sort -i sort.txt --steps 2 -q -o bad.akm
finish
