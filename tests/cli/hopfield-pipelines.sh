#!/usr/bin/env bash
# labels: pipeline
# cost: 34
# The Hopfield pipelines in their --quick forms: capacity (the collapse past alpha ~ 0.138),
# exercise 8.6 (energy descent, the sync 2-cycle), letters (pictures; projection beats Hebb),
# modern (beta, equality with attn-score); self-checks that can fail; usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
P="$ATTNKIT_SRC/pipelines"
for t in tensor-rand tensor-convert attn-score hopfield-store hopfield-recall pattern-noise; do
  [ -x "$ATTNKIT_BIN/$t" ] || { echo "$t not built: skipped"; exit 77; }
done

# Capacity: TSV columns, the theory column, a collapse.
expect 0 "$P/hopfield-capacity.sh" --quick
cp "$T/out" cap.tsv
check_eq "$(head -1 cap.tsv)" "$(printf 'alpha\tP\tone_step_error\ttheory\tfinal_error\tfixed')" "capacity header"
check_eq "$(tail -n +2 cap.tsv | wc -l)" "24" "alpha 0.02 .. 0.25"
grep -q "^checked:" "$T/err" || fail "capacity self-check: $(cat "$T/err")"
CHECKS=$((CHECKS + 1))
msg=$(awk -F'\t' 'NR > 1 { if ($1 <= 0.06 && $5 > 0.005) print "final error " $5 " at " $1
    if ($1 >= 0.2) { s += $5; k++ } if ($1 == 0.14 && ($4 < 0.003 || $4 > 0.004)) print "theory " $4 " at 0.14" }
  END { if (s / k < 0.1) print "no collapse: " s / k }' cap.tsv)
[ -z "$msg" ] || fail "capacity: $msg"
# The check fails when the collapse is missing: a store that uses the projection rule.
mkdir fake
for t in tensor-rand hopfield-recall; do ln -s "$ATTNKIT_BIN/$t" fake/$t; done
printf '#!/bin/sh\nexec "%s/hopfield-store" --rule pseudo-inverse "$@"\n' "$ATTNKIT_BIN" >fake/hopfield-store
chmod +x fake/hopfield-store
ATTNKIT_BIN=$PWD/fake expect_err 1 "claim failed: no collapse" "$P/hopfield-capacity.sh" --quick

# Exercise 8.6.
expect 0 "$P/exercise-8-6.sh" --quick
check_eq "$(head -1 "$T/out")" "$(printf 'net\tkind\tN\tprobes\tflips\tincreases\tsync_cycles')" "8-6 header"
check_eq "$(awk -F'\t' 'NR > 1 { s += $6 } END { print s }' "$T/out")" "0" "no energy increase"
grep -q "energy fell at every one of" "$T/err" || fail "8-6 report: $(cat "$T/err")"
grep -q "sync updates oscillate" "$T/err" || fail "8-6 2-cycle: $(cat "$T/err")"

# Letters: pictures written, projection recalls all, Hebb sends F to E.
expect 0 "$P/hopfield-letters.sh" --quick --keep pics
check_eq "$(head -c 11 pics/letters.pbm | tr '\n' ' ')" "P4 640 400 " "letter sheet: 8 x 5 tiles of 10x10, 8 px a cell"
check_eq "$(awk -F'\t' '$1 == "pseudo-inverse" && $5 == "yes"' "$T/out" | wc -l)" "8" "projection recalls 8 letters"
check_eq "$(awk -F'\t' '$1 == "hebb" && $2 == "F" { print $5 }' "$T/out")" "no" "Hebb fails on F"

# Modern: beta = 1 exact, 1/8 metastable, equal to attention.
expect 0 "$P/modern-hopfield.sh" --quick
cp "$T/out" modern.tsv
check_eq "$(awk -F'\t' '$1 == 1 { print $3 }' modern.tsv)" "1.0000" "beta 1 exact"
check_eq "$(awk -F'\t' '$1 == 0.125 { print ($2 < 0.2 && $3 == 0) ? "ok" : $0 }' modern.tsv)" "ok" "beta 1/8 metastable"
grep -q "^checked:" "$T/err" || fail "modern self-check: $(cat "$T/err")"
# An attn-score that scales its scores breaks the equality, and the script says so.
mkdir fake2
for t in tensor-rand tensor-convert pattern-noise hopfield-recall; do ln -s "$ATTNKIT_BIN/$t" fake2/$t; done
printf '#!/bin/sh\nfor a; do shift; [ "$a" = dot ] && a=scaled-dot; set -- "$@" "$a"; done\nexec "%s/attn-score" "$@"\n' "$ATTNKIT_BIN" >fake2/attn-score
chmod +x fake2/attn-score
ATTNKIT_BIN=$PWD/fake2 expect_err 1 "claim failed: update differs from attn-score" "$P/modern-hopfield.sh" --quick

for s in hopfield-capacity exercise-8-6 hopfield-letters modern-hopfield; do
  pipeline_usage_ok "$P/$s.sh"
done
finish
