#!/usr/bin/env bash
# cost: 20
# Pointer networks: ptrtask-gen's answers (checked here by independent awk), ptr-train
# (threads, resume, learning to sort 4 numbers), ptr-run (outputs, --eval, beam, attention,
# pictures) and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

# ptrtask-gen: seeded, the same for any --threads, answers that are what they claim.
expect 0 ptrtask-gen --task sort --len-min 3 --len-max 8 --count 200 --seed 4 -o s.txt
expect 0 ptrtask-gen --task sort --len-min 3 --len-max 8 --count 200 --seed 4 -o s2.txt --threads 2
CHECKS=$((CHECKS + 1)); cmp -s s.txt s2.txt || fail "the same seed gave other problems"
check_eq "$(awk '{ n = 0; for (i = 1; $i != "output"; i++) v[++n] = $i
  if (n < 3 || n > 8 || NF != 2 * n + 1) bad++
  for (k = 1; k <= n; k++) { seen[$(n + 1 + k)]++; if (k > 1 && v[$(n + 1 + k)] < v[$(n + k)]) bad++ }
  for (k = 1; k <= n; k++) if (seen[k] != 1) bad++; delete seen } END { print bad + 0 }' s.txt)" 0 "sort answers ascend"
expect 0 ptrtask-gen --task tsp --n 6 --count 50 --seed 2 -o t.txt --threads 1
grep -qF "ptrtask-gen: problem 50/50 (100%)" "$T/err" || fail "ptrtask-gen's progress counts problems: $(cat "$T/err")"
expect 0 ptrtask-gen --task tsp --n 6 --count 50 --seed 2 -o t2.txt --threads 2
CHECKS=$((CHECKS + 1)); cmp -s t.txt t2.txt || fail "tsp answers depend on --threads"
# The exact tours are no longer than 2-opt's on the same points.
expect 0 ptrtask-gen --task tsp --n 6 --count 50 --seed 2 --solver 2opt -o t3.txt
len='function d(a, b) { return sqrt((x[a] - x[b]) ^ 2 + (y[a] - y[b]) ^ 2) }
  { n = 0; for (i = 1; $i != "output"; i += 2) { n++; x[n] = $i; y[n] = $(i + 1) }
    s = 0; for (k = i + 1; k < NF; k++) s += d($k, $(k + 1)); print s }'
check_eq "$(paste <(awk "$len" t.txt) <(awk "$len" t3.txt) | awk '$1 > $2 + 1e-9 { bad++ } END { print bad + 0 }')" 0 "exact tours no longer than 2-opt's"
check_eq "$(awk '{ for (i = 1; $i != "output"; i++); if ($(i + 1) != 1 || $NF != 1 || NF - i != 7) bad++ } END { print bad + 0 }' t.txt)" 0 "tours from point 1 back to it"
expect 0 ptrtask-gen --task hull --len-min 4 --len-max 12 --count 100 --seed 3 -o h.txt
check_eq "$(awk '{ for (i = 1; $i != "output"; i++); if ($(i + 1) != $NF || NF - i < 4) bad++ } END { print bad + 0 }' h.txt)" 0 "hulls closed, at least a triangle"

# .npz for NumPy: one size only.
expect 0 ptrtask-gen --task hull --n 6 --count 3 --seed 3 -o h.npz
expect 0 tensor-info h.npz:points
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" 3x6x2 "points [count, n, 2]"
expect_err 2 "ptrtask-gen: -o .npz: the problems must have one size (--n); write text for mixed sizes" ptrtask-gen --task hull --len-min 3 --len-max 6 -o m.npz

# Errors.
expect_err 2 "ptrtask-gen: --len-max 21 is beyond the exact tour's limit (Held-Karp, 20 points): choose the solver nn or 2opt" ptrtask-gen --task tsp --n 21
expect_err 2 "ptrtask-gen: --solver: only tsp has heuristic solvers" ptrtask-gen --task hull --solver 2opt
expect_err 2 "ptrtask-gen: --solver: unknown solver 'best'" ptrtask-gen --task tsp --solver best
expect_err 2 "ptrtask-gen: --task: unknown task 'tps' (choose sort, hull or tsp)" ptrtask-gen --task tps
expect_err 2 "ptrtask-gen: --n and --len-min/--len-max: give one" ptrtask-gen --task sort --n 3 --len-min 2
printf '0.1 0.2 0.3 output 1 2 1\n' > odd.txt
expect_err 1 "ptr-train: odd.txt:1: 3 coordinates are not points of 2 coordinates" ptr-train --task hull -i odd.txt -o x.akm
printf '0.1 0.2\n0.1 0.2 0.3 0.4 output 1 3 1\n' > range.txt
expect_err 1 "ptr-train: range.txt:2: index 3 outside 1..2" ptr-train --task tsp -i range.txt -o x.akm
printf '0.1 0.2 0.3 output 1 1 2 3\n' > twice.txt
expect_err 1 "ptr-train: twice.txt:1: the answer is not a valid sort answer under the mask (step 2); train with --no-mask to accept it" ptr-train --task sort -i twice.txt -o x.akm
no_file x.akm

