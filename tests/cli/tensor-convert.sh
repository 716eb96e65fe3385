#!/usr/bin/env bash
# tensor-convert: every format pair, members of .npz archives, standard input and output,
# --f64, --reshape, --precision, help, and every documented error (status, message naming
# the file and line, no output file left behind).
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok tensor-convert

printf '# a comment\n1 2.5 -3\n4 5e-3 nan  # trailing comment\n' >m.txt
printf '1 2.5 -3\n4 0.005 nan\n' >m.expected

# text -> .npy -> .npz member -> text, positional and option forms.
expect 0 tensor-convert m.txt m.npy
check_eq "$(head -c 6 m.npy | tail -c 5)" "NUMPY" "m.npy magic"
grep -q "'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" m.npy || fail "m.npy header"
expect 0 tensor-convert -i m.npy -o m.npz:weights
check_eq "$(head -c 2 m.npz)" "PK" "m.npz is a zip"
expect_out "$(cat m.expected)" tensor-convert m.npz:weights
expect_out "$(cat m.expected)" tensor-convert m.npz
expect_out "$(cat m.expected)" tensor-convert -o - m.npy
expect 0 tensor-convert m.npy -o back.txt
check_eq "$(cat back.txt)" "$(cat m.expected)" "text -> npy -> text"
expect 0 tensor-convert -i m.npy back2.txt
check_eq "$(cat back2.txt)" "$(cat m.expected)" "-i IN OUT"
expect 0 tensor-convert -o back3.txt -i m.npy
check_eq "$(cat back3.txt)" "$(cat m.expected)" "-o OUT -i IN"
# The default member name, and a 3-D text round trip (blank line between the matrices).
expect 0 tensor-convert m.txt plain.npz
expect 0 tensor-info --no-header plain.npz
check_eq "$(cut -f2 "$T/out")" "npz:arr_0" "default member name"
printf '1 2\n3 4\n\n5 6\n7 8\n' >b.txt
expect 0 tensor-convert b.txt b.npy
expect_out "$(cat b.txt)" tensor-convert b.npy
# Rank 4 through .npy and .npz, and --reshape.
seq 24 | tr '\n' ' ' >v.txt
expect 0 tensor-convert --reshape 2,3,2,2 v.txt r4.npy
expect 0 tensor-convert r4.npy r4.npz:x
expect_out "$(seq 24 | tr '\n' ' ' | sed 's/ $//')" tensor-convert --reshape 24 r4.npz:x
expect_out "$(printf '1 2 3 4\n5 6 7 8\n9 10 11 12\n\n13 14 15 16\n17 18 19 20\n21 22 23 24')" \
  tensor-convert --reshape 2x3x4 r4.npy

# Standard input: text and .npy; --npy on standard output; the format is the content's.
run tensor-convert <m.txt
check_eq "$(cat "$T/out")" "$(cat m.expected)" "text on stdin"
run tensor-convert - out.txt <m.npy
check_eq "$RC" 0 "npy on stdin: status"
check_eq "$(cat out.txt)" "$(cat m.expected)" "npy on stdin"
rm out.txt
run tensor-convert -i -:weights <m.npz
check_eq "$(cat "$T/out")" "$(cat m.expected)" "npz member on stdin"
expect 0 tensor-convert --npy m.txt
CHECKS=$((CHECKS + 1))
cmp -s "$T/out" m.npy || fail "--npy on stdout differs from m.npy"
cp m.npy disguised.txt
expect_out "$(cat m.expected)" tensor-convert disguised.txt

# --f64, --precision.
expect 0 tensor-convert --f64 m.txt d.npy
grep -q "'descr': '<f8'" d.npy || fail "--f64: not <f8"
check_eq "$(stat -c %s d.npy)" $((128 + 6 * 8)) "--f64: size (data at a multiple of 64)"
expect_out "$(cat m.expected)" tensor-convert d.npy
expect 0 tensor-convert --f64 m.txt d.npz:w
expect 0 tensor-info --no-header d.npz
check_eq "$(cut -f3 "$T/out")" "<f8" "--f64 in .npz"
printf '3.14159265 0.666666667\n' >p.txt
expect_out "3.14 0.667" tensor-convert --precision 3 p.txt
expect_out "3.1415927 0.6666667" tensor-convert p.txt

# An existing output is replaced atomically and keeps its mode.
echo old >keep.txt
chmod 640 keep.txt
expect 0 tensor-convert m.txt keep.txt
check_eq "$(cat keep.txt)" "$(cat m.expected)" "replaced output"
check_eq "$(stat -c %a keep.txt)" 640 "mode kept"

