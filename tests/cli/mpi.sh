#!/usr/bin/env bash
# labels: mpi
# Data parallelism over MPI ranks (mpirun -np 2 on localhost): N ranks x T threads give the
# same model, byte for byte, as one process at any thread count (a batch's slices are fixed by
# the recipe: seq2seq-train's are at most 32 pairs; tests/cli/same-model.sh runs every trainer);
# --resume under MPI continues exactly; a killed rank stops the whole job with a message
# naming it and leaves the last good checkpoint; a failure reports the rank.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun not installed (make deps installs openmpi-bin)"; exit 77; }
# CI runs as root: Open MPI's documented variables allow it (set here, not in the tools).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores is fine here; no network but the loopback.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
seqdata-gen --task dates -n 800 --seed 3 -o d.tsv
s2s="seq2seq-train -i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 64 --seed 4 -q"

# Equality: ranks x threads against one process (2 slices of 32 pairs).
expect 0 $s2s --steps 12 --threads 2 -o one2.akm
expect 0 mpirun -np 2 $s2s --steps 12 --threads 1 -o mpi21.akm
check_eq "$(cmp -s one2.akm mpi21.akm && echo same)" same "2 ranks x 1 thread = 1 process x 2 threads"
expect 0 $s2s --steps 12 --threads 4 -o one4.akm
expect 0 mpirun -np 2 $s2s --steps 12 --threads 2 -o mpi22.akm
check_eq "$(cmp -s one4.akm mpi22.akm && echo same)" same "2 ranks x 2 threads = 1 process x 4 threads"
expect 0 $s2s --steps 12 --threads 1 -o one1.akm
check_eq "$(cmp -s one1.akm mpi21.akm && echo same)" same "2 ranks x 1 thread = 1 process x 1 thread"
# ... and the check can fail: other batches (96 pairs, 3 slices), another model.
expect 0 seq2seq-train -i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 96 --seed 4 -q \
  --steps 12 --threads 1 -o other.akm
check_eq "$(cmp -s other.akm mpi21.akm && echo same)" "" "batches of 96 differ from batches of 64"
# Only rank 0 writes: one progress line set, one log.
expect 0 mpirun -np 2 seq2seq-train -i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 32 \
  --seed 4 --steps 4 --log-every 2 --log log.tsv -o logged.akm
check_eq "$(grep -c 'wrote logged.akm' "$T/err")" 1 "one closing line"
check_eq "$(wc -l <log.tsv)" 3 "log rows (header + 2)"

# Resume under MPI: 6 steps with a checkpoint, then on to 12, equals 12 straight (the
# model file stores the configuration, so the same options).
expect 0 mpirun -np 2 $s2s --steps 12 --checkpoint-every 6 --threads 1 -o straight.akm
expect 0 mpirun -np 2 $s2s --steps 6 --checkpoint-every 6 --threads 1 -o res.akm
expect 0 mpirun -np 2 $s2s --steps 12 --checkpoint-every 6 --threads 1 --resume -o res.akm
check_eq "$(cmp -s res.akm straight.akm && echo same)" same "resumed under 2 ranks = uninterrupted"

# A rank killed mid-run: the job stops with a message naming the rank; the checkpoint stays
# good and resumes to the uninterrupted model.
expect 0 mpirun -np 2 $s2s --steps 400 --checkpoint-every 5 --threads 1 -o long.akm
mpirun -np 2 $s2s --steps 400 --checkpoint-every 5 --threads 1 -o killed.akm >kill.out 2>kill.err &
job=$!
for _ in $(seq 1 600); do [ -s killed.akm.ckpt ] && break; sleep 0.05; done
victim=$(pgrep -f -- "-o killed.akm" | while read -r p; do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = seq2seq-train ] && echo "$p"; done | tail -1)
if [ -n "$victim" ] && [ -s killed.akm.ckpt ] && kill -0 "$job" 2>/dev/null; then
  kill -9 "$victim"
  wait "$job"; rc=$?
  CHECKS=$((CHECKS + 1)); [ "$rc" != 0 ] || fail "the job went on after a rank was killed"
  grep -qiE "rank [01]" kill.err || fail "no rank named: $(head -c 400 kill.err)"
  no_file killed.akm
  expect 0 mpirun -np 2 $s2s --steps 400 --checkpoint-every 5 --threads 1 --resume -o killed.akm
  check_eq "$(cmp -s killed.akm long.akm && echo same)" same "resumed after a killed rank = uninterrupted"
else
  wait "$job"
  echo "note: the run ended before a rank could be killed; that case was not exercised"
fi

# The other trainers: their slices are fixed (an NTM's batch of episodes, MemN2N's 4 slices
# a batch), so 2 ranks give the one-process model at any thread count.
ntm="ntm-train --task copy --width 4 --len-max 4 --controller-size 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --steps 15 --seed 2 -q"
expect 0 $ntm --threads 1 -o ntm1.akm
expect 0 mpirun -np 2 $ntm --threads 1 -o ntm2.akm
check_eq "$(cmp -s ntm1.akm ntm2.akm && echo same)" same "ntm-train: 2 ranks = 1 process"
mem="memn2n-train -i $ATTNKIT_TESTDATA/babi --task 1 --epochs 2 --ls-max-epochs 1 --seed 2 -q"
expect 0 $mem --threads 2 -o mem1.akm
expect 0 mpirun -np 2 $mem --threads 1 -o mem2.akm
check_eq "$(cmp -s mem1.akm mem2.akm && echo same)" same "memn2n-train: 2 ranks = 1 process"

# A failure on the ranks (a step's loss becomes NaN): exit 1, the rank named, no model.
expect_err 1 "(rank " mpirun -np 2 $s2s --steps 30 --lr 1e30 --clip 0 --threads 1 -o nan.akm
no_file nan.akm
finish
