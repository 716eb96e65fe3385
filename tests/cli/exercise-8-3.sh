#!/usr/bin/env bash
# labels: pipeline
# pipelines/exercise-8-3.sh --quick: the TSV (times of attention, conv and rnn over N; path
# lengths; counted operations), the operations' growth checked independently here (times
# are not judged: they depend on the machine and its load), the self-check failing when a
# layer grows at the wrong rate, the plot skipped without gnuplot, usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
P="$ATTNKIT_SRC/pipelines/exercise-8-3.sh"
[ -x "$ATTNKIT_BIN/layer-time" ] || { echo "layer-time not built: skipped"; exit 77; }

expect 0 "$P" --quick --keep kept
cp "$T/out" quick.tsv
grep -q "^Look at" "$T/err" || fail "no sentence telling what to look at: $(cat "$T/err")"
grep -q "^checked:" "$T/err" || fail "no self-check report: $(cat "$T/err")"
grep -q "^growth exponents" "$T/err" || fail "no growth exponents: $(cat "$T/err")"
check_eq "$(head -1 quick.tsv)" \
  "$(printf 'N\td\tk\ttime_attention\ttime_conv\ttime_rnn\tpath_attention\tpath_conv\tpath_dilated\tpath_rnn\tflops_attention\tflops_conv\tflops_rnn')" "TSV header"
check_eq "$(tail -n +2 quick.tsv | cut -f1 | tr '\n' ' ')" "256 512 1024 2048 " "N column"
check_eq "$(tail -n +2 quick.tsv | cut -f7-10 | tr '\t\n' ', ')" \
  "1,128,6,255 1,256,6,511 1,512,7,1023 1,1024,7,2047 " "path lengths"
check_eq "$(cat kept/result.tsv)" "$(cat quick.tsv)" "--keep keeps the TSV"
if command -v gnuplot >/dev/null; then
  CHECKS=$((CHECKS + 1)); [ -s kept/times.png ] || fail "gnuplot installed but no kept/times.png"
else
  grep -q "gnuplot is not installed" "$T/err" || fail "no note about the missing gnuplot"
fi
# Independently of the script: from N = 256 to 2048 attention's operations grow 64-fold
# (exactly: 4 N^2 d), conv's and rnn's about 8-fold.
check_eq "$(tail -n +2 quick.tsv | cut -f11 | tr '\n' ' ')" \
  "$((4*256*256*64)) $((4*512*512*64)) $((4*1024*1024*64)) $((4*2048*2048*64)) " "attention operations 4 N^2 d"
CHECKS=$((CHECKS + 1))
msg=$(awk -F'\t' 'NR == 2 { c = $12; r = $13 } END {
    gc = $12 / c; gr = $13 / r
    if (!(gc > 7.9 && gc < 8.1 && gr > 7.9 && gr < 8.1)) print "conv x" gc ", rnn x" gr }' quick.tsv)
[ -z "$msg" ] || fail "operations' growth from N=256 to 2048: $msg"

# The self-check can fail: a layer-time whose attention grows linearly.
mkdir fakebin
cat >fakebin/layer-time <<'EOS'
#!/bin/sh
exec awk -v args="$*" 'BEGIN { n = split(args, a, " ")
  for (i = 1; i <= n; i++) { if (a[i] == "--length") N = a[i + 1]; if (a[i] == "--layer") L = a[i + 1]
    if (a[i] == "--kernel") k = a[i + 1]; if (a[i] == "--dilated") d = 1 }
  p = (L == "attention") ? 1 : (L == "rnn") ? N - 1 : int((N - 1 + k - 2) / (k - 1))
  if (d) { p = 0; for (r = 1; r < N; r *= k) p++ }
  printf "%s\t%d\t64\t%s\t%g\t%d\t%d\n", L, N, k, N * 1e-6, p, N * 1000 }'
EOS
chmod +x fakebin/layer-time
ATTNKIT_BIN=$PWD/fakebin expect_err 1 "claim failed: attention operations grow like N^1.00" "$P" --quick

expect_err 2 "unknown argument '--bogus'" "$P" --bogus
expect_err 2 "--dim needs a whole number" "$P" --dim x
expect_err 2 "--repeat needs a whole number" "$P" --repeat 0
expect 0 "$P" --help
grep -q "Exercise 8.3" "$T/out" || fail "--help does not describe the exercise"
finish
