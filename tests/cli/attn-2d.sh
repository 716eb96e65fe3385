#!/usr/bin/env bash
# attn-2d against PyTorch modules of each block (testdata/attn2d, made by
# testdata/make_attn2d_golden.py): outputs and attention maps, one map (C x H x W) and a
# batch, query maps cut from the full attention, the picture, every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
A="$ATTNKIT_TESTDATA/attn2d"
help_ok attn-2d
tensor-convert "$A/sagan.npz:x" -o x.npy
for b in sagan biggan nonlocal-gaussian nonlocal-dot nonlocal-concat; do
  # (rank 4 is .npy; compared as text, 32 matrices of 6 x 4)
  tensor-convert "$A/$b.npz:y" --reshape 32,6,4 -o y-$b.txt
  expect 0 attn-2d -i x.npy --params "$A/$b.npz" --block $b -o out-$b.npy
  tensor-convert out-$b.npy --reshape 32,6,4 -o out-$b.txt
  close_enough out-$b.txt y-$b.txt 1e-4
  tensor-convert "$A/$b.npz:attention" -o att-$b.txt
  expect 0 attn-2d -i x.npy --params "$A/$b.npz" --block $b --emit attention -o a-$b.npy
  tensor-convert a-$b.npy -o a-$b.txt
  close_enough a-$b.txt att-$b.txt 1e-5
