#!/usr/bin/env bash
# Show, Attend and Tell: caption-train (threads, exact resume, the baseline) and caption-run
# (captions, --eval, beam, --alignments, --draw, one picture as text, PGM and PNG), hard
# attention (threads, resume, one-hot regions) on tiny scenes made here with awk
# (16 x 16 images, a 2 x 2 grid of 8 x 8 cells, patterned items, image-gen's caption grammar),
# and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

# N scenes as a text tensor [N, 16, 16] (matrices separated by blank lines) and their captions.
scenes() {
  awk -v n="$1" -v seed="$2" -v img="$3" -v cap="$4" 'BEGIN {
    srand(seed); split("hbar vbar box", name, " ")
    for (k = 0; k < n; k++) {
      for (r = 0; r < 16; r++) for (c = 0; c < 16; c++) p[r, c] = 0
      a = int(rand() * 4); do b = int(rand() * 4); while (b == a)
      if (a > b) { t = a; a = b; b = t }
      cell[1] = a; cell[2] = b; words = ""; cells = ""
      for (j = 1; j <= 2; j++) {
        cls = 1 + int(rand() * 3); r0 = int(cell[j] / 2) * 8; c0 = (cell[j] % 2) * 8
        for (r = 1; r < 7; r++) for (c = 1; c < 7; c++)
          if ((cls == 1 && r % 2) || (cls == 2 && c % 2) || (cls == 3 && (r == 1 || r == 6 || c == 1 || c == 6)))
            p[r0 + r, c0 + c] = 1
        if (j == 2) {
          if (int(a / 2) == int(b / 2)) rel = "left of"; else if (a % 2 == b % 2) rel = "above"
          else rel = (a == 0 ? "above and left of" : "above and right of")
          nr = split(rel, rw, " "); words = words " " rel
          for (q = 1; q <= nr; q++) cells = cells " -1"
        }
        words = words (j == 2 ? " " : "") "a " name[cls]; cells = cells (j == 2 ? " " : "") "-1 " cell[j]
      }
      print words "\t" cells > cap
      for (r = 0; r < 16; r++) { line = ""; for (c = 0; c < 16; c++) line = line (c ? " " : "") p[r, c]; print line > img }
      if (k < n - 1) print "" > img
    }
  }'
}
scenes 96 1 train.txt train.tsv
scenes 24 2 valid.txt valid.tsv
check_eq "$(wc -l < train.tsv)" 96 "96 captions"

base="-i train.txt --captions train.tsv --valid valid.txt --valid-captions valid.tsv --embed 8 --hidden 16 --attention-size 8 --batch-size 16 --lr 0.01 --seed 3 -q"
small="$base --channels 4,4"
expect 0 caption-train $small --epochs 10 --threads 1 -o m1.akm --log m1.tsv
expect 0 caption-train $small --epochs 10 --threads 2 -o m2.akm
CHECKS=$((CHECKS + 1)); cmp -s m1.akm m2.akm || fail "the model depends on --threads"
check_eq "$(head -1 m1.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\treg\tvalid_bleu4\tvalid_noun_in_cell\tvalid_coverage_dev')" "log header"
# An exact resume (the running statistics travel in the checkpoint).
expect 0 caption-train $small --epochs 5 --threads 1 -o r.akm --log r.tsv --checkpoint-every 7
expect 0 caption-train -i train.txt --captions train.tsv --valid valid.txt --valid-captions valid.tsv --epochs 10 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s m1.akm r.akm || fail "resumed model differs"
check_eq "$(cat r.tsv)" "$(cat m1.tsv)" "resumed log"
expect 0 caption-train $small --epochs 1 --attention none -o none.akm
# --word-query and the coordinate channels (the default) are stored with the model:
# caption-run rebuilds its shapes. The switch --coords is gone; its key stays, false.
expect 0 caption-train $small --epochs 1 --word-query -o cw.akm
expect 0 caption-run --model cw.akm -i valid.txt --captions valid.tsv --eval
check_eq "$(awk -F'\t' 'NR == 2 { print $1, $3 }' "$T/out")" "24 48" "--word-query: eval row"
expect 0 caption-train $small --dump-config
check_eq "$(grep -c '^coords' "$T/out")" 0 "--dump-config has no coords key"
expect 0 grep -a -c '^coords: false$' cw.akm
check_eq "$(cat "$T/out")" 1 "the model file stores coords: false"

