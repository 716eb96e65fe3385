#!/usr/bin/env bash
# seqtask-gen: shapes and contents of the three NTM tasks, determinism, help and errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok seqtask-gen

# copy: 9 input channels, 8 outputs, 2L + 1 steps; the targets repeat the inputs.
expect 0 seqtask-gen --task copy --count 50 --seed 1 -o c.npz
expect 0 tensor-info c.npz
grep -q "inputs.*50x41x9" "$T/out" || fail "copy inputs shape: $(cat "$T/out")"
grep -q "targets.*50x41x8" "$T/out" || fail "copy targets shape"
CHECKS=$((CHECKS + 2))
expect 0 seqtask-gen --task copy --count 1 --len-min 3 --len-max 3 --seed 2 -o one.npz
expect 0 tensor-convert -i one.npz:inputs
cp "$T/out" in.txt
expect 0 tensor-convert -i one.npz:targets
cp "$T/out" tg.txt
check_eq "$(wc -l <in.txt)" 7 "copy of length 3: 7 steps"
check_eq "$(sed -n 4p in.txt)" "0 0 0 0 0 0 0 0 1" "the delimiter step"
check_eq "$(sed -n 5,7p tg.txt)" "$(sed -n 1,3p in.txt | cut -d' ' -f1-8)" "the output phase repeats the input"
check_eq "$(sed -n 1,4p tg.txt | tr -d '0 \n')" "" "no targets before the output phase"
expect 0 tensor-convert -i one.npz:mask
check_eq "$(tr '\n' ' ' <"$T/out")" "0 0 0 0 1 1 1 " "mask"

# repeat-copy: 10 inputs, 9 outputs; the count as K / repeats-max; the end marker.
expect 0 seqtask-gen --task repeat-copy --count 1 --len-min 2 --len-max 2 --repeats-min 3 --repeats-max 3 -o r.npz
expect 0 tensor-convert -i r.npz:inputs
check_eq "$(wc -l <"$T/out")" 11 "repeat copy: 2 + 2 + 6 + 1 steps"
check_eq "$(sed -n 4p "$T/out" | awk '{ print $10 }')" 1 "repeat count 3 of max 3 on the last channel"
expect 0 tensor-convert -i r.npz:targets
check_eq "$(sed -n 11p "$T/out")" "0 0 0 0 0 0 0 0 1" "end marker"

# associative recall: 8 inputs, 6 outputs, 2..6 items.
expect 0 seqtask-gen --task associative-recall --count 200 --seed 3 -o a.npz
expect 0 tensor-convert -i a.npz:lengths
check_eq "$(tr " " "\n" <"$T/out" | sort -u | paste -sd" ")" "2 3 4 5 6" "items 2..6"
expect 0 tensor-info a.npz
grep -q "inputs.*200x32x8" "$T/out" || fail "recall inputs shape: $(cat "$T/out")"
CHECKS=$((CHECKS + 1))

# Same seed, same bytes; another seed differs.
expect 0 seqtask-gen --task copy --count 50 --seed 1 -o c2.npz
CHECKS=$((CHECKS + 1))
cmp -s c.npz c2.npz || fail "seed 1 twice differs"
expect 0 seqtask-gen --task copy --count 50 --seed 2 -o c3.npz
CHECKS=$((CHECKS + 1))
cmp -s c.npz c3.npz && fail "seeds 1 and 2 gave the same data"

# Errors.
expect_err 2 "seqtask-gen: the option '--task' is required" seqtask-gen --count 3 -o o.npz
expect_err 2 "seqtask-gen: --task: unknown task 'sort' (choose copy, repeat-copy or associative-recall)" \
  seqtask-gen --task sort --count 3 -o o.npz
no_file o.npz
expect_err 2 "seqtask-gen: --count must be >= 1" seqtask-gen --task copy --count 0 -o o.npz
expect_err 2 "seqtask-gen: --len-max must be >= len-min" seqtask-gen --task copy --count 3 --len-min 5 --len-max 4 -o o.npz
expect_err 2 "seqtask-gen: --len-min must be >= 2" seqtask-gen --task associative-recall --count 3 --len-min 1 -o o.npz
expect_err 2 "seqtask-gen: --width must be >= 1" seqtask-gen --task copy --count 3 --width 0 -o o.npz
expect_err 2 "seqtask-gen: --repeats-min must be >= 1" seqtask-gen --task repeat-copy --count 3 --repeats-min 0 -o o.npz
expect_err 2 "seqtask-gen: the option '--output' is required" seqtask-gen --task copy --count 3
no_file o.npz
expect_err 1 "seqtask-gen: /dev/full: write error" seqtask-gen --task copy --count 3 -o /dev/full
expect_err 1 "seqtask-gen: nodir/o.npz: cannot create" seqtask-gen --task copy --count 3 -o nodir/o.npz
finish
