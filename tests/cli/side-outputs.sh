#!/usr/bin/env bash
# cost: 10
# Side outputs (--draw, --trace, --alignments) and the main output (issue 36): every output is
# checked before the work, so that a bad -o fails at once and writes nothing; and a run that
# fails after writing a side output removes it, as the main output's atomic write leaves
# nothing. A side file that was there before and was not written again stays.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
A=$ATTNKIT_TESTDATA/attn2d
tensor-convert "$A/sagan.npz:x" -o x.npy
att=(attn-2d -i x.npy --params "$A/sagan.npz" --pixel 1,1)

# A bad -o: refused before the work, the picture not drawn.
expect_err 1 "no-such-dir/out.npy" "${att[@]}" --draw pic.png -o no-such-dir/out.npy
no_file pic.png
# snail-run and stackmem-run checked -o only at the end: now before the work.
expect_err 1 "no-such-dir/t.tsv" snail-run --episodes 5 --trace trace.tsv -o no-such-dir/t.tsv
no_file trace.tsv
expect_err 1 "no-such-dir/p.png" "${att[@]}" --draw no-such-dir/p.png -o out.npy
no_file out.npy

# The main output fails after the side output was written (a PGM picture of a tensor that
# is no matrix): the picture goes too.
expect_err 1 "out.pgm: PGM: a picture is a matrix" "${att[@]}" --draw pic.png -o out.pgm
no_file pic.png
# ... while a picture there before, which the failed run never reached, stays (the run fails
# on its input before drawing).
printf 'old' >old.png
printf '1 2\n3\n' >ragged.txt
expect 1 attn-2d -i ragged.txt --params "$A/sagan.npz" --pixel 1,1 --draw old.png -o out.npy
check_eq "$(cat old.png)" old "an earlier file not written again stays"
# ... and a run that succeeds keeps both.
expect 0 "${att[@]}" --draw pic.png -o out.npy
CHECKS=$((CHECKS + 1))
[ -s pic.png ] && [ -s out.npy ] || fail "a successful run lost an output"
finish
