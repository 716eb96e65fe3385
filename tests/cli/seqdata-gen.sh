#!/usr/bin/env bash
# seqdata-gen: the dates corpus (layout, determinism, every target a real date), help, and
# every documented error (status, message, no output file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok seqdata-gen

expect 0 seqdata-gen --task dates --count 500 --seed 3
cp "$T/out" a.tsv
check_eq "$(wc -l <a.tsv)" 500 "500 lines"
check_eq "$(awk -F'\t' 'NF != 2' a.tsv | wc -l)" 0 "two tab-separated fields per line"
check_eq "$(cut -f2 a.tsv | grep -cvE '^(19[5-9][0-9]|20[0-4][0-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$')" 0 \
  "targets are YYYY-MM-DD in 1950-2049"
# Every target is a real calendar date (GNU date agrees it is one and prints it back).
check_eq "$(cut -f2 a.tsv | date -f - +%F 2>/dev/null | paste -sd,)" "$(cut -f2 a.tsv | paste -sd,)" \
  "targets are valid dates"
# Sources in the compact format equal their target without dashes.
check_eq "$(awk -F'\t' '$1 ~ /^[0-9]{8}$/ { t = $2; gsub(/-/, "", t); if (t != $1) print }' a.tsv | wc -l)" 0 \
  "YYYYMMDD sources"
# A written weekday is the true one.
check_eq "$(awk -F'\t' '$1 ~ /^[a-z]+day,/ { split($1, w, ","); print $2, w[1] }' a.tsv |
  while read -r d w; do [ "$(date -d "$d" +%A | tr A-Z a-z)" = "$w" ] || echo "$d $w"; done | wc -l)" 0 "weekdays"
check_eq "$(cut -f1 a.tsv | sed 's/[0-9]/9/g; s/[a-z]\+/a/g' | sort -u | wc -l | awk '{ print ($1 >= 12) }')" 1 \
  "many source formats"

# Same seed, same bytes; another seed differs; -o writes the same bytes.
expect 0 seqdata-gen --task dates --count 500 --seed 3 -o b.tsv
CHECKS=$((CHECKS + 1))
cmp -s a.tsv b.tsv || fail "seed 3 twice differs"
expect 0 seqdata-gen --task dates -n 500 --seed 4 -o c.tsv
CHECKS=$((CHECKS + 1))
cmp -s a.tsv c.tsv && fail "seeds 3 and 4 gave the same corpus"
expect 0 seqdata-gen --task dates -n 20 --seed 3
check_eq "$(cat "$T/out")" "$(head -20 a.tsv)" "a shorter corpus is a prefix"
expect_out "" seqdata-gen --task dates -n 0

# Errors.
expect_err 2 "seqdata-gen: the option '--task' is required" seqdata-gen --count 3 -o out.tsv
no_file out.tsv
expect_err 2 "seqdata-gen: the option '--count' is required" seqdata-gen --task dates -o out.tsv
expect_err 2 "seqdata-gen: --task: unknown task 'sums' (choose dates)" seqdata-gen --task sums -n 3 -o out.tsv
no_file out.tsv
expect_err 2 "seqdata-gen: --count must be >= 0" seqdata-gen --task dates -n -1 -o out.tsv
no_file out.tsv
expect_err 2 "seqdata-gen: " seqdata-gen --task dates -n many
expect_err 1 "seqdata-gen: /dev/full: write error" seqdata-gen --task dates -n 10 -o /dev/full
run sh -c 'seqdata-gen --task dates -n 10 >/dev/full'
check_eq "$RC" 1 "stdout on /dev/full: status"
grep -q "seqdata-gen: .*write error" "$T/err" || fail "stdout on /dev/full: $(cat "$T/err")"
expect_err 1 "seqdata-gen: nodir/d.tsv: cannot create" seqdata-gen --task dates -n 3 -o nodir/d.tsv
# The NTM tasks are seqtask-gen's.
for task in copy repeat-copy associative-recall; do
  expect_err 2 "seqdata-gen: --task $task is a task of the Neural Turing Machine: seqtask-gen --task $task" \
    seqdata-gen --task $task -n 3 -o out.tsv
done
no_file out.tsv
# ... and so are they without --count (the hint comes before the missing option).
expect_err 2 "seqdata-gen: --task copy is a task of the Neural Turing Machine: seqtask-gen --task copy" \
  seqdata-gen --task copy
# The transduction tasks are transduce-gen's.
for task in reverse bigram-flip anbn; do
  expect_err 2 "seqdata-gen: --task $task is a transduction task of exercise 8-4: transduce-gen --task $task" \
    seqdata-gen --task $task -o out.tsv
done
no_file out.tsv
finish
