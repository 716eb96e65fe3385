#!/usr/bin/env bash
# Tree transduction with syntactic attention (Kim, Denton, Hoang & Rush 2017, section 5.1):
# random arithmetic expressions in infix form, brackets around every compound operand, to
# their prefix form (transduce-gen --task infix-prefix), learnt by an LSTM encoder-decoder
# with simple attention (Bahdanau's) and with syntactic attention (a projective dependency
# CRF over the source per decoder step; the context holds each word's soft parent), one model
# per kind and seed:
#   pipelines/tree-transduce.sh [--quick] [--seed S] [--keep DIR]
#   DEPTH=D (default 6: train on depths 1..D, test each depth), TRAIN=N (default 20000
#   expressions), TEST=N (default 200 per depth), STEPS=N (default 3000), HIDDEN=N (default
#   64), TREE_SEEDS=N (default 3: seeds S..S+N-1)
# Test expressions are drawn with other seeds than the training set's and any that also
# occurs in it is dropped, so every one is held out. Each model decodes them greedily; a
# sequence is right when its output is the whole prefix form. Prints one row per depth:
#   depth  expressions  simple  syntactic  winner  simple_seed_S ...  syntactic_seed_S ...
# (mean sequence accuracy over the seeds, then each seed's; winner: the kind with the higher
# mean, "tie" when equal) and a last row "all". No bar is checked: the paper's claim is that
# syntactic attention helps more as the depth grows, and the table says whether it did here.
# The trees the attention recovers: for three held-out expressions of depth 3 (or the
# deepest tested), the first seed's syntactic model's arc potentials at each decoder step
# (seq2seq-translate --trace), Eisner's argmax tree of each step (attn-struct --kind tree),
# the first step's tree printed as text (each word under its head) and every step's tree
# drawn by attn-plot to tree-transduce-trees-K.png (one panel a step, a row a head, a column
# a word; the root's arcs on the diagonal), in --keep DIR, else the current folder.
# How often those trees match the expressions' structure (ATTACH=N, default 30 held-out
# expressions a depth): a table "attach" by depth (the script's end says how it is scored).
# TREE_JOBS=N: models trained at a time, one thread each (default 2, a 2-core machine's
# cores; 1: one at a time on every core). The models are the same bits either way.
# Stopping and starting again: with --keep DIR, a model whose training and accuracies are in
# DIR is not redone, and a training that was stopped goes on from its last checkpoint (every
# 500 steps, DIR/KIND-SEED.akm.ckpt, removed when the model is done), ending with the same
# model as a run never stopped. Run the same command again until the table is whole.
# --quick: depths 1..3, 600 expressions, 20 per depth, tiny models (16 units), 60 steps, one
# seed, 5 expressions a depth scored: the tables and the trees (smoke figures).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools transduce-gen seq2seq-train seq2seq-translate attn-struct attn-plot
pipeline_jobs TREE_JOBS 2
work_dir
depth=${DEPTH:-6} ntrain=${TRAIN:-20000} ntest=${TEST:-200} steps=${STEPS:-3000}
hidden=${HIDDEN:-64}
seeds=$(seq "$seed" $((seed + ${TREE_SEEDS:-3} - 1)))
if [ "$quick" = 1 ]; then
  depth=3 ntrain=600 ntest=20 steps=60 hidden=16 seeds=$seed
fi
kinds="bahdanau syntactic"
common=(--type rnn --cell lstm --embed "$hidden" --hidden "$hidden" --lr 0.005 --batch-size 32
  --clip 5 --len-max 200 --tokens words --valid-fraction 0.02 --steps "$steps"
  --eval-every "$steps" --bleu-sentences 0 -q)
