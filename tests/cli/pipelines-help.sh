#!/usr/bin/env bash
# labels: pipeline noblas
# Every script in pipelines/ answers --help (and -h) with its usage on standard output, the
# usage line first, and status 0, without starting any work: nothing written, nothing
# downloaded.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
n=0
for p in "$ATTNKIT_SRC"/pipelines/*.sh; do
  name=$(basename "$p")
  [ "$name" = lib.sh ] && continue  # sourced by the others, not run
  n=$((n + 1))
  for h in --help -h; do
    mkdir run && cd run
    expect 0 timeout 20 bash "$p" $h
    cd ..
    # The usage first (not the 30th line after the experiment's history).
    check_eq "$(head -1 "$T/out" | cut -d' ' -f1-2)" "Usage: pipelines/$name" "$name $h: the first line"
    [ -s "$T/err" ] && fail "$name $h wrote to stderr: $(head -c 300 "$T/err")"
    CHECKS=$((CHECKS + 1))
    [ -z "$(ls -A run)" ] || fail "$name $h left files: $(ls -A run | head -3)"
    rm -rf run
  done
done
check_eq "$([ "$n" -ge 17 ] && echo yes)" yes "the pipelines found ($n)"
# A flag without its value: a clean message and the usage (no bash internals: "line 27: 2:").
expect_err 2 "demo.sh: --keep needs a directory" bash "$ATTNKIT_SRC/pipelines/demo.sh" --keep
grep -q "line [0-9]*:" "$T/err" && fail "--keep alone: bash internals: $(head -2 "$T/err")"
expect_err 2 "ntm-copy.sh: --seed needs a value" bash "$ATTNKIT_SRC/pipelines/ntm-copy.sh" --seed
# A learning curve of one point (a --quick run's one log row): no "empty x range" warning.
if command -v gnuplot >/dev/null; then
  printf 'step\tloss\n1\t0.5\n' >one.tsv
  expect_err 0 "x: learning curve: c.png" bash -c '. "$1/pipelines/lib.sh"; learning_curve c.png t one.tsv:loss' x "$ATTNKIT_SRC"
  grep -qi "empty . range" "$T/err" && fail "gnuplot's warning leaked: $(cat "$T/err")"
  check_eq "$(head -c 4 c.png | tail -c 3)" PNG "the one-point curve drawn"
  # The y axis is labelled (-y LABEL, else the column's name): two labels, two pictures.
  printf 'step\tloss\n1\t0.5\n2\t0.4\n' >two.tsv
  expect_err 0 "x: learning curve: a.png" bash -c '. "$1/pipelines/lib.sh"; learning_curve a.png t -y "loss per token" two.tsv:loss' x "$ATTNKIT_SRC"
  expect_err 0 "x: learning curve: b.png" bash -c '. "$1/pipelines/lib.sh"; learning_curve b.png t -y "error" two.tsv:loss' x "$ATTNKIT_SRC"
  CHECKS=$((CHECKS + 1))
  cmp -s a.png b.png && fail "the y label is not drawn: the same picture for two labels"
fi
# keep_recipe: the code of the functions named is part of the recipe: an edit to it (a
# training's flags) is a run of other settings, refused, and the DIR left as it was; the
# comments are not part of it.
mkdir kr
kr='. "$1/pipelines/lib.sh"; keep=kr dir=kr'
expect 0 bash -c "$kr"'; f() { train --lr 1; }; keep_recipe "seed 1" f' x "$ATTNKIT_SRC"
cp kr/recipe kr.first
expect 0 bash -c "$kr"'; f() {
  # a comment
  train --lr 1; }; keep_recipe "seed 1" f' x "$ATTNKIT_SRC"
expect_err 2 "x: kr holds a run of other settings" bash -c "$kr"'; f() { train --lr 2; }; keep_recipe "seed 1" f' x "$ATTNKIT_SRC"
CHECKS=$((CHECKS + 1)); cmp -s kr/recipe kr.first || fail "the refused DIR changed: $(cat kr/recipe)"
expect_err 2 "x: kr holds a run of other settings" bash -c "$kr"'; f() { train --lr 1; }; keep_recipe "seed 2" f' x "$ATTNKIT_SRC"
expect_err 1 "x: keep_recipe: no function among: g" bash -c "$kr"'; keep_recipe "seed 1" g' x "$ATTNKIT_SRC"
finish
