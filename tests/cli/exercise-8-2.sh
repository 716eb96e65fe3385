#!/usr/bin/env bash
# labels: pipeline
# pipelines/exercise-8-2.sh --quick: the TSV (variance of q.k ~ d_k, of the scaled score ~ 1,
# softmax saturating without scaling), its self-check failing when scaling is broken, and
# its usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
P="$ATTNKIT_SRC/pipelines/exercise-8-2.sh"
for t in tensor-rand attn-score; do
  [ -x "$ATTNKIT_BIN/$t" ] || { echo "$t not built: skipped"; exit 77; }
done

expect 0 "$P" --quick
cp "$T/out" quick.tsv
grep -q "^Look at" "$T/err" || fail "no sentence telling what to look at: $(cat "$T/err")"
grep -q "^checked:" "$T/err" || fail "no self-check report: $(cat "$T/err")"
check_eq "$(head -1 quick.tsv)" "$(printf 'd_k\tvar_dot\tvar_scaled\tmaxw_dot\tmaxw_scaled')" "TSV header"
check_eq "$(tail -n +2 quick.tsv | cut -f1 | tr '\n' ' ')" "4 16 64 256 1024 " "d_k column"
# The theory, checked here independently of the script's own check.
CHECKS=$((CHECKS + 1))
msg=$(awk -F '\t' 'NR > 1 {
    if ($2 / $1 < 0.8 || $2 / $1 > 1.2) print "var_dot/d_k " $2 / $1 " at d_k=" $1
    if ($3 < 0.8 || $3 > 1.2) print "var_scaled " $3 " at d_k=" $1
    if (NR > 2 && $4 <= prev) print "maxw_dot not increasing at d_k=" $1
    if ($5 >= $4 && $1 >= 16) print "scaled softmax not flatter at d_k=" $1
    prev = $4; last = $4 }
  END { if (last < 0.5) print "no saturation: maxw_dot " last " at the largest d_k" }' quick.tsv)
[ -z "$msg" ] || fail "exercise-8-2 TSV: $msg"

# Same seed, same table; another seed, another table.
expect 0 "$P" --quick
check_eq "$(cat "$T/out")" "$(cat quick.tsv)" "same seed, same TSV"
expect 0 "$P" --quick --seed 5
[ "$(cat "$T/out")" != "$(cat quick.tsv)" ] || fail "--seed 5 gave the same TSV as seed 1"

# The self-check can fail: an attn-score that forgets to scale breaks the claims.
mkdir fakebin
ln -s "$ATTNKIT_BIN/tensor-rand" fakebin/tensor-rand
cat >fakebin/attn-score <<EOS
#!/bin/sh
for a; do shift; [ "\$a" = scaled-dot ] && a=dot; set -- "\$@" "\$a"; done
exec "$ATTNKIT_BIN/attn-score" "\$@"
EOS
chmod +x fakebin/attn-score
ATTNKIT_BIN=$PWD/fakebin expect_err 1 "claim failed: var_scaled" "$P" --quick

pipeline_usage_ok "$P" "Exercise 8.2"
finish
