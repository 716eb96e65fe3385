#!/usr/bin/env bash
# cost: 20
# Exercise 8-4's set and tree memories: stackmem-step --memory set and --memory tree (soft and
# hard) against the independent NumPy golden cases (testdata/make_setmem_golden.py,
# make_ham_golden.py) to 1e-12; the tree's access cost by its ops line; transduce-gen's
# content and sorting tasks checked in awk; stackmem-train and stackmem-run with a set and a
# tree (threads, traces); the errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

# within A B: the numbers of A and B (space-separated) differ by at most 1e-12 each.
within() {
  awk -v a="$1" -v b="$2" 'BEGIN { na = split(a, x, " "); nb = split(b, y, " "); if (na != nb) exit 1
    for (i = 1; i <= na; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-12) exit 1 } }'
}

# The set: every golden case.
n=0
while read -r word m size; do
  [ "$word" = case ] || continue
  read -r _ s; read -r _ k; read -r _ v; read -r _ we; read -r _ key; read -r _ value
  read -r _ q; read -r _ e; read -r _ want_s; read -r _ want_a; read -r _ want_w; read -r _ want_r
  set -- $we
  args=(--memory set --write "$1" --erase "$2" --threshold "$3" --key "${key// /,}" --value "${value// /,}"
    --read-key "${q// /,}" --erase-key "${e// /,}")
  [ "$size" -gt 0 ] && args+=(--strengths "${s// /,}" --keys "${k// /,}" --values "${v// /,}")
  n=$((n + 1))
  run stackmem-step "${args[@]}"
  [ "$RC" = 0 ] || { fail "set case $n: exit $RC: $(cat "$T/err")"; continue; }
  got=$(sed -n 's/^\(strengths\|erase_weights\|read_weights\|read\) //p' "$T/out" | tr '\n' ' ')
  CHECKS=$((CHECKS + 1))
  within "$got" "$want_s $want_a $want_w $want_r" || fail "set case $n differs from NumPy: $got"
done < "$ATTNKIT_TESTDATA/setmem/cases.txt"
check_eq "$n" 9 "set golden cases run"

# The tree: every golden case, soft and hard; the weights file is the case's first six lines.
n=0
while read -r word mode m c size; do
  [ "$word" = case ] || continue
  : > w.txt
  for i in 1 2 3 4 5 6; do read -r line; echo "$line" >> w.txt; done
  read -r _ leaves; read -r _ h; read -r _ want_s; read -r _ want_l; read -r _ want_w; read -r _ want_r
  hard=()
  if [ "$mode" = hard ]; then read -r _ want_leaf; hard=(--hard); fi
  n=$((n + 1))
  run stackmem-step --memory tree --tree-weights w.txt --leaves "${leaves// /,}" --state "${h// /,}" "${hard[@]}"
  [ "$RC" = 0 ] || { fail "tree case $n: exit $RC: $(cat "$T/err")"; continue; }
  got=$(sed -n 's/^\(summaries\|leaves\|weights\|read\) //p' "$T/out" | tr '\n' ' ')
  CHECKS=$((CHECKS + 1))
  within "$got" "$want_s $want_l $want_w $want_r" || fail "tree case $n ($mode) differs from NumPy: $got"
  [ "$mode" = hard ] && check_eq "$(sed -n 's/^leaf //p' "$T/out")" "$want_leaf" "tree case $n's leaf"
done < "$ATTNKIT_TESTDATA/ham/cases.txt"
check_eq "$n" 10 "tree golden cases run"

