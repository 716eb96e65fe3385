#!/usr/bin/env bash
# ntm-address: the four addressing stages against an independent NumPy implementation of the
# paper's equations (testdata/make_ntm_golden.py), the properties a student can check with
# awk, the .npz output, help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G=$ATTNKIT_TESTDATA/ntm

help_ok ntm-address

# Golden cases (random memory, wider shifts, zero memory, beta 100 with gamma 50, gate 0).
for k in 1 2 3 4 5 6; do
  read -r beta gate gamma <"$G/case$k.args"
  expect 0 ntm-address -i "$G/case$k.memory.txt" --key "$G/case$k.key.txt" \
    --beta "$beta" --gate "$gate" --gamma "$gamma" --shift "$G/case$k.shift.txt" --prev "$G/case$k.prev.txt"
  cp "$T/out" "got$k.txt"
  close_enough "got$k.txt" "$G/case$k.expected.txt" 2e-6
done

# Every row is a distribution; the default shift (0,1,0) and gamma 1 leave wg unchanged.
printf '1 0 0\n0 1 0\n0 0 1\n1 1 0\n' >m.txt
expect 0 ntm-address -i m.txt --key 0,1,0 --beta 5 --gate 0.5 --prev 1,0,0,0
cp "$T/out" s.txt
check_eq "$(awk '{ s = 0; for (i = 1; i <= NF; i++) { s += $i; if ($i < 0) bad++ }
  if (s < 0.999999 || s > 1.000001) bad++ } END { print bad + 0 }' s.txt)" 0 "rows sum to 1, no negatives"
check_eq "$(sed -n 2p s.txt)" "$(sed -n 3p s.txt)" "shift (0,1,0) is the identity"
close_enough <(sed -n 3p s.txt) <(sed -n 4p s.txt) 1e-6
# Shift +1 rotates with wrap-around: the last weight moves to the first row.
expect 0 ntm-address -i m.txt --key 0,1,0 --beta 5 --gate 0 --prev 0.1,0.2,0.3,0.4 --shift 0,0,1
check_eq "$(sed -n 3p "$T/out")" "0.4 0.1 0.2 0.3" "shift +1 rotates by one"
# Gate 0 returns the previous weighting; large beta picks the best-matching row.
check_eq "$(sed -n 2p "$T/out")" "0.1 0.2 0.3 0.4" "gate 0: previous weighting"
expect 0 ntm-address -i m.txt --key 0,1,0 --beta 1000
check_eq "$(sed -n 1p "$T/out")" "0 1 0 0" "beta 1000: one-hot at the row equal to the key"
# Key and shift as files; standard input for the memory; .npz output.
echo "0 1 0" >k.txt
expect 0 sh -c 'ntm-address -i - --key k.txt --beta 5 --gate 0.5 --prev 1,0,0,0 <m.txt'
check_eq "$(cat "$T/out")" "$(cat s.txt)" "memory from standard input, key from a file"
expect 0 ntm-address -i m.txt --key 0,1,0 --beta 5 --gate 0.5 --prev 1,0,0,0 -o st.npz
expect 0 tensor-info st.npz
for a in wc wg wshift w; do grep -q "$a" "$T/out" || fail "st.npz lacks $a"; CHECKS=$((CHECKS + 1)); done
expect 0 tensor-convert -i st.npz:w
check_eq "$(cat "$T/out")" "$(sed -n 4p s.txt)" "npz member w equals the fourth row"

# Errors: status, message, no output left.
expect_err 2 "ntm-address: the option '--input' is required" ntm-address --key 1,0,0 -o o.txt
no_file o.txt
expect_err 2 "ntm-address: the option '--key' is required" ntm-address -i m.txt -o o.txt
expect_err 2 "ntm-address: --key has 2 values, the 4 x 3 memory needs 3" ntm-address -i m.txt --key 1,0 -o o.txt
no_file o.txt
expect_err 2 "ntm-address: --prev has 3 values, the 4 x 3 memory needs 4" ntm-address -i m.txt --key 1,0,0 --prev 1,0,0 -o o.txt
expect_err 2 "ntm-address: --shift has 2 values: expected an odd number" ntm-address -i m.txt --key 1,0,0 --shift 0.5,0.5 -o o.txt
expect_err 2 "ntm-address: --shift has 5 values" ntm-address -i m.txt --key 1,0,0 --shift 0,0,1,0,0 -o o.txt
expect_err 2 "ntm-address: --gate must be in [0, 1]" ntm-address -i m.txt --key 1,0,0 --gate 2 -o o.txt
expect_err 2 "ntm-address: --gamma must be a number >= 1" ntm-address -i m.txt --key 1,0,0 --gamma 0.5 -o o.txt
expect_err 2 "ntm-address: --beta must be a number >= 0" ntm-address -i m.txt --key 1,0,0 --beta -1 -o o.txt
expect_err 2 "ntm-address: " ntm-address -i m.txt --key 1,0,0 --beta lots
no_file o.txt
expect_err 1 "ntm-address: shift: value 1 is negative" ntm-address -i m.txt --key 1,0,0 --shift -1,1,1 -o o.txt
no_file o.txt
expect_err 1 "ntm-address: nothere.txt: " ntm-address -i nothere.txt --key 1,0,0
printf '1 2\n3\n' >ragged.txt
expect_err 1 "ntm-address: ragged.txt:2:" ntm-address -i ragged.txt --key 1,0
printf "1 nan 0\n0 0 0\n0 0 1\n" >nan.txt
expect_err 1 "ntm-address: memory: value 2 is not finite" ntm-address -i nan.txt --key 1,0,0
echo "1 2 3" >v.txt
expect_err 1 "ntm-address: st.npz:w: memory must be an N x M matrix" ntm-address -i st.npz:w --key 1,0,0,0
expect_err 1 "ntm-address: /dev/full: write error" ntm-address -i m.txt --key 1,0,0 -o /dev/full
expect_err 1 "ntm-address: nodir/o.npz: cannot create" ntm-address -i m.txt --key 1,0,0 -o nodir/o.npz
finish
