#!/usr/bin/env bash
# labels: nosan
# cost: 27
# A property of the training layer: kill -9 at any moment (mid-step, mid-checkpoint-write)
# leaves the previous or the new checkpoint, never a damaged one, and no temporary that a
# resume does not clean up; a run killed many times and resumed each time ends with the
# model of a run never stopped. The kill moments come from the clock; the verdict does not:
# whatever moment a kill lands on, the property must hold.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
seqdata-gen --task dates -n 600 --seed 9 -o d.tsv
# (Under the sanitizers, which slow every step, a run of 300 steps.)
steps=1500
sanitized && steps=300
args=(-i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 16 --seed 2 --threads 1 -q
      --steps $steps --checkpoint-every 2 --log-every 5)
expect 0 seq2seq-train "${args[@]}" --log ref.tsv -o ref.akm
kills=0
for delay in 0.05 0.13 0.21 0.08 0.34 0.17 0.02 0.27 0.11 0.4; do
  resume=()
  [ -e run.akm.ckpt ] && resume=(--resume)
  seq2seq-train "${args[@]}" "${resume[@]}" --log run.tsv -o run.akm 2>kill.err &
  pid=$!
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null
  if [ -e run.akm ]; then break; fi   # it finished before the kill
done
# Whatever state the kills left: a resume (or a fresh start when no checkpoint was ever
# written) runs to the end.
resume=()
[ -e run.akm.ckpt ] && resume=(--resume)
[ -e run.akm ] || expect 0 seq2seq-train "${args[@]}" "${resume[@]}" --log run.tsv -o run.akm
check_eq "$(cmp -s run.akm ref.akm && echo same)" same "killed $kills times and resumed = never stopped"
check_eq "$(cmp -s run.tsv ref.tsv && echo same)" same "its log = the log of a run never stopped"
CHECKS=$((CHECKS + 1))
if ls -a | grep -q '^\.run\.akm\.ckpt\.tmp\.'; then fail "a stale checkpoint temporary is left: $(ls -a)"; fi
echo "kills landed: $kills"
finish
