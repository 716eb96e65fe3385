#!/usr/bin/env bash
# attn-struct: the chain's and the tree's marginals, log partition, argmax, heads and context
# against the PyTorch goldens of testdata/struct (testdata/make_struct_golden.py), batches with
# lengths and a single instance, the .npz output, help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G=$ATTNKIT_TESTDATA/struct
TOL=2e-6

help_ok attn-struct

# Chain: a batch of 3 with lengths 7, 4, 1 and one 2 x 2 pairwise matrix.
chain=(--unary "$G/chain_unary.txt" --pairwise "$G/chain_pairwise.txt" --lengths "$G/chain_lengths.txt")
expect 0 attn-struct "${chain[@]}" -o m.txt
close_enough m.txt "$G/chain_marginals.txt" $TOL
expect 0 attn-struct "${chain[@]}" --emit log-partition -o z.txt
close_enough z.txt "$G/chain_logz.txt" 1e-5
expect 0 attn-struct "${chain[@]}" --value "$G/chain_values.txt" -o c.txt
close_enough c.txt "$G/chain_context.txt" 1e-5
expect 0 attn-struct "${chain[@]}" --emit argmax -o a.txt
check_eq "$(awk '{ for (i = 1; i <= NF; i++) if ($i != 0 && $i != 1) bad++ } END { print bad + 0 }' a.txt)" 0 "chain argmax is 0/1"
check_eq "$(awk 'NR == 2 { print $5 $6 $7 } NR == 3 { print $2 $3 $4 $5 $6 $7 }' a.txt | tr -d '\n')" "000000000" "padding is never selected"
# One chain (a 1-D unary): the first item's marginals, as one row.
head -n 1 "$G/chain_unary.txt" > u1.txt
expect 0 attn-struct --kind chain --unary u1.txt --pairwise "$G/chain_pairwise.txt"
close_enough out <(head -n 1 "$G/chain_marginals.txt") $TOL
# No pairwise potentials: independent selections, p(z_i = 1) = sigmoid(U_i).
expect 0 attn-struct --unary u1.txt
close_enough out <(awk '{ for (i = 1; i <= NF; i++) printf "%s%.9g", (i > 1 ? " " : ""), 1 / (1 + exp(-$i)); print "" }' u1.txt) $TOL

# Tree: a batch of 3 with lengths 6, 4, 1.
tree=(--kind tree --arcs "$G/tree_arcs.txt" --lengths "$G/tree_lengths.txt")
expect 0 attn-struct "${tree[@]}" -o tm.txt
close_enough tm.txt "$G/tree_marginals.txt" $TOL
expect 0 attn-struct "${tree[@]}" --emit log-partition -o tz.txt
close_enough tz.txt "$G/tree_logz.txt" 1e-5
expect 0 attn-struct "${tree[@]}" --emit heads -o th.txt
close_enough th.txt "$G/tree_heads.txt" 0
expect 0 attn-struct "${tree[@]}" --value "$G/tree_values.txt" -o tc.txt
close_enough tc.txt "$G/tree_context.txt" 1e-5
# The argmax tree as a 0/1 matrix: one head per real input (columns sum to 1), none for padding.
expect 0 attn-struct "${tree[@]}" --emit argmax -o ta.txt
check_eq "$(awk 'BEGIN { RS = "" } { for (j = 1; j <= 6; j++) s[j] = 0; n = split($0, rows, "\n")
  for (i = 1; i <= n; i++) { split(rows[i], f, " "); for (j = 1; j <= 6; j++) s[j] += f[j] }
  line = ""; for (j = 1; j <= 6; j++) line = line s[j]; print line }' ta.txt | tr '\n' ' ')" \
  "111111 111100 100000 " "argmax tree columns"
# Columns of the marginals sum to 1 (every input has one head).
check_eq "$(awk 'BEGIN { RS = "" } NR == 1 { n = split($0, rows, "\n")
  for (i = 1; i <= n; i++) { split(rows[i], f, " "); for (j = 1; j <= 6; j++) s[j] += f[j] }
  for (j = 1; j <= 6; j++) if (s[j] < 0.99999 || s[j] > 1.00001) bad++; print bad + 0 }' tm.txt)" 0 "tree marginals' columns sum to 1"

# .npz: every array under its name.
expect 0 attn-struct "${tree[@]}" --value "$G/tree_values.txt" -o all.npz
for name in marginals log-partition argmax heads context; do
  expect 0 tensor-convert -i "all.npz:$name" -o "npz-$name.txt"
