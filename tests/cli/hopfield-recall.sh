#!/usr/bin/env bash
# hopfield-recall: the checkerboard (one-step recovery, the 2-cycle s -> -s), traces and the
# report, async/sync recall of random patterns, seeds and threads, PBM in and out, the
# modern update against attn-score, help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/hopfield"
help_ok hopfield-recall

hopfield-store -q -i "$G/checkerboard.txt" -o cb.npz
pattern-noise -q -i "$G/checkerboard.txt" --flip-count 5 --seed 2 -o n5.txt
pattern-noise -q -i "$G/checkerboard.txt" --flip-count 8 --seed 2 -o n8.txt
# Five flipped bits: recovered in one sync step.
expect_err 0 "probe 1: converged after 1 step: pattern 1 (overlap 1, exact)" \
  hopfield-recall -m cb.npz -i n5.txt --mode sync --max-steps 1 --patterns "$G/checkerboard.txt"
check_eq "$(cat "$T/out")" "$(cat "$G/checkerboard.txt")" "one sync step recovers the checkerboard"
grep -qF "1 probes (sync): 1 converged, 0 cycled, 0 hit the limit of 1 steps" "$T/err" || fail "summary: $(cat "$T/err")"
# Eight: s -> -s -> s, reported as a 2-cycle; the trace shows 16 flips per step.
expect_err 0 "probe 1: entered a 2-cycle after 2 steps" \
  hopfield-recall -m cb.npz -i n8.txt --mode sync --patterns "$G/checkerboard.txt" --trace t8.tsv -o c8.txt
check_eq "$(cat c8.txt)" "$(cat n8.txt)" "back to the probe after two steps"
check_eq "$(head -1 t8.tsv)" "$(printf 'probe\tstep\tenergy\tflips\tbest\toverlap\tm1')" "trace header"
check_eq "$(cut -f2,4 t8.tsv | tail -n +2 | tr '\t\n' ', ')" "0,0 1,16 2,16 " "steps and flips"
expect 0 hopfield-recall -m cb.npz -i n8.txt --mode sync --max-steps 1
check_eq "$(cat "$T/out")" "$(awk '{ for (j = 1; j <= NF; j++) $j = -$j; print }' n8.txt)" "one step gives -s"
grep -qF "0 converged, 0 cycled, 1 hit the limit of 1 steps" "$T/err" || fail "limit summary: $(cat "$T/err")"
# Async reaches the checkerboard or its mirror image and never cycles.
expect 0 hopfield-recall -m cb.npz -i n5.txt --patterns "$G/checkerboard.txt" --seed 4
check_eq "$(cat "$T/out")" "$(cat "$G/checkerboard.txt")" "async recovers 5 flips"

# Random patterns, N = 200, alpha = 0.05, 10% noise: every probe lands on its pattern.
tensor-rand --shape 10,200 --dist sign --seed 9 -o p.txt
hopfield-store -q -i p.txt -o p.npz
pattern-noise -q -i p.txt --flip 0.1 --seed 5 -o probes.txt
for mode in async sync; do
  expect 0 hopfield-recall -m p.npz -i probes.txt --mode $mode --patterns p.txt --trace t.tsv -o out.txt
  check_eq "$(cat out.txt)" "$(cat p.txt)" "$mode recall"
  check_eq "$(grep -c 'exact)$' "$T/err")" "10" "$mode: every probe named as exact"
  for k in 1 2 3 4 5 6 7 8 9 10; do grep -q "^hopfield-recall: probe $k: .*pattern $k " "$T/err" || fail "$mode: probe $k not named"; done
  # Energies never increase along a probe's trace; step 0 overlaps are 0.8.
  CHECKS=$((CHECKS + 1))
  msg=$(awk -F'\t' 'NR > 1 { if ($1 == p && $3 > e + 1e-9) print "probe " $1 " step " $2; p = $1; e = $3
    if ($2 == 0 && $6 != 0.8) print "overlap " $6 }' t.tsv)
  [ -z "$msg" ] || fail "$mode trace: $msg"
