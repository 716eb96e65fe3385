#!/usr/bin/env bash
# layer-time: one TSV line per layer with the path lengths of the theory, the header, the
# seed, and every documented usage error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
help_ok layer-time

expect 0 layer-time --layer attention -l 64 -d 8 --header
check_eq "$(head -1 "$T/out")" "$(printf 'layer\tN\tD\tK\tseconds\tmax_path\tflops')" "header"
check_eq "$(tail -1 "$T/out" | cut -f1-4,6)" "$(printf 'attention\t64\t8\t-\t1')" "attention line"
# Operations counted as the layer runs, against the theory: attention 2 N^2 D for Q K^T and
# as many for the weights times V; conv 2 D^2 per tap and row it covers (N rows for the
# centre tap, N - 1 for each neighbour); rnn 2 N D^2 for the inputs, 2 D^2 per later step.
check_eq "$(tail -1 "$T/out" | cut -f7)" "$((4 * 64 * 64 * 8))" "attention operations"
expect 0 layer-time --layer conv -l 100 -d 8 --kernel 3 --repeat 1 --threads 2
check_eq "$(cut -f7 "$T/out")" "$((2 * 64 * (100 + 99 + 99)))" "conv operations"
expect 0 layer-time --layer rnn -l 100 -d 8 --repeat 1 --threads 2
check_eq "$(cut -f7 "$T/out")" "$((2 * 64 * 100 + 2 * 64 * 99))" "rnn operations"
expect 0 layer-time --layer conv -l 100 -d 8 --kernel 3 --repeat 1
check_eq "$(cut -f1-4,6 "$T/out")" "$(printf 'conv\t100\t8\t3\t50')" "conv: ceil(99/2)"
expect 0 layer-time --layer conv -l 100 -d 8 --kernel 3 --repeat 1 --dilated
check_eq "$(cut -f6 "$T/out")" "5" "dilated conv: ceil(log_3 100)"
expect 0 layer-time --layer conv -l 1024 -d 4 --kernel 2 --repeat 1 --dilated
check_eq "$(cut -f6 "$T/out")" "10" "dilated conv: log_2 1024"
expect 0 layer-time --layer rnn -l 100 -d 8 --seed 3 --threads 1
check_eq "$(cut -f1-4,6 "$T/out")" "$(printf 'rnn\t100\t8\t-\t99')" "rnn line"
# seconds: a positive number (how large depends on the machine and its load: not checked)
CHECKS=$((CHECKS + 1))
awk -F'\t' '!($5 > 0) { exit 1 }' "$T/out" || fail "seconds not a positive number: $(cat "$T/out")"
expect 0 layer-time --layer rnn -l 1 -d 3
check_eq "$(cut -f6 "$T/out")" "0" "one position: path 0"

expect_err 2 "unknown layer 'cnn' (choose attention, conv or rnn)" layer-time --layer cnn -l 4 -d 2
expect_err 2 "layer-time: " layer-time -l 4 -d 2
expect_err 2 "layer-time: " layer-time --layer rnn -d 2
expect_err 2 "--length must be at least 1" layer-time --layer rnn -l 0 -d 2
expect_err 2 "--dim must be at least 1" layer-time --layer rnn -l 3 -d 0
expect_err 2 "--repeat must be at least 1" layer-time --layer rnn -l 3 -d 2 --repeat 0
expect_err 2 "--kernel must be at least 1" layer-time --layer conv -l 3 -d 2 --kernel 0
expect_err 2 "--kernel 1 never connects" layer-time --layer conv -l 3 -d 2 --kernel 1
finish