done
close_enough npz-marginals.txt tm.txt 0
close_enough npz-heads.txt th.txt 0
close_enough npz-context.txt tc.txt 0
expect 0 attn-struct "${chain[@]}" -o chain.npz
expect 1 tensor-convert -i chain.npz:heads -o x.txt
expect 0 attn-struct "${chain[@]}" -o named.npz:ignored
expect 0 tensor-convert -i named.npz:marginals -o named.txt
close_enough named.txt m.txt 0
# .npy in, .npy out (and on standard output with --npy): the same numbers.
expect 0 tensor-convert -i "$G/tree_arcs.txt" -o arcs.npy
expect 0 attn-struct --kind tree --arcs arcs.npy --lengths "$G/tree_lengths.txt" -o tm.npy
expect 0 tensor-convert -i tm.npy -o tm2.txt
close_enough tm2.txt tm.txt 0
expect 0 attn-struct --kind tree --arcs arcs.npy --lengths "$G/tree_lengths.txt" --npy
check_eq "$(head -c 6 out | tail -c 5)" "NUMPY" "--npy on standard output"

# Errors: bad data (1), every message naming the file.
printf '1 2 3\n' > u.txt
printf '1 2 3\n4 5 6\n' > p23.txt
expect_err 1 "pairwise potentials have shape [2, 3] but need [2, 2], [2, 2, 2]" attn-struct --unary u.txt --pairwise p23.txt -o bad.txt
grep -qF "p23.txt" "$T/err" || fail "shape error does not name the file"
no_file bad.txt
printf '1 nan 3\n' > nan.txt
expect_err 1 "unary potentials: NaN at flat index 1" attn-struct --unary nan.txt -o bad.txt
grep -qF "nan.txt" "$T/err" || fail "NaN error does not name the file"
no_file bad.txt
printf '0 1\n1 inf\n' > pinf.txt
expect_err 1 "pairwise potentials: +inf at flat index 3" attn-struct --unary u.txt --pairwise pinf.txt
printf '1 2 3\n4 5 6\n' > a23.txt
expect_err 1 "arc potentials have shape [2, 3] but need [n, n] or [B, n, n]" attn-struct --kind tree --arcs a23.txt
# n = 0: a .npy of shape (0,), and (2, 0).
npy0() {
  local hdr="{'descr': '<f4', 'fortran_order': False, 'shape': $1, }"
  while [ $(( (${#hdr} + 11) % 64 )) -ne 0 ]; do hdr="$hdr "; done
  { printf '\223NUMPY\001\000'; printf "\\$(printf '%03o' $(( (${#hdr} + 1) % 256 )))\\$(printf '%03o' $(( (${#hdr} + 1) / 256 )))"; printf '%s\n' "$hdr"; } > "$2"
}
npy0 "(0,)" empty.npy
npy0 "(2, 0)" empty2.npy
expect 0 tensor-info empty.npy
expect_err 1 "no inputs (n = 0)" attn-struct --unary empty.npy -o bad.txt
no_file bad.txt
expect_err 1 "no inputs (n = 0)" attn-struct --unary empty2.npy
expect 0 tensor-rand --shape 301,301 -o big.npy
expect_err 1 "a tree of 301 inputs: at most 300" attn-struct --kind tree --arcs big.npy
printf '3 9 1\n' > len.txt
expect_err 1 "len.txt" attn-struct --unary "$G/chain_unary.txt" --lengths len.txt
printf '3 2\n' > len2.txt
expect_err 1 "len2.txt" attn-struct --unary "$G/chain_unary.txt" --lengths len2.txt
expect_err 1 "values have shape" attn-struct "${tree[@]}" --value "$G/chain_values.txt"
expect_err 1 "chain_values.txt" attn-struct "${tree[@]}" --value "$G/chain_values.txt"
expect 1 attn-struct --unary u.txt -o no/such/dir/out.txt
expect 1 attn-struct --unary no-such-file.txt

# Errors: bad usage (2).
expect_err 2 "--kind: unknown structure 'crf' (choose chain or tree)" attn-struct --kind crf --unary u.txt
expect_err 2 "--kind chain needs --unary U" attn-struct --pairwise p23.txt
expect_err 2 "--kind tree needs --arcs A" attn-struct --kind tree --unary u.txt
expect_err 2 "--arcs is not for --kind chain" attn-struct --unary u.txt --arcs a23.txt
expect_err 2 "--pairwise is not for --kind tree" attn-struct --kind tree --arcs "$G/tree_arcs.txt" --pairwise p23.txt
expect_err 2 "--emit context needs --value V" attn-struct --unary u.txt --emit context
expect_err 2 "--emit: unknown output 'heads' (choose marginals, log-partition, argmax or context)" attn-struct --unary u.txt --emit heads
expect_err 2 "--emit picks one array" attn-struct --unary u.txt --emit marginals -o x.npz
no_file x.npz

finish
