#!/usr/bin/env bash
# SNAIL as a few-shot learner (Mishra et al. 2018, Section 4.1) on Fashion-MNIST: 5-way
# 1-shot classification of classes held out from training, against the nearest class mean
# on the same features.
#
# Meta-trains snail-train --task fewshot on episodes of five Fashion-MNIST classes (tshirt,
# pullover, coat, shirt, bag: ids 0,2,4,6,8) of the 60,000 training pictures: each episode is
# one labelled picture of each of 5 classes and a query of one of them, with the labels 0-4
# given to the classes afresh every episode. Then snail-run tests it on episodes of the five
# classes it never saw (trouser, dress, sandal, sneaker, boot), drawn from the 10,000 test
# pictures, beside two baselines on the same episodes: the query's nearest support picture
# on the model's own embeddings (embed-nn) and on raw pixels (pixel-nn). Chance is 0.2.
#
# Claim checked (exit 1 when it fails): SNAIL's accuracy on the held-out classes >= 0.3,
# ten points above chance (0.2); the baselines are reported beside it, not claimed against.
# With --quick (a smoke run of 10 steps, one evaluation on 100 episodes, 200 episodes
# played) only the table's sanity is checked:
# every agent scored, chance 0.2, pixel-nn above chance.
# Needs Debian's dataset-fashion-mnist (make deps); without it the script says so and exits 1.
# Pictures: learning-curve.png (training and held-out accuracy) in --keep DIR.
# Measured results (dates, loads, earlier recipes): doc/experiments/snail-fewshot.md.
#   pipelines/snail-fewshot.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools snail-train snail-run
fm=/usr/share/datasets/fashion-mnist
[ -f "$fm/train-images-idx3-ubyte.gz" ] || {
  echo "snail-fewshot.sh: Fashion-MNIST is not installed ($fm; Debian's dataset-fashion-mnist, make deps installs it)" >&2
  exit 1
}

if [ "$quick" = 1 ]; then steps=10 episodes=200 every=10 evals=100; else steps=3000 episodes=2000 every=250 evals=1000; fi
work_dir

snail-train --task fewshot --ways 5 --shots 1 --classes 0,2,4,6,8 --steps "$steps" \
  --eval-every "$every" --eval-episodes "$evals" --seed "$seed" --threads 2 --quiet -o "$dir/fewshot.akm" \
  --log "$dir/train.tsv"
snail-run --model "$dir/fewshot.akm" --episodes "$episodes" --seed $((seed + 1000)) \
  -o "$dir/table.tsv"
cat "$dir/table.tsv"
learning_curve "$dir/learning-curve.png" "SNAIL, 5-way 1-shot Fashion-MNIST" \
  -y "accuracy (share of queries right)" \
  "$dir/train.tsv:accuracy:training episodes" "$dir/train.tsv:eval_accuracy:held-out classes" \
  "$dir/train.tsv:eval_embed_nn:held-out, nearest neighbour on the embeddings"

awk -F '\t' -v quick="$quick" '
  NR > 1 { m[$1] = $2 }
  END {
    if (!("snail" in m) || !("embed-nn" in m) || !("pixel-nn" in m) || !("chance" in m)) {
      print "claim failed: the table is incomplete"; exit 1
    }
    if (quick) {
      if (m["chance"] != 0.2) { print "claim failed: chance " m["chance"]; bad++ }
      if (m["pixel-nn"] <= 0.3) { printf "claim failed: pixel-nn %.3f is not above chance\n", m["pixel-nn"]; bad++ }
      if (bad) exit 1
      printf "checked (smoke): pixel-nn %.3f, chance 0.2; snail %.3f after a short run\n", m["pixel-nn"], m["snail"]
      exit 0
    }
    if (m["snail"] < 0.3) { printf "claim failed: SNAIL %.3f < 0.3 (chance 0.2)\n", m["snail"]; bad++ }
    if (bad) exit 1
    printf "checked: SNAIL %.3f >= 0.3 on held-out classes (chance 0.2); beside it embed-nn %.3f, pixel-nn %.3f\n", m["snail"], m["embed-nn"], m["pixel-nn"]
  }' "$dir/table.tsv" >&2