# caption-run: one caption a line, of the training vocabulary; beam 1 = greedy.
expect 0 caption-run --model m1.akm -i valid.txt -o caps.txt
check_eq "$(wc -l < caps.txt)" 24 "a caption an image"
check_eq "$(tr ' ' '\n' < caps.txt | grep -v '^$' | grep -cvxE 'a|hbar|vbar|box|left|of|above|and|right|<unk>')" 0 "words of the vocabulary"
expect 0 caption-run --model m1.akm -i valid.txt --beam 1 -o caps1.txt
# -i is read once: a pipe (here a process substitution) and an .npz on standard input work.
expect 0 caption-run --model m1.akm -i <(cat valid.txt) -o caps-pipe.txt
check_eq "$(cmp -s caps.txt caps-pipe.txt && echo same)" same "-i from a pipe"
tensor-convert valid.txt -o valid-images.npz:images
expect 0 caption-run --model m1.akm -i - -o caps-npz.txt <valid-images.npz
check_eq "$(cmp -s caps.txt caps-npz.txt && echo same)" same "-i - holding an .npz"
expect 0 caption-run --model m1.akm -i <(cat valid-images.npz) -o caps-npz2.txt
check_eq "$(cmp -s caps.txt caps-npz2.txt && echo same)" same "-i from a pipe holding an .npz"
CHECKS=$((CHECKS + 1)); cmp -s caps.txt caps1.txt || fail "--beam 1 differs from greedy"
expect 0 caption-run --model m1.akm -i valid.txt --beam 3 --threads 2 -o caps3.txt
check_eq "$(wc -l < caps3.txt)" 24 "beam: a caption an image"
expect 0 caption-run --model m1.akm -i valid.txt --captions valid.tsv --eval
check_eq "$(head -1 "$T/out")" "$(printf 'images\tbleu4\tnouns\tnoun_in_cell\tcoverage_dev')" "eval header"
check_eq "$(awk -F'\t' 'NR == 2 { print $1, $3, ($2 >= 0 && $2 <= 100), ($4 >= 0 && $4 <= 1) }' "$T/out")" "24 48 1 1" "eval row"
expect 0 caption-run --model none.akm -i valid.txt --captions valid.tsv --eval
# The same BLEU as the bleu tool gives on the captions.
expect 0 caption-run --model m1.akm -i valid.txt --captions valid.tsv --eval -o ev.tsv
cut -f1 valid.tsv > refs.txt
expect 0 bleu -r refs.txt caps.txt
check_eq "$(awk 'NR == 2 { printf "%.2f", $2 }' ev.tsv)" "$(cat "$T/out")" "BLEU-4 as bleu's"
# Attention per word: [words + 1, 4, 4] a row summing to 1.
expect 0 caption-run --model m1.akm -i valid.txt --alignments att.npz -o /dev/null
expect 0 tensor-info att.npz:a0
words=$(head -1 caps.txt | wc -w)
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" "$((words + 1))x4x4" "a0 [words + 1, 4, 4]"
expect 0 tensor-convert att.npz:a0 -o a0.txt
check_eq "$(awk 'NF { s = 0; for (i = 1; i <= NF; i++) s += $i; row += s } !NF { if (row < 0.999 || row > 1.001) bad++; row = 0 } END { if (row < 0.999 || row > 1.001) bad++; print bad + 0 }' a0.txt)" 0 "attention rows sum to 1"
expect 0 caption-run --model m1.akm -i valid.txt --draw fig.png --draw-index 3 -o /dev/null
check_eq "$(head -c 4 fig.png | tail -c 3)" "PNG" "the picture is a PNG"
# One picture [16, 16].
head -16 valid.txt > one.txt
expect 0 caption-run --model m1.akm -i one.txt
check_eq "$(cat "$T/out")" "$(head -1 caps.txt)" "one picture: the first caption"
# The same picture as PGM and PNG (0/1 pixels: exact in 8 bits), and drawn dark on white.
expect 0 tensor-convert one.txt -o one.pgm
expect 0 tensor-convert one.txt -o one.png
expect 0 caption-run --model m1.akm -i one.pgm
check_eq "$(cat "$T/out")" "$(head -1 caps.txt)" "one PGM picture: the first caption"
expect 0 caption-run --model m1.akm -i one.png --alignments one.npz
check_eq "$(cat "$T/out")" "$(head -1 caps.txt)" "one PNG picture: the first caption"
awk '{ for (i = 1; i <= NF; i++) $i = 1 - $i; print }' one.txt > inv.txt
expect 0 tensor-convert inv.txt -o inv.png
expect 0 caption-run --model m1.akm -i inv.png --invert
check_eq "$(cat "$T/out")" "$(head -1 caps.txt)" "an inverted PNG with --invert: the first caption"
grep -q warning "$T/err" && fail "a warning with --invert: $(cat "$T/err")"
# Without --invert, a picture that looks dark on white (mean above 0.5) gets a warning.
expect_err 0 "caption-run: warning: inv.png: the picture's mean is 0." caption-run --model m1.akm -i inv.png
grep -qF "give --invert" "$T/err" || fail "the warning names no --invert: $(cat "$T/err")"
expect 0 caption-run --model m1.akm -i one.png
grep -q warning "$T/err" && fail "a warning for a light-on-black picture: $(cat "$T/err")"

