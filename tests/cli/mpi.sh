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
# The ranks are mpirun's children; one is killed once the first checkpoint exists (5 of 400
# steps): the case is always exercised (issue 36, item 26), whatever the machine's speed.
while alive "$job" && [ ! -s killed.akm.ckpt ]; do sleep 0.02; done
victim=$(pgrep -P "$job" | tail -1)
CHECKS=$((CHECKS + 1))
[ -n "$victim" ] || fail "no rank of the job to kill (the job: $(ps -o pid,ppid,comm --ppid "$job" 2>&1))"
[ -s killed.akm.ckpt ] || fail "the job ended before its first checkpoint: $(head -c 400 kill.err)"
[ -n "$victim" ] && kill -9 "$victim"
wait "$job"; rc=$?
CHECKS=$((CHECKS + 1)); [ "$rc" != 0 ] || fail "the job went on after a rank was killed"
grep -qiE "rank [01]" kill.err || fail "no rank named: $(head -c 400 kill.err)"
no_file killed.akm
expect 0 mpirun -np 2 $s2s --steps 400 --checkpoint-every 5 --threads 1 --resume -o killed.akm
check_eq "$(cmp -s killed.akm long.akm && echo same)" same "resumed after a killed rank = uninterrupted"

# The other trainers: their slices are fixed (an NTM's batch of episodes, MemN2N's 4 slices
# a batch), so 2 ranks give the one-process model at any thread count.
ntm="ntm-train --task copy --width 4 --len-max 4 --hidden 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --steps 15 --seed 2 -q"
expect 0 $ntm --threads 1 -o ntm1.akm
expect 0 mpirun -np 2 $ntm --threads 1 -o ntm2.akm
check_eq "$(cmp -s ntm1.akm ntm2.akm && echo same)" same "ntm-train: 2 ranks = 1 process"
mem="memn2n-train -i $ATTNKIT_TESTDATA/babi --task 1 --epochs 2 --ls-max-epochs 1 --seed 2 -q"
expect 0 $mem --threads 2 -o mem1.akm
expect 0 mpirun -np 2 $mem --threads 1 -o mem2.akm
check_eq "$(cmp -s mem1.akm mem2.akm && echo same)" same "memn2n-train: 2 ranks = 1 process"

# A failure on the ranks (a step's loss becomes NaN): exit 1, the rank named, no model.
# Every rank meets it after MPI has started (issue 36, item 17): one message, from rank 0,
# and no MPI_Abort (whose banner each rank added, with Open MPI's aggregated help messages).
expect_err 1 "seq2seq-train (rank 0): gradient norm became NaN" mpirun -np 2 $s2s --steps 30 --lr 1e30 --clip 0 --threads 1 -o nan.akm
check_eq "$(grep -c "gradient norm became NaN" "$T/err")" 1 "one message ($(head -c 600 "$T/err"))"
check_eq "$(grep -c "MPI_ABORT\|ORTE_ERROR_LOG\|more process has sent help message" "$T/err")" 0 "no abort banner"
no_file nan.akm
# An error of the input under mpirun (issue 36, item 17): every rank meets it, one prints
# it (rank 0, named), and the job ends without the other ranks' copies or Open MPI's
# aggregated help messages.
printf 'a b c\n' >bad.tsv
run mpirun -np 2 stackmem-train -i bad.tsv -o bad.akm
CHECKS=$((CHECKS + 1)); [ "$RC" != 0 ] || fail "mpirun exited 0 on a data error"
check_eq "$(grep -c "no tab between source and target" "$T/err")" 1 "one message ($(head -c 600 "$T/err"))"
grep -qF "stackmem-train (rank 0): bad.tsv:1: no tab between source and target" "$T/err" || fail "the rank is not named: $(head -c 600 "$T/err")"
check_eq "$(grep -c "ORTE_ERROR_LOG\|more process has sent help message" "$T/err")" 0 "no noise"
no_file bad.akm
# ... and one that rank 1 alone meets (its machine's copy of the data differs) is printed
# by rank 1, not lost.
{ printf 'a b c\n'; head -40 d.tsv; } >d1.tsv
head -40 d.tsv >d0.tsv
one="seq2seq-train --tokens chars --embed 16 --hidden 32 --batch-size 8 -q --steps 3 --threads 1 -o one.akm"
run mpirun -np 1 $one -i d0.tsv : -np 1 $one -i d1.tsv
CHECKS=$((CHECKS + 1)); [ "$RC" != 0 ] || fail "mpirun exited 0 on rank 1's data error"
check_eq "$(grep -c "seq2seq-train (rank 1): d1.tsv:1: no tab" "$T/err")" 1 "rank 1's message ($(head -c 600 "$T/err"))"
no_file one.akm
finish
