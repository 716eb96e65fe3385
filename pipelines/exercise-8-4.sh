#!/usr/bin/env bash
# Exercise 8-4: external memory organised as a stack, a queue or a deque, against the LSTM
# without one (Grefenstette et al. 2015, "Learning to Transduce with Unbounded Memory"), and
# the stack RNN of Joulin & Mikolov 2015 on a^n b^n.
#
# For copy, reversal and bigram flip (transduce-gen), trains the Stack-, Queue- and DeQue-LSTM
# and the plain LSTM (stackmem-train --two-controllers: an encoder LSTM reads the source and a
# decoder LSTM, starting from its state, the separator and target, around the one memory; the
# prediction from the controller, pop bias -1; batch 32, lr 0.002, hidden 64 (the queue 128),
# values of 32, 2,000 steps over 40,000 pairs (the deque 6,000 at lr 0.003, after 500 steps of
# linear warm-up from 0); the memories' decoder sets its push, pop and value from what it
# reads, not from its state (--input-control) and starts without pushing (--decoder-push-bias
# -3), and the deque's encoder starts with weak pops, no bottom pushes and strong top pushes
# (--encoder-pop-bias -3 --bottom-push-bias -6 --push-bias 5), one recipe for both its tasks)
# on source lengths 8-16 and tests them on 17-32, twice the training lengths (the paper: 8-64
# then 65-128, far longer training). Copy and reversal use 128 symbols (the paper's), bigram
# flip 10. The pairs the claims rest on (stack/reverse, queue/copy, deque/copy, deque/reverse)
# run with 5 seeds (EX84_SEEDS), every other row with 3 (EX84_ROW_SEEDS); the stack RNN (40
# units, 10 stacks) learns a^n -> b^n on n < 20 and is tested on n <= 60. The Neural Turing Machine
# learns the same three tasks from the same pairs (ntm-train -i PAIRS.tsv: one-hot symbols
# in and out, a delimiter, then zero input while it answers; LSTM controller of 100, one read
# and one write head, memory 64 x 20, Adam 3e-3, one pair a step, 30,000 steps; 3 seeds,
# EX84_NTM_SEEDS; ntm-run --eval, the same metric code). Memory networks do not apply (they
# answer a question about a read-only set of facts; no row). Prints the table (task, model,
# seeds, test coarse and fine of each seed; stackmem-run --eval) and draws the stack's
# strengths over time for one reversal and the queue's for one copy (attn-plot:
# stack-reverse.png, queue-copy.png in --keep DIR); writes analysis.txt (the exercise's
# analysis with the measured rows put in).
#
# Why: a stack hands back the newest value first, which is what reversal needs; a queue
# hands back the oldest, which is what copying needs; a deque does either. Their access
# order does not depend on the length, so what is learned on short sequences holds on long
# ones; the LSTM has to squeeze the whole sequence into its state and does not.
# Claims checked (exit 1 when one fails): stack/reverse, queue/copy, deque/copy and
# deque/reverse reach test coarse >= 0.95 in at least 3 of the seeds (of 5); the plain LSTM
# stays <= 0.10 on copy and reversal; the queue on reversal <= 0.10; the queue's test fine
# accuracy on bigram flip >= 0.95; the stack RNN gets >= 95% of a^n b^n, n <= 60, right.
# The NTM rows carry no claim: they are reported. With --quick (a smoke run: lengths 2-5 then
# 6-10, 400 pairs, 25 steps, a small NTM, one seed) only the table is made and its shape
# checked.
# The set and the tree (issue 35): a set memory (stackmem-train --memory set: unordered slots
# read and erased by content) and HAM's tree (--memory tree: the source in the leaves, soft
# SEARCH descents from the separator on) run with --read-out (the set also with
# --input-control, its keys from the symbol alone, and --tied-keys, each step reading with the
# key it writes; lr 0.005, the set for three times the steps), on the order tasks, on the
# content tasks (membership over 128 symbols; count-distinct and dedup over 16) with the
# stack, the queue and the LSTM, and on HAM's tasks (sort over 128 symbols, merge over 16,
# search over 64) with the stack and the LSTM; the set's read weights on a membership and the tree's
# leaf weights on a sort are drawn (set-membership.png, tree-sort.png). The set on membership
# runs with 3 seeds (EX84_SET_SEEDS), as every other row does (EX84_ROW_SEEDS). Claim: the set's
# membership test coarse >= 0.95 in 3 of 3 seeds, the stack's and the queue's <= 0.75 (chance
# is 0.5). Dedup carries no claim: its answer is in first-seen order, which a set does not
# keep (with keys from the symbol the set finds which symbols and the LSTM has to carry their
# order; with keys from the state too, the best measured was 0.705; doc/exercise-8-4.md),
# nor do the tree's rows (its sort stayed below the LSTM's in what was measured).
# HAM's own hard descent (--memory tree --attention hard: one leaf an access, sampled in
# training and trained by REINFORCE, greedy in decoding; row tree-hard) runs on sort, which
# uses the 128 symbols (over 16, sorting is counting, which the LSTM does well); every row
# also reports "elements", the share of target positions right. The claim that HAM sorts at
# twice the training length with >= 0.9 of the elements right where the LSTM and the stack do
# not is stated as PASS or FAIL with its figures (EX84_SET_SEEDS seeds of tree-hard), and
# does not fail the run.
#   pipelines/exercise-8-4.sh [--quick] [--seed S] [--keep DIR]
# With --keep DIR a stopped run goes on when run again: the trainings whose row is already in
# DIR/results.tsv are not redone (a DIR of other settings is refused).
# Measured results (dates, loads, earlier recipes): doc/experiments/exercise-8-4.md; how each
# recipe was found: doc/exercise-8-4.md.
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
pipeline_jobs EX84_JOBS 2
need_tools transduce-gen stackmem-train stackmem-run ntm-train ntm-run attn-plot

