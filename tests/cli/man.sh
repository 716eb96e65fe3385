#!/usr/bin/env bash
# labels: text
# Every tool has a man page; every page is lint-clean (groff and mandoc) and is what
# man/regen.sh makes from the tool's --help and man/<tool>.x today (no drift).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
for src in "$ATTNKIT_SRC"/tools/*.cpp; do
  t=$(basename "$src" .cpp)
  page="$ATTNKIT_SRC/man/man1/$t.1"
  CHECKS=$((CHECKS + 1))
  [ -f "$page" ] || { fail "$t: no man page $page"; continue; }
  [ -f "$ATTNKIT_SRC/man/$t.x" ] || fail "$t: no hand-written part man/$t.x"
  w=$(groff -man -ww -z "$page" 2>&1) || fail "$t: groff failed"
  [ -z "$w" ] || fail "$t: groff warnings: $w"
  if command -v mandoc >/dev/null; then
    w=$(mandoc -Tlint -Wwarning "$page" 2>&1) || fail "$t: mandoc: $w"
  fi
  # help2man's glitches: .HP is an option line it could not split from its description (a
  # description starting with "--", a synopsis line starting with an option); text right after
  # an example's .fi runs on in the example's indented block.
  CHECKS=$((CHECKS + 1))
  if grep -q '^\.HP' "$page"; then fail "$t: an option run together with its description: $(grep -A1 '^\.HP' "$page" | head -2)"; fi
  CHECKS=$((CHECKS + 1))
  bad=$(awk 'prev == ".fi" && $0 !~ /^[.[]/ { print } { prev = $0 }' "$ATTNKIT_SRC/man/$t.x")
  [ -z "$bad" ] || fail "man/$t.x: text right after .fi (needs .PP): $bad"
  for section in "EXAMPLES" "EXIT STATUS" "SEE ALSO"; do
    grep -q "^\.SH \"\?$section" "$page" || fail "$t: man page lacks $section"
  done
done
# attn-2d's non-local blocks are one term of its block list, not three with split text.
CHECKS=$((CHECKS + 1))
grep -A1 '^\.TP' "$ATTNKIT_SRC/man/man1/attn-2d.1" | grep -qx 'nonlocal\\-gaussian, nonlocal\\-dot, nonlocal\\-concat' ||
  fail "attn-2d.1: the non-local blocks are not one term"
if command -v help2man >/dev/null; then
  mkdir -p "$T/man"
  ATTNKIT_MAN_OUT="$T/man" "$ATTNKIT_SRC/man/regen.sh" "$ATTNKIT_BIN" >/dev/null 2>"$T/regen.err" ||
    fail "man/regen.sh failed: $(cat "$T/regen.err")"
  for page in "$T"/man/*.1; do
    t=$(basename "$page")
    CHECKS=$((CHECKS + 1))
    diff <(grep -v '^\.TH\|^\.\\"' "$page") <(grep -v '^\.TH\|^\.\\"' "$ATTNKIT_SRC/man/man1/$t") >"$T/diff" ||
      fail "man/man1/$t is out of date with --help: run man/regen.sh ($(head -5 "$T/diff"))"
  done
else
  echo "help2man not installed: the drift check was skipped"
fi
finish
