#!/usr/bin/env bash
# posenc: NumPy goldens through the tool (text and .npy), --add (text, .npy, batch, stdin),
# help, and every documented error (status, message, no output file left behind).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
G="$ATTNKIT_TESTDATA/posenc"

help_ok posenc

# npy_text FILE COLS: the float32 values of a little-endian .npy (format 1.0) as text rows,
# decoded with od, without attnkit's reader.
npy_text() {
  local hlen
  hlen=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
  od -An -v -tf4 -w$((4 * $2)) -j $((10 + hlen)) "$1"
}

# Every golden case, text on standard output, text file and .npy file.
n=0
while IFS=$'\t' read -r name len dim base offset layout; do
  case $name in '#'*|'') continue ;; esac
  n=$((n + 1))
  args=(--length "$len" --dim "$dim" --base "$base" --offset "$offset" --layout "$layout")
  expect 0 posenc "${args[@]}"
  cp "$T/out" "$name.out"
  close_enough "$name.out" "$G/$name.txt" 1e-6
  expect 0 posenc "${args[@]}" -o "$name.txt"
  close_enough "$name.txt" "$G/$name.txt" 1e-6
  expect 0 posenc "${args[@]}" -o "$name.npy"
  check_eq "$(head -c 6 "$name.npy" | tail -c 5)" "NUMPY" "$name.npy magic"
  grep -q "'descr': '<f4'" "$name.npy" || fail "$name.npy is not <f4"
  npy_text "$name.npy" "$dim" >"$name.npy.txt"
  close_enough "$name.npy.txt" "$G/$name.txt" 1e-6
done <"$G/cases.tsv"
check_eq "$n" 8 "golden cases read"

# Defaults: interleaved, base 10000, offset 0; row 0 is 0 1 0 1.
expect 0 posenc --length 3 --dim 4
check_eq "$(head -1 "$T/out")" "0 1 0 1" "row 0"
# --offset P gives rows P.. of a longer table.
expect 0 posenc -l 12 -d 6
tail -n 5 "$T/out" >long_tail.txt
expect 0 posenc -l 5 -d 6 --offset 7
close_enough "$T/out" long_tail.txt 0
# Short options and --npy on standard output.
expect 0 posenc -l 2 -d 3 --npy
check_eq "$(head -c 6 "$T/out" | tail -c 5)" "NUMPY" "--npy magic"

# --add: text, .npy, standard input, explicit matching sizes, a batch.
expect 0 posenc --add "$G/add_x.txt"
cp "$T/out" add_txt.out
close_enough add_txt.out "$G/add_x.expected.txt" 1e-6
expect 0 posenc --add "$G/add_x.npy" -o add.txt
close_enough add.txt "$G/add_x.expected.txt" 1e-6
run sh -c "posenc --add - <'$G/add_x.txt'"
check_eq "$RC" 0 "--add - status"
close_enough "$T/out" "$G/add_x.expected.txt" 1e-6
expect 0 posenc --add "$G/add_x.txt" --length 5 --dim 6 -o add.npy
npy_text add.npy 6 >add.npy.txt
close_enough add.npy.txt "$G/add_x.expected.txt" 1e-6
expect 0 posenc --add "$G/add_b.txt"
cp "$T/out" add_b.out
close_enough add_b.out "$G/add_b.expected.txt" 1e-6

# Errors: status, message naming the cause, no output file.
expect_err 2 "dimension must be 1 or more, not 0" posenc --length 4 --dim 0 -o e.txt
no_file e.txt
expect_err 2 "length must be 0 or more, not -3" posenc --length=-3 --dim 4 -o e.txt
no_file e.txt
expect_err 2 "posenc: --layout: unknown layout 'zigzag' (choose interleaved or split)" \
  posenc --length 4 --dim 4 --layout zigzag -o e.txt
no_file e.txt
expect_err 2 "base must be a finite number above 0" posenc -l 4 -d 4 --base 0 -o e.txt
no_file e.txt
expect_err 2 "offset must be 0 or more" posenc -l 4 -d 4 --offset=-1 -o e.txt
no_file e.txt
expect_err 2 "--length and --dim are required" posenc --length 4 -o e.txt
no_file e.txt
expect_err 2 "Try 'posenc --help'" posenc --length four --dim 4
expect_err 1 "posenc: $G/add_x.txt: shape [5, 6] does not match --length 4 --dim 6 ([4, 6])" \
  posenc --add "$G/add_x.txt" --length 4 -o e.txt
no_file e.txt
expect_err 1 "shape [2, 3, 4] does not match --length 3 --dim 5 ([3, 5] per item)" \
  posenc --add "$G/add_b.txt" --dim 5 -o e.txt
no_file e.txt
expect_err 1 "posenc: missing.txt" posenc --add missing.txt -o e.txt
no_file e.txt
expect_err 1 "posenc: " posenc --length 64 --dim 64 -o /dev/full

finish