symbols=${EX84_SYMBOLS:-128} bigram_symbols=${EX84_BIGRAM_SYMBOLS:-10}
if [ "$quick" = 1 ]; then
  lo=2 hi=5 tlo=6 thi=10 count=400 steps=25 seeds=1 rnn_epochs=2 rnn_count=200 set_seeds=1
  row_seeds=1
  ntm_steps=20 ntm_size="--hidden 16 --memory-rows 16 --memory-cols 8" ntm_seeds=1
else
  lo=8 hi=16 tlo=17 thi=32 count=40000 steps=${EX84_STEPS:-2000} seeds=${EX84_SEEDS:-5}
  set_seeds=${EX84_SET_SEEDS:-3} row_seeds=${EX84_ROW_SEEDS:-3}
  rnn_epochs=20 rnn_count=4000
  ntm_steps=${EX84_NTM_STEPS:-30000} ntm_size="--memory-rows 64" ntm_seeds=${EX84_NTM_SEEDS:-3}
fi
work_dir

# train TASK MEMORY SEED: one model, its test coarse and fine appended to results.tsv.
# MEMORY ntm: the Neural Turing Machine on the same pairs (ntm-train -i PAIRS.tsv).
train() {
  local task=$1 mem=$2 s=$3 m="$dir/$1-$2-$3.akm"
  if [ "$mem" = stack-rnn ]; then
    stackmem-train -i "$dir/anbn-train.tsv" --stack-rnn --stacks 10 --hidden 40 --embed 8 \
      --lr 0.01 --epochs $rnn_epochs --seed "$s" --threads $threads -q -o "$m"
    stackmem-run --model "$m" -i "$dir/anbn-test.tsv" --eval |
      awk -F'\t' -v s="$s" '$1 == "all" { printf "anbn\tstack-rnn\t%s\t%s\t%s\t-\n", s, $3, $4 }'
    return
  fi
  if [ "$mem" = ntm ]; then
    ntm-train -i "$dir/$task-train.tsv" $ntm_size --optimizer adam --lr 3e-3 --eps 1e-8 --steps $ntm_steps \
      --seed "$s" --threads $threads -q -o "$m"
    ntm-run --model "$m" -i "$dir/$task-test.tsv" --eval -q |
      awk -F'\t' -v t="$task" -v s="$s" '$1 == "all" { printf "%s\tntm\t%s\t%s\t%s\t-\n", t, s, $3, $4 }'
    return
  fi
  # The stack's and the queue's decoder (and the deque's): its push, pop and value from its
  # input and the read, not its state (so that it pops until the memory runs empty rather
  # than for a count), and it starts without pushing (its pushes would cover the end it
  # reads). The deque's encoder starts with weak pops (-3: it stores the source whole), no
  # bottom pushes and strong top pushes (--push-bias 5: the first value too, which a long
  # reversal answers last); its decoder's pops start at -1 at both ends, as the stack's and
  # the queue's, so that a copy finds its bottom end; it trains three times as long at a
  # higher rate after a warm-up (two ends to learn; the longer run is what stops a copy
  # fading with length). The queue's controllers have 128 units (its bigram flip's fine
  # accuracy held in 5 of 5 seeds on --seed 11's data, against 2 of 5 with 64).
  local recipe=() n=$steps lr=0.002 hidden=64 kind=$mem
  [ "$mem" = none ] || recipe=(--input-control --decoder-push-bias -3)
  case $mem in
    # The set and the tree (issue 35): the prediction also sees the read (a set's "found", the
    # tree's leaf); the set's encoder sets its keys from the symbol alone (--input-control),
    # at lr 0.005 for three times the steps (membership: 0.88 at 2,500 steps and rising); the
    # tree at lr 0.005 (doc/exercise-8-4.md).
    set) recipe=(--read-out --input-control --tied-keys) n=$((3 * steps)) lr=0.005 ;;
    tree) recipe=(--read-out) lr=0.005 ;;
    # HAM's hard descent, its decisions sampled and trained by REINFORCE: the paper's form (the
    # source in the leaves alone, so that the controller cannot answer from its own state),
    # each access rewarded by its own step's log-likelihood, the advantages normalised, an
    # entropy bonus, a curriculum on the length over the first 30% of five times the steps
    # (doc/exercise-8-4.md, fourth session).
    tree-hard) recipe=(--read-out --attention hard --leaves-only --discount 0 --normalize-advantage
      --entropy 0.01 --curriculum $((3 * steps / 2))) n=$((5 * steps)) lr=0.005 kind=tree ;;
    queue) hidden=128 ;;
    deque) recipe+=(--encoder-pop-bias -3 --bottom-push-bias -6 --push-bias 5 --warmup 500) n=$((3 * steps)) lr=0.003 ;;
  esac
  stackmem-train -i "$dir/$task-train.tsv" --memory "$kind" --two-controllers --steps $n \
    --batch-size 32 --lr $lr --hidden $hidden --value-size 32 "${recipe[@]}" --seed "$s" --threads $threads -q -o "$m"
  # elements: the share of the target positions whose output symbol is right.
  stackmem-run --model "$m" -i "$dir/$task-test.tsv" -o "$dir/$task-$mem-$s.out"
  local elements
  elements=$(awk -F'\t' 'NR == FNR { n = split($0, o, " "); for (i = 1; i <= n; i++) out[FNR, i] = o[i]; next }
    { n = split($2, y, " "); for (i = 1; i <= n; i++) { all++; ok += ((FNR, i) in out) && out[FNR, i] == y[i] } }
    END { printf "%.3f", all ? ok / all : 0 }' "$dir/$task-$mem-$s.out" "$dir/$task-test.tsv")
  stackmem-run --model "$m" -i "$dir/$task-test.tsv" --eval |
    awk -F'\t' -v t="$task" -v m="$mem" -v s="$s" -v e="$elements" '$1 == "all" { printf "%s\t%s\t%s\t%s\t%s\t%s\n", t, m, s, $3, $4, e }'
}
# the settings and train's code: a --keep DIR of another recipe is refused before anything is
# written to it
keep_recipe "seed $seed quick $quick symbols $symbols/$bigram_symbols lengths $lo-$hi/$tlo-$thi count $count steps $steps seeds $seeds/$set_seeds/$row_seeds ntm $ntm_steps/$ntm_seeds/$ntm_size stack-rnn $rnn_epochs/$rnn_count" train

