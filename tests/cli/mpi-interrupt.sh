#!/usr/bin/env bash
# labels: mpi
# cost: 30
# An interrupt under mpirun (issue 36): every rank waits for rank 0's checkpoint write (a
# barrier), then exits 130, with one message naming the checkpoint; the checkpoint resumes
# to the model of a run never stopped. Signals both ways: SIGINT to every rank (as Slurm's
# scancel --signal=INT delivers it) and SIGINT to mpirun (Ctrl-C: Open MPI sends SIGTERM to
# the ranks, and SIGKILL odls_base_sigkill_timeout seconds later). The runs are far too long
# to finish, and each signal waits until both ranks are in the training loop (log rows), so
# every case is exercised whatever the machine's speed.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun not installed (make deps installs openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
seqdata-gen --task dates -n 400 --seed 3 -o d.tsv
s2s=(seq2seq-train -i d.tsv --tokens chars --embed 16 --hidden 32 --batch-size 64 --seed 4
     --threads 1 --log-every 1 -q)

# The job's ranks: the seq2seq-train processes writing MODEL.
ranks_of() {
  pgrep -f -- "-o $1" | while read -r p; do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = seq2seq-train ] && echo "$p"; done
}
# Waits (up to 2 minutes) for a log of 3 rows or more: every rank has taken steps.
wait_rows() {
  for _ in $(seq 1 2400); do
    [ -s "$1" ] && [ "$(wc -l <"$1")" -ge 4 ] && return 0
    sleep 0.05
  done
  return 1
}
# interrupted NAME HOW: a job stopped by SIGINT to its ranks (HOW=ranks) or to mpirun.
interrupted() {
  local name=$1 how=$2 job pids rc
  # Ctrl-C to mpirun: SIGKILL comes 5 s after SIGTERM (the default, 1 s, can be shorter
  # than a large checkpoint's write). mpirun waits that long for every rank, even one that
  # has ended, once a rank exits with a non-zero status: the default where none is needed.
  local mca=()
  [ "$how" = mpirun ] && mca=(--mca odls_base_sigkill_timeout 5)
  mpirun -np 2 "${mca[@]}" "${s2s[@]}" --steps 1000000 \
    --log "$name.tsv" -o "$name.akm" >"$name.out" 2>"$name.err" &
  job=$!
  CHECKS=$((CHECKS + 1))
  wait_rows "$name.tsv" || fail "$name: no training steps within 2 minutes"
  pids=$(ranks_of "$name.akm")
  check_eq "$(echo "$pids" | wc -w)" 2 "$name: the job's ranks found"
  if [ "$how" = ranks ]; then
    # shellcheck disable=SC2086
    kill -INT $pids
  else
    kill -INT "$job"
  fi
  wait "$job"
  rc=$?
  [ "$how" = ranks ] && check_eq "$rc" 130 "$name: mpirun's exit status (every rank exited 130)"
  [ "$how" = mpirun ] && check_eq "$([ "$rc" != 0 ] && echo non-zero)" non-zero "$name: mpirun's exit status"
  check_eq "$(grep -c "holds it" "$name.err")" 1 "$name: one message ($(head -c 600 "$name.err"))"
  check_eq "$(grep -c "$name.akm.ckpt holds it: resume with --resume" "$name.err")" 1 \
    "$name: the message names the checkpoint"
  check_eq "$(grep -c "MPI_ABORT\|rank 1" "$name.err")" 0 "$name: no abort"
  CHECKS=$((CHECKS + 1))
  [ -s "$name.akm.ckpt" ] || fail "$name: no checkpoint"
  no_file "$name.akm"
  STOPPED_AT=$(sed -n 's/.*interrupted at step \([0-9]*\);.*/\1/p' "$name.err")
}

for how in ranks mpirun; do
  interrupted "$how" "$how"
  [ -n "$STOPPED_AT" ] || { fail "$how: no step in the message"; continue; }
  # The checkpoint resumes (under 2 ranks, only -o and the length given) to the model and
  # log of one run of that length never stopped.
  to=$((STOPPED_AT + 2))
  expect 0 mpirun -np 2 seq2seq-train --resume -o "$how.akm" --steps $to -q
  expect 0 "${s2s[@]}" --steps $to --log "ref-$how.tsv" -o "ref-$how.akm"
  check_eq "$(cmp -s "$how.akm" "ref-$how.akm" && echo same)" same "$how: resumed = never stopped"
  check_eq "$(cmp -s "$how.tsv" "ref-$how.tsv" && echo same)" same "$how: its log = never stopped"
done
finish