done
check_eq "$(head -1 t.tsv | tr '\t' '\n' | wc -l)" "16" "trace columns with 10 patterns"
# Same seed and any thread count: same output; sequential order is deterministic too.
pattern-noise -q -i p.txt --flip 0.3 --seed 6 -o hard.txt
hopfield-recall -q -m p.npz -i hard.txt --seed 3 --threads 1 -o a1.txt
hopfield-recall -q -m p.npz -i hard.txt --seed 3 --threads 2 -o a2.txt
check_eq "$(cat a2.txt)" "$(cat a1.txt)" "threads do not change the result"
expect 0 hopfield-recall -m p.npz -i hard.txt --order sequential -q -o s.txt
check_eq "$(cut -c1-20 "$T/err")" "" "--quiet"
# Flip trace: one row per flip, energy strictly falling.
expect 0 hopfield-recall -m p.npz -i hard.txt --trace f.tsv --trace-flips -q -o /dev/null
check_eq "$(head -1 f.tsv)" "$(printf 'probe\tstep\tflip\tneuron\tenergy')" "flip trace header"
CHECKS=$((CHECKS + 1))
msg=$(awk -F'\t' 'NR > 1 { if ($1 == p && $5 >= e) print "probe " $1 " flip " $3; p = $1; e = $5 }' f.tsv)
[ -z "$msg" ] || fail "flip trace energy: $msg"
[ "$(wc -l <f.tsv)" -gt 100 ] || fail "flip trace too short"
# The final energies agree with hopfield-energy.
expect 0 hopfield-recall -m p.npz -i hard.txt --trace t.tsv -q -o fin.txt
hopfield-energy -m p.npz -i fin.txt >en.txt
paste <(awk -F'\t' 'NR > 1 { e[$1] = $3 } END { for (k = 1; k <= 10; k++) print e[k] }' t.tsv) en.txt >both.txt
CHECKS=$((CHECKS + 1))
awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3) exit 1 }' both.txt || fail "trace energy vs hopfield-energy: $(head -3 both.txt)"
# PBM: a checkerboard picture in, a picture out.
pattern-noise -q -i "$G/checkerboard.pbm" --flip-count 5 --seed 1 -o n.pbm
expect 0 hopfield-recall -m cb.npz -i n.pbm --mode sync -o r.pbm
expect 0 pattern-noise -q -i r.pbm --flip-count 0 -o r.txt
check_eq "$(cat r.txt)" "$(cat "$G/checkerboard.txt")" "PBM recall"

# Modern: the update equals attn-score --score dot with beta-scaled queries, X as keys and values.
tensor-rand --shape 50,16 --dist sign --seed 1 -o X.txt
tensor-rand --shape 6,16 --dist normal --seed 2 -o Q.txt
for beta in 0.25 1; do
  expect 0 hopfield-recall --modern --patterns X.txt --beta $beta -i Q.txt -o m.txt
  awk -v b=$beta '{ for (j = 1; j <= NF; j++) $j = b * $j; print }' Q.txt >bQ.txt
  attn-score --query bQ.txt --key X.txt --value X.txt --score dot >a.txt
  close_enough m.txt a.txt 1e-5
  expect 0 hopfield-recall --modern --patterns X.txt --beta $beta -i Q.txt --emit weights -o w.txt
  attn-score --query bQ.txt --key X.txt --score dot >aw.txt
  close_enough w.txt aw.txt 1e-5
done
grep -qF "6 probes, modern update (beta 1, 1 step) over 50 patterns: mean largest weight" "$T/err" || fail "modern summary: $(cat "$T/err")"
expect 0 hopfield-recall --modern --patterns X.txt --beta 1 --steps 3 -i Q.txt -q -o m3.txt
check_eq "$(wc -l <m3.txt)" "6" "--steps 3 rows"

# Errors.
expect_err 1 "hopfield-recall: p.txt: probes have 200 columns but the net has N = 16 neurons" \
  hopfield-recall -m cb.npz -i p.txt -o e.txt
no_file e.txt
expect_err 1 "hopfield-recall: $G/not_bipolar.txt: row 2, column 2: value 0.5 is not -1 or +1" \
  hopfield-recall -m p.npz -i "$G/not_bipolar.txt" -o e.txt