jobs=()
# The order tasks (every memory), the content tasks (a set's: membership, count-distinct,
# dedup) and HAM's (sort, merge, search) with the set, the tree, the stack, the queue (content)
# and the LSTM; EX84_ROW_SEEDS seeds each (issue 35's rows carry no claim: doc/exercise-8-4.md).
for task in copy reverse bigram-flip membership count-distinct dedup sort merge search; do
  k=$symbols mems="stack queue deque none ntm set tree"
  case $task in
    bigram-flip) k=$bigram_symbols ;;
    membership) mems="stack queue none set tree" ;;
    count-distinct | dedup) k=16 mems="stack queue none set tree" ;;
    sort) mems="stack none set tree tree-hard" ;;
    merge) k=16 mems="stack none set tree" ;;
    search) k=64 mems="stack none set tree" ;;
  esac
  transduce-gen --task $task --len-min $lo --len-max $hi --symbols $k --count $count --seed "$seed" -o "$dir/$task-train.tsv"
  transduce-gen --task $task --len-min $tlo --len-max $thi --symbols $k --count 200 --seed $((seed + 1)) -o "$dir/$task-test.tsv"
  for mem in $mems; do
    n=$row_seeds
    case $task:$mem in
      reverse:stack | copy:queue | copy:deque | reverse:deque) n=$seeds ;;
      membership:set | sort:tree-hard) n=$set_seeds ;;
      *:ntm) n=$ntm_seeds ;;
    esac
    for ((k = 0; k < n; k++)); do
      # The NTM's trainings are the longest: first, so that the two lanes end together.
      if [ $mem = ntm ]; then jobs=("$task $mem $((seed + k))" "${jobs[@]}"); else jobs+=("$task $mem $((seed + k))"); fi
    done
  done
