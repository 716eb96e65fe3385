#!/usr/bin/env bash
# attn-score: Luong's location score, local attention (m and p), the general/concat aliases
# and key padding, against the PyTorch goldens of testdata/local
# (testdata/make_local_golden.py); their errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/local"
A="$ATTNKIT_TESTDATA/attention"
TOL=1e-5
in=(--query "$G/Q.txt" --key "$G/K.txt" --value "$G/V.txt")
for what in scores weights context; do
  expect 0 attn-score "${in[@]}" --score location --params "$G/params.npz" --emit $what -o loc.txt
  close_enough loc.txt "$G/location_$what.txt" $TOL
  expect 0 attn-score "${in[@]}" --local m --window 2 --emit $what -o m.txt
  close_enough m.txt "$G/local_m_$what.txt" $TOL
  expect 0 attn-score "${in[@]}" --local p --window 2 --params "$G/params.npz" --emit $what -o p.txt
  close_enough p.txt "$G/local_p_$what.txt" $TOL
  expect 0 attn-score "${in[@]}" --score general --local p --window 2 --params "$G/general.npz" --emit $what -o g.txt
  close_enough g.txt "$G/local_p_general_$what.txt" $TOL
  expect 0 attn-score --query "$G/Qb.npy" --key "$G/Kb.npy" --value "$G/Vb.npy" \
    --key-padding "$G/lengths.txt" --emit $what -o pad.txt
  close_enough pad.txt "$G/padding_$what.txt" $TOL
done
# the third item has length 0: zero weights, zero context
check_eq "$(awk 'BEGIN { RS = "" } NR == 3' pad.txt | tr -s ' \n' '\n' | sort -u | tr '\n' ' ')" "0 " "length 0: zero context"
# aliases: concat = additive
expect 0 attn-score --query "$A/Qx.txt" --key "$A/K.txt" --score concat --params "$A/additive.npz" --emit scores
close_enough out "$A/additive_scores.txt" $TOL
# local-m with a window covering every key = global attention
expect 0 attn-score "${in[@]}" --local m --window 100
expect 0 attn-score "${in[@]}" -o global.txt
close_enough out global.txt 1e-6

# errors
expect_err 1 "attn-score: $G/wa_bad.npz: location Wa has shape [8, 4] but needs [n_k, d_q] = [9, 4]" \
  attn-score "${in[@]}" --score location --params "$G/wa_bad.npz" -o bad.txt
no_file bad.txt
expect_err 1 "attn-score: $G/no_vp.npz: no array 'vp' (--local p positions need Wp, vp)" \
  attn-score "${in[@]}" --local p --window 2 --params "$G/no_vp.npz"
printf '9\n' > len1.txt
expect_err 1 "attn-score: len1.txt: key padding has 1 lengths [1, 1] but the batch has 3 items" \
  attn-score --query "$G/Qb.npy" --key "$G/Kb.npy" --key-padding len1.txt -o bad.txt
no_file bad.txt
printf '9 10 1\n' > len10.txt
expect_err 1 "attn-score: len10.txt: key length 10 of item 1 is not an integer in [0, 9]" \
  attn-score --query "$G/Qb.npy" --key "$G/Kb.npy" --key-padding len10.txt
expect_err 2 "attn-score: --local needs --window D" attn-score "${in[@]}" --local m
expect_err 2 "attn-score: --window goes with --local" attn-score "${in[@]}" --window 2
expect_err 2 "attn-score: --local: unknown local attention 'q' (choose m or p)" attn-score "${in[@]}" --local q --window 2
expect_err 2 "attn-score: --window must be at least 1 for --local p" \
  attn-score "${in[@]}" --local p --window 0 --params "$G/params.npz"
expect_err 2 "attn-score: --window must be at least 0 for --local m" attn-score "${in[@]}" --local m --window -1
expect_err 2 "attn-score: --local p needs --params FILE.npz (Wp, vp)" attn-score "${in[@]}" --local p --window 2
expect_err 2 "attn-score: --score location needs --params FILE.npz" attn-score "${in[@]}" --score location
finish
