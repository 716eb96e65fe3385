#!/usr/bin/env bash
# labels: noblas
# cost: 30
# The shared option layer of every tool: a mistyped long option is a usage error (2) that
# suggests the nearest option the tool has; --help names every option's value (no bare
# 'arg') and writes defaults without float noise (0.1, not 0.10000000000000001).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect_err 2 "attn-score: --qeury: did you mean --query?" attn-score --qeury Q.txt --key K.txt
grep -qF "Try 'attn-score --help'" "$T/err" || fail "no --help hint after the suggestion"
expect_err 2 "attn-score: --qeury: did you mean --query?" attn-score --qeury=Q.txt --key K.txt
expect_err 2 "seq2seq-train: --hiden: did you mean --hidden?" seq2seq-train --hiden 3
expect_err 2 "ntm-run: --thraeds: did you mean --threads?" ntm-run --thraeds 2
# Nothing near: Boost's own message, no suggestion.
expect_err 2 "unrecognised option '--zzzzzzzz'" attn-score --zzzzzzzz
grep -q "did you mean" "$T/err" && fail "a suggestion for --zzzzzzzz: $(cat "$T/err")"
# Every tool: its own options, each mistyped by swapping two letters, get themselves suggested
# (a tool's first eight, under the sanitizers its first two: every option takes the same code
# path, and 45 tools x 25 options at ~0.12 s a process start cost CI two minutes); --help
# names no bare 'arg' and has no float noise in the defaults.
nopts=8
sanitized && nopts=2
for src in "$ATTNKIT_SRC"/tools/*.cpp; do
  t=$(basename "$src" .cpp)
  "$t" --help >help.txt 2>/dev/null || { fail "$t --help failed"; continue; }
  CHECKS=$((CHECKS + 1))
  if grep -nE '(^| )--[a-z0-9-]+ arg( |$)' help.txt >bad.txt; then fail "$t --help: bare 'arg': $(head -3 bad.txt)"; fi
  CHECKS=$((CHECKS + 1))
  if grep -nE '[0-9]\.?[0-9]*(0000000|9999999)[0-9]' help.txt >bad.txt; then fail "$t --help: float noise: $(head -3 bad.txt)"; fi
  opts=$(grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]{4,}' help.txt | grep -oE -- '--[a-z0-9-]+$' | head -n $nopts)
  [ -n "$opts" ] || { fail "$t: no long options found in --help"; continue; }
  for o in $opts; do
    name=${o#--}
    typo=${name:0:1}${name:2:1}${name:1:1}${name:3}  # second and third letters swapped
    [ "$typo" = "$name" ] && continue
    # A swap that makes another option's prefix (Boost accepts unique prefixes) is no typo.
    grep -qE -- "--$typo" help.txt && continue
    expect_err 2 "$t: --$typo: did you mean --$name?" "$t" "--$typo" 1
  done
done
expect 0 seq2seq-train --help
grep -qF -- "--valid-fraction F (=0.1)" "$T/out" || fail "seq2seq-train --help: $(grep -F -- --valid-fraction "$T/out")"
# A value holding one of Boost's message placeholders ('%value%') made the error text loop
# for ever (found by the YAML fuzzer): now a usage error at once, on the command line and in
# a configuration file.
expect_err 2 "attn-score: a bad value for '--threads'" timeout 20 attn-score --threads '1%value%x'
printf 'hidden: 1%%value%%x\n' >pct.yaml
expect_err 2 "pct.yaml:1: key 'hidden': a bad value" timeout 20 seq2seq-train --config pct.yaml -i x.tsv -o x.akm
finish
