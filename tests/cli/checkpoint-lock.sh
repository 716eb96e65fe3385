#!/usr/bin/env bash
# cost: 10
# Two runs never share a checkpoint (issue 36): a run holds an advisory lock (flock) on its
# checkpoint for its life, and a second run on the same -o (fresh or --resume) stops at once
# with a message naming the checkpoint and the process that holds it. Every start removes
# the temporaries that a killed write of the checkpoint or the model left beside them.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 seqdata-gen --task dates -n 200 --seed 3 -o d.tsv
s2s=(seq2seq-train -i d.tsv --tokens chars --embed 8 --hidden 16 --batch-size 20 --seed 4
     --threads 1 -q --log-every 1 --checkpoint-every 1)

# Stale temporaries (a kill during the first checkpoint write, or the model's) go at a fresh
# start, not only at --resume; another file's temporary stays.
printf 'junk' >.m.akm.ckpt.tmp.AbC123
printf 'junk' >.m.akm.tmp.XyZ789
printf 'keep' >.other.akm.tmp.Qrs456
expect 0 "${s2s[@]}" --steps 2 -o m.akm
check_eq "$(ls -A | grep -c '^\.m\.akm.*\.tmp\.')" 0 "stale temporaries removed at a fresh start"
check_eq "$(cat .other.akm.tmp.Qrs456)" keep "another file's temporary kept"
check_eq "$(ls -A | grep -c '\.lock$')" 0 "no lock file left after the run"

# The lock: a run far too long to finish, and a second run on its -o while it trains.
"${s2s[@]}" --steps 100000000 --log a.tsv -o a.akm 2>a.err &
pid=$!
for _ in $(seq 1 2400); do [ -s a.tsv ] && [ "$(wc -l <a.tsv)" -gt 2 ] && break; sleep 0.05; done
CHECKS=$((CHECKS + 1))
[ -s a.akm.ckpt ] || fail "the first run wrote no checkpoint in 2 minutes"
expect_err 1 "a.akm.ckpt: is in use by another run (process $pid)" "${s2s[@]}" --steps 5 -o a.akm
expect_err 1 "a.akm.ckpt: is in use by another run (process $pid)" seq2seq-train --resume -o a.akm
# A run on another checkpoint is free to go.
expect 0 "${s2s[@]}" --steps 2 -o b.akm
CHECKS=$((CHECKS + 1))
kill -0 "$pid" 2>/dev/null || fail "the first run did not survive the second's attempts"
kill -INT "$pid"
wait "$pid"
check_eq "$?" 130 "the first run stopped by SIGINT"
check_eq "$(ls -A | grep -c '\.lock$')" 0 "no lock file left after an interrupt"
step=$(sed -n 's/.*interrupted at step \([0-9]*\);.*/\1/p' a.err)
expect 0 seq2seq-train --resume -o a.akm --steps $((step + 1)) -q
finish