# The access cost: the hard access's ops grow by a constant per doubling of n (log n), the
# soft one's double; a set's step grows by a constant per slot (n).
printf 'join_w 0.1 0.2 0.3 0.4 -0.1 -0.2 -0.3 -0.4\njoin_b 0 0.1\nsearch_w 0.5 -0.5 1\nsearch_b 0\nwrite_w 0.1 0.2 0.3 0.4 0.5 0.6\nwrite_b 0 0\n' > cost.txt
ops() { stackmem-step --memory tree --tree-weights cost.txt --leaves "$(seq -s, 1 $((2 * $1)))" --state 0.5 "${@:2}" | sed -n 's/^ops //p'; }
h16=$(ops 16 --hard) h32=$(ops 32 --hard) h64=$(ops 64 --hard)
s16=$(ops 16) s32=$(ops 32)
check_eq "$(echo "$h16 $h32 $h64 $s16 $s32" | grep -cE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$')" 1 "five op counts ($h16 $h32 $h64 $s16 $s32)"
# m = 2, c = 1: a level is a SEARCH (m + c + 1 = 4) and a JOIN (2m² + m = 10).
check_eq "$((h32 - h16))" 14 "the hard access's cost per level"
check_eq "$((h32 - h16))" "$((h64 - h32))" "the hard access's cost per level"
check_eq "$((2 * s16 < s32 + 60 && s32 < 2 * s16 + 60))" 1 "the soft access's cost doubling ($s16, $s32)"

expect_err 1 "stackmem-step: a tree needs a power of 2 (at least 2) leaves, not 3" stackmem-step --memory tree --tree-weights cost.txt --leaves 1,2,3,4,5,6 --state 1
expect_err 2 "stackmem-step: a tree needs --tree-weights, --leaves and --state" stackmem-step --memory tree --leaves 1,2
expect_err 2 "stackmem-step: --keys, --key, --read-key, --erase-key, --write, --erase and --threshold are for a set" stackmem-step --value 1 --key 1
expect_err 2 "stackmem-step: a set needs --key, --read-key and --erase-key" stackmem-step --memory set --value 1 --key 1
expect_err 2 "stackmem-step: --tree-weights, --leaves, --summaries, --state and --hard are for a tree" stackmem-step --value 1 --hard
expect_err 1 "stackmem-step: the write strength must be in [0, 1]" stackmem-step --memory set --value 1 --key 1 --read-key 1 --erase-key 1 --write 2

# transduce-gen's new tasks, the answers recomputed in awk.
expect 0 transduce-gen --task membership --len-min 3 --len-max 8 --symbols 12 --queries 2 --count 100 --seed 1 -o mem.tsv
check_eq "$(awk -F'\t' '{ n = split($1, s, " "); delete in_; for (i = 1; s[i] != "?"; i++) in_[s[i]] = 1
  split($2, t, " "); for (j = 1; j <= 2; j++) if (t[j] != (s[i + j] in in_ ? "yes" : "no")) bad++
  if (n - i != 2) bad++ } END { print bad + 0 }' mem.tsv)" 0 "membership answers"
expect 0 transduce-gen --task dedup --len-min 1 --len-max 12 --symbols 5 --count 100 --seed 2 -o dd.tsv
check_eq "$(awk -F'\t' '{ n = split($1, s, " "); delete seen; out = ""
  for (i = 1; i <= n; i++) if (!(s[i] in seen)) { seen[s[i]] = 1; out = out (out == "" ? "" : " ") s[i] }
  if (out != $2) bad++ } END { print bad + 0 }' dd.tsv)" 0 "dedup answers"
expect 0 transduce-gen --task count-distinct --len-min 1 --len-max 12 --symbols 5 --count 100 --seed 2 -o cd.tsv
check_eq "$(paste dd.tsv cd.tsv | awk -F'\t' '{ if ($1 != $3 || split($2, a, " ") != gsub(/c/, "", $4)) bad++ } END { print bad + 0 }')" 0 "count-distinct = the dedup's length"
expect 0 transduce-gen --task sort --len-min 1 --len-max 9 --symbols 20 --count 50 --seed 3 -o sort.tsv
check_eq "$(awk -F'\t' '{ n = split($1, s, " "); split($2, t, " "); for (i = 1; i < n; i++) if (t[i] + 0 > t[i + 1] + 0) bad++
  for (i = 1; i <= n; i++) { c[s[i]]++; c[t[i]]-- } for (k in c) if (c[k]) bad++; delete c } END { print bad + 0 }' sort.tsv)" 0 "sort answers"