# Training: 4 numbers sorted; the model does not depend on --threads; an exact resume.
expect 0 ptrtask-gen --task sort --n 4 --count 2000 --seed 1 -o train.txt
expect 0 ptrtask-gen --task sort --n 4 --count 200 --seed 2 -o valid.txt
small="--task sort -i train.txt --valid valid.txt --embed 16 --hidden 32 --lr 0.01 --batch-size 32 --seed 3 -q"
expect 0 ptr-train $small --epochs 4 --threads 1 -o m1.akm --log m1.tsv
expect 0 ptr-train $small --epochs 4 --threads 2 -o m2.akm
CHECKS=$((CHECKS + 1)); cmp -s m1.akm m2.akm || fail "the model depends on --threads"
expect 0 ptr-train $small --epochs 2 --threads 1 -o r.akm --log r.tsv --checkpoint-every 30
expect 0 ptr-train -i train.txt --valid valid.txt --epochs 4 --threads 1 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s m1.akm r.akm || fail "resumed model differs"
check_eq "$(cat r.tsv)" "$(cat m1.tsv)" "resumed log"
expect 0 ptr-run --model m1.akm -i valid.txt --eval
exact=$(awk -F'\t' '$1 == "all" { print $3 }' "$T/out")
check_eq "$(awk -F'\t' '$1 == "all" { print $4 }' "$T/out")" 1.0000 "every masked output a permutation"
CHECKS=$((CHECKS + 1))
awk -v c="$exact" 'BEGIN { exit !(c >= 0.6) }' || fail "sorting 4 numbers learned only to $exact exact"
expect 0 ptr-run --model m1.akm -i valid.txt --eval --beam 3
check_eq "$(head -1 "$T/out")" "$(printf 'n\tproblems\texact\tvalid')" "--eval header"
expect 0 ptr-run --model m1.akm -i valid.txt -o out.txt --alignments att.npz
check_eq "$(wc -l < out.txt)" 200 "one output a problem"
expect 0 tensor-info att.npz:s0
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" 5x5 "pointer distributions: 4 outputs and the end over [end, 4 points]"
# Pictures of hulls (an untrained model: its outputs drawn against the answers).
expect 0 ptr-train --task hull -i h.txt --epochs 1 --hidden 8 --embed 4 --bidirectional -q -o hull.akm
expect 0 ptr-run --model hull.akm -i h.txt --draw hulls.svg --draw-count 6 -o /dev/null
check_eq "$(grep -c '<polyline' hulls.svg)" 12 "an answer and an output a panel"
expect 0 ptr-run --model hull.akm -i h.txt --draw hulls.png -o /dev/null
check_eq "$(head -c 4 hulls.png | tail -c 3)" PNG "a PNG"
expect_err 2 "ptr-run: --draw: sorting problems are not drawn" ptr-run --model m1.akm -i valid.txt --draw x.svg
expect_err 2 "ptr-run: --draw: the file must end in .svg or .png" ptr-run --model hull.akm -i h.txt --draw x.pdf
awk '{ sub(/ output.*/, ""); print }' valid.txt > bare.txt
expect 0 ptr-run --model m1.akm -i bare.txt -o bare.out
check_eq "$(wc -l < bare.out)" 200 "problems without answers decode"
expect_err 1 "ptr-run: bare.txt:1: problem 1 has no answer (needed by --eval and --draw)" ptr-run --model m1.akm -i bare.txt --eval
expect_err 2 "ptr-run: --beam must be >= 1" ptr-run --model m1.akm -i valid.txt --beam 0
# Answers the model's task does not allow are not scored (a repeated point is no sorting).
awk 'NR == 2 { sub(/ output.*/, " output 1 1 2 3") } { print }' valid.txt > repeat.txt
expect_err 1 "ptr-run: repeat.txt:2: problem 2: its answer is not a valid sort answer (step 2)" \
  ptr-run --model m1.akm -i repeat.txt --eval
finish