no_file e.txt
expect_err 1 "hopfield-recall: p.txt: patterns have 200 columns but the net has N = 16 neurons" \
  hopfield-recall -m cb.npz -i n5.txt --patterns p.txt -o e.txt
no_file e.txt
tensor-convert -i "$G/checkerboard.txt" nw.npz:V
expect_err 1 "hopfield-recall: nw.npz: no array 'W'" hopfield-recall -m nw.npz -i n5.txt -o e.txt
no_file e.txt
tensor-rand --shape 4,5 --seed 1 -o ns.npz:W
expect_err 1 "hopfield-recall: ns.npz: W must be square (N x N), not [4, 5]" hopfield-recall -m ns.npz -i n5.txt -o e.txt
no_file e.txt
expect_err 1 "hopfield-recall: missing.npz" hopfield-recall -m missing.npz -i n5.txt -o e.txt
expect_err 2 "-m NET.npz is required (or --modern)" hopfield-recall -i n5.txt -o e.txt
expect_err 2 "--mode: unknown mode 'both' (choose async or sync)" hopfield-recall -m cb.npz -i n5.txt --mode both -o e.txt
expect_err 2 "--order: unknown order 'up' (choose random or sequential)" hopfield-recall -m cb.npz -i n5.txt --order up -o e.txt
expect_err 2 "--max-steps must be 0 or more" hopfield-recall -m cb.npz -i n5.txt --max-steps=-1 -o e.txt
expect_err 2 "--trace-flips is for --mode async" hopfield-recall -m cb.npz -i n5.txt --mode sync --trace t --trace-flips -o e.txt
expect_err 2 "--trace-flips needs --trace FILE" hopfield-recall -m cb.npz -i n5.txt --trace-flips -o e.txt
expect_err 2 "--beta is for --modern" hopfield-recall -m cb.npz -i n5.txt --beta 2 -o e.txt
expect_err 2 "--modern needs --patterns X and --beta B" hopfield-recall --modern --patterns X.txt -i Q.txt -o e.txt
expect_err 2 "--beta must be a number above 0" hopfield-recall --modern --patterns X.txt --beta 0 -i Q.txt -o e.txt
expect_err 2 "--model is for classic nets, not --modern" hopfield-recall --modern -m cb.npz --patterns X.txt --beta 1 -i Q.txt -o e.txt
expect_err 2 "--emit: unknown output kind 'scores' (choose states or weights)" hopfield-recall --modern --patterns X.txt --beta 1 -i Q.txt --emit scores -o e.txt
expect_err 2 "--steps must be 1 or more" hopfield-recall --modern --patterns X.txt --beta 1 --steps 0 -i Q.txt -o e.txt
expect_err 1 "hopfield-recall: p.txt: states have 200 columns but the stored patterns [50, 16] have 16" \
  hopfield-recall --modern --patterns X.txt --beta 1 -i p.txt -o e.txt
no_file e.txt
for f in e.txt t; do no_file $f; done
expect_err 1 "hopfield-recall: " hopfield-recall -m cb.npz -i n5.txt -o /dev/full
expect_err 1 "hopfield-recall: " hopfield-recall -m cb.npz -i n5.txt --trace tt.tsv -o /dev/full
no_file tt.tsv
expect_err 1 "hopfield-recall: " hopfield-recall --modern --patterns X.txt --beta 1 -i Q.txt -o /dev/full
# -o/--output is the output file (the old --output WHAT and --output-file are gone).
expect 0 hopfield-recall --modern --patterns X.txt --beta 1 -i Q.txt --emit weights --output new.txt
expect 0 hopfield-recall --modern --patterns X.txt --beta 1 -i Q.txt --emit weights -o weights
check_eq "$(cat weights)" "$(cat new.txt)" "-o weights writes the file 'weights'"
expect_err 2 "unrecognised option '--output-file'" \
  hopfield-recall --modern --patterns X.txt --beta 1 -i Q.txt --output-file old2.txt
expect_err 2 "--emit is for --modern" hopfield-recall -m cb.npz -i n5.txt --emit weights
finish
