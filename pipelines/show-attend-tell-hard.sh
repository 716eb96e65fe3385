#!/usr/bin/env bash
# Show, Attend and Tell with stochastic hard attention (Xu et al. 2015, Section 4.1; issue 18)
# on the composed Fashion-MNIST scenes of pipelines/show-attend-tell.sh (the same data, CNN,
# decoder and recipe; see there), two models decoded greedily on the compositional test split
# (caption-run --eval):
#   soft   soft attention, lambda = 1 (the paper's soft model)
#   hard   one region sampled per word for one image in 10 (--sample-prob 0.1; the others take
#          the expectation, the paper's sample-share trick at 0.5), the locator trained by
#          REINFORCE with each step's log p(s_t) weighted by its own word's cost
#          (--reward word) against a moving-average baseline, an entropy bonus of 0.002;
#          decoding takes the argmax region; lambda = 1
# and draws the region each word of one test scene looked at (figure-hard.png).
#
# Claim checked (exit 1 when it fails): BLEU-4 of hard >= BLEU-4 of soft - 5 (the paper's hard
# model is the better on two of its three data sets).
# Measured (seed 1, 6,000 training scenes, 1,000 test scenes, 7 epochs, 2026-11-25): 616 s
# (10.3 min) on the 2-core machine at a load average of about 6-10 from other work:
#   soft   BLEU-4 55.80, nouns in their cell 0.927
#   hard   BLEU-4 42.56, nouns in their cell 0.814
# So the claim is NOT met (13.2 below soft); the run exits 1.
# Other hard settings on the same recipe (caption-train --threads 1, 2026-11-25, BLEU-4 / nouns
# in their cell; soft 55.80 / 0.927, soft at lambda 0 66.32 / 0.914, no attention 38.35 / 0.249
# from show-attend-tell.sh):
#   the paper's eq. 12 at full weight (--reward caption --reinforce 1, share 0.5)  31.23 / 0.243
#   the same with lambda 0                                                         29.67 / 0.113
#   --reinforce 0.1 (about the weight of the authors' code: it scales the per-word
#     mean cost by 1/10 and does not divide it by the batch)                       30.43 / 0.473
#   --reward word (share 0.5)                                                      34.14 / 0.394
#   --reward word --lambda 0                                                       38.08 / 0.231
#   --reward word --sample-warmup 330 (share 0 -> 0.5 over the first half)         35.71 / 0.386
#   --reward word --sample-prob 0.1 (this script's hard row)                       42.56 / 0.814
# The REINFORCE term does reach the attention (tests/unit/caption_test.cpp: its gradient
# checks, and its mean agrees with the enumerated exact gradient for --reward caption and
# to-go), but sampling half the images keeps the locator from learning or unlearns it: with
# the warm-up the attention first learned (as soft attention's does) and then fell back to
# 0.386 once half the images sampled. Only a small sampling share lets it learn (0.814), and
# then the argmax decoding differs from the mostly expected contexts of training: hard stays
# ~13 points below soft here, at the no-attention baseline's level or a little above.
# All the figures above were measured BEFORE the shared recipe gained the coordinate channels
# (caption-train --coords, pipelines/lib.sh caption_recipe; 2026-11-25). With them the soft row
# of seed 1 is BLEU-4 68.05, nouns 0.980 (the same command as show-attend-tell.sh's soft model),
# so the claim now needs hard >= 63.05; the hard locator reads the same coordinates, which may
# raise its nouns figure too. The hard row alone with them (seed 1, the same caption-train
# command as below, 343 s under a load of 4-13): BLEU-4 54.75 (was 42.56), nouns 0.986 (was
# 0.814): the locator now finds the items, but hard stays 13.3 below soft (68.05), so the
# claim is still NOT met. This pipeline was not re-run in full with them.
# With --quick (a smoke run: 256 training scenes, 1 epoch, small sizes) only the table's
# shape is checked.
#   pipelines/show-attend-tell-hard.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools image-gen caption-train caption-run
need_fmnist

caption_recipe
# The hard row's settings (see the header): each step's log p(s_t) weighted by its own word's
# cost, one image in 10 sampling.
hard_opts="--reward word --sample-prob 0.1"
work_dir
start=$(date +%s)

caption_scenes $ntrain $ntest
{
  printf 'model\timages\tbleu4\tnouns\tnoun_in_cell\tcoverage_dev\n'
  caption_model soft --lambda 1
  # shellcheck disable=SC2086
  caption_model hard --attention hard --lambda 1 $hard_opts
} | tee "$dir/table.tsv"
caption-run --model "$dir/hard.akm" -i "$dir/test.npz" --draw "$dir/figure-hard.png" -o "$dir/captions-hard.txt"
echo "$PIPELINE: the region each word of one test scene looked at: $dir/figure-hard.png" >&2
echo "$PIPELINE: $(( $(date +%s) - start )) s" >&2

awk -F'\t' -v quick="$quick" '
  NR > 1 { b[$1] = $3; rows++ }
  END {
    if (rows != 2) { print "claim failed: the table has " rows " rows, not 2"; exit 1 }
    if (quick) { print "checked (smoke): 2 rows"; exit 0 }
    if (b["hard"] < b["soft"] - 5) { printf "claim failed: BLEU-4 hard %.2f < soft %.2f - 5\n", b["hard"], b["soft"]; exit 1 }
    printf "checked: BLEU-4 hard %.2f >= soft %.2f - 5\n", b["hard"], b["soft"]
  }' "$dir/table.tsv" >&2
