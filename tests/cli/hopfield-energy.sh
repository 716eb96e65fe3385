#!/usr/bin/env bash
# hopfield-energy: classic E = -1/2 s'Ws - b's against awk, the modern energy against its
# formula in awk, help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/hopfield"
help_ok hopfield-energy

hopfield-store -q -i "$G/checkerboard.txt" -o cb.npz
# One stored pattern p: E(s) = -1/2 (N m^2 - 1) with m = p.s/N: -7.5 for p and -p, 0.5 for
# 8 flipped bits (m = 0).
pattern-noise -q -i "$G/checkerboard.txt" --flip-count 8 --seed 1 -o n8.txt
pattern-noise -q -i "$G/checkerboard.txt" --flip 1 -o neg.txt
cat "$G/checkerboard.txt" neg.txt n8.txt >s.txt
expect_out "$(printf -- '-7.5\n-7.5\n0.5')" hopfield-energy -m cb.npz -i s.txt
expect 0 hopfield-energy -m cb.npz -i "$G/checkerboard.pbm" -o e.npy
check_eq "$(head -c 6 e.npy | tail -c 5)" "NUMPY" ".npy output"
# A random symmetric net made by hand (an .npz of W only: b = 0); awk computes E.
tensor-rand --shape 6,6 --seed 3 -o A.txt
awk '{ for (j = 1; j <= NF; j++) a[NR, j] = $j; n = NF }
  END { for (i = 1; i <= n; i++) { l = ""; for (j = 1; j <= n; j++) l = l (j > 1 ? " " : "") (i == j ? 0 : a[i, j] + a[j, i]); print l } }' A.txt >W.txt
tensor-rand --shape 5,6 --dist sign --seed 4 -o S.txt
tensor-convert -i W.txt w0.npz:W
expect 0 hopfield-energy -m w0.npz -i S.txt -o e0.txt
awk 'FILENAME == ARGV[1] { for (j = 1; j <= NF; j++) w[FNR, j] = $j; n = NF; next }
  { e = 0; for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) e -= 0.5 * $i * w[i, j] * $j; print e }' W.txt S.txt >want0.txt
close_enough e0.txt want0.txt 1e-5

# Modern: E = -lse(beta, X xi) + 1/2 xi'xi + log(P)/beta + 1/2 M^2, checked in awk.
tensor-rand --shape 7,5 --seed 5 -o X.txt
tensor-rand --shape 3,5 --seed 6 -o Q.txt
expect 0 hopfield-energy --modern --patterns X.txt --beta 0.5 -i Q.txt -o me.txt
awk -v b=0.5 'FILENAME == ARGV[1] { p++; q = 0; for (j = 1; j <= NF; j++) { x[p, j] = $j; q += $j * $j }
    if (q > m2) m2 = q; d = NF; next }
  { s = 0; for (k = 1; k <= p; k++) { z = 0; for (j = 1; j <= d; j++) z += x[k, j] * $j; s += exp(b * z) }
    h = 0; for (j = 1; j <= d; j++) h += 0.5 * $j * $j
    print -log(s) / b + h + log(p) / b + 0.5 * m2 }' X.txt Q.txt >mwant.txt
close_enough me.txt mwant.txt 1e-4

# Errors.
expect_err 1 "hopfield-energy: $G/not_bipolar.txt: row 2, column 2: value 0.5 is not -1 or +1" \
  hopfield-energy -m cb.npz -i "$G/not_bipolar.txt" -o e.txt
no_file e.txt
expect_err 1 "hopfield-energy: S.txt: states have 6 columns but the net has N = 16 neurons" \
  hopfield-energy -m cb.npz -i S.txt -o e.txt
no_file e.txt
expect_err 1 "hopfield-energy: Q.txt: states have 5 columns but the stored patterns [6, 6] have 6" \
  hopfield-energy --modern --patterns W.txt --beta 1 -i Q.txt -o e.txt
no_file e.txt
expect_err 2 "-m NET.npz is required (or --modern)" hopfield-energy -i S.txt
expect_err 2 "--modern needs --patterns X and --beta B" hopfield-energy --modern --beta 1 -i Q.txt
expect_err 2 "--beta must be a number above 0" hopfield-energy --modern --patterns X.txt --beta=-1 -i Q.txt
expect_err 2 "--model is for classic nets, not --modern" hopfield-energy --modern -m cb.npz --patterns X.txt --beta 1 -i Q.txt
expect_err 2 "--patterns and --beta are for --modern" hopfield-energy -m cb.npz --beta 1 -i S.txt
expect_err 1 "hopfield-energy: missing.npz" hopfield-energy -m missing.npz -i S.txt
expect_err 1 "hopfield-energy: " hopfield-energy -m cb.npz -i "$G/checkerboard.txt" -o /dev/full
finish
