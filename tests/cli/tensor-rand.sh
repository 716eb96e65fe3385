#!/usr/bin/env bash
# tensor-rand: shapes, the three distributions, determinism (byte-identical output for the
# same seed in every format), help, and every documented error (status, message, no file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok tensor-rand

# Shape and layout of text output.
expect 0 tensor-rand --shape 3,4 --seed 1
check_eq "$(wc -l <"$T/out")" 3 "3x4: lines"
check_eq "$(awk '{ print NF }' "$T/out" | sort -u)" 4 "3x4: fields per line"
grep -q ' $' "$T/out" && fail "trailing blanks"
expect 0 tensor-rand --shape 2x3x4 --seed 1
check_eq "$(wc -l <"$T/out")" 7 "2x3x4: 6 rows and a blank line"
check_eq "$(sed -n 4p "$T/out")" "" "2x3x4: blank line between the matrices"
expect 0 tensor-rand --shape 5
check_eq "$(awk '{ print NF }' "$T/out")" 5 "a vector is one row"

# Determinism: the same seed gives the same bytes, in every format; another seed does not.
for ext in txt npy npz; do
  expect 0 tensor-rand --shape 4,5 --seed 42 -o "a.$ext"
  expect 0 tensor-rand --shape 4,5 --seed 42 -o "b.$ext"
  CHECKS=$((CHECKS + 1))
  cmp -s "a.$ext" "b.$ext" || fail "seed 42 twice: a.$ext and b.$ext differ"
  expect 0 tensor-rand --shape 4,5 --seed 43 -o "c.$ext"
  CHECKS=$((CHECKS + 1))
  cmp -s "a.$ext" "c.$ext" && fail "seeds 42 and 43 gave the same $ext"
done
expect 0 tensor-rand --shape 4,5 --seed 42 --npy
CHECKS=$((CHECKS + 1))
cmp -s "$T/out" a.npy || fail "--npy on standard output differs from -o a.npy"
expect 0 tensor-convert a.npy
CHECKS=$((CHECKS + 1))
cmp -s "$T/out" a.txt || fail "a.npy as text differs from a.txt (shortest round trip)"
# Default seed 0, and the first rows of a larger tensor equal a smaller one.
expect 0 tensor-rand --shape 2,3
cp "$T/out" s0.txt
expect 0 tensor-rand --shape 2,3 --seed 0
check_eq "$(cat "$T/out")" "$(cat s0.txt)" "default seed is 0"
expect 0 tensor-rand --shape 5,3 --seed 0
check_eq "$(head -2 "$T/out")" "$(cat s0.txt)" "row-major draws: prefix of a taller tensor"

# Distributions, checked through tensor-info (min max mean std in columns 5-8).
stats() { tensor-info --no-header "$1" | cut -f5-8; }
expect 0 tensor-rand --shape 200,100 --seed 5 --mean 3 --std 2 -o n.npy
read -r mn mx mean sd <<<"$(stats n.npy)"
CHECKS=$((CHECKS + 1))
awk -v m="$mean" -v s="$sd" 'BEGIN { exit !(m > 2.95 && m < 3.05 && s > 1.95 && s < 2.05) }' ||
  fail "normal(3, 2): mean $mean, std $sd"
expect 0 tensor-rand --shape 100,100 --seed 6 --dist uniform --low -2 --high -1 -o u.npy
read -r mn mx mean sd <<<"$(stats u.npy)"
CHECKS=$((CHECKS + 1))
awk -v a="$mn" -v b="$mx" -v m="$mean" 'BEGIN { exit !(a >= -2 && b < -1 && a < -1.99 && b > -1.01 && m > -1.51 && m < -1.49) }' ||
  fail "uniform[-2, -1): min $mn max $mx mean $mean"
expect 0 tensor-rand --shape 100,100 --seed 7 --dist sign
check_eq "$(tr ' ' '\n' <"$T/out" | sort -u | tr '\n' ' ')" "-1 1 " "sign: values"
plus=$(tr ' ' '\n' <"$T/out" | grep -c '^1$')
CHECKS=$((CHECKS + 1))
[ "$plus" -gt 4850 ] && [ "$plus" -lt 5150 ] || fail "sign: $plus of 10000 are +1"
expect 0 tensor-rand --shape 2,3 --seed 1 --precision 3
CHECKS=$((CHECKS + 1))
awk '{ for (i = 1; i <= NF; i++) { s = $i; gsub(/[-.]/, "", s); sub(/^0+/, "", s); sub(/e.*/, "", s); if (length(s) > 3) exit 1 } }' "$T/out" ||
  fail "--precision 3: $(cat "$T/out")"

# Rank 4: .npy and .npz fine, text refused.
expect 0 tensor-rand --shape 2,1,3,2 --seed 1 -o r4.npy
expect 0 tensor-info --no-header r4.npy
check_eq "$(cut -f4 "$T/out")" "2x1x3x2" "rank 4 shape"
expect_err 1 "tensor-rand: r4.txt: text holds rank <= 3; write .npy" tensor-rand --shape 2,1,3,2 -o r4.txt
no_file r4.txt

# Usage errors: status 2, a message naming the option, no output file.
expect_err 2 "tensor-rand: the option '--shape' is required" tensor-rand -o out.txt
no_file out.txt
expect_err 2 "tensor-rand: --shape: bad shape '3,a'" tensor-rand --shape 3,a -o out.txt
no_file out.txt
expect_err 2 "tensor-rand: --shape: bad shape '3,,4'" tensor-rand --shape 3,,4 -o out.txt
expect_err 2 "tensor-rand: --shape: rank 5" tensor-rand --shape 1,1,1,1,1 -o out.txt
expect_err 2 "tensor-rand: --dist: unknown distribution 'gauss'" tensor-rand --shape 3 --dist gauss -o out.txt
no_file out.txt
expect_err 2 "std >= 0" tensor-rand --shape 3 --std -1 -o out.txt
expect_err 2 "low < high" tensor-rand --shape 3 --dist uniform --low 1 --high 1 -o out.txt
expect_err 2 "tensor-rand: --mean applies to --dist normal only" tensor-rand --shape 3 --dist sign --mean 1
expect_err 2 "tensor-rand: --low applies to --dist uniform only" tensor-rand --shape 3 --low 1
expect_err 2 "--precision must be between 1 and 17" tensor-rand --shape 3 --precision 0
no_file out.txt

# Write errors: status 1, "write error", nothing left behind.
expect_err 1 "tensor-rand: /dev/full: write error" tensor-rand --shape 3,4 -o /dev/full
run sh -c 'tensor-rand --shape 3,4 >/dev/full'
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "tensor-rand: .*write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
check_eq "$(grep -c 'write error' "$T/err")" 1 "one write error message"
expect 0 tensor-rand --shape 3,4 -o /dev/null
expect_err 1 "tensor-rand: nodir/x.npy: cannot create" tensor-rand --shape 3 -o nodir/x.npy
finish
