#!/usr/bin/env bash
# attn-plot: PNG and SVG heatmaps of the right size (read from the PNG's IHDR and the SVG's
# attributes), one panel per batch item, and every documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
help_ok attn-plot
G="$ATTNKIT_TESTDATA/attention"
printf 'q0\nq1\nq2\nq3\nq4\n' > rows.txt
printf 'k0\nk1\nk2\nk3\nk4\nk5\n' > cols.txt
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" -o w.txt
# PNG: magic, IHDR width/height, same size as the SVG
expect 0 attn-plot -i w.txt --rows rows.txt --cols cols.txt --title "Q against K" -o w.png
check_eq "$(head -c 8 w.png | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a" "PNG signature"
pw=$(od -An -tu1 -j16 -N4 w.png | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
ph=$(od -An -tu1 -j20 -N4 w.png | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
expect 0 attn-plot -i w.txt --rows rows.txt --cols cols.txt --title "Q against K" -o w.svg
check_eq "$(grep -o '<svg [^>]*' w.svg | grep -o 'width="[0-9]*" height="[0-9]*"')" \
  "width=\"$pw\" height=\"$ph\"" "SVG size = PNG size"
check_eq "$(grep -c '<rect x=' w.svg)" "31" "SVG: 30 cells and the legend"
check_eq "$(grep -c '>k5</text>' w.svg)" "1" "SVG: column label"
# --format overrides the extension; standard input; - as output
expect 0 attn-plot -i - --format svg -o plot.out < w.txt
check_eq "$(head -c 5 plot.out)" "<?xml" "--format svg"
expect 0 attn-plot -i w.txt -o -
check_eq "$(head -c 4 out | tail -c 3)" "PNG" "PNG on standard output"
# a batch: one panel per item, captions in the SVG
expect 0 attn-score --query "$G/Qb.npy" --key "$G/Kb.npy" -o wb.npy
expect 0 attn-plot -i wb.npy -o wb.svg
check_eq "$(grep -c '>item [0-9]</text>' wb.svg)" "2" "two panels"
# masked scores (-inf) are allowed (grey)
expect 0 attn-score --query "$G/Q.txt" --key "$G/K.txt" --mask causal --emit scores -o s.txt
expect 0 attn-plot -i s.txt -o s.png
# UTF-8 tokens in the SVG, escaped
printf 'l\xc3\xa0\n<&>\nx\ny\nz\n' > utf.txt
expect 0 attn-plot -i w.txt --rows utf.txt -o u.svg
check_eq "$(grep -c 'là</text>' u.svg) $(grep -c '&lt;&amp;&gt;</text>' u.svg)" "1 1" "UTF-8 and escaping"

# errors
printf 'a\nb\n' > two.txt
expect_err 1 "attn-plot: two.txt: 2 row tokens but the weights have 5 rows" \
  attn-plot -i w.txt --rows two.txt -o bad.png
no_file bad.png
expect_err 1 "attn-plot: two.txt: 2 column tokens but the weights have 6 columns" \
  attn-plot -i w.txt --cols two.txt -o bad.svg
no_file bad.svg
expect_err 1 "attn-plot: no-such.txt" attn-plot -i no-such.txt -o bad.png
no_file bad.png
expect 1 attn-plot -i w.txt -o /dev/full
expect_err 2 "attn-plot: --format: unknown format 'gif' (choose png or svg)" attn-plot -i w.txt --format gif -o x.gif
expect_err 2 "attn-plot: " attn-plot -i w.txt
finish
