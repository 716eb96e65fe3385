#!/usr/bin/env bash
# labels: pipeline
# cost: 70
# snail-train and snail-run: meta-RL on bandits. The model does not depend on --threads (4
# fixed slices); a resumed run equals an uninterrupted one; the table's rows and the trace;
# the documented errors; the pipeline's --quick form.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
small="--arms 3 --pulls 5 --embed 8 --filters 4 --key-size 4 --value-size 4 --batch-size 8 --eval-episodes 50 --seed 3 -q"
expect 0 snail-train $small --steps 12 --threads 1 -o t1.akm --log t1.tsv --log-every 4 --eval-every 6
expect 0 snail-train $small --steps 12 --threads 2 -o t2.akm
CHECKS=$((CHECKS + 1))
cmp -s t1.akm t2.akm || fail "the model depends on --threads"
check_eq "$(grep -ac '^width: 8$' t1.akm) $(grep -ac '^embed:' t1.akm)" "1 0" "the stored key of --embed"
check_eq "$(head -1 t1.tsv)" "$(printf 'step\tepoch\tloss\tgrad_norm\tlr\treturn\teval_return')" "log header"
check_eq "$(cut -f1 t1.tsv | tr "\n" " ")" "step 4 6 8 12 " "log rows (every 4 steps, and the evaluation at 6)"
# Resume: 6 steps, checkpointed, continued to 12 = 12 straight.
expect 0 snail-train $small --steps 6 --threads 1 -o r.akm --log r.tsv --log-every 4 --eval-every 6 --checkpoint-every 3
expect 0 snail-train --steps 12 --threads 1 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1))
cmp -s t1.akm r.akm || fail "resumed model differs from the uninterrupted one"
check_eq "$(cat r.tsv)" "$(cat t1.tsv)" "resumed log"

# The table: every agent on the same bandits; the trace has a row per pull.
expect 0 snail-run --model t1.akm --episodes 40 --seed 5 --trace pulls.tsv
check_eq "$(cut -f1 "$T/out" | tr '\n' ' ')" "agent snail snail-greedy random greedy ucb1 thompson oracle " "agents"
check_eq "$(grep -c . pulls.tsv)" 201 "trace rows (40 episodes x 5 pulls + header)"
check_eq "$(awk -F'\t' 'NR > 1 && ($3 < 1 || $3 > 3 || $5 < 1 || $5 > 3) { bad++ } END { print bad + 0 }' pulls.tsv)" 0 "trace arms in 1..3"
cp "$T/out" a.tsv
expect 0 snail-run --model t1.akm --episodes 40 --seed 5
check_eq "$(cat "$T/out")" "$(cat a.tsv)" "the same seed gives the same table"
# Without a model: the strategies only; the oracle's mean is the best arm's expected payoff.
expect 0 snail-run --episodes 3000 --arms 2 --pulls 1 --seed 9 -o b.tsv
check_eq "$(cut -f1 b.tsv | tr '\n' ' ')" "agent random greedy ucb1 thompson oracle " "baseline agents"
# E[max(U1, U2)] = 2/3; one pull: the oracle's mean return is about 0.667 (se ~0.009).
check_eq "$(awk -F'\t' '$1 == "oracle" { print ($2 > 0.63 && $2 < 0.70) }' b.tsv)" 1 "oracle near 2/3"

# Errors.
expect_err 2 "snail-train: --arms must be from 2 to 1000" snail-train --arms 1 --steps 1 -o x.akm
no_file x.akm
expect_err 2 "snail-train: --task must be bandit or fewshot, not 'maze'" snail-train --task maze --steps 1 -o x.akm
expect_err 2 "snail-run: --arms and --pulls come from the model" snail-run --model t1.akm --arms 4
expect_err 1 "snail-run: nothing.akm" snail-run --model nothing.akm
expect 0 tensor-rand --shape 2 -o notmodel.npy
expect_err 1 "not an attnkit model file" snail-run --model notmodel.npy
expect_err 2 "snail-run: --episodes must be >= 1" snail-run --episodes 0
expect_err 2 "snail-train: --discount must be in (0, 1]" snail-train --discount 0 --steps 1 -o x.akm

# The pipeline's smoke form and its usage.
expect 0 "$ATTNKIT_SRC/pipelines/snail-bandit.sh" --quick --seed 2
grep -q "^checked (smoke)" "$T/err" || fail "snail-bandit.sh --quick: $(tail -3 "$T/err")"
expect 0 "$ATTNKIT_SRC/pipelines/snail-bandit.sh" --help
finish