done
transduce-gen --task anbn --len-min 1 --len-max 19 --count $rnn_count --seed "$seed" -o "$dir/anbn-train.tsv"
transduce-gen --task anbn --len-min 1 --len-max 60 --count 300 --seed $((seed + 1)) -o "$dir/anbn-test.tsv"
jobs=("anbn stack-rnn $seed" "${jobs[@]}")

# EX84_JOBS trainings at a time (default 2, the machine's two cores), one thread each (every
# core when 1); with --keep, those whose row a stopped run has left in results.tsv are not
# run again.
[ -n "$keep" ] || : >"$dir/results.tsv"
touch "$dir/results.tsv"
todo=()
for j in "${jobs[@]}"; do
  read -r t m s <<<"$j"
  awk -F'\t' -v t="$t" -v m="$m" -v s="$s" '$1 == t && $2 == m && $3 == s { f = 1 } END { exit !f }' \
    "$dir/results.tsv" || todo+=("$j")
done
[ "${#todo[@]}" = "${#jobs[@]}" ] || echo "$PIPELINE: $((${#jobs[@]} - ${#todo[@]})) of ${#jobs[@]} trainings already in $dir/results.tsv" >&2
[ "${#todo[@]}" = 0 ] || printf '%s\n' "${todo[@]}" | xargs -P "$njobs" -L 1 bash -c "$(declare -f train); dir='$dir' threads=$threads steps=$steps ntm_steps=$ntm_steps ntm_size='$ntm_size' rnn_epochs=$rnn_epochs; train \"\$@\" >> '$dir/results.tsv'" _

# The table: one row per task and model, the seeds' coarse and fine.
sort -t$'\t' -k1,1 -k2,2 -k3,3n "$dir/results.tsv" |
  awk -F'\t' 'BEGIN { print "task\tmodel\tseeds\tcoarse\tfine\telements" }
    { k = $1 "\t" $2; if (!(k in c)) order[++n] = k; c[k] = c[k] (c[k] == "" ? "" : " ") $4; f[k] = f[k] (f[k] == "" ? "" : " ") $5; e[k] = e[k] (e[k] == "" ? "" : " ") $6; s[k]++ }
    END { for (i = 1; i <= n; i++) { k = order[i]; printf "%s\t%d\t%s\t%s\t%s\n", k, s[k], c[k], f[k], e[k] } }' > "$dir/table.tsv"
cat "$dir/table.tsv"

