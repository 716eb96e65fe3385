#!/usr/bin/env bash
# vocab-build: word and character vocabularies of fra-small (reserved ids, order, min-freq,
# NBSP handling), --plain, help, and every documented error (status, message, no file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
FRA="$ATTNKIT_TESTDATA/translation/fra-small.txt"

help_ok vocab-build

expect 0 vocab-build -i "$FRA" --side target -o fr.tsv
check_eq "$(head -4 fr.tsv | paste -sd' ')" "$(printf '<pad>\t0 <bos>\t0 <eos>\t0 <unk>\t0')" "reserved tokens first"
check_eq "$(awk -F'\t' 'NF != 2' fr.tsv | wc -l)" 0 "TOKEN<TAB>COUNT lines"
# Descending counts after the reserved four, ties in byte order (sort -c checks it).
CHECKS=$((CHECKS + 1))
tail -n +5 fr.tsv | awk -F'\t' '{ print $2 "\t" $1 }' | LC_ALL=C sort -c -t$'\t' -k1,1nr -k2,2 ||
  fail "order: not by descending count then bytes"
# The counts agree with an awk count of the tokens (split on spaces, marks split off).
want=$(cut -f2 "$FRA" | sed 's/\xe2\x80\xaf/ /g; s/\xc2\xa0/ /g' | awk '{ print tolower($0) }' |
  sed 's/\([^ ]\)\([,.!?]\)/\1 \2/g; s/\([^ ]\)\([,.!?]\)/\1 \2/g' | tr ' ' '\n' | grep -c '^!$')
check_eq "$(awk -F'\t' '$1 == "!" { print $2 }' fr.tsv)" "$want" "count of '!'"
grep -q $'\xe2\x80\xaf' fr.tsv && fail "a narrow no-break space survived tokenisation"
grep -q '[A-Z]' <(tail -n +5 fr.tsv | cut -f1) && fail "upper case survived"
# min-freq and max-size
expect 0 vocab-build -i "$FRA" --side target --min-freq 2
check_eq "$(tail -n +5 "$T/out" | awk -F'\t' '$2 < 2' | wc -l)" 0 "--min-freq 2"
check_eq "$(wc -l <"$T/out")" "$(awk -F'\t' 'NR <= 4 || $2 >= 2' fr.tsv | wc -l)" "--min-freq 2 keeps the rest"
expect 0 vocab-build -i "$FRA" --side target --max-size 10
check_eq "$(cat "$T/out")" "$(head -10 fr.tsv)" "--max-size 10"
# source side on standard input; characters
run sh -c "vocab-build --side source < '$FRA'"
check_eq "$RC" 0 "standard input"
grep -q $'^go\t' "$T/out" || fail "source side lacks 'go'"
expect 0 vocab-build -i "$FRA" --side target --tokens chars
cp "$T/out" chars.tsv
grep -q $'^é\t' "$T/out" || fail "chars: no é"
grep -q $'^ \t' "$T/out" || fail "chars: no space token"
one_char=$'^([\x01-\x7f]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf][\x80-\xbf]|[\xf0-\xf4][\x80-\xbf][\x80-\xbf][\x80-\xbf])$'
check_eq "$(tail -n +5 "$T/out" | cut -f1 | grep -cvE "$one_char")" 0 "chars: one code point per token"
check_eq "$(cut -f1 "$T/out" | grep -cE "$one_char")" "$(($(wc -l <"$T/out") - 4))" "chars: every token one code point"
# --plain: one sentence per line
cut -f2 "$FRA" >fr.txt
expect 0 vocab-build --plain -i fr.txt
check_eq "$(cat "$T/out")" "$(cat fr.tsv)" "--plain on the French column"

# Errors.
printf 'Go.\tVa !\nRun!\n' >bad.tsv
expect_err 1 "vocab-build: bad.tsv:2: no tab (expected SOURCE<TAB>TARGET)" vocab-build -i bad.tsv -o v.tsv
no_file v.tsv
printf 'Go.\tVa !\n\nRun!\tCours !\n' >bad.tsv
expect_err 1 "vocab-build: bad.tsv:2: empty line (expected SOURCE<TAB>TARGET)" vocab-build -i bad.tsv -o v.tsv
printf 'Go.\t\n' >bad.tsv
expect_err 1 "vocab-build: bad.tsv:1: empty target sentence" vocab-build -i bad.tsv -o v.tsv
printf 'Go.\tVa !\nR\351\tx\n' >bad.tsv
expect_err 1 "vocab-build: bad.tsv:2: invalid UTF-8 at byte 2 of the line" vocab-build -i bad.tsv -o v.tsv
no_file v.tsv
expect_err 1 "vocab-build: missing.tsv: cannot open" vocab-build -i missing.tsv
expect_err 2 "vocab-build: --side: unknown side 'left' (choose source or target)" vocab-build -i "$FRA" --side left -o v.tsv
no_file v.tsv
expect_err 2 "vocab-build: --min-freq must be at least 1" vocab-build -i "$FRA" --min-freq 0
expect_err 2 "vocab-build: --max-size must be 0 or at least 4" vocab-build -i "$FRA" --max-size 3
expect_err 2 "vocab-build: --side does not apply to --plain input" vocab-build --plain --side target -i fr.txt
expect_err 1 "vocab-build: /dev/full: write error" vocab-build -i "$FRA" -o /dev/full
run sh -c "vocab-build -i '$FRA' >/dev/full"
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "vocab-build: .*write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
expect_err 2 "vocab-build: --tokens: unknown tokenisation 'bpe' (choose words or chars)" vocab-build -i "$FRA" --tokens bpe
finish
