#!/usr/bin/env bash
# tensor-info: the header and the columns (exact values), several files, .npz members,
# standard input (text and .npy), help, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok tensor-info

HEAD=$(printf 'file\tformat\tdtype\tshape\tmin\tmax\tmean\tstd\tnan\tinf')
printf '1 2\n3 4\n' >m.txt
# mean 2.5, population std sqrt(1.25) = 1.1180339887 (as float: 1.118034)
expect_out "$HEAD
$(printf 'm.txt\ttext\ttext\t2x2\t1\t4\t2.5\t1.118034\t0\t0')" tensor-info m.txt
expect_out "$(printf 'm.txt\ttext\ttext\t2x2\t1\t4\t2.5\t1.118034\t0\t0')" tensor-info --no-header m.txt

# NaN and Inf are counted, and left out of the statistics.
printf '1 nan inf\n-inf 3 nan\n' >n.txt
expect_out "$(printf 'n.txt\ttext\ttext\t2x3\t1\t3\t2\t1\t2\t2')" tensor-info --no-header n.txt
printf 'nan inf\n' >allnan.txt
expect_out "$(printf 'allnan.txt\ttext\ttext\t1x2\tnan\tnan\tnan\tnan\t1\t1')" tensor-info --no-header allnan.txt

# .npy, an .npz member, several files at once (arguments and -i), 3-D text.
tensor-convert m.txt m.npy
tensor-convert --f64 m.txt m.npz:w
printf '1 2\n3 4\n\n5 6\n7 8\n' >b.txt
expect 0 tensor-info --no-header m.npy m.npz m.npz:w b.txt
check_eq "$(cut -f1-4 "$T/out" | tr '\t' ' ')" "m.npy npy <f4 2x2
m.npz npz:w <f8 2x2
m.npz:w npz:w <f8 2x2
b.txt text text 2x2x2" "several files"
expect 0 tensor-info --no-header -i m.npy -i b.txt
check_eq "$(cut -f1 "$T/out" | tr '\n' ' ')" "m.npy b.txt " "-i twice"
expect 0 tensor-info --no-header -i m.npy b.txt
check_eq "$(wc -l <"$T/out")" 2 "-i and an argument"

# Standard input: text and .npy, named '-'.
run tensor-info --no-header <m.txt
check_eq "$(cut -f1-4 "$T/out" | tr '\t' ' ')" "- text text 2x2" "text on stdin"
run tensor-info --no-header - <m.npy
check_eq "$(cut -f1-4 "$T/out" | tr '\t' ' ')" "- npy <f4 2x2" "npy on stdin"
tensor-rand --shape 2,3,4,5 --seed 1 -o r4.npy
expect 0 tensor-info --no-header r4.npy
check_eq "$(cut -f4 "$T/out")" "2x3x4x5" "rank 4"

# Errors: status 1, the file (and line) named.
expect_err 1 "tensor-info: missing.npy: cannot open: No such file or directory" tensor-info missing.npy
printf '1 2\n3\n' >ragged.txt
expect_err 1 "tensor-info: ragged.txt:2: expected 2 columns, found 1" tensor-info ragged.txt
printf '1 two\n' >word.txt
expect_err 1 "tensor-info: word.txt:1: not a number: 'two'" tensor-info word.txt
: >empty.txt
expect_err 1 "tensor-info: empty.txt: no numbers" tensor-info empty.txt
head -c 300 r4.npy >cut.npy
expect_err 1 "tensor-info: cut.npy: truncated .npy data" tensor-info cut.npy
expect_err 1 "tensor-info: m.npz: no array 'x' in the archive (it holds: w)" tensor-info m.npz:x
# IDX (MNIST's format), plain and gzip-compressed, detected by content whatever the name.
I="$ATTNKIT_TESTDATA/idx"
expect_out "$(printf 'u8\tidx\t|u1\t3x4x5\nu8.gz\tidx.gz\t|u1\t3x4x5\nf64\tidx\t>f8\t3x1')" \
  sh -c "cp '$I/u8.idx' u8 && cp '$I/u8.idx.gz' u8.gz && cp '$I/f64.idx' f64 && tensor-info --no-header u8 u8.gz f64 | cut -f 1-4"
printf '\0\0\x08\x02\0\0\0\x03\0\0\0\x04abc' >cut.idx
expect_err 1 "tensor-info: cut.idx: IDX: the data is cut short (the header promises 12 bytes, 3 follow)" tensor-info cut.idx
printf '\0\0\x07\x01\0\0\0\x01a' >type.idx
expect_err 1 "tensor-info: type.idx: IDX: unknown element type 0x07" tensor-info type.idx
gzip -c m.txt >m.txt.gz
expect_err 1 "tensor-info: m.txt.gz: gzip-compressed, but not an IDX file inside" tensor-info m.txt.gz
# Fashion-MNIST as Debian installs it (values checked against Python's gzip and struct).
F=/usr/share/datasets/fashion-mnist
if [ -r "$F/t10k-labels-idx1-ubyte.gz" ]; then
  expect_out "$(printf 'idx.gz\t|u1\t10000x28x28\t0\t255\nidx.gz\t|u1\t10000\t0\t9')" \
    sh -c "tensor-info --no-header $F/t10k-images-idx3-ubyte.gz $F/t10k-labels-idx1-ubyte.gz | cut -f 2-6"
else
  echo "SKIPPED (part): no $F (the Debian package dataset-fashion-mnist; make deps installs it)"
fi
# The lines of the files before the bad one are printed.
expect_err 1 "tensor-info: missing.npy: cannot open" tensor-info --no-header m.txt missing.npy
check_eq "$(cut -f1 "$T/out")" "m.txt" "lines before the error"
run sh -c 'tensor-info m.txt >/dev/full'
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "^tensor-info: write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
finish
