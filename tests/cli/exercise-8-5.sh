#!/usr/bin/env bash
# labels: pipeline
# cost: 30
# pipelines/exercise-8-5.sh --quick: the TSV of argmax and entropy per memn2n hop and NTM step,
# re-checked here from the kept traces; the three plots; a claim failing when the NTM is
# barely trained; usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
P="$ATTNKIT_SRC/pipelines/exercise-8-5.sh"
export ATTNKIT_TESTDATA

expect 0 "$P" --quick --keep kept
cp "$T/out" quick.tsv
check_eq "$(head -1 quick.tsv)" \
  "$(printf 'model\tstep\thead\trows\targmax\tmax_weight\tentropy_bits')" "TSV header"
check_eq "$(grep -c '^checked:' "$T/err")" 6 "six claims checked"
for f in memn2n.png ntm-write.png ntm-read.png; do
  CHECKS=$((CHECKS + 1)); [ -s "kept/$f" ] || fail "no kept/$f"
done
# memn2n: 2 hops over the same sentences; NTM: 2 x 4 + 1 steps for each of its two heads.
check_eq "$(grep -c '^memn2n' quick.tsv)" 2 "memn2n rows"
check_eq "$(awk -F'\t' '/^memn2n/ { print $4 }' quick.tsv | sort -u | wc -l)" 1 "hops over one memory"
check_eq "$(awk -F'\t' '$1 == "ntm-copy" { n[$3]++ } END { print n["write"] + 0, n["read"] + 0 }' quick.tsv)" \
  "9 9" "NTM steps per head"
# Independently of the script: the write weighting's argmax per step from the trace, and its
# entropy in bits, match the TSV.
tensor-convert -i kept/trace.npz:write0 w.txt || fail "trace"
CHECKS=$((CHECKS + 1))
got=$(awk -F'\t' '$3 == "write" { printf "%s,%s ", $5, $7 }' quick.tsv)
want=$(awk '{ m = -1; h = 0; for (i = 1; i <= NF; i++) { if ($i > m) { m = $i; a = i - 1 }
    if ($i > 0) h -= $i * log($i) / log(2) } printf "%d,%.4f ", a, h }' w.txt)
[ "$got" = "$want" ] || fail "write argmax/entropy: TSV '$got', trace '$want'"

# A claim fails: an NTM trained for 20 sequences does not write along a trail.
mkdir fakebin
for t in "$ATTNKIT_BIN"/*; do ln -s "$t" fakebin/; done
rm fakebin/ntm-train
cat >fakebin/ntm-train <<EOS
#!/usr/bin/env bash
a=(); prev=
for x in "\$@"; do [ "\$prev" = --steps ] && x=20; a+=("\$x"); prev=\$x; done
exec "$ATTNKIT_BIN/ntm-train" "\${a[@]}"
EOS
chmod +x fakebin/ntm-train
ATTNKIT_BIN=$PWD/fakebin expect_err 1 "claim failed: NTM" "$P" --quick

pipeline_usage_ok "$P" "Exercise 8.5"
finish