# One model: trained (or resumed from its checkpoint), then its accuracy at each depth
# (DIR/KIND-SEED-D.acc); each stage skipped when its output is already there.
model() {
  local kind=$1 s=$2 m=$dir/$1-$2.akm resume=() d
  if [ ! -s "$m" ]; then
    [ -s "$m.ckpt" ] && resume=(--resume)
    echo "== $kind, seed $s: seq2seq-train ${common[*]} --attention $kind ${resume[*]}" >&2
    seq2seq-train -i "$dir/train.tsv" --seed "$s" "${common[@]}" --attention "$kind" \
      --checkpoint-every 500 "${resume[@]}" --threads "$threads" --log "$dir/$kind-$s.log.tsv" \
      -o "$m" || return 1
    rm -f "$m.ckpt"
  fi
  for d in $(seq 1 "$depth"); do
    [ -s "$dir/$kind-$s-$d.acc" ] && continue
    seq2seq-translate -m "$m" -i "$dir/test-$d.src" --len-max "$tlen" -q --threads "$threads" \
      >"$dir/$kind-$s-$d.out" || return 1
    # sequence accuracy: the share of outputs equal to the whole prefix form
    paste -d '\t' "$dir/test-$d.tgt" "$dir/$kind-$s-$d.out" |
      awk -F'\t' '{ n++; r += $1 == $2 } END { printf "%.4f\n", n ? r / n : 0 }' \
        >"$dir/$kind-$s-$d.acc.tmp"
    mv "$dir/$kind-$s-$d.acc.tmp" "$dir/$kind-$s-$d.acc"
  done
}
# the settings and model's code: a --keep DIR of another recipe is refused before anything is
# written to it
keep_recipe "seed $seed depth $depth train $ntrain test $ntest steps $steps hidden $hidden ${common[*]}" model
transduce-gen --task infix-prefix --depth-min 1 --depth-max "$depth" --count "$ntrain" \
  --seed "$seed" -o "$dir/train.tsv"
for d in $(seq 1 "$depth"); do
  transduce-gen --task infix-prefix --depth-min "$d" --depth-max "$d" --count "$ntest" \
    --seed $((seed + 1000 * d)) -o "$dir/all-$d.tsv"
  # held out: never in the training set, each once
  awk -F'\t' 'NR == FNR { seen[$1] = 1; next } !($1 in seen) && !($1 in kept) { kept[$1] = 1; print }' \
    "$dir/train.tsv" "$dir/all-$d.tsv" >"$dir/test-$d.tsv"
  cut -f1 "$dir/test-$d.tsv" >"$dir/test-$d.src"
  cut -f2 "$dir/test-$d.tsv" >"$dir/test-$d.tgt"
done
# the decoders' longest output: twice the longest prefix form tested, and <eos>
tlen=$(cat "$dir"/test-*.tgt | awk '{ if (NF > m) m = NF } END { print 2 * m + 1 }')
echo "== $ntrain training expressions of depths 1-$depth; held out: $(for d in $(seq 1 "$depth"); do printf '%s ' "$(wc -l <"$dir/test-$d.tsv")"; done)" >&2
order=()
for s in $seeds; do for kind in $kinds; do order+=("$kind $s"); done; done
run_parallel "$njobs" model "${order[@]}" ||
  { echo "$PIPELINE: a model failed (above); run the same command again to go on" >&2; exit 1; }
{
  printf 'depth\texpressions\tsimple\tsyntactic\twinner'
  for k in simple syntactic; do for s in $seeds; do printf '\t%s_seed_%s' "$k" "$s"; done; done
  echo
  for d in $(seq 1 "$depth") all; do
    if [ "$d" = all ]; then
      n=$(cat "$dir"/test-*.tgt | wc -l)
    else
      n=$(wc -l <"$dir/test-$d.tgt")
    fi
    row=() means=()
    for kind in $kinds; do
      accs=()
      for s in $seeds; do
        if [ "$d" = all ]; then  # over every held-out expression: weighted by the depths' counts
          a=$(for e in $(seq 1 "$depth"); do
            echo "$(cat "$dir/$kind-$s-$e.acc") $(wc -l <"$dir/test-$e.tgt")"
          done | awk '{ r += $1 * $2; n += $2 } END { printf "%.4f", n ? r / n : 0 }')
        else
          a=$(cat "$dir/$kind-$s-$d.acc")
        fi
        accs+=("$a")
      done
      means+=("$(printf '%s\n' "${accs[@]}" | awk '{ s += $1 } END { printf "%.4f", s / NR }')")
      row+=("${accs[@]}")
    done
    win=$(awk -v a="${means[0]}" -v b="${means[1]}" \
      'BEGIN { print (a > b ? "simple" : b > a ? "syntactic" : "tie") }')
    printf '%s\t%s\t%s\t%s\t%s' "$d" "$n" "${means[0]}" "${means[1]}" "$win"
    printf '\t%s' "${row[@]}"
    echo
  done
} >"$dir/table.tsv"
cat "$dir/table.tsv"
# The trees: three held-out expressions of depth 3 (or the deepest tested), the first seed's
# syntactic model.
first=$(echo "$seeds" | head -1)
td=$((depth < 3 ? depth : 3))
head -3 "$dir/test-$td.src" >"$dir/trees.src"
seq2seq-translate -m "$dir/syntactic-$first.akm" -i "$dir/trees.src" --len-max "$tlen" -q \
  --trace "$dir/trees.npz" --alignments "$dir/trees-align.npz" --alignment-tokens "$dir/tok" \
  >"$dir/trees.out"
