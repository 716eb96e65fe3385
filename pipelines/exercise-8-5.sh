#!/usr/bin/env bash
# Exercise 8.5: memory-network reads against Neural Turing Machine reads and writes.
# An End-To-End Memory Network (memn2n) reads a FIXED memory, one embedding per story
# sentence, by content alone (soft attention p = softmax(u'm_i)), several hops, and never
# writes to it. An NTM addresses its memory by content AND location (interpolation with the
# last weighting, a circular shift, sharpening) and changes it with erase/add writes as the
# sequence goes on.
#
# The script trains both on small problems and reads their traces:
# - memn2n (memn2n-train, 2 hops, --mask-empty so that each hop is a distribution over the
#   story's sentences) on the tiny bAbI task-1 fixture (testdata/babi), then
#   memn2n-answer --alignments on its test file: per question, memory sentences x hops;
# - an NTM (ntm-train) on the copy task, then ntm-run --trace on one sequence: per step, the
#   read and write weightings over the N memory rows and the memory after the step.
# It prints a TSV on standard output, one row per hop (memn2n, one question) or per step and
# head (NTM):
#   model  step  head  rows  argmax  max_weight  entropy_bits
# and draws both with attn-plot (memn2n.png: sentences down, hops across; ntm-write.png,
# ntm-read.png: time down, memory rows across) in --keep DIR, else the current folder.
#
# Claims checked (exit 1 when one fails):
#  memn2n: every hop's weights sum to 1 over the same fixed set of sentences; the memory is
#    read-only: a question answered alone gets exactly the weights it got inside the whole
#    file (nothing earlier wrote to it); the last hop's argmax is the supporting fact of the
#    question in at least 80% of the test questions.
#  NTM: while the sequence is written, the write head's argmax moves by one row (a shift of
#    +-1, modulo N) from step to step (at least 80% of the steps); at each of those steps
#    the memory row that changed most is the row the write head weighted most (at least
#    80%); while it answers, the read head's argmax at output step j is the row written at
#    input step j (at least 80%): it retraces the write head's trail.
#   pipelines/exercise-8-5.sh [--quick] [--seed S] [--keep DIR]
# --quick: 15 memn2n epochs; a copy NTM of 4-bit vectors of length 1-4 on a 16 x 8 memory,
#   Adam, 5,000 sequences, traced on a sequence of length 4 (seconds). Full: 40 epochs; 8-bit
#   vectors of length 1-10 on a 32 x 16 memory, 20,000 sequences, traced at length 10.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools memn2n-train memn2n-answer ntm-train ntm-run seqtask-gen tensor-convert attn-plot
work_dir
out=${keep:-.}
babi=${ATTNKIT_TESTDATA:-$top/testdata}/babi
if [ "$quick" = 1 ]; then
  epochs=15 width=4 len=4
  ntm="--width 4 --len-max 4 --hidden 32 --memory-rows 16 --memory-cols 8
       --optimizer adam --lr 3e-3 --eps 1e-8 --steps 5000"
else
  epochs=40 width=8 len=10
  ntm="--width 8 --len-max 10 --hidden 100 --memory-rows 32 --memory-cols 16
       --optimizer adam --lr 1e-3 --eps 1e-8 --steps 20000"
fi

