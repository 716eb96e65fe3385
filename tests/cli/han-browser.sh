#!/usr/bin/env bash
# cost: 15
# han-run --draw's HTML (the paper's Figure 5) opened in a real headless browser (Debian's
# chromium, which make deps installs; skipped with a message when absent): the
# screenshot (read back as grey by tensor-convert) is not blank, and the left column holds
# one sentence bar a sentence, each as long as its sentence weight (han-run --alignments)
# times the 40-pixel slot, within 1.5 pixels.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

browser=""
for b in chromium chromium-browser; do command -v "$b" >/dev/null && browser=$b && break; done
if [ -z "$browser" ]; then
  echo "skipped: no chromium to open the HTML figure in (apt-get install chromium)"
  exit 77
fi

# A small model on a key-word task (as tests/cli/han.sh), one document of 4 sentences drawn.
awk 'BEGIN { srand(5)
  f[0] = "The cat sat on the mat."; f[1] = "It rained all day long!"
  f[2] = "We went to the market."; f[3] = "Nothing much happened here?"
  for (i = 0; i < 160; i++) {
    a = rand() < 0.5; at = int(rand() * 4); d = ""
    for (j = 0; j < 4; j++) d = d (j == at ? (a ? "Then alpha came. " : "Then beta came. ") : f[int(rand() * 4)] " ")
    print (a ? "a" : "b") "\t" d
  } }' > train.tsv
printf 'a\tThe cat sat on the mat. Then alpha came. It rained all day long! We went to the market.\n' > one.tsv
expect 0 han-train -i train.tsv --embed 8 --hidden 8 --context 8 --min-freq 1 --batch-size 16 \
  --lr 0.03 --epochs 3 --seed 3 -q -o m.akm
expect 0 han-run -m m.akm -i one.tsv --alignments att.npz --draw fig.html -o /dev/null
expect 0 tensor-convert -i att.npz:s0 -o s0.txt
# The page at 800 pixels wide (narrower than the body's 60em: the body starts at x = 0).
run timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --force-device-scale-factor=1 --window-size=800,600 --screenshot="$PWD/shot.png" \
  "file://$PWD/fig.html"
CHECKS=$((CHECKS + 1)); [ -s shot.png ] || fail "no screenshot (status $RC): $(tail -3 "$T/err")"
expect 0 tensor-convert -i shot.png -o shot.txt
# Grey levels: the bars' red (220,40,40) is 0.368, the slot's #eee 0.933, white 1. A sentence
# row: pixels 0-39 (the slot) all between red and #eee, pixels 40-47 (its margin) white. Per
# run of such rows, the bar's length in pixels: the sum over the slot of (#eee - v) / (#eee - red).
awk 'BEGIN { red = 0.3678; eee = 0.9333 }
  { nonwhite += 0; for (x = 1; x <= NF; x++) if ($x < 0.98) nonwhite++
    row = NF >= 48; for (x = 1; x <= 40 && row; x++) if ($x < red - 0.01 || $x > eee + 0.01) row = 0
    for (x = 41; x <= 48 && row; x++) if ($x < 0.99) row = 0
    if (row) { len = 0; for (x = 1; x <= 40; x++) len += (eee - $x) / (eee - red)
               if (!in_run) { runs++; bar[runs] = len } }
    in_run = row }
  END { printf "%d", nonwhite > "nonwhite.txt"
        for (i = 1; i <= runs; i++) printf "%.2f\n", bar[i] }' shot.txt > bars.txt
CHECKS=$((CHECKS + 1))
[ "$(cat nonwhite.txt)" -gt 5000 ] || fail "the screenshot is (nearly) blank: $(cat nonwhite.txt) dark pixels"
tr ' ' '\n' < s0.txt | grep . > s0.col
check_eq "$(wc -l < bars.txt)" 4 "one bar a sentence"
check_eq "$(paste bars.txt s0.col | awk '{ d = $1 - 40 * $2; if (d < -1.5 || d > 1.5) bad++ } END { print bad + 0 }')" 0 \
  "bars as long as the sentence weights ($(paste -d: bars.txt s0.col | tr '\n' ' '))"
finish
