#!/usr/bin/env bash
# SNAIL on Bernoulli multi-armed bandits (Mishra et al. 2018, Table 3): meta-reinforcement
# learning, where hard choices (which arm) are trained by REINFORCE.
#
# Meta-trains a SNAIL policy on fresh 5-armed bandits of 10 pulls (arm probabilities from
# U[0, 1]) with snail-train, then plays 4,000 new bandits with it and with random, greedy,
# UCB1, Thompson sampling and the oracle on the same bandits (snail-run), and prints the
# table (agent, mean_return, se, episodes). The paper: random 5.0, Thompson 5.7, Gittins
# (Bayes-optimal) 6.6, SNAIL 6.6.
#
# Claims checked (exit 1 when one fails):
#   - SNAIL's mean return >= 6.4 (the issue's bar; the paper 6.6);
#   - SNAIL beats Thompson sampling and greedy by more than two standard errors;
#   - random is 5.0 within 0.15 (the bandits are what they should be).
# With --quick (a smoke run: 20 steps, one evaluation on 100 bandits, 500 bandits played)
# only the table's sanity is checked:
# random within 5.0 +- 0.3, oracle > Thompson > random, and that training wrote its model.
# Pictures: learning-curve.png (training and evaluation return) in --keep DIR.
# Measured results (dates, loads, earlier recipes): doc/experiments/snail-bandit.md.
#   pipelines/snail-bandit.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools snail-train snail-run

if [ "$quick" = 1 ]; then steps=20 episodes=500 every=20 evals=100; else steps=6000 episodes=4000 every=500 evals=1000; fi
work_dir

snail-train --arms 5 --pulls 10 --steps "$steps" --eval-every "$every" --eval-episodes "$evals" --seed "$seed" \
  --threads 2 --quiet -o "$dir/bandit.akm" --log "$dir/train.tsv"
snail-run --model "$dir/bandit.akm" --episodes "$episodes" --seed $((seed + 1000)) \
  -o "$dir/table.tsv"
cat "$dir/table.tsv"
learning_curve "$dir/learning-curve.png" "SNAIL on 5-armed bandits, 10 pulls" \
  -y "mean return per episode (of 10 pulls)" \
  "$dir/train.tsv:return:training batches" "$dir/train.tsv:eval_return:evaluation"

awk -F '\t' -v quick="$quick" '
  NR > 1 { m[$1] = $2; se[$1] = $3 }
  END {
    if (!("snail" in m) || !("oracle" in m)) { print "claim failed: the table is incomplete"; exit 1 }
    if (quick) {
      if (m["random"] < 4.7 || m["random"] > 5.3) { printf "claim failed: random %.3f (want 5.0 +- 0.3)\n", m["random"]; bad++ }
      if (!(m["oracle"] > m["thompson"] && m["thompson"] > m["random"])) { print "claim failed: oracle > thompson > random"; bad++ }
      if (bad) exit 1
      printf "checked (smoke): random %.2f, thompson %.2f, oracle %.2f; snail %.2f after a short run\n", m["random"], m["thompson"], m["oracle"], m["snail"]
      exit 0
    }
    if (m["snail"] < 6.4) { printf "claim failed: SNAIL %.3f < 6.4\n", m["snail"]; bad++ }
    split("thompson greedy", rivals, " ")
    for (i in rivals) {
      r = rivals[i]; d = m["snail"] - m[r]; s = sqrt(se["snail"]^2 + se[r]^2)
      if (d <= 2 * s) { printf "claim failed: SNAIL %.3f does not beat %s %.3f by 2 SE (%.3f)\n", m["snail"], r, m[r], 2 * s; bad++ }
    }
    if (m["random"] < 4.85 || m["random"] > 5.15) { printf "claim failed: random %.3f (want 5.0 +- 0.15)\n", m["random"]; bad++ }
    if (bad) exit 1
    printf "checked: SNAIL %.2f +- %.2f >= 6.4, above Thompson %.2f and greedy %.2f; random %.2f\n", m["snail"], se["snail"], m["thompson"], m["greedy"], m["random"]
  }' "$dir/table.tsv" >&2
