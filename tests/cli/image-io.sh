#!/usr/bin/env bash
# Pictures as tensors: tensor-info and tensor-convert read PGM and PNG by content (the golden
# files of testdata/make_image_golden.py), write .pgm/.png from a matrix in [0,1] that reads
# back to the nearest 8-bit level, and refuse damaged pictures and bad values (no output).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
I="$ATTNKIT_TESTDATA/image"
for f in grey8.pgm grey4_ascii.pgm grey16.pgm grey1000.pgm grey8.png grey16.png rgb.png; do
  cp "$I/$f" "pic-$f.bin"   # a name that does not tell the format
  expect 0 tensor-convert "pic-$f.bin" -o got.txt
  tensor-convert "$I/$f.npy" -o want.txt
  close_enough got.txt want.txt 1e-6
done
expect 0 tensor-info "$I/grey16.pgm" "$I/rgb.png"
check_eq "$(awk -F'\t' 'NR > 1 { print $2, $3, $4 }' "$T/out" | tr '\n' ';')" "pgm >u2 2x4;png rgb 2x3;" "tensor-info of pictures"
# Written pictures read back to the nearest of 256 levels.
printf '0 0.25 0.5\n0.75 1 0.1\n' > m.txt
expect 0 tensor-convert m.txt -o m.png
expect 0 tensor-convert m.txt -o m.pgm
check_eq "$(head -c 4 m.png | tail -c 3)" PNG "a PNG"
check_eq "$(head -c 2 m.pgm)" P5 "a P5 PGM"
printf '0 0.250980392 0.501960784\n0.749019608 1 0.101960784\n' > levels.txt
for f in m.png m.pgm; do
  expect 0 tensor-convert $f -o back.txt
  close_enough back.txt levels.txt 1e-6
done
# Errors: values outside [0,1], a rank-3 batch, damaged pictures.
printf '0 1.5\n' > big.txt
expect_err 1 "tensor-convert: big.png: PNG: value 1.5 at index 1 is outside [0,1] (scale the tensor first)" tensor-convert big.txt -o big.png
no_file big.png
printf '0 1\n\n1 0\n' > two.txt
expect_err 1 "PGM: a picture is a matrix [height, width], not [2, 1, 2]" tensor-convert two.txt -o two.pgm
no_file two.pgm
expect_err 1 "tensor-convert: $I/cut.pgm: PGM: 15 samples need 15 bytes, the file holds 10" tensor-convert "$I/cut.pgm" -o x.npy
expect_err 1 "tensor-convert: $I/huge.png: PNG: 50000x50000 pixels are more than the file could hold" tensor-convert "$I/huge.png" -o x.npy
expect_err 1 "tensor-convert: $I/cut.png: PNG: " tensor-convert "$I/cut.png" -o x.npy
no_file x.npy
finish
