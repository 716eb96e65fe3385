#!/usr/bin/env bash
# hopfield-store: the three rules (W symmetric, zero diagonal, Hebb's values), PBM input,
# help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/hopfield"
help_ok hopfield-store

expect_err 0 "1 patterns of N = 16 neurons stored by the hebb rule" \
  hopfield-store -i "$G/checkerboard.txt" -o net.npz
expect 0 tensor-convert -i net.npz:W W.txt
expect 0 tensor-convert -i net.npz:b b.txt
check_eq "$(awk '{ for (j = 1; j <= NF; j++) if (j == NR && $j != 0) print "diag" }' W.txt)" "" "zero diagonal"
# Hebb with one pattern: w_ij = p_i p_j / 16.
check_eq "$(awk 'NR == 1 { print $2, $3 }' W.txt)" "-0.0625 0.0625" "Hebb values"
check_eq "$(tr ' ' '\n' <b.txt | sort -u)" "0" "zero thresholds"
# The PBM form of the same checkerboard gives the same net.
expect 0 hopfield-store -q -i "$G/checkerboard.pbm" -o pbm.npz
[ -s "$T/err" ] && fail "--quiet wrote to stderr"
expect 0 tensor-convert -i pbm.npz:W Wp.txt
check_eq "$(cat Wp.txt)" "$(cat W.txt)" "PBM and text give the same W"
# Standard input; every rule makes a symmetric W with a zero diagonal.
tensor-rand --shape 6,40 --dist sign --seed 3 -o p.txt
for rule in hebb storkey pseudo-inverse; do
  run sh -c "hopfield-store --rule $rule -o $rule.npz <p.txt"
  check_eq "$RC" 0 "$rule status"
  tensor-convert -i "$rule.npz:W" "$rule.txt"
  CHECKS=$((CHECKS + 1))
  msg=$(awk '{ for (j = 1; j <= NF; j++) w[NR, j] = $j; n = NF }
    END { for (i = 1; i <= n; i++) { if (w[i, i] != 0) { print "diag " i; exit }
          for (j = 1; j <= n; j++) if (w[i, j] != w[j, i]) { print "asym " i " " j; exit } } }' "$rule.txt")
  [ -z "$msg" ] || fail "$rule: $msg"
done
# Tiles: a 4x8 PBM holding two 4x4 tiles.
printf 'P1 8 4\n1 0 1 0 1 1 1 1\n0 1 0 1 1 1 1 1\n1 0 1 0 0 0 0 0\n0 1 0 1 0 0 0 0\n' >two.pbm
expect_err 0 "2 patterns of N = 16" hopfield-store -i two.pbm --image-size 4x4 -o two.npz

# Errors: status, message, no output left behind.
expect_err 1 "hopfield-store: $G/not_bipolar.txt: row 2, column 2: value 0.5 is not -1 or +1" \
  hopfield-store -i "$G/not_bipolar.txt" -o e.npz
no_file e.npz
expect_err 2 "--rule: unknown rule 'oja' (choose hebb, storkey or pseudo-inverse)" \
  hopfield-store -i p.txt --rule oja -o e.npz
no_file e.npz
expect_err 2 "the option '--output' is required" hopfield-store -i p.txt
expect_err 2 "image size: expected WIDTHxHEIGHT" hopfield-store -i two.pbm --image-size 4 -o e.npz
no_file e.npz
expect_err 1 "two.pbm: PBM image 1 (8x4) is not a whole number of 3x4 tiles" \
  hopfield-store -i two.pbm --image-size 3x4 -o e.npz
no_file e.npz
printf 'P1 2 2 1 0 1\n' >cut.pbm
expect_err 1 "cut.pbm: PBM image 1: file cut short after 3 of 4 pixels" hopfield-store -i cut.pbm -o e.npz
no_file e.npz
expect_err 1 "hopfield-store: missing.txt" hopfield-store -i missing.txt -o e.npz
no_file e.npz
expect_err 1 "hopfield-store: " hopfield-store -i p.txt -o /dev/full
finish
