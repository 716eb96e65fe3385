#!/usr/bin/env bash
# attn-score against the NumPy goldens of testdata/attention (testdata/make_attention_golden.py),
# and every documented error with its exit status and message.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/attention"
TOL=1e-5
help_ok attn-score

# every score: scores, weights, context (text inputs)
for s in dot scaled-dot cosine bilinear additive; do
  q=Q.txt; extra=()
  case $s in
    cosine) q=Qc.txt; extra=(--beta 2.5) ;;
    bilinear) q=Qx.txt; extra=(--params "$G/bilinear.npz") ;;
    additive) q=Qx.txt; extra=(--params "$G/additive.npz") ;;
  esac
  for what in scores weights context; do
    expect 0 attn-score --query "$G/$q" --key "$G/K.txt" --value "$G/V.txt" --score "$s" \
      "${extra[@]}" --emit "$what" -o "$s-$what.txt"
    close_enough "$s-$what.txt" "$G/${s}_$what.txt" $TOL
  done
done

# defaults: scaled-dot; context with --value, weights without
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --value "$G/V.txt"
close_enough out "$G/scaled-dot_context.txt" $TOL
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt"
close_enough out "$G/scaled-dot_weights.txt" $TOL

# .npy inputs (same values), .npy output read back through stdin as text input of nothing
# else: the output file must be a .npy
expect 0 attn-score --query "$G/Q.npy" --key "$G/K.npy" --value "$G/V.npy" -o c.txt
close_enough c.txt "$G/scaled-dot_context.txt" $TOL
expect 0 attn-score --query "$G/Q.npy" --key "$G/K.npy" --value "$G/V.npy" -o c.npy
check_eq "$(head -c 6 c.npy | tail -c 5)" "NUMPY" ".npy output magic"
expect 0 attn-score --query - --key "$G/K.txt" --value "$G/V.txt" --npy < "$G/Q.npy"
check_eq "$(head -c 6 out | tail -c 5)" "NUMPY" "--npy on stdout"

# masks: causal, a 0/1 file with a fully masked row (zero weights, zero context), -inf scores
for m in causal mask; do
  arg=causal; [ $m = mask ] && arg="$G/mask.txt"
  for what in scores weights context; do
    expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --value "$G/V.txt" --mask "$arg" \
      --emit $what -o "$m-$what.txt"
    close_enough "$m-$what.txt" "$G/${m}_$what.txt" $TOL
  done
done
check_eq "$(grep -o -- '-inf' causal-scores.txt | wc -l)" "$(grep -o -- '-inf' "$G/causal_scores.txt" | wc -l)" "count of -inf in causal scores"
check_eq "$(sed -n 3p mask-weights.txt)" "0 0 0 0 0 0" "fully masked row: weights"
check_eq "$(sed -n 3p mask-context.txt)" "0 0 0" "fully masked row: context"

# hard attention: argmax with ties takes the first index; sample is one-hot and seeded
expect 0 attn-score --query "$G/tie_Q.txt" --key "$G/tie_K.txt" --score dot --hard argmax
close_enough out "$G/tie_argmax.txt" 0
expect 0 attn-score --query "$G/tie_Q.txt" --key "$G/tie_K.txt" --score dot --hard argmax --mask causal
close_enough out "$G/tie_argmax_causal.txt" 0
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --hard sample --seed 5 -o s1.txt
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --hard sample --seed 5 -o s2.txt
check_eq "$(cmp -s s1.txt s2.txt && echo same)" "same" "same --seed, same samples"
check_eq "$(awk '{ s = 0; for (i = 1; i <= NF; i++) { if ($i != 0 && $i != 1) bad = 1; s += $i }
  if (s != 1) bad = 1 } END { print bad ? "bad" : "one-hot" }' s1.txt)" "one-hot" "sampled rows are one-hot"

# a batch: 3-D Q and K (.npy and text), V shared
expect 0 attn-score --query "$G/Qb.npy" --key "$G/Kb.npy" --value "$G/V.txt"
close_enough out "$G/batch_context.txt" $TOL
expect 0 attn-score --query "$G/Qb.npy" --key "$G/Kb.txt" --emit weights
close_enough out "$G/batch_weights.txt" $TOL
expect 0 attn-score --query "$G/Qxb.npy" --key "$G/Kb.npy" --value "$G/V.txt" --score additive \
  --params "$G/additive.npz" --mask causal
close_enough out "$G/batch_additive_causal_context.txt" $TOL

# errors: status, message naming the file, no output left behind
expect_err 1 "attn-score: $G/K_bad.txt: Q has 4 columns but K has 3" \
  attn-score --query "$G/Q.txt" --key "$G/K_bad.txt" -o bad.txt
no_file bad.txt
expect_err 1 "attn-score: $G/additive_no_v.npz: no array 'v' (additive scores need Wk, Wq, v)" \
  attn-score --query "$G/Qx.txt" --key "$G/K.txt" --score additive --params "$G/additive_no_v.npz" -o bad.txt
