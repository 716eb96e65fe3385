#!/usr/bin/env bash
# cost: 10
# labels: text
# One flag vocabulary (doc/conventions.md), read from every tool's --help: each short option
# names one long option in every tool; the drifted spellings are gone; a model file is read
# with -m/--model, the input with -i/--input; --attention is a kind, never a file.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
# Option lines of --help: "  -o, --output FILE   text" or "      --hidden N (=128)   text".
: >all.tsv
for src in "$ATTNKIT_SRC"/tools/*.cpp; do
  t=$(basename "$src" .cpp)
  "$t" --help >help.txt 2>/dev/null || { fail "$t --help failed"; continue; }
  CHECKS=$((CHECKS + 1))
  # (the option groups only: from "Options:" to the blank line that ends "Common options:")
  awk '/^Options:/ { on = 1 } on { print } /^Common options:/ { common = 1 } common && /^$/ { exit }' help.txt |
    sed -nE 's/^(  -([a-zA-Z]), |      )--([a-z0-9][a-z0-9-]*)( ([^ ]+))?.*$/\2\t\3\t\5/p' |
    awk -F'\t' -v t="$t" 'BEGIN { OFS = "\t" } { print t, $1, $2, $3 }' >>all.tsv
done
[ "$(wc -l <all.tsv)" -gt 400 ] || fail "too few option lines read from --help: $(wc -l <all.tsv)"
# Each short option, one long option.
awk -F'\t' '$2 != "" { print $2 "\t" $3 }' all.tsv | sort -u >short.tsv
check_eq "$(cut -f1 short.tsv | uniq -d | tr '\n' ' ')" "" "short options with two meanings (see short.tsv)"
for s in $(cut -f1 short.tsv | uniq -d); do fail "-$s is: $(awk -F'\t' -v s="$s" '$2 == s { print $1 " --" $3 }' all.tsv | tr '\n' ',')"; done
# The files' options have their short option in every tool: -i/--input, -o/--output, -m/--model.
for pair in i:input o:output m:model; do
  CHECKS=$((CHECKS + 1))
  bare=$(awk -F'\t' -v l="${pair#*:}" '$3 == l && $2 == "" { print $1 }' all.tsv | tr '\n' ' ')
  [ -z "$bare" ] || fail "--${pair#*:} without -${pair%%:*} in: $bare"
done
# The spellings that drifted (doc/conventions.md, "What changed"): none is offered any more.
for old in train data images valid-images val-fraction d-model d-ff min-len max-len n-min n-max \
  max-length net batch clip-norm output-file tokenize; do
  CHECKS=$((CHECKS + 1))
  where=$(awk -F'\t' -v o="$old" '$3 == o { print $1 }' all.tsv | tr '\n' ' ')
  [ -z "$where" ] || fail "--$old (an old spelling) offered by: $where"
done
# --attention is a kind (KIND) wherever it is offered; files of weights are --alignments FILE.
check_eq "$(awk -F'\t' '$3 == "attention" && $4 != "KIND" { print $1 " " $4 }' all.tsv)" "" "--attention as a file"
check_eq "$(awk -F'\t' '$3 == "alignments" && $4 !~ /npz$/ { print $1 " " $4 }' all.tsv)" "" "--alignments not a .npz file"
# Options that name a file (a parameter of upper-case letters with a dot, or one of the file
# words) in one tool name a file in every tool, and the reverse.
awk -F'\t' '$4 != "" {
  file = ($4 ~ /\./ || $4 ~ /^(FILE|MODEL|DIR|TEXT|DOCS|PAIRS|OUT|IN|IMAGES|PROBLEMS|STORIES|SOURCES|CORPUS|VOCAB|PATTERNS|PROBES|STATES|MAPS|WEIGHTS|INPUT|DATA|TSV|LABELS|REF)$/)
  print $3 "\t" (file ? "file" : "value") "\t" $1 }' all.tsv | sort -u >kinds.tsv
check_eq "$(cut -f1,2 kinds.tsv | sort -u | cut -f1 | uniq -d | tr '\n' ' ')" "" "options that are a file in one tool and a value in another (see kinds.tsv)"
for o in $(cut -f1,2 kinds.tsv | sort -u | cut -f1 | uniq -d); do fail "--$o: $(awk -F'\t' -v o="$o" '$1 == o { print $3 ": " $2 }' kinds.tsv | tr '\n' ',')"; done
# Long options that once had two meanings (doc/conventions.md) have one: each is offered only
# by the tools of that meaning, with its value name there.
for spec in "memory KIND stackmem-step stackmem-train" "labels FILE snail-run snail-train" \
  "width W|N seqtask-gen ntm-train" "query Q|X attn-score attn-mha" "pixel ROW,COL attn-2d" \
  "sentences DIR memn2n-answer" "memory-size N memn2n-train"; do
  set -- $spec
  opt=$1 names=$2
  shift 2
  CHECKS=$((CHECKS + 1))
  got=$(awk -F'\t' -v o="$opt" '$3 == o { print $1 "\t" $4 }' all.tsv | sort)
  [ "$(echo "$got" | cut -f1 | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ] ||
    fail "--$opt is offered by $(echo "$got" | cut -f1 | tr '\n' ' '), not just by $*"
  bad=$(echo "$got" | awk -F'\t' -v n="^($names)\$" '$2 !~ n')
  [ -z "$bad" ] || fail "--$opt with another value than $names: $bad"
done
# The training data of every trainer is -i/--input.
for t in bert-pretrain caption-train img-train memn2n-train ntm-train ptr-train ram-train seq2seq-train stackmem-train; do
  CHECKS=$((CHECKS + 1))
  grep -qP "^$t\ti\tinput\t" all.tsv || fail "$t: no -i/--input"
done
finish