for k in 0 1 2; do
  [ -s "$dir/tok/$k.cols" ] || continue
  attn-struct --kind tree --arcs "$dir/trees.npz:s$k" -o "$dir/tree-$k.npz"
  attn-struct --kind tree --arcs "$dir/trees.npz:s$k" --emit heads -o "$dir/heads-$k.txt"
  png=${keep:-.}/tree-transduce-trees-$k.png
  attn-plot -i "$dir/tree-$k.npz:argmax" --rows "$dir/tok/$k.cols" --cols "$dir/tok/$k.cols" \
    --title "argmax trees per step: $(sed -n "$((k + 1))p" "$dir/trees.src")" -o "$png"
  echo "== $(sed -n "$((k + 1))p" "$dir/trees.src")  ->  $(sed -n "$((k + 1))p" "$dir/trees.out")"
  echo "   the first decoder step's tree (Eisner's argmax of its potentials; $png draws every step's):"
  # heads (1-based, 0 the root) of the first step, the words of the source (its <eos> last)
  head -1 "$dir/heads-$k.txt" | tr -s ' \t' '\n' | grep . | paste -d ' ' - "$dir/tok/$k.cols" |
    awk '{ head[NR] = $1; word[NR] = $2; n = NR }
      function show(h, pad,   j) {
        for (j = 1; j <= n; j++) if (head[j] == h) { print pad word[j]; show(j, pad "    ") }
      }
      END { show(0, "   ") }'
done
# How often the recovered trees match the expressions' structure: the first seed's syntactic
# model on the first ATTACH (default 30) held-out expressions of each depth. The gold head of
# a number or an operator is the operator that takes it as an operand (a bracketed operand
# stands for its own operator), the outermost operator's is the root; brackets and the <eos>
# are not scored. Every decoder step's Eisner argmax tree is scored. One row a depth:
#   attach  depth  expressions  steps  all_steps  first_step  left_chain  right_chain
# the share of right heads over every step's tree, over the first step's, and of two trees
# that ignore the model (each token headed by its left neighbour; by its right one).
natt=${ATTACH:-30}
[ "$quick" = 1 ] && natt=5
{
printf 'attach\tdepth\texpressions\tsteps\tall_steps\tfirst_step\tleft_chain\tright_chain\n'
for d in $(seq 1 "$depth"); do
  head -"$natt" "$dir/test-$d.src" >"$dir/attach-$d.src"
  seq2seq-translate -m "$dir/syntactic-$first.akm" -i "$dir/attach-$d.src" --len-max "$tlen" -q \
    --trace "$dir/attach-$d.npz" >/dev/null
  nd=$(wc -l <"$dir/attach-$d.src")
  for k in $(seq 0 $((nd - 1))); do
    attn-struct --kind tree --arcs "$dir/attach-$d.npz:s$k" --emit heads -o "$dir/attach-heads.txt"
    # the expression, then its steps' heads: steps right scored first scored1 left right
    { sed -n "$((k + 1))p" "$dir/attach-$d.src"; cat "$dir/attach-heads.txt"; } | awk '
      function operand(   lp, h) {
        if (tok[pos] == "(") { lp = pos++; h = expr(); gold[lp] = h; gold[pos++] = h; return h }
        return pos++
      }
      function expr(   a, o, b) {
        a = operand(); o = pos++; b = operand(); gold[a] = o; gold[b] = o; return o
      }
      NR == 1 {
        n = split($0, tok, " "); pos = 1; gold[expr()] = 0
        for (i = 1; i <= n; i++) if (tok[i] != "(" && tok[i] != ")") {
          scored1++; lc += gold[i] == i - 1; rc += gold[i] == (i < n ? i + 1 : 0)
        }
        next
      }
      { steps++
        for (i = 1; i <= n; i++) if (tok[i] != "(" && tok[i] != ")") {
          scored++; ok = $i == gold[i]; right += ok; if (steps == 1) first += ok
        }
      }
      END { print steps + 0, right + 0, scored + 0, first + 0, scored1, lc, rc }'
  done | awk -v d="$d" '{ st += $1; r += $2; s += $3; f += $4; s1 += $5; l += $6; rr += $7; n++ }
    END { printf "attach\t%s\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\n", d, n, st, s ? r / s : 0,
          s1 ? f / s1 : 0, s1 ? l / s1 : 0, s1 ? rr / s1 : 0 }'
done
} | tee "$dir/attach.tsv"
