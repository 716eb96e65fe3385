#!/usr/bin/env bash
# labels: slow
# cost: 150
# One rule for every trainer: the same model file, byte for byte, at --threads 1, 2, 3 and 8
# and under mpirun -np 2 --threads 2 (when Open MPI is installed): a batch's slices are a
# function of the batch and the recipe, never of the machine, their gradients added in a fixed
# order, and threads beyond one a slice work inside the slices without changing a bit. Each
# trainer runs a few steps of a tiny model; the seq2seq models and the pointer network are large
# enough that their products are cut into panels (core/blas.h) shared with the spare threads
# (the pointer network's projection of its 128-wide embeddings is; without panels the same
# command writes another file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
mpi=0
if command -v mpirun >/dev/null; then
  mpi=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
else
  echo "note: mpirun not installed (make deps installs openmpi-bin): the 2-rank runs are skipped"
fi
# The environment must not choose the thread count behind --threads' back.
unset ATTNKIT_THREADS OMP_NUM_THREADS

# Data: dates (seq2seq), sorting (pointer network), reversal (stack), bAbI, images, text.
expect 0 seqdata-gen --task dates -n 400 --seed 3 -o dates.tsv
expect 0 ptrtask-gen --task sort --n 4 --count 300 --seed 1 -o sort.txt
expect 0 transduce-gen --task reverse --len-min 2 --len-max 5 --symbols 6 --count 200 --seed 1 -o rev.tsv
expect 0 tensor-rand --shape 48,16,16 --seed 4 -o x.npy
awk 'BEGIN { for (i = 0; i < 48; i++) print i % 8 }' >y.txt
awk 'BEGIN { s = 7; split("mary john sandra daniel", who); split("kitchen garden office hallway", where)
  for (d = 1; d <= 40; d++) { if (d > 1) print ""
    for (k = 1; k <= 4; k++) { s = (s * 69069 + 1) % 4294967296; a = who[int(s / 65536) % 4 + 1]
      s = (s * 69069 + 1) % 4294967296; b = where[int(s / 65536) % 4 + 1]
      print toupper(substr(a, 1, 1)) substr(a, 2) " went to the " b "." } } }' >text.txt
# Scenes of two bars or boxes in a 2 x 2 grid, 16 x 16 pixels, with their captions.
awk 'BEGIN { srand(1); split("hbar vbar box", name, " ")
  for (k = 0; k < 48; k++) {
    for (r = 0; r < 16; r++) for (c = 0; c < 16; c++) p[r, c] = 0
    a = int(rand() * 4); do b = int(rand() * 4); while (b == a)
    words = ""; cells = ""
    for (j = 1; j <= 2; j++) {
      cell = j == 1 ? a : b; cls = 1 + int(rand() * 3); r0 = int(cell / 2) * 8; c0 = (cell % 2) * 8
      for (r = 1; r < 7; r++) for (c = 1; c < 7; c++)
        if ((cls == 1 && r % 2) || (cls == 2 && c % 2) || (cls == 3 && (r == 1 || r == 6 || c == 1 || c == 6)))
          p[r0 + r, c0 + c] = 1
      words = words (j == 2 ? " and " : "") "a " name[cls]; cells = cells (j == 2 ? " -1 " : "") "-1 " cell
    }
    print words "\t" cells > "caps.tsv"
    for (r = 0; r < 16; r++) { line = ""; for (c = 0; c < 16; c++) line = line (c ? " " : "") p[r, c]; print line > "scenes.txt" }
    if (k < 47) print "" > "scenes.txt"
  } }'

D=$ATTNKIT_TESTDATA
trainers=(
  "seq2seq-train -i dates.tsv --tokens chars --embed 64 --hidden 128 --batch-size 80 --steps 3 --seed 4"
  "seq2seq-train -i dates.tsv --tokens chars --type transformer --layers 1 --hidden 64 --heads 4 --ff 256 --batch-size 80 --steps 3 --seed 4"
  "ptr-train --task sort -i sort.txt --embed 128 --hidden 64 --batch-size 64 --epochs 1 --seed 3"
  "stackmem-train -i rev.tsv --embed 8 --hidden 24 --value-size 8 --batch-size 40 --epochs 1 --seed 3"
  "ntm-train --task copy --width 4 --len-max 4 --hidden 16 --memory-rows 8 --memory-cols 4 --batch-size 3 --steps 6 --seed 2"
  "memn2n-train -i $D/babi --task 1 --epochs 1 --ls-max-epochs 1 --seed 2"
  "bert-pretrain -i text.txt --layers 1 --hidden 16 --heads 2 --ff 32 --len-max 24 --batch-size 32 --min-freq 1 --steps 3 --seed 3"
  "caption-train -i scenes.txt --captions caps.tsv --embed 8 --hidden 16 --attention-size 8 --channels 4,4 --batch-size 16 --epochs 1 --seed 3"
  "img-train -i $D/imgclass/train.npz --arch cnn-sagan --channels 4,8 --hidden 16 --batch-size 30 --epochs 1 --seed 3"
  "ram-train -i $D/ram/corner-train.npz --glimpse-size 3 --glimpse-scales 2 --glimpses 3 --glimpse-hidden 8 --hidden 16 --batch-size 16 --steps 4 --seed 3"
  "snail-train --arms 3 --pulls 5 --embed 8 --filters 4 --key-size 4 --value-size 4 --batch-size 8 --eval-episodes 10 --steps 3 --seed 3"
  "snail-train --task fewshot -i x.npy --labels y.txt --ways 3 --classes 0,1,2,3 --shots 1 --channels 2 --filters 2 --key-size 2 --value-size 2 --batch-size 8 --eval-episodes 10 --steps 3 --seed 3"
)
k=0
for cmd in "${trainers[@]}"; do
  k=$((k + 1))
  name="${cmd%% *} #$k"
  # shellcheck disable=SC2086
  expect 0 $cmd -q --threads 1 -o m$k-t1.akm
  for t in 2 3 8; do
    # shellcheck disable=SC2086
    expect 0 $cmd -q --threads $t -o m$k-t$t.akm
    check_eq "$(cmp -s m$k-t1.akm m$k-t$t.akm && echo same)" same "$name: --threads $t = --threads 1"
  done
  if [ $mpi = 1 ]; then
    # shellcheck disable=SC2086
    expect 0 mpirun -np 2 $cmd -q --threads 2 -o m$k-mpi.akm
    check_eq "$(cmp -s m$k-t1.akm m$k-mpi.akm && echo same)" same "$name: 2 ranks x 2 threads = 1 thread"
  fi
done
# ... and the comparison can fail: another seed, another model.
expect 0 seq2seq-train -i dates.tsv --tokens chars --embed 64 --hidden 128 --batch-size 80 --steps 3 --seed 5 -q --threads 1 -o other.akm
check_eq "$(cmp -s m1-t1.akm other.akm && echo same)" "" "another seed gives another model"
finish