# Data errors: status 1, file and line named, no output file.
printf '1 2 3 4\n5 6 7 8\n1 2 3\n' >ragged.txt
expect_err 1 "tensor-convert: ragged.txt:3: expected 4 columns, found 3" tensor-convert ragged.txt out.npy
no_file out.npy
printf '1 2\n# x\n3 abc\n' >word.txt
expect_err 1 "tensor-convert: word.txt:3: not a number: 'abc'" tensor-convert word.txt out.npy
no_file out.npy
printf '# nothing\n\n' >empty.txt
expect_err 1 "tensor-convert: empty.txt: no numbers" tensor-convert empty.txt out.npy
no_file out.npy
run tensor-convert - out.npy </dev/null
check_eq "$RC" 1 "empty stdin: status"
grep -qF "tensor-convert: <stdin>: no numbers" "$T/err" || fail "empty stdin: $(cat "$T/err")"
no_file out.npy
printf '1 2\n3 x\n' >bad_stdin.txt
run tensor-convert <bad_stdin.txt
grep -qF "tensor-convert: <stdin>:2: not a number: 'x'" "$T/err" || fail "stdin line: $(cat "$T/err")"
printf '1 2\n3 4\n\n5 6\n' >ragged3.txt
expect_err 1 "tensor-convert: ragged3.txt:4: matrix 2 has 1 row, expected 2" tensor-convert ragged3.txt out.npy
no_file out.npy
head -c 140 m.npy >cut.npy
expect_err 1 "tensor-convert: cut.npy: truncated .npy data" tensor-convert cut.npy out.txt
no_file out.txt
head -c 60 m.npy >cut_header.npy
expect_err 1 "tensor-convert: cut_header.npy: truncated .npy header" tensor-convert cut_header.npy out.txt
no_file out.txt
{ cat m.npy; printf 'junk'; } >long.npy
expect_err 1 "tensor-convert: long.npy: 4 bytes of trailing garbage" tensor-convert long.npy out.txt
no_file out.txt
expect_err 1 "tensor-convert: m.npz: no array 'nope' in the archive (it holds: weights)" tensor-convert m.npz:nope out.txt
no_file out.txt
expect_err 1 "tensor-convert: missing.txt: cannot open: No such file or directory" tensor-convert missing.txt out.npy
no_file out.npy
expect_err 1 "tensor-convert: missing.npz: cannot open" tensor-convert missing.npz:w out.npy
cp m.npy m.npz
expect_err 1 "tensor-convert: m.npz: not an .npz archive, so it has no member 'w'" tensor-convert m.npz:w out.txt
no_file out.txt
expect_err 1 "tensor-convert: r4.txt: text holds rank <= 3; write .npy" tensor-convert r4.npy r4.txt
no_file r4.txt
expect_err 1 "tensor-convert: m.txt: cannot reshape [2, 3] to [4, 2]" tensor-convert --reshape 4,2 m.txt out.npy
no_file out.npy
expect_err 1 "tensor-convert: .: read error" tensor-convert . out.npy
no_file out.npy

# Usage errors: status 2.
expect_err 2 "tensor-convert: --reshape: bad shape '2,-3'" tensor-convert --reshape 2,-3 m.txt out.npy
no_file out.npy
expect_err 2 "tensor-convert: " tensor-convert m.txt out.npy extra
no_file out.npy
expect_err 2 "tensor-convert: more than one input" tensor-convert m.txt out.npy -o other.npy
no_file out.npy
no_file other.npy

# Write errors.
expect_err 1 "tensor-convert: /dev/full: write error" tensor-convert m.txt /dev/full
expect_err 1 "tensor-convert: /dev/full: write error" tensor-convert m.txt -o /dev/full
# IDX in, .npy out: the values NumPy reads from the same bytes (testdata/make_idx_golden.py).
for ty in u8 i16 f32; do
  expect 0 tensor-convert "$ATTNKIT_TESTDATA/idx/$ty.idx.gz" -o $ty.npy
  check_eq "$(cmp -s $ty.npy "$ATTNKIT_TESTDATA/idx/$ty.npy" && echo same)" same "$ty.idx.gz -> .npy"
done
run sh -c 'tensor-convert m.txt >/dev/full'
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "^tensor-convert: .*write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
expect_err 1 "tensor-convert: nodir/out.npy: cannot create a file" tensor-convert m.txt nodir/out.npy
# Nothing but the expected files here: no temporaries.
CHECKS=$((CHECKS + 1))
ls -A | grep -q '\.tmp\.' && fail "temporaries left: $(ls -A | grep '\.tmp\.')"
finish
