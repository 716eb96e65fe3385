#!/usr/bin/env bash
# labels: noblas
# A corpus of malformed inputs fed to every tool that reads tensors: each must end with
# exit status 1, a '<tool>: ' message on stderr, no crash (no status above 2) and no output
# file left behind.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
mkdir corpus
c=corpus
: > $c/empty.txt
printf '# only a comment\n\n   \n' > $c/comments.txt
printf '1 2 3\n4 5\n' > $c/ragged.txt
printf '1 2\n3 x\n' > $c/word.txt
printf '1 2\n\n3 4\n5 6\n' > $c/ragged-blocks.txt
printf '1,2\n3,4\n' > $c/commas.txt
printf '1 2\n3 4\0\n' > $c/nul.txt
head -c 3000 /dev/urandom > $c/garbage.bin
# .npy: bad magic version, truncated data, a header promising 10^12 floats, bad dtype,
# negative dimension, unterminated header, header length beyond the file.
npy() {  # npy FILE HEADER-DICT DATA-BYTES
  local h=$2 pad
  pad=$(( (64 - (10 + ${#h} + 1) % 64) % 64 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#h} + pad + 1) % 256 )))\\x$(printf %02x $(( (${#h} + pad + 1) / 256 )))"
    printf '%s' "$h"; printf '%*s' $pad ''; printf '\n'; head -c "$3" /dev/zero; } > "$1"
}
npy $c/truncated.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }" 20
npy $c/huge.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }" 16
npy $c/dtype.npy "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }" 16
npy $c/negative.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }" 16
npy $c/rank5.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 2), }" 8
npy $c/trailing.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" 12
npy $c/nokeys.npy "{'descr': '<f4'}" 4
printf '\x93NUMPY\x09\x00\x10\x00abc' > $c/version.npy
printf '\x93NUMPY\x01\x00\xff\x7f{' > $c/shortheader.npy
printf 'PK\x03\x04garbage that is not a zip archive at all' > $c/badzip.npz
printf 'PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > $c/emptyzip.npz
[ -f "$ATTNKIT_TESTDATA/attention/bilinear.npz" ] && head -c 100 "$ATTNKIT_TESTDATA/attention/bilinear.npz" > $c/cut.npz

for f in $c/*; do
  name=$(basename "$f")
  for cmd in "tensor-info $f" "tensor-convert $f out.npy" "attn-score --query $f --key $f -o out.npy" \
             "posenc --add $f -o out.npy"; do
    tool=${cmd%% *}
    # An archive with no arrays is not malformed: tensor-info lists nothing (checked below).
    [ "$name/$tool" = emptyzip.npz/tensor-info ] && continue
    # shellcheck disable=SC2086
    run $cmd
    if [ "$RC" -gt 2 ] || [ "$RC" -eq 0 ]; then fail "$cmd: exit $RC (expected 1 or 2)"; fi
    if [ "$RC" -ne 0 ] && ! grep -q "^$tool: " "$T/err"; then fail "$cmd: no '$tool: ' message"; fi
    [ "$(wc -l < "$T/err")" -le 3 ] || fail "$cmd: more than 3 lines on stderr"
    no_file out.npy
  done
  # the file also fails through standard input
  [ "$name" = emptyzip.npz ] && continue
  tensor-info - < "$f" > /dev/null 2> "$T/err"
  rc=$?
  [ $rc -eq 1 ] || fail "tensor-info - < $name: exit $rc"
done
expect 0 tensor-info $c/emptyzip.npz
check_eq "$(wc -l < "$T/out")" 1 "tensor-info on an empty archive: the header line only"

# A .npy that promises 10^12 elements fails at once, without allocating them.
start=$(date +%s%N)
run tensor-info $c/huge.npy
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 2000 ] || fail "huge.npy took $ms ms"
grep -q "huge.npy" "$T/err" || fail "huge.npy: message does not name the file"

# Bad options: exit 2, a message, the --help hint.
for cmd in "tensor-rand --shape 0x" "tensor-rand --shape 2 --dist cauchy" "posenc --length -1 --dim 4" \
           "posenc --length 2 --dim 0" "attn-score --query" "attn-score --key x" \
           "attn-score --query x --key x --score nope" "tensor-info --precision 0 x" \
           "tensor-convert a b c"; do
  tool=${cmd%% *}
  # shellcheck disable=SC2086
  run $cmd
  [ "$RC" -eq 2 ] || fail "$cmd: exit $RC, expected 2"
  grep -q "^$tool: " "$T/err" || fail "$cmd: no '$tool: ' message"
done
# Standard input given twice: a usage error that says so, not an empty second read.
printf '1 2\n3 4\n' > q.txt
expect_err 2 "attn-score: standard input ('-') can be read only once" sh -c 'attn-score --query - --key - < q.txt'
finish
