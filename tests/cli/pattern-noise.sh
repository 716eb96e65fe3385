#!/usr/bin/env bash
# pattern-noise: exactly K flips per pattern, --flip as a fraction, seeds, PBM in and out,
# help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/hopfield"
help_ok pattern-noise

tensor-rand --shape 30,50 --dist sign --seed 4 -o p.txt
# flips = number of differing values per row of two text files, as a sorted unique list.
flips() { paste -d' ' "$1" "$2" | awk '{ n = NF / 2; d = 0; for (i = 1; i <= n; i++) d += $i != $(i + n); print d }' | sort -u; }
expect_err 0 "flipped 7 of 50 bits in each of 30 patterns" pattern-noise -i p.txt --flip-count 7 --seed 1 -o n7.txt
check_eq "$(flips p.txt n7.txt)" "7" "exactly 7 flips in every row"
expect 0 pattern-noise -i p.txt --flip 0.1 --seed 1 -o n5.txt
check_eq "$(flips p.txt n5.txt)" "5" "--flip 0.1 of 50 = 5"
expect 0 pattern-noise -i p.txt --flip-count 7 --seed 1 -o again.txt
check_eq "$(cat again.txt)" "$(cat n7.txt)" "same seed, same output"
expect 0 pattern-noise -i p.txt --flip-count 7 --seed 2 -o other.txt
[ "$(cat other.txt)" != "$(cat n7.txt)" ] || fail "--seed 2 gave the same flips as --seed 1"
expect 0 pattern-noise -i p.txt --flip-count 0 -o n0.txt
check_eq "$(cat n0.txt)" "$(cat p.txt)" "--flip-count 0 is the identity"
expect 0 pattern-noise -i p.txt --flip 1 -o all.txt
check_eq "$(flips p.txt all.txt)" "50" "--flip 1 flips everything"
# PBM in, PBM out (a 4x4 tile, P4), and back as text.
expect 0 pattern-noise -i "$G/checkerboard.pbm" --flip-count 5 --seed 3 -o n.pbm
check_eq "$(head -c 7 n.pbm | tr '\n' ' ')" "P4 4 4 " "PBM header"
expect 0 pattern-noise -i n.pbm --flip-count 0 -o n.txt
check_eq "$(flips "$G/checkerboard.txt" n.txt)" "5" "5 pixels flipped in the picture"
expect 0 pattern-noise -i p.txt --flip-count 1 --image-size 10x5 --tiles-per-row 6 -o sheet.pbm
check_eq "$(head -c 9 sheet.pbm | tr '\n' ' ')" "P4 60 25 " "sheet of 6 x 5 tiles of 10x5"
# --pixel-size: the same sheet drawn 4 px a value; read back as one image, each value's
# block is uniform, and shrinking it gives the 1-px sheet's pixels.
expect 0 pattern-noise -i p.txt --flip-count 1 --image-size 10x5 --tiles-per-row 6 --pixel-size 4 -o big.pbm
check_eq "$(head -c 11 big.pbm | tr '\n' ' ')" "P4 240 100 " "--pixel-size 4"
expect 0 pattern-noise -i sheet.pbm --flip-count 0 -o small.txt
expect 0 pattern-noise -i big.pbm --flip-count 0 -o big.txt
# (each PBM read back as one pattern: row-major pixels on one line)
check_eq "$(awk '{ for (y = 0; y < 100; y += 4) for (x = 0; x < 240; x += 4) printf "%s ", $(y * 240 + x + 1) }' big.txt)" \
  "$(awk '{ for (i = 1; i <= NF; i++) printf "%s ", $i }' small.txt)" "--pixel-size blocks shrink to the sheet"
expect_err 2 "--pixel-size must be 1 to 64" pattern-noise -i p.txt --flip-count 1 --pixel-size 0 -o x.pbm
expect 0 pattern-noise -i p.txt --flip-count 1 --npy
check_eq "$(head -c 6 "$T/out" | tail -c 5)" "NUMPY" "--npy on standard output"

# Errors.
expect_err 2 "give one of --flip FRACTION and --flip-count K" pattern-noise -i p.txt -o e.txt
no_file e.txt
expect_err 2 "give one of --flip FRACTION and --flip-count K" pattern-noise -i p.txt --flip 0.1 --flip-count 2 -o e.txt
no_file e.txt
expect_err 2 "--flip must be a fraction between 0 and 1" pattern-noise -i p.txt --flip 1.5 -o e.txt
no_file e.txt
expect_err 2 "--flip-count must be 0 or more" pattern-noise -i p.txt --flip-count=-1 -o e.txt
no_file e.txt
expect_err 1 "pattern-noise: p.txt: cannot flip 51 bits of patterns of 50 (0 to 50)" \
  pattern-noise -i p.txt --flip-count 51 -o e.txt
no_file e.txt
expect_err 1 "pattern-noise: $G/not_bipolar.txt: row 2, column 2: value 0.5 is not -1 or +1" \
  pattern-noise -i "$G/not_bipolar.txt" --flip-count 1 -o e.txt
no_file e.txt
expect_err 1 "patterns of 50 values are not square: give an image size WxH for a PBM output" \
  pattern-noise -i p.txt --flip-count 1 -o e.pbm
no_file e.pbm
expect_err 1 "image size 7x7 holds 49 pixels but the patterns have 50 values" \
  pattern-noise -i p.txt --flip-count 1 --image-size 7x7 -o e.pbm
no_file e.pbm
expect_err 1 "pattern-noise: " pattern-noise -i p.txt --flip-count 1 -o /dev/full
finish