# The analysis the exercise asks for, with the measured rows put in (analysis.txt).
awk -F'\t' 'NR > 1 { c[$1 ":" $2] = $4; f[$1 ":" $2] = $5; e[$1 ":" $2] = $6 }
  function row(k) { return "coarse " c[k] ", fine " f[k] }
  function rowe(k) { return row(k) ", elements " e[k] }
  END {
    print "Exercise 8-4: memory organised as a stack, a queue, a deque, a set, a tree (test lengths are twice the training lengths; coarse: the whole target right; fine: the share right before the first error; one value per seed)."
    print ""
    print "Access order. A stack hands back the newest value first (last in, first out); a queue the oldest (first in, first out); a deque either, from its two ends. The order is fixed by the structure, not learned, and it does not depend on the length: a controller that has learned to push while reading and pop while writing does the same on longer sequences."
    print "  reversal is last in, first out:   stack " row("reverse:stack") "; deque " row("reverse:deque") "; queue " row("reverse:queue") "."
    print "  copying is first in, first out:   queue " row("copy:queue") "; deque " row("copy:deque") "; stack " row("copy:stack") "."
    print "  bigram flip (a short reordering): queue " row("bigram-flip:queue") "; stack " row("bigram-flip:stack") "; deque " row("bigram-flip:deque") "."
    print "  the LSTM alone must hold the whole sequence in its state: copy " row("copy:none") ", reversal " row("reverse:none") "."
    print ""
    print "Cost per step. Push, pop and read touch strengths from one end: O(n m) for n stored values of width m in the continuous (soft) form, since a pop may reach any depth; a hard stack or queue is O(m). The deque pays twice. The NTM addresses every row by content and location: O(N M) for N x M memory, every step, whether it needs it or not."
    print ""
    print "What each can represent. A stack recognises context-free structure (nesting, a^n b^n: the stack RNN " row("anbn:stack-rnn") " up to n = 60); a queue, order-preserving transductions; a deque, both. None of them can look a value up by content: to reach the k-th value they must pop the k - 1 above it."
    print ""
    print "A set is content-addressed memory: memory networks (a read-only set of slots, memn2n-train) and the content addressing of the NTM. Memory networks answer a question about stored facts in one or a few hops and do not write, so they do not apply to these transductions (no row). The NTM can write and also addresses by location (shifts), so it can emulate a stack or a queue, but it has to learn the access order that the stack and queue are given:"
    print "  NTM (ntm-train -i PAIRS.tsv): copy " row("copy:ntm") "; reversal " row("reverse:ntm") "; bigram flip " row("bigram-flip:ntm") "."
    print "The set (memory/stackmem/set.h: unordered slots, erase and read by content, a read threshold) keeps no order; a step costs O(n m) for n slots (stackmem-step --memory set prints the count). Content tasks:"
    print "  membership: set " row("membership:set") "; stack " row("membership:stack") "; queue " row("membership:queue") "; LSTM " row("membership:none") "; tree " row("membership:tree") "."
    print "  dedup:      set " row("dedup:set") "; stack " row("dedup:stack") "; queue " row("dedup:queue") "; LSTM " row("dedup:none") ". Its answer is in first-seen order: the set can tell which symbols were new, but keeps no order, so the order has to come from the state of the controller (or from a queue, which in turn cannot tell which symbols were new); neither memory alone has both."
    print "  count-distinct: set " row("count-distinct:set") "; queue " row("count-distinct:queue") "; LSTM " row("count-distinct:none") "."
    print "  order tasks: set copy " row("copy:set") ", reversal " row("reverse:set") "."
    print "The tree (memory/stackmem/ham.h: HAM, Andrychowicz & Kurach 2016): the source in the leaves, JOINed summaries, a SEARCH descent per output step; the hard form (tree-hard: one leaf an access, sampled in training and trained by REINFORCE, greedy when decoding) touches O(log n) nodes a step, the soft one (DHAM, tree) O(n)."
    print "  sort (128 symbols): hard tree " rowe("sort:tree-hard") "; soft tree " rowe("sort:tree") "; stack " rowe("sort:stack") "; LSTM " rowe("sort:none") "; set " rowe("sort:set") "."
    print "  merge: tree " row("merge:tree") "; LSTM " row("merge:none") ".  search: tree " row("search:tree") "; LSTM " row("search:none") "; set " row("search:set") "."
    print "  order tasks: tree copy " row("copy:tree") ", reversal " row("reverse:tree") "."
  }' "$dir/table.tsv" > "$dir/analysis.txt"
echo "$PIPELINE: the analysis: $dir/analysis.txt" >&2

# The memories at work: strengths over time (rows: steps; columns: slots, bottom first).
stackmem-run --model "$dir/reverse-stack-$seed.akm" -i "$dir/reverse-test.tsv" --trace "$dir/stack-trace.npz" -o /dev/null
stackmem-run --model "$dir/copy-queue-$seed.akm" -i "$dir/copy-test.tsv" --trace "$dir/queue-trace.npz" -o /dev/null
attn-plot -i "$dir/stack-trace.npz:strengths" -o "$dir/stack-reverse.png" 2>/dev/null || true
attn-plot -i "$dir/queue-trace.npz:strengths" -o "$dir/queue-copy.png" 2>/dev/null || true
# The set's read weights over its slots on one membership pair, the tree's leaf weights on one
# sort (rows: steps).
stackmem-run --model "$dir/membership-set-$seed.akm" -i "$dir/membership-test.tsv" --trace "$dir/set-trace.npz" -o /dev/null
stackmem-run --model "$dir/sort-tree-$seed.akm" -i "$dir/sort-test.tsv" --trace "$dir/tree-trace.npz" -o /dev/null
attn-plot -i "$dir/set-trace.npz:weights" -o "$dir/set-membership.png" 2>/dev/null || true
attn-plot -i "$dir/tree-trace.npz:weights" -o "$dir/tree-sort.png" 2>/dev/null || true
[ -s "$dir/stack-reverse.png" ] && echo "$PIPELINE: the stack's strengths on a reversal: $dir/stack-reverse.png" >&2