done
# Released modules' state_dicts as saved: BigGAN-PyTorch's Attention (a 0-d gamma) and
# NONLocalBlock2D with its defaults (sub_sample: g.0, phi.0; bn_layer: W.0, W.1).
for f in released-biggan:biggan released-nonlocal-gaussian:nonlocal-gaussian \
  released-nonlocal-dot:nonlocal-dot released-nonlocal-concat:nonlocal-concat; do
  r=${f%%:*} b=${f#*:}
  tensor-convert "$A/$r.npz:x" -o x-$r.npy
  tensor-convert "$A/$r.npz:y" --reshape 32,6,4 -o y-$r.txt
  expect 0 attn-2d -i x-$r.npy --params "$A/$r.npz" --block $b -o out-$r.npy
  tensor-convert out-$r.npy --reshape 32,6,4 -o out-$r.txt
  close_enough out-$r.txt y-$r.txt 1e-4
  expect 0 attn-2d -i x-$r.npy --params "$A/$r.npz" --block $b --emit attention --pixel 5,3 -o q-$r.npy
  check_eq "$(tensor-info --no-header q-$r.npy | cut -f 4)" 2x1x3x2 "$r: pooled query maps"
done
# One map (C x H x W): the output is C x H x W; the attention HW x K. The first item as its
# own map, from the batch's text form (its first 16 matrices of 6 x 4).
shape_of() { tensor-info --no-header "$1" | cut -f 4; }
tensor-convert x.npy --reshape 32,6,4 -o x.txt
first16() { awk 'BEGIN { RS = "" } NR <= 16 { if (NR > 1) print ""; print }' "$1"; }
first16 x.txt >x1.txt
expect 0 attn-2d -i x1.txt --params "$A/sagan.npz" -o o1.npy
check_eq "$(shape_of o1.npy)" 16x6x4 "one map in, one map out"
first16 y-sagan.txt >y1.txt
tensor-convert o1.npy -o o1.txt
close_enough o1.txt y1.txt 1e-4
expect 0 attn-2d -i x1.txt --params "$A/sagan.npz" --emit attention -o a1.npy
check_eq "$(shape_of a1.npy)" 24x24 "one map: HW x HW attention"
# Query maps: row r*W + c of the full attention, as an H' x W' map (biggan: keys pooled 2x2).
expect 0 attn-2d -i x1.txt --params "$A/sagan.npz" --emit attention --pixel 2,3 --pixel 0,0 -o q.txt
check_eq "$(shape_of q.txt)" 2x6x4 "two query maps"
tensor-convert a1.npy -o a1.txt
check_eq "$(awk 'NR == 12' a1.txt)" "$(awk 'BEGIN { RS = "" } NR == 1' q.txt | tr '\n' ' ' | sed 's/ $//')" "query 2,3 = row 11"
expect 0 attn-2d -i x.npy --params "$A/biggan.npz" --block biggan --emit attention --pixel 5,3 -o qb.npy
check_eq "$(shape_of qb.npy)" 2x1x3x2 "a batch of pooled query maps"
# The picture: the channel mean and one panel per query.
expect 0 attn-2d -i x.npy --params "$A/sagan.npz" --pixel 1,1 --pixel 4,2 --draw pic.png -o pic-out.npy
check_eq "$(head -c 8 pic.png | od -An -c | tr -d ' ')" '211PNG\r\n032\n' "a PNG"
# Errors: usage (2) and data (1), no output left behind.
expect_err 2 "--block: unknown attention block 'sagn' (choose sagan, biggan, nonlocal-gaussian, nonlocal-dot or nonlocal-concat)" \
  attn-2d -i x.npy --params "$A/sagan.npz" --block sagn
expect_err 2 "--emit: unknown output 'weights' (choose output or attention)" attn-2d -i x.npy --params "$A/sagan.npz" --emit weights
expect_err 2 "--pixel takes ROW,COL (zero-based), got '1'" attn-2d -i x.npy --params "$A/sagan.npz" --pixel 1
expect_err 2 "--pixel 6,0 lies outside the 6 x 4 maps" attn-2d -i x.npy --params "$A/sagan.npz" --pixel 6,0
expect_err 2 "--draw needs at least one --pixel" attn-2d -i x.npy --params "$A/sagan.npz" --draw p.png
no_file p.png
expect_err 1 "attn-2d: $A/biggan.npz: missing parameter 'query_conv.weight'" attn-2d -i x.npy --params "$A/biggan.npz" -o o.npy
no_file o.npy
expect_err 1 "attn-2d: $A/sagan.npz: missing parameter 'g.weight'" attn-2d -i x.npy --params "$A/sagan.npz" --block nonlocal-dot -o o.npy
tensor-convert x.npy --reshape 2,8,12,4 -o c8.npy
expect_err 1 "attn-2d: $A/sagan.npz: parameter 'query_conv.weight' has shape [2, 16, 1, 1], expected [-1, 8, 1, 1]" \
  attn-2d -i c8.npy --params "$A/sagan.npz" -o o.npy
printf '1 2\n3 4\n' >flat.txt
expect_err 1 "attn-2d: flat.txt: feature maps must be C x H x W or N x C x H x W, got [2, 2]" attn-2d -i flat.txt --params "$A/sagan.npz"
tensor-convert x.npy --reshape 2,16,3,8 -o odd.npy
expect_err 1 "attn-2d: attn2d biggan: height and width must be even (2x2 pooling), got [2, 16, 3, 8]" \
  attn-2d -i odd.npy --params "$A/biggan.npz" --block biggan
printf '1 nan\n3 4\n' >nan.txt
expect_err 1 "attn-2d: nan.txt: row 1, column 2 is NaN" attn-2d -i nan.txt --params "$A/sagan.npz"
# A NaN or infinite parameter is refused (it made every weight 0, exit 0), as inputs are.
cp "$A/sagan.npz" nanp.npz
chmod u+w nanp.npz
echo nan | tensor-convert -i - --reshape 1 -o nanp.npz:gamma
expect_err 1 "attn-2d: nanp.npz:gamma: row 1, column 1 is NaN" attn-2d -i x.npy --params nanp.npz -o o.npy
tensor-convert "$A/sagan.npz:query_conv.bias" -o qb.txt
cp "$A/sagan.npz" infp.npz
chmod u+w infp.npz
awk '{ $2 = "-inf"; print }' qb.txt | tensor-convert -i - --reshape "$(wc -w <qb.txt)" -o infp.npz:query_conv.bias
expect_err 1 "attn-2d: infp.npz:query_conv.bias: row 1, column 2 is -inf" attn-2d -i x.npy --params infp.npz -o o.npy
finish
