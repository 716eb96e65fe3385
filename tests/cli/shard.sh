#!/usr/bin/env bash
# cost: 100
# --shard K/N of attn-score, attn-mha and hopfield-recall: the three slices' outputs
# concatenated are the whole run's output, byte for byte, for every score kind, mask kind
# (causal masks count the absolute query position), local attention, batches and row
# slices, at 1 and 2 threads; the modes that cannot be sliced are usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
A="$ATTNKIT_TESTDATA/attention"
L="$ATTNKIT_TESTDATA/local"
M="$ATTNKIT_TESTDATA/mha"

# Query rows of a 2-D problem: sizes that make several row blocks and gemm edges, and two
# blocks of keys in the streaming kernel.
tensor-rand --shape 300,16 --seed 1 -o Q.txt
tensor-rand --shape 280,16 --seed 2 -o K.txt
tensor-rand --shape 280,8 --seed 3 -o V.txt
tensor-rand --shape 300,280 --dist sign --seed 4 | awk '{ for (j = 1; j <= NF; j++) $j = ($j > 0); print }' >M01.txt
# Every score kind at 2 threads (the row blocks split between threads), dot also at 1.
# (Under the sanitizers, whose process start is slow: 2 threads only, and not scaled-dot, which
# is dot's code path with a scale.)
threads="1 2" scores="dot scaled-dot cosine"
sanitized && threads=2 scores="dot cosine"
for t in $threads; do
  for score in $scores; do
    [ "$t" = 1 ] && [ "$score" != dot ] && continue
    for mask in "" "--mask causal" "--mask M01.txt" "--local m --window 3" \
      "--local m --window 200 --mask causal"; do
      shard_ok attn-score --query Q.txt --key K.txt --value V.txt --score $score $mask --threads $t
      shard_ok attn-score --query Q.txt --key K.txt --score $score $mask --threads $t
      shard_ok attn-score --query Q.txt --key K.txt --score $score --emit scores $mask --threads $t
      shard_ok attn-score --query Q.txt --key K.txt --value V.txt --score $score --hard argmax $mask --threads $t
    done
  done
done
# The scores with parameters, and predictive local attention (many queries, the fixtures' keys).
tensor-rand --shape 200,3 --seed 5 -o Qx.txt
tensor-rand --shape 200,4 --seed 6 -o Q4.txt
for what in scores weights context; do
  shard_ok attn-score --query Qx.txt --key "$A/K.txt" --value "$A/V.txt" --score bilinear --params "$A/bilinear.npz" --emit $what --mask causal
  shard_ok attn-score --query Qx.txt --key "$A/K.txt" --value "$A/V.txt" --score additive --params "$A/additive.npz" --emit $what
  shard_ok attn-score --query Q4.txt --key "$L/K.txt" --value "$L/V.txt" --score location --params "$L/params.npz" --emit $what
  shard_ok attn-score --query Q4.txt --key "$L/K.txt" --value "$L/V.txt" --local p --window 2 --params "$L/params.npz" --emit $what
done
# Batches: the first dimension of every 3-D operand, with key padding.
tensor-rand --shape 7,40,16 --seed 7 -o QB.txt
tensor-rand --shape 7,30,16 --seed 8 -o KB.txt
tensor-rand --shape 7,30,8 --seed 9 -o VB.txt
printf '30\n5\n0\n12\n30\n1\n29\n' >len.txt
for mask in "" "--mask causal" "--local m --window 4"; do
  shard_ok attn-score --query QB.txt --key KB.txt --value VB.txt $mask --key-padding len.txt
  shard_ok attn-score --query QB.txt --key KB.txt --emit weights $mask
done
shard_ok attn-score --query Q.txt --key KB.txt --value VB.txt --mask causal
shard_ok attn-score --query "$L/Qb.npy" --key "$L/Kb.npy" --value "$L/Vb.npy" --local p --window 2 --params "$L/params.npz"
# Each slice reads back on its own (a later slice of a batch starts with the blank line that
# separates it from the one before).
expect 0 attn-score --query QB.txt --key KB.txt --value VB.txt --shard 2/3 -o s2.txt
expect_out "s2.txt	text	text	2x40x8" sh -c "tensor-info --no-header s2.txt | cut -f 1-4"
# More slices than items: the empty ones write nothing.
expect 0 attn-score --query "$A/Q.txt" --key "$A/K.txt" --shard 1/9
check_eq "$(wc -c <"$T/out")" 0 "an empty slice"
# What cannot be sliced.
expect_err 2 "--shard does not apply to --hard sample" \
  attn-score --query Q.txt --key K.txt --hard sample --shard 1/2
expect_err 2 "--shard writes text" attn-score --query Q.txt --key K.txt --shard 1/2 -o w.npy
no_file w.npy
expect_err 2 "--shard writes text" attn-score --query Q.txt --key K.txt --shard 1/2 --npy

# attn-mha: self- and cross-attention, rows and batches, context and weights.
tensor-rand --shape 300,8 --seed 11 -o X.txt
tensor-rand --shape 7,50,8 --seed 12 -o XB.txt
for t in $threads; do
  for x in X.txt XB.txt; do
    for what in context weights; do
      for mask in "" "--mask causal"; do
        shard_ok attn-mha --query $x --params "$M/self.npz" --heads 2 --emit $what $mask --threads $t
        shard_ok attn-mha --query $x --key $x --value $x --params "$M/self.npz" --heads 2 --emit $what $mask --threads $t
      done
    done
  done
done
shard_ok attn-mha --query "$M/X1.npy" --params "$M/self4.npz" --heads 4 --mask "$M/mask.txt"
shard_ok attn-mha --query "$M/X.npy" --params "$M/self.npz" --heads 2 --key-padding "$M/lengths.txt"
shard_ok attn-mha --query "$M/Qc.npy" --key "$M/Kc.npy" --value "$M/Vc.npy" --params "$M/cross.npz" --heads 2
expect_err 2 "not head-weights" attn-mha --query X.txt --params "$M/self.npz" --heads 2 --emit head-weights --shard 1/2
expect_err 2 "--shard writes text" attn-mha --query X.txt --params "$M/self.npz" --heads 2 --shard 1/2 -o c.npz

# hopfield-recall: probes, async (each probe's own generator, numbered in the whole run) and
# sync, with many probes near the edge of the basins.
tensor-rand --shape 30,200 --dist sign --seed 9 -o p.txt
hopfield-store -q -i p.txt -o p.npz
for f in 0.1 0.3 0.45; do pattern-noise -q -i p.txt --flip $f --seed 5; done >probes.txt
for t in $threads; do
  for mode in async sync; do
    shard_ok hopfield-recall -q -m p.npz -i probes.txt --mode $mode --seed 3 --threads $t
  done
done
shard_ok hopfield-recall -q -m p.npz -i probes.txt --order sequential --max-steps 2
expect 0 hopfield-recall -m p.npz -i probes.txt --patterns p.txt --shard 3/3
grep -q "^hopfield-recall: probe 90: " "$T/err" || fail "probes are numbered in the whole run: $(head -3 "$T/err")"
expect_err 2 "--shard is for classic nets" hopfield-recall --modern --patterns p.txt --beta 1 -i probes.txt --shard 1/2
expect_err 2 "--shard does not apply to --trace" hopfield-recall -m p.npz -i probes.txt --trace t.tsv --shard 1/2
expect_err 2 "--shard writes text, not PBM" hopfield-recall -m p.npz -i probes.txt -o s.pbm --shard 1/2
finish
