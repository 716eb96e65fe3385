#!/usr/bin/env bash
# labels: pipeline noblas
# Every script in pipelines/ answers --help (and -h) with its usage on standard output and
# status 0, without starting any work: nothing written, nothing downloaded.
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
    grep -qF "pipelines/$name" "$T/out" || fail "$name $h: no usage line naming pipelines/$name: $(head -2 "$T/out")"
    [ -s "$T/err" ] && fail "$name $h wrote to stderr: $(head -c 300 "$T/err")"
    CHECKS=$((CHECKS + 1))
    [ -z "$(ls -A run)" ] || fail "$name $h left files: $(ls -A run | head -3)"
    rm -rf run
  done
done
check_eq "$([ "$n" -ge 17 ] && echo yes)" yes "the pipelines found ($n)"
finish