awk -F'\t' -v quick="$quick" '
  NR == 1 { next }
  { rows++; k = $1 ":" $2; m = split($4, c, " "); split($5, f, " "); good[k] = 0; seeds[k] = m
    for (i = 1; i <= m; i++) { if (c[i] >= 0.95) good[k]++; if (!(k in hi) || c[i] > hi[k]) hi[k] = c[i] }
    fine[k] = f[1]; elem[k] = $6 }
  function most(k, bar) { if (hi[k] > bar) { printf "claim failed: %s test coarse %.3f > %.2f\n", k, hi[k], bar; bad++ } }
  END {
    if (rows != 50) { print "claim failed: the table has " rows " rows, not 50"; exit 1 }
    if (quick) { print "checked (smoke): 50 rows"; exit 0 }
    split("reverse:stack copy:queue copy:deque reverse:deque", need, " ")
    for (i = 1; i <= 4; i++) { k = need[i]; if (good[k] < 3) { printf "claim failed: %s test coarse >= 0.95 in %d of %d seeds, not 3\n", k, good[k], seeds[k]; bad++ } }
    most("copy:none", 0.10); most("reverse:none", 0.10); most("reverse:queue", 0.10)
    if (fine["bigram-flip:queue"] < 0.95) { printf "claim failed: queue on bigram flip test fine %.3f < 0.95\n", fine["bigram-flip:queue"]; bad++ }
    if (hi["anbn:stack-rnn"] < 0.95) { printf "claim failed: the stack RNN on a^n b^n (n <= 60) %.3f < 0.95\n", hi["anbn:stack-rnn"]; bad++ }
    k = "membership:set"; want = seeds[k] < 3 ? seeds[k] : 3
    if (good[k] < want) { printf "claim failed: %s test coarse >= 0.95 in %d of %d seeds, not %d\n", k, good[k], seeds[k], want; bad++ }
    most("membership:stack", 0.75); most("membership:queue", 0.75)
    # The sorting claim of issue 35, reported (it does not fail the run): HAM (the hard tree) gets
    # >= 0.9 of the elements right at twice the training length in every seed, and the LSTM
    # and the stack do not.
    k = "sort:tree-hard"; m = split(elem[k], h, " "); ok = m > 0
    for (i = 1; i <= m; i++) if (h[i] < 0.9) ok = 0
    m = split(elem["sort:none"] " " elem["sort:stack"], o, " ")
    for (i = 1; i <= m; i++) if (o[i] >= 0.9) ok = 0
    printf "claim (issue 35, reported) HAM sorts 128 symbols at twice the training length with >= 0.9 of the elements right, the LSTM and the stack not: %s (hard tree %s; LSTM %s; stack %s; soft tree %s)\n", ok ? "PASS" : "FAIL", elem[k], elem["sort:none"], elem["sort:stack"], elem["sort:tree"]
    if (bad) exit 1
    printf "checked: stack/reverse %d, queue/copy %d, deque/copy %d, deque/reverse %d seeds >= 0.95; LSTM %.2f and %.2f, queue/reverse %.2f <= 0.10; queue/bigram fine %.2f; stack RNN %.2f; set/membership %d of %d seeds >= 0.95, stack %.2f and queue %.2f <= 0.75\n", good["reverse:stack"], good["copy:queue"], good["copy:deque"], good["reverse:deque"], hi["copy:none"], hi["reverse:none"], hi["reverse:queue"], fine["bigram-flip:queue"], hi["anbn:stack-rnn"], good["membership:set"], seeds["membership:set"], hi["membership:stack"], hi["membership:queue"]
  }' "$dir/table.tsv" >&2
