#!/usr/bin/env bash
# labels: slow
# cost: 60
# The kill-resume property (tests/cli/kill-resume.sh, seq2seq-train's) for every other
# trainer, on tiny models (issue 36, item 26): kill -9 at any moment, mid-step or
# mid-checkpoint-write (a checkpoint every step), leaves the previous or the new checkpoint,
# never a damaged one and no temporary a resume does not clean up; a run killed and resumed
# each time ends with the model and the log of a run never stopped. Each kill lands once the
# run has logged two more rows than it started with (its log is watched, a step or two after
# its start or resume); a trainer that no kill reached fails, so the case is always exercised.
# Where in a step the kill lands varies from run to run; the verdict does not: whatever moment
# a kill lands on, the property must hold.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
unset ATTNKIT_THREADS OMP_NUM_THREADS
D=$ATTNKIT_TESTDATA
expect 0 ptrtask-gen --task sort --n 4 --count 200 --seed 1 -o sort.txt
expect 0 transduce-gen --task reverse --len-min 2 --len-max 5 --symbols 6 --count 200 --seed 1 -o rev.tsv
tiny_trainer_data

# NAME | the trainer's command and its length (memn2n has epochs, no --steps).
trainers=(
  "ptr|ptr-train --task sort -i sort.txt --embed 8 --hidden 16 --batch-size 20 --seed 3 --steps 40"
  "stackmem|stackmem-train -i rev.tsv --embed 8 --hidden 16 --width 8 --batch-size 20 --seed 3 --steps 40"
  "ntm|ntm-train --task copy --width 4 --len-max 4 --controller-size 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --seed 2 --steps 40"
  "memn2n|memn2n-train -i $D/babi --task 1 --ls-max-epochs 1 --seed 2 --epochs 3"
  "bert|bert-pretrain -i text.txt --layers 1 --hidden 16 --heads 2 --ff 32 --len-max 24 --batch-size 16 --min-freq 1 --seed 3 --steps 40"
  "caption|caption-train -i scenes.txt --captions caps.tsv --embed 8 --hidden 16 --attention-size 8 --channels 4,4 --batch-size 8 --seed 3 --steps 40"
  "img|img-train -i $D/imgclass/train.npz --arch cnn-sagan --channels 4,8 --hidden 16 --batch-size 30 --seed 3 --steps 40"
  "ram|ram-train -i $D/ram/corner-train.npz --glimpse-size 3 --glimpse-scales 2 --glimpses 3 --glimpse-hidden 8 --hidden 16 --batch-size 16 --seed 3 --steps 40"
  "snail|snail-train --arms 3 --pulls 5 --width 8 --filters 4 --key-size 4 --value-size 4 --batch-size 8 --eval-episodes 10 --seed 3 --steps 40"
  "fewshot|snail-train --task fewshot -i x.npy --labels y.txt --ways 3 --classes 0,1,2,3 --shots 1 --channels 2 --filters 2 --key-size 2 --value-size 2 --batch-size 8 --eval-episodes 10 --seed 3 --steps 40"
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
  rows() { if [ -e "$name.tsv" ]; then wc -l <"$name.tsv"; else echo 0; fi; }
  kills=0
  for attempt in 1 2 3; do
    resume=()
    [ -e "$name.akm.ckpt" ] && resume=(--resume)
    start=$(rows)
    "${common[@]}" "${resume[@]}" --log "$name.tsv" -o "$name.akm" 2>"$name-kill.err" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ "$(rows)" -lt $((start + 2)) ]; do sleep 0.005; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ $? = 137 ] && kills=$((kills + 1)) # killed, not ended by itself
    [ -e "$name.akm" ] && break # it finished before the kill
  done
  CHECKS=$((CHECKS + 1))
  [ "$kills" -ge 1 ] || fail "$name: no kill landed before the run ended: the case was not exercised"
  resume=()
  [ -e "$name.akm.ckpt" ] && resume=(--resume)
  [ -e "$name.akm" ] || expect 0 "${common[@]}" "${resume[@]}" --log "$name.tsv" -o "$name.akm"
  check_eq "$(cmp -s "$name.akm" "$name-ref.akm" && echo same)" same "$name: killed $kills times and resumed = never stopped"
  check_eq "$(cmp -s "$name.tsv" "$name-ref.tsv" && echo same)" same "$name: its log = the log of a run never stopped"
  CHECKS=$((CHECKS + 1))
  if ls -a | grep -q "^\.$name\.akm\.ckpt\.tmp\."; then fail "$name: a stale checkpoint temporary is left: $(ls -a)"; fi
  echo "$name: kills landed: $kills"
done
finish