expect 0 transduce-gen --task search --len-min 2 --len-max 6 --symbols 8 --count 50 --seed 4 -o search.tsv
check_eq "$(awk -F'\t' '{ n = split($1, s, " "); delete kv; for (i = 1; i < n - 1; i += 2) kv[s[i]] = s[i + 1]
  if (s[n - 1] != "?" || kv[s[n]] != $2) bad++ } END { print bad + 0 }' search.tsv)" 0 "search answers"
expect 0 transduce-gen --task merge --len-min 2 --len-max 9 --symbols 20 --count 30 --seed 5 -o merge.tsv
check_eq "$(awk -F'\t' '{ if (split($1, s, " ") != split($2, t, " ") + 1) bad++ } END { print bad + 0 }' merge.tsv)" 0 "merge lengths"
expect_err 2 "transduce-gen: search needs symbols >= len-max" transduce-gen --task search --len-max 20 --symbols 10

# Training with a set and with a tree: the same model for any --threads; runs and traces.
expect 0 transduce-gen --task membership --len-min 2 --len-max 5 --symbols 8 --count 200 --seed 6 -o tr.tsv
small="-i tr.tsv --embed 8 --hidden 16 --value-size 8 --steps 6 --batch-size 8 --seed 3 -q"
expect 0 stackmem-train $small --memory set --threads 1 -o set1.akm
expect 0 stackmem-train $small --memory set --threads 2 -o set2.akm
CHECKS=$((CHECKS + 1)); cmp -s set1.akm set2.akm || fail "the set model depends on --threads"
expect 0 stackmem-run --model set1.akm -i tr.tsv --eval
expect 0 stackmem-run --model set1.akm -i tr.tsv -o out.txt --trace st.npz
check_eq "$(wc -l < out.txt)" 200 "one answer a pair"
expect 0 tensor-info st.npz:weights
expect 0 transduce-gen --task sort --len-min 2 --len-max 5 --symbols 8 --count 200 --seed 6 -o so.tsv
expect 0 stackmem-train ${small/tr.tsv/so.tsv} --memory tree --read-out --two-controllers --threads 1 -o tree1.akm
expect 0 stackmem-train ${small/tr.tsv/so.tsv} --memory tree --read-out --two-controllers --threads 2 -o tree2.akm
CHECKS=$((CHECKS + 1)); cmp -s tree1.akm tree2.akm || fail "the tree model depends on --threads"
expect 0 stackmem-run --model tree1.akm -i so.tsv --eval
expect 0 stackmem-run --model tree1.akm -i so.tsv -o out.txt --trace tt.npz
expect 0 tensor-info tt.npz:weights
# The traces' weights (stackmem-run --help): the set's, a step's read weights over the slots
# before its write (one column fewer than the strengths after it); the tree's, its leaf
# weights at each access (the strengths' very shape).
for m in set tree; do
  expect 0 tensor-info $([ $m = set ] && echo st.npz || echo tt.npz)
  shapes=$(awk -F'\t' '$2 == "npz:strengths" || $2 == "npz:weights" { split($4, d, "x"); printf "%s %s ", d[1], d[2] }' "$T/out")
  read -r sr sc wr wc <<< "$shapes"
  [ $m = set ] && want="$sr $((sc - 1))" || want="$sr $sc"
  check_eq "$wr $wc" "$want" "$m trace: the weights' shape against the strengths' ($shapes)"
done
# --tied-keys: the set reads with the key it writes (another model); a set's option only.
expect 0 stackmem-train $small --memory set --tied-keys --threads 1 -o tied.akm
CHECKS=$((CHECKS + 1)); cmp -s tied.akm set1.akm && fail "--tied-keys made the same model"
expect_err 2 "stackmem-train: --tied-keys is for a set (--memory set)" stackmem-train $small --tied-keys -o x.akm
expect_err 2 "not for a tree" stackmem-train ${small/tr.tsv/so.tsv} --memory tree --depth-input -o x.akm
no_file x.akm
finish