no_file bad.txt
expect_err 1 "attn-score: $G/additive_bad_wq.npz: additive Wq has shape [7, 2] but needs [d_a, d_q] = [7, 3]" \
  attn-score --query "$G/Qx.txt" --key "$G/K.txt" --score additive --params "$G/additive_bad_wq.npz"
expect_err 1 "attn-score: $G/bilinear.npz: bilinear W has shape [4, 3] but needs [d_k, d_q] = [4, 4]" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --score bilinear --params "$G/bilinear.npz"
expect_err 2 "attn-score: --score: unknown score 'dott' (choose dot, scaled-dot, bilinear, additive, cosine or location)" attn-score --query "$G/Q.txt" --key "$G/K.txt" --score dott
expect_err 1 "attn-score: $G/mask_bad.txt: mask value 0.5 at [1, 3] is not 0 or 1" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --mask "$G/mask_bad.txt" -o bad.txt
no_file bad.txt
expect_err 1 "attn-score: $G/mask.txt: mask [5, 6] does not fit the scores [4, 5]" \
  attn-score --query "$G/tie_Q.txt" --key "$G/tie_K.txt" --mask "$G/mask.txt"
expect_err 2 "attn-score: --emit context needs --value V" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --emit context
expect_err 2 "attn-score: --emit: unknown output kind 'all' (choose scores, weights or context)" attn-score --query "$G/Q.txt" --key "$G/K.txt" --emit all
expect_err 2 "attn-score: --hard: unknown hard attention 'max' (choose argmax or sample)" attn-score --query "$G/Q.txt" --key "$G/K.txt" --hard max
expect_err 2 "attn-score: --hard applies to weights and context" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --hard argmax --emit scores
expect_err 2 "attn-score: --params is for the bilinear, additive and location scores" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --params "$G/bilinear.npz"
expect_err 2 "attn-score: --score additive needs --params" \
  attn-score --query "$G/Qx.txt" --key "$G/K.txt" --score additive
expect_err 2 "attn-score: --beta is for the cosine score" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --beta 2
expect_err 2 "attn-score: the option '--query' is required" attn-score --key "$G/K.txt"
expect_err 1 "attn-score: $G/Q.txt: K has 6 rows but V has 5" \
  attn-score --query "$G/Q.txt" --key "$G/K.txt" --value "$G/Q.txt"
expect_err 1 "attn-score: nofile.txt: cannot open" \
  attn-score --query "$G/Q.txt" --key nofile.txt -o bad.txt
no_file bad.txt
{ cat "$G/K.txt"; echo; cat "$G/K.txt"; echo; cat "$G/K.txt"; } > K3.txt
expect_err 1 "attn-score: K3.txt: Q is a batch of 2 but K of 3" \
  attn-score --query "$G/Qb.npy" --key K3.txt
expect_err 1 "write error" attn-score --query "$G/Q.txt" --key "$G/K.txt" -o /dev/full
# -o/--output is the output file (the old --output WHAT and --output-file are gone).
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --emit scores --output new.txt
[ -s "$T/err" ] && fail "--output FILE: a note on stderr: $(cat "$T/err")"
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --emit scores -o weights
check_eq "$(cat weights)" "$(cat new.txt)" "-o weights writes the file 'weights'"
expect_err 2 "unrecognised option '--output-file'" attn-score --query "$G/Q.txt" --key "$G/K.txt" --output-file x.txt
# A repeated option: the last wins (as in most command-line tools), in every tool's parser.
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --emit scores -o a.txt --output b.txt
no_file a.txt
check_eq "$(cat b.txt)" "$(cat new.txt)" "-o a.txt --output b.txt writes b.txt"
# Non-finite input is refused, naming the file, row and column (not turned into zero weights
# or NaN); a fully masked row still gets zero weights.
printf '1 2\nnan 3\n' >qnan.txt
printf '1 2\n3 4\n' >k2.txt
printf '1 2\n3 -inf\n' >kinf.txt
expect_err 1 "attn-score: qnan.txt: row 2, column 1 is NaN" attn-score --query qnan.txt --key k2.txt
expect_err 1 "attn-score: kinf.txt: row 2, column 2 is -inf" attn-score --query k2.txt --key kinf.txt
expect_err 1 "attn-score: kinf.txt: row 2, column 2 is -inf" attn-score --query k2.txt --key k2.txt --value kinf.txt
printf '0 0\n1 1\n' >m01.txt
expect_out "$(printf '0 0\n8.3152804e-07 0.99999917')" attn-score --query k2.txt --key k2.txt --score dot --mask m01.txt
# Finite extremes stay finite: scores beyond float's range (+inf) give softmax's limit, the
# weight shared by the largest scores (NaN everywhere before), and the context the values'.
printf '1e30 1e30\n' >qbig.txt
printf '1e30 1e30\n-1e30 -1e30\n1e30 1e30\n' >kbig.txt
expect_out "$(printf '0.5 0 0.5')" attn-score --query qbig.txt --key kbig.txt --score dot --emit weights
expect_out "$(printf '1e+30 1e+30')" attn-score --query qbig.txt --key kbig.txt --value kbig.txt --score dot
finish
