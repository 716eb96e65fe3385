#!/usr/bin/env bash
# memn2n-answer: answers, the attention archive and its labels, standard input, and every
# documented error.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
D="$ATTNKIT_TESTDATA/babi"
help_ok memn2n-answer
memn2n-train -q -i "$D" --task 1 --hops 2 --epochs 15 --seed 3 -o m.akm || fail "training"

expect_err 0 "100 questions, 0 answered wrong (0.0%)" memn2n-answer --model m.akm \
  -i "$D/qa1_tiny_test.txt" --alignments att.npz --sentences lab
check_eq "$(head -1 "$T/out")" "$(printf 'line\tquestion\tpredicted\tanswer')" "header"
check_eq "$(sed -n 2p "$T/out")" "$(printf '3\twhere is john\tbathroom\tbathroom')" "first answer"
check_eq "$(awk -F'\t' 'NR > 1 && $3 != $4' "$T/out" | wc -l)" 0 "all right"
# question on line 7 has 3 sentences in memory, 2 hops
expect 0 tensor-info att.npz:q7
check_eq "$(awk 'NR == 2 { print $4 }' "$T/out")" "3x2" "attention shape"
tensor-convert -i att.npz:q7 q7.txt
# each hop's weights sum to at most 1: the rest went to the memory's 47 empty slots
check_eq "$(awk '{ a += $1; b += $2 } END { print (a > 0.5 && a <= 1.0001 && b > 0.5 && b <= 1.0001) }' q7.txt)" 1 "hop sums"
# with --mask-empty, exactly 1
memn2n-train -q -i "$D" --task 1 --hops 2 --epochs 3 --seed 3 --mask-empty -o mm.akm || fail "training"
expect 0 memn2n-answer --model mm.akm -i "$D/qa1_tiny_test.txt" --alignments attm.npz
tensor-convert -i attm.npz:q7 q7m.txt
check_eq "$(awk '{ a += $1; b += $2 } END { printf "%.3f %.3f", a, b }' q7m.txt)" "1.000 1.000" "hop sums, masked"
check_eq "$(sed -n 3p lab/q7.txt)" "daniel journeyed to the garden" "labels, oldest first"
# the sentence about the person asked for gets the most weight in the last hop
check_eq "$(awk '{ if ($2 > m) { m = $2; r = NR } } END { print r }' q7.txt)" 1 "attention on the fact"
expect 0 attn-plot -i att.npz:q7 --rows lab/q7.txt -o q7.png
# standard input and -o
expect 0 sh -c "memn2n-answer -q --model m.akm -o ans.tsv <'$D/qa1_tiny_test.txt'"
check_eq "$(wc -l <ans.tsv)" 101 "rows from standard input"

# errors
expect_err 2 "memn2n-answer: " memn2n-answer -i "$D/qa1_tiny_test.txt"
expect_err 1 "nothing.akm" memn2n-answer --model nothing.akm -i "$D/qa1_tiny_test.txt"
expect_err 1 "not an attnkit model file" memn2n-answer --model "$D/qa1_tiny_test.txt" -o o.tsv
no_file o.tsv
printf '1 Mary went home.\n2 Where is Mary?\t\t1\n' >bad.txt
expect_err 1 "bad.txt:2: question 2 has no answer" memn2n-answer --model m.akm -i bad.txt -o o.tsv
no_file o.tsv
expect 1 memn2n-answer -q --model m.akm -i "$D/qa1_tiny_test.txt" -o /dev/full
expect 1 memn2n-answer -q --model m.akm -i "$D/qa1_tiny_test.txt" --alignments /dev/full -o o.tsv
# --shard K/N: slices of the questions; the header comes with the first slice, and the
# slices' attention archives keep the questions' line numbers.
shard_ok memn2n-answer -q --model m.akm -i "$D/qa1_tiny_test.txt"
expect 0 memn2n-answer -q --model m.akm -i "$D/qa1_tiny_test.txt" --shard 3/3 --alignments s3.npz
check_eq "$(head -1 "$T/out" | cut -f 1)" "$(awk -F'\t' 'NR == 68 { print $1 }' "$T/shard-whole")" "the last slice starts at question 67"
expect 0 tensor-info "s3.npz:q$(head -1 "$T/out" | cut -f 1)"
# A user's own questions, without answers (a line ending in '?' and no tab): answered, the
# answer column left empty, the summary says how many had an answer to check.
printf '1 Mary moved to the bathroom.\n2 John went to the hallway.\n3 Where is Mary?\n4 Where is John? \n5 Where is Mary?\tbathroom\t1\n' >own.txt
expect_err 0 "3 questions, 2 without an answer; 0 of the 1 with one answered wrong (0.0%)" \
  memn2n-answer --model m.akm -i own.txt
check_eq "$(sed -n 2p "$T/out")" "$(printf '3\twhere is mary\tbathroom\t')" "an unanswered question"
check_eq "$(sed -n 3p "$T/out")" "$(printf '4\twhere is john\thallway\t')" "another"
check_eq "$(wc -l <"$T/out")" 4 "every question answered"
# A file without questions is an error, not an empty answer sheet.
printf '1 Mary moved to the bathroom.\n2 John went to the hallway.\n' >noq.txt
expect_err 1 "memn2n-answer: noq.txt: no questions" memn2n-answer --model m.akm -i noq.txt -o o.tsv
no_file o.tsv
# Training data keeps answers compulsory.
mkdir tr && printf '1 Mary moved to the bathroom.\n2 Where is Mary?\n' >tr/qa1_x_train.txt
expect_err 1 "qa1_x_train.txt:2: question 2 has no answer" memn2n-train -q -i tr --task 1 -o t.akm
finish
