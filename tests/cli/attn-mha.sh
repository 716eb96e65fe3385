#!/usr/bin/env bash
# attn-mha against PyTorch's nn.MultiheadAttention (testdata/mha, made by
# testdata/make_mha_golden.py), and every documented error with its exit status and message.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/mha"
TOL=1e-5
help_ok attn-mha

# self-attention of a batch: context (default) and head-averaged weights
for what in context weights; do
  expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --emit $what -o self-$what.txt
  close_enough self-$what.txt "$G/self_$what.txt" $TOL
done
# causal and a 0/1 mask file on one sequence (2-D input), 4 heads
expect 0 attn-mha --query "$G/X1.npy" --params "$G/self4.npz" --heads 4 --mask causal
close_enough out "$G/causal_context.txt" $TOL
expect 0 attn-mha --query "$G/X1.npy" --params "$G/self4.npz" --heads 4 --mask causal --emit weights
close_enough out "$G/causal_weights.txt" $TOL
expect 0 attn-mha --query "$G/X1.npy" --params "$G/self4.npz" --heads 4 --mask "$G/mask.txt"
close_enough out "$G/maskfile_context.txt" $TOL
# key padding: lengths 5 and 3
expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --key-padding "$G/lengths.txt"
close_enough out "$G/padding_context.txt" $TOL
expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --key-padding "$G/lengths.txt" --emit weights
close_enough out "$G/padding_weights.txt" $TOL
check_eq "$(awk 'NF && ++n > 5 { print $4, $5 }' out | sort -u)" "0 0" "padded keys get zero weight"
# cross-attention with other key/value widths, and with in_proj_weight plus a causal mask
expect 0 attn-mha --query "$G/Qc.npy" --key "$G/Kc.npy" --value "$G/Vc.npy" --params "$G/cross.npz" --heads 4
close_enough out "$G/cross_context.txt" $TOL
expect 0 attn-mha --query "$G/Qc.npy" --key "$G/K8.npy" --value "$G/K8.npy" --params "$G/self.npz" --heads 2 --mask causal --emit weights
close_enough out "$G/cross8_weights.txt" $TOL
# no biases (bias=False); head weights as .npy, averaged back to the weights
expect 0 attn-mha --query "$G/X.npy" --params "$G/nobias.npz" --heads 2
close_enough out "$G/nobias_context.txt" $TOL
expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --emit head-weights -o hw.npy
expect 0 tensor-info hw.npy
check_eq "$(awk 'NR == 2 { print $4 }' out)" "2x2x5x5" "head weights shape B x H x N_q x N_k"
# text input on standard input gives the same as the .npy
tensor-convert -i "$G/X1.npy" -o x1.txt
expect 0 attn-mha --query - --params "$G/self4.npz" --heads 4 --mask causal < x1.txt
close_enough out "$G/causal_context.txt" $TOL

# errors: status, message naming the file and shapes, no output left behind
expect_err 1 "attn-mha: $G/no_out_weight.npz: no array 'out_proj.weight' (needs [E, E])" \
  attn-mha --query "$G/X.npy" --params "$G/no_out_weight.npz" --heads 2 -o bad.txt
no_file bad.txt
expect_err 1 "attn-mha: $G/bad_in_weight.npz: array 'in_proj_weight' has shape [12, 16] but needs [3E, E] = [24, 8]" \
  attn-mha --query "$G/X.npy" --params "$G/bad_in_weight.npz" --heads 2 -o bad.txt
no_file bad.txt
expect_err 1 "attn-mha: $G/bad_in_bias.npz: array 'in_proj_bias' has shape [23] but needs [3E] = [24]" \
  attn-mha --query "$G/X.npy" --params "$G/bad_in_bias.npz" --heads 2
expect_err 1 "attn-mha: $G/no_out_bias.npz: no array 'out_proj.bias'" \
  attn-mha --query "$G/X.npy" --params "$G/no_out_bias.npz" --heads 2