# One weight vector per line (text) → "rows argmax max_weight entropy_bits".
stats() {
  awk '{ s = 0; m = -1; a = 0; h = 0
         for (i = 1; i <= NF; i++) { s += $i; if ($i > m) { m = $i; a = i - 1 } }
         for (i = 1; i <= NF; i++) if ($i > 0) h -= ($i / s) * log($i / s) / log(2)
         printf "%d\t%d\t%.4f\t%.4f\n", NF, a, m, h }' "$@"
}
transpose() { awk '{ for (j = 1; j <= NF; j++) c[j] = c[j] (NR > 1 ? " " : "") $j; n = NF }
  END { for (j = 1; j <= n; j++) print c[j] }' "$@"; }

# --- memn2n: content-based reads of a fixed memory ---
memn2n-train -q -i "$babi" --task 1 --mask-empty --hops 2 --epochs "$epochs" --seed "$seed" \
  -o "$dir/m.akm"
memn2n-answer -q --model "$dir/m.akm" -i "$babi/qa1_tiny_test.txt" --alignments "$dir/att.npz" \
  --sentences "$dir/lab" -o "$dir/answers.tsv"
# The question shown: the first with at least 4 sentences in memory.
q=$(awk -F'\t' 'NR > 1 { print $1 }' "$dir/answers.tsv" | while read -r l; do
  if [ "$(wc -l <"$dir/lab/q$l.txt")" -ge 4 ]; then echo "$l"; break; fi; done)
[ -n "$q" ] || { echo "$PIPELINE: no question with 4 sentences in memory" >&2; exit 1; }
tensor-convert -i "$dir/att.npz:q$q" "$dir/q.txt"
printf 'model\tstep\thead\trows\targmax\tmax_weight\tentropy_bits\n'
transpose "$dir/q.txt" | stats | awk -v q="$q" '{ printf "memn2n-q%s\thop%d\tread\t%s\n", q, NR, $0 }'
attn-plot -i "$dir/att.npz:q$q" --rows "$dir/lab/q$q.txt" \
  --title "memn2n: hop weights over the story's sentences (question on line $q)" -o "$out/memn2n.png"

# Every question: hop sums, and the last hop's argmax against the supporting fact.
names=$(awk -F'\t' 'NR > 1 { printf "%sq%s", sep, $1; sep = " " }' "$dir/answers.tsv")
support_ok=0 questions=0 bad_sum=0
mkdir -p "$dir/q"
for n in $names; do
  tensor-convert -i "$dir/att.npz:$n" "$dir/q/$n.txt"
  bad_sum=$((bad_sum + $(transpose "$dir/q/$n.txt" |
    awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (s < 0.999 || s > 1.001) b++ } END { print b + 0 }')))
done
# The supporting fact of each question: its line number in the story (3rd field of the
# question line), as a row of the memory (the story's statements, questions left out).
awk -F'\t' '
  /^1 / { k = 0 }
  !/\t/ { k++; row[$0 + 0] = k; next }
  { print "q" NR "\t" row[$3 + 0] }' "$babi/qa1_tiny_test.txt" >"$dir/support.tsv"
while IFS=$'\t' read -r n r; do
  [ -f "$dir/q/$n.txt" ] || continue
  questions=$((questions + 1))
  last=$(transpose "$dir/q/$n.txt" | stats | tail -1 | cut -f2)
  [ "$last" = "$((r - 1))" ] && support_ok=$((support_ok + 1))
done <"$dir/support.tsv"
# Read-only: the shown question alone gets the weights it got within the whole file.
awk -v q="$q" '$1 == 1 { story = "" } { story = story $0 "\n" } NR == q { printf "%s", story; exit }' \
  "$babi/qa1_tiny_test.txt" >"$dir/alone.txt"
memn2n-answer -q --model "$dir/m.akm" -i "$dir/alone.txt" --alignments "$dir/alone.npz" -o /dev/null
tensor-convert -i "$dir/alone.npz:q$(wc -l <"$dir/alone.txt")" "$dir/alone.w"
# --- NTM: content + location reads, erase/add writes ---
ntm-train --task copy $ntm --seed "$seed" -o "$dir/ntm.akm" -q
seqtask-gen --task copy --width "$width" --count 1 --len-min "$len" --len-max "$len" \
  --seed $((seed + 7)) -o "$dir/one.npz"
ntm-run --model "$dir/ntm.akm" -i "$dir/one.npz" --trace "$dir/trace.npz" -o "$dir/out.npy"
for a in write0 read0 memory; do tensor-convert -i "$dir/trace.npz:$a" "$dir/$a.txt"; done
stats "$dir/write0.txt" >"$dir/write.stats"
stats "$dir/read0.txt" >"$dir/read.stats"
awk '{ print "ntm-copy\t" NR "\twrite\t" $0 }' "$dir/write.stats"
awk '{ print "ntm-copy\t" NR "\tread\t" $0 }' "$dir/read.stats"
attn-plot -i "$dir/trace.npz:write0" --title "NTM copy: write weighting (time down, rows across)" \
  -o "$out/ntm-write.png"
attn-plot -i "$dir/trace.npz:read0" --title "NTM copy: read weighting (time down, rows across)" \
  -o "$out/ntm-read.png"
# The memory [T, N, M] as text is T blocks of N lines of M numbers: the row that changed most at each
# step (step 1 against the memory before it: every row equal, so its change is its own).
nrows=$(head -1 "$dir/write0.txt" | wc -w)
awk -v n="$nrows" 'NF == 0 { next } { t = int(k / n); i = k % n; k++; d = 0
    for (j = 1; j <= NF; j++) { if (t > 0) d += ($j - p[i, j]) ^ 2; p[i, j] = $j }
    if (t > 0 && (i == 0 || d > best[t])) { best[t] = d; arg[t] = i } }
  END { for (t = 1; t in arg; t++) print t + 1, arg[t] }' "$dir/memory.txt" >"$dir/changed.txt"

# --- claims ---
status=0
claim() { if awk "BEGIN { exit !($2) }"; then echo "checked: $1" >&2; else echo "claim failed: $1" >&2; status=1; fi; }
claim "memn2n: the hop weights sum to 1 over the story's sentences in every hop of all $questions questions ($bad_sum hops do not)" "$bad_sum == 0 && $questions > 0"
claim "memn2n: question $q answered alone gets the weights it got within the file (read-only memory)" \
  "$(paste "$dir/q/q$q.txt" "$dir/alone.w" | awk '{ h = NF / 2; for (j = 1; j <= h; j++) { d = $j - $(j + h); if (d * d > 1e-10) b++ } } END { print b + 0 }') == 0"
claim "memn2n: the last hop's argmax is the supporting fact in $support_ok of $questions questions (need 80%)" \
  "$support_ok >= 0.8 * $questions"
# The episode's steps (TSV rows 1-based): rows 1..len the vectors, len+1 the delimiter,
# len+2..2len+1 the answer.
moves=$(awk -v n="$nrows" -v len="$len" 'NR >= 2 && NR <= len { d = ($2 - p + n) % n; if (d == 1 || d == n - 1) m++ }
  { p = $2 } END { print m + 0 }' "$dir/write.stats")
claim "NTM: the write head moved by one row in $moves of $((len - 1)) input steps (need 80%)" \
  "$moves >= 0.8 * ($len - 1)"
same=$(paste -d' ' <(cut -f2 "$dir/write.stats" | sed 1d) "$dir/changed.txt" |
  awk -v len="$len" 'NR < len { if ($1 == $3) s++ } END { print s + 0 }')
claim "NTM: the memory row that changed most is the row written most in $same of $((len - 1)) input steps (need 80%)" \
  "$same >= 0.8 * ($len - 1)"
follow=$(awk -v len="$len" 'FNR == NR { if (FNR <= len) w[FNR] = $2; next }
  FNR > len + 1 && FNR <= 2 * len + 1 { if ($2 == w[FNR - len - 1]) f++ } END { print f + 0 }' \
  "$dir/write.stats" "$dir/read.stats")
claim "NTM: the read head's argmax at output step j is the row written at input step j in $follow of $len steps (need 80%)" \
  "$follow >= 0.8 * $len"
echo "exercise-8-5: plots in $out/memn2n.png, $out/ntm-write.png and $out/ntm-read.png" >&2
exit $status