# Hard attention: the same model for any --threads, an exact resume (the moving-average
# baseline travels in the checkpoint), the log's baseline, one-hot regions per word.
hard="$small --attention hard --epochs 3"
expect 0 caption-train $hard --threads 1 -o h1.akm --log h1.tsv
expect 0 caption-train $hard --threads 2 -o h2.akm
CHECKS=$((CHECKS + 1)); cmp -s h1.akm h2.akm || fail "the hard model depends on --threads"
check_eq "$(head -1 h1.tsv | cut -f6-8)" "$(printf 'reg\tsampled_cost\tbaseline')" "hard log header"
expect 0 caption-train $small --attention hard --epochs 2 --threads 1 -o hr.akm --log hr.tsv --checkpoint-every 5
expect 0 caption-train -i train.txt --captions train.tsv --valid valid.txt --valid-captions valid.tsv --epochs 3 -q -o hr.akm --log hr.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s h1.akm hr.akm || fail "resumed hard model differs"
expect 0 caption-run --model h1.akm -i valid.txt --alignments hatt.npz -o hcaps.txt
expect 0 tensor-convert hatt.npz:a0 -o h0.txt
check_eq "$(awk 'NF { for (i = 1; i <= NF; i++) { s += $i; if ($i != 0 && $i != 1) bad++ } } END { print bad + 0, s }' h0.txt)" "0 $(($(head -1 hcaps.txt | wc -w) + 1))" "hard: one region a word"

# A warm start (--init): a hard model from the soft m1.akm; a model of other sizes is refused.
expect 0 caption-train $small --attention hard --epochs 1 --init m1.akm -o hw.akm
expect_err 1 "caption-train: cw.akm: " caption-train $small --attention hard --init cw.akm -o x.akm
# The coordinate channels are the default: a model without them does not fit a default run.
expect 0 caption-train $small --epochs 1 --no-coords -o nc.akm
expect_err 1 "caption-train: nc.akm: " caption-train $small --epochs 1 --init nc.akm -o x.akm
no_file x.akm

# Errors.
expect_err 2 "caption-run: --eval needs --captions" caption-run --model m1.akm -i valid.txt --eval
expect_err 2 "caption-run: --draw: the file must end in .png" caption-run --model m1.akm -i valid.txt --draw x.svg
expect_err 2 "caption-run: --draw-index 24 is outside the 24 images" caption-run --model m1.akm -i valid.txt --draw x.png --draw-index 24
no_file x.png
expect_err 2 "caption-run: --beam must be >= 1" caption-run --model m1.akm -i valid.txt --beam 0
expect_err 2 "caption-run: --invert is for pictures without references (no --captions)" caption-run --model m1.akm -i valid.txt --captions valid.tsv --invert
printf '0 2\n1 0\n' > two.txt
expect_err 1 "caption-run: two.txt: --invert needs values in [0, 1], found 2" caption-run --model m1.akm -i two.txt --invert
expect 0 tensor-rand --shape 3 -o row.npy
expect_err 1 "caption-run: row.npy: expected images [N, H, W] or one picture [H, W], got [3]" caption-run --model m1.akm -i row.npy
expect_err 2 "caption-train: unrecognised option '--coords'" caption-train $small --coords -o x.akm
expect_err 2 "caption-train: --pad: expected a whole number or auto, got 'even'" caption-train $small --pad even -o x.akm
expect_err 2 "caption-train: --sample-prob must be in [0, 1]" caption-train $small --attention hard --sample-prob 1.5 -o x.akm
expect_err 2 "caption-train: --sample-warmup must be >= 0" caption-train $small --attention hard --sample-warmup -1 -o x.akm
expect_err 2 "caption-train: --reward: unknown reward 'sum'" caption-train $small --attention hard --reward sum -o x.akm
head -5 valid.tsv > short.tsv
expect_err 1 "caption-run: short.tsv: 5 captions for 24 images in valid.txt" caption-run --model m1.akm -i valid.txt --captions short.tsv --eval
printf 'a box\t-1 0 1\n' > bad.tsv
expect_err 1 "caption-train: bad.tsv:1: the caption has 2 tokens but 3 token cells" caption-train -i train.txt --captions bad.tsv -o x.akm
printf 'a box\t-1 7\n' > bad.tsv
expect_err 1 "caption-train: bad.tsv:1: token cell '7' is not an integer in -1..3" caption-train -i train.txt --captions bad.tsv -o x.akm
printf 'a box\n\t-1\n' > bad.tsv
expect_err 1 "caption-train: bad.tsv:2: empty caption" caption-train -i train.txt --captions bad.tsv -o x.akm
expect_err 1 "caption-train: one.txt: expected images [N, H, W], got [16, 16]" caption-train -i one.txt --captions train.tsv -o x.akm
expect_err 2 "caption-train: --channels: channels: expected comma-separated counts in 1..4096 such as 16,32, got '4,x'" caption-train $base --channels 4,x -o x.akm
expect_err 2 "caption-train: --attention: unknown attention 'glimpse'" caption-train $small --attention glimpse -o x.akm
expect_err 2 "caption-train: --valid and --valid-captions go together" caption-train -i train.txt --captions train.tsv --valid valid.txt -o x.akm
expect_err 1 "caption-train: a side of 16 pixels is too small for 5 pooling blocks (needs at least 32)" caption-train $base --channels 2,2,2,2,2 --pad 0 -o x.akm
no_file x.akm
expect_err 1 "is a caption model, expected" ptr-run --model m1.akm -i valid.txt
finish