expect_err 1 "attn-mha: $G/Kc.npy: K has 6 columns but the parameters have kdim = 8" \
  attn-mha --query "$G/Qc.npy" --key "$G/Kc.npy" --value "$G/Kc.npy" --params "$G/self.npz" --heads 2 -o bad.txt
no_file bad.txt
expect_err 1 "attn-mha: $G/Kc.npy: Q has 6 columns but the parameters have E = 8" \
  attn-mha --query "$G/Kc.npy" --params "$G/self.npz" --heads 2
printf '1 0\n' > m.txt
expect_err 1 "attn-mha: m.txt: mask [1, 2] does not fit the scores [6, 6]" \
  attn-mha --query "$G/X1.npy" --params "$G/self4.npz" --heads 4 --mask m.txt
printf '1 0.5 1 1 1 1\n' > m6.txt; for i in 1 2 3 4 5; do echo "1 1 1 1 1 1" >> m6.txt; done
expect_err 1 "attn-mha: m6.txt: mask value 0.5 at [0, 1] is not 0 or 1" \
  attn-mha --query "$G/X1.npy" --params "$G/self4.npz" --heads 4 --mask m6.txt
printf '5\n' > len1.txt
expect_err 1 "attn-mha: len1.txt: key padding has 1 lengths [1, 1] but the batch has 2 items" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --key-padding len1.txt
printf '5\n6\n' > len6.txt
expect_err 1 "attn-mha: len6.txt: key length 6 of item 1 is not an integer in [0, 5]" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --key-padding len6.txt
expect 1 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 -o /dev/full
expect_err 1 "attn-mha: no-such.npy" attn-mha --query no-such.npy --params "$G/self.npz" --heads 2

# usage errors
expect_err 2 "attn-mha: the number of heads, 3, does not divide the embedding size E = 8" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 3 -o bad.txt
no_file bad.txt
expect_err 2 "attn-mha: --key and --value go together" \
  attn-mha --query "$G/Qc.npy" --key "$G/K8.npy" --params "$G/self.npz" --heads 2
expect_err 2 "attn-mha: --emit: unknown output kind 'scores' (choose context, weights or head-weights)" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --emit scores
expect_err 2 "attn-mha: " attn-mha --query "$G/X.npy" --params "$G/self.npz"
expect_err 2 "attn-mha: --heads must be at least 1" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 0
# -o/--output is the output file (the old --output WHAT and --output-file are gone).
expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --emit weights --output new.txt
expect 0 attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --emit weights -o weights
check_eq "$(cat weights)" "$(cat new.txt)" "-o weights writes the file 'weights'"
expect_err 2 "unrecognised option '--output-file'" \
  attn-mha --query "$G/X.npy" --params "$G/self.npz" --heads 2 --output-file old2.txt
# Non-finite input is refused with the file and position.
expect 0 tensor-convert -i "$G/X.npy" -o x.txt
awk 'NR == 3 { $2 = "nan" } { print }' x.txt >xnan.txt
expect_err 1 "attn-mha: xnan.txt: " attn-mha --query xnan.txt --params "$G/self.npz" --heads 2
grep -q "is NaN: inputs must be finite" "$T/err" || fail "no NaN message: $(cat "$T/err")"
CHECKS=$((CHECKS + 1))
# A NaN parameter is refused (it made every weight 0, exit 0), as inputs are.
cp "$G/self.npz" nanp.npz
chmod u+w nanp.npz
tensor-convert "$G/self.npz:in_proj_bias" -o b.txt
awk '{ $3 = "nan"; print }' b.txt | tensor-convert -i - --reshape 24 -o nanp.npz:in_proj_bias
expect_err 1 "attn-mha: nanp.npz:in_proj_bias: row 1, column 3 is NaN" \
  attn-mha --query "$G/X.npy" --params nanp.npz --heads 2
finish
