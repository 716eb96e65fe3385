#!/usr/bin/env bash
# cost: 10
# A property of the training layer: kill -9 mid-step or mid-checkpoint-write leaves the
# previous or the new checkpoint, never a damaged one, and no temporary that a resume does
# not clean up; a run killed many times and resumed each time ends with the model and the
# log of a run never stopped. The kills are placed, not timed: ATTNKIT_FAULT
# (lib/attnkit/core/fault.h) makes a run send itself SIGKILL after a chosen step (its log
# may be rows ahead of its checkpoint) or halfway through a chosen checkpoint write.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
seqdata-gen --task dates -n 600 --seed 9 -o d.tsv
args=(-i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 16 --seed 2 --threads 1 -q
      --steps 60 --checkpoint-every 2 --log-every 5)
expect 0 seq2seq-train "${args[@]}" --log ref.tsv -o ref.akm
# Kill points, one a run, each run resuming the last: after step 7 (checkpoint 6, the log
# at row 5); halfway through the 2nd checkpoint write after the resume (step 10's: checkpoint
# 8, the log already at row 10); after 5 more steps (step 13: checkpoint 12); halfway through
# the first checkpoint write after the resume (step 14's: checkpoint 12).
kills=0
for fault in step:7 write:2 step:5 write:1; do
  resume=()
  [ -e run.akm.ckpt ] && resume=(--resume)
  expect 137 env ATTNKIT_FAULT=$fault seq2seq-train "${args[@]}" "${resume[@]}" --log run.tsv -o run.akm
  [ "$RC" = 137 ] && kills=$((kills + 1))
  check_eq "$([ -e run.akm.ckpt ] && [ ! -e run.akm ] && echo ok)" ok "killed at $fault: a checkpoint, no model"
  case $fault in write:*)
    check_eq "$(ls -a | grep -c '^\.run\.akm\.ckpt\.tmp\.')" 1 "killed at $fault: a half-written temporary" ;;
  esac
done
expect 0 seq2seq-train "${args[@]}" --resume --log run.tsv -o run.akm
check_eq "$(cmp -s run.akm ref.akm && echo same)" same "killed $kills times and resumed = never stopped"
check_eq "$(cmp -s run.tsv ref.tsv && echo same)" same "its log = the log of a run never stopped"
CHECKS=$((CHECKS + 1))
if ls -a | grep -q '^\.run\.akm\.ckpt\.tmp\.'; then fail "a stale checkpoint temporary is left: $(ls -a)"; fi
echo "kills landed: $kills"
finish
