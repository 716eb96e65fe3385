#!/usr/bin/env bash
# The recurrent attention model (Mnih et al. 2014, "Recurrent Models of Visual Attention") on
# image-gen's 60 x 60 Fashion-MNIST canvases: one item at a random place (translated), and the
# same with 4 pieces of 8 x 8 clutter (cluttered).
#
# Trains with ram-train (glimpses of 12 x 12 pixels, RNN core 256, --loc-std 0.1, 6 glimpses)
# and evaluates with ram-run --eval --samples 5 on fresh test canvases:
#   - cluttered: RAM with learned glimpse locations, and the same model with
#     --random-glimpses (locations uniform: the paper's ablation); 2 patches a glimpse (12 and
#     24 pixels): with a third of 48 pixels a glimpse sees most of the canvas coarsely, and
#     random locations lost only 0.2 points against learned ones (41.7% vs 41.5%, 8 epochs);
#   - translated: RAM with 3 patches a glimpse (12, 24, 48 pixels), beside a fully connected
#     2 x 64 network on the whole canvas and a small convnet, both from img-train
#     (--arch mlp|cnn, evaluated by img-run --eval);
#   - plain: the untranslated 28 x 28 items, glimpses of 2 patches of 8 and 16 pixels (the
#     paper's 28 x 28 figure; reported, no claim: no published RAM result on Fashion-MNIST).
# Fewer training images than the paper (20,000 canvases or items of the 60,000, 8 epochs;
# translated RAM and the 2 x 64 network 16 epochs, the convnet 8) to bound the run's time.
# Prints the table (task, model, samples, test_error) and draws the glimpse paths
# (translated.png, cluttered.png, plain.png) and the validation curves into --keep DIR.
#
# Claims checked (exit 1 when one fails):
#   - cluttered: learned glimpses beat random ones by >= 5 points of test error (the issue's
#     bar; the paper, on MNIST: 4.04% against 14.4%);
#   - translated: RAM with 6 glimpses beats the 2 x 64 fully connected network (the paper
#     1.22% against 6.42%) and comes within 1 point of the small convnet.
# Without img-train the translated baselines cannot be measured: the full run then fails
# those claims, naming the missing tool; --quick reports them as not measured.
# With --quick (a smoke run: 1,000 canvases, 1 epoch) only the plumbing is checked: every
# error is in [0, 1], the trace and pictures are written.
# Measured (full run, seed 1, --threads 2, 2026-11-25; test errors on 2,000 fresh canvases
# or test items, 1 / 5 location samples):
#   - cluttered, 8 epochs: learned 50.90% / 43.35%, random 57.70% / 43.55%: the 5-point
#     claim is MET at 1 sample (6.8 points; the check uses 1 sample, the same 6 glimpses a
#     decision) but not at 5, where averaging random locations is an ensemble of 30 glimpses;
#   - translated: RAM (16 epochs) 29.85% / 27.95%, the 2 x 64 network (16 epochs) 35.05%:
#     RAM beats it by 5.2 points (MET); the convnet (8 epochs) 19.35%: RAM is 10.5 points
#     above it, the "within 1 point" claim FAILS (the script exits 1). At 8 epochs RAM had
#     36.15% against the 2 x 64 network's 35.9% (8 epochs): the epochs were the lever; RAM's
#     validation error was still falling at epoch 16 (36.5% at 12, 29.2% at 16), so more
#     epochs would narrow the gap, but a 10-point gap is not closed within this budget;
#   - plain 28 x 28, 8 epochs: 28.30% / 26.15% (a reference figure; coarse 8 x 8 glimpses
#     of items whose classes differ in texture as much as in shape).
# Tried against the translated gap (2026-11-26, seed 1, the pipeline's data, 16 epochs,
# ram-train alone, 1 location sample at test): LSTM core 30.75%; glimpses of 16 pixels (16,
# 32, 64) 31.45%; lr 3e-3 with a cosine schedule 30.85%; all three together 29.60% (the
# recipe: 29.85%). In every run the training reward (the share of right answers on the
# training batches, with sampled locations) ended at 0.69-0.72, the validation accuracy's
# level: the model underfits rather than overfits, and these runs flattened out near 30% from
# epoch 13 on.
# Why (2026-11-26, seed 1, same data; validation error after 6 epochs unless said, the
# recipe 38.8% there; "distance" = the glimpse centre's distance from the item's centre on
# the 2,000 test canvases, from ram-run --trace and image-gen's boxes):
#   - the "what" pathway is NOT the limit: the same glimpse network and core trained by
#     cross-entropy alone with all 6 glimpses placed on the item's centre (a throw-away
#     diagnostic program driving Ram::run's fixed locations, not kept) reach 17.9% validation
#     error in 4 epochs, below the convnet's 19.35% test error; jittered by up to +-9 pixels,
#     25.2% in 4 epochs;
#   - the "where" pathway is: the learned glimpses move AWAY from the item. The recipe's
#     16-epoch model (29.85%) has median distances of 25, 15, 18, 22, 27, 30 pixels for
#     glimpses 1-6 (glimpse 1 uniform; 1-6% of them within 5 pixels), and the later glimpses
#     drift towards the canvas edges (19% clipped at the border by glimpse 6). Every variant
#     below drifts the same way;
#   - REINFORCE does worse than not learning where to look: with the locator frozen near its
#     initialisation (its REINFORCE term scaled by 1e-12, a temporary build) the validation
#     error after 6 epochs is 36.0% (test 35.65%; median distances 25, 14, 15, 16, 17, 18
#     pixels) against the learned policy's 38.8%; random locations (--random-glimpses)
#     40.5% (test 39.85%): learning moves the glimpses from a near-fixed path to a worse one.
#     At 16 epochs the frozen locator gives 26.90% test error (best validation 27.6%),
#     3 points better than the learned recipe's 29.85%, its glimpses 14-17 pixels from the
#     item (the canvas centre's distance: it looks near the centre, not at the item); a
#     locator whose output is scaled by 0.1 (tanh(0.1 Linear(h)): a 10x slower policy,
#     temporary build) stops the drift (13-16 pixels) but does not localise either: 34.6%
#     validation at 6 epochs, 29.65% test at 16;
#   - no policy lever fixed the drift (6 epochs, validation): --loc-std 0.05 41.5%, 0.2
#     38.4%; the first glimpse at the centre instead of uniform 39.1%; a 128-unit ReLU layer
#     in the location network 39.6%; batch 256 with lr 2e-3 44.2%; the paper's full hybrid
#     loss (REINFORCE's gradient also into the core and glimpse network) 67.8%, with its term
#     scaled by 0.02 40.5% (36.6% with the centred first glimpse); LSTM core 34.6%. (These
#     options were temporary builds, not kept; their distances all grow with the glimpse.)
#   - with glimpses on the item, a conv glimpse network is no better than the fc one (18.9%
#     against 17.9% after 4 epochs, the same diagnostic);
#   - the convolutional glimpse network (ram-train --glimpse-net conv, 16,32 channels; kept)
#     helps a little at 4x the training time: 36.0% validation, 33.95% test after 6 epochs
#     (fc 38.8% validation), still with drifting glimpses (median 25, 15, 20, 29, 34, 35
#     pixels); its 16-epoch run (about 30 min at a load of 10) did not fit the 20-minute
#     experiment budget.
# So the 10-point gap is the location policy's: REINFORCE with a 0/1 reward on the final
# answer does not learn, in 5,000 steps, to bring the glimpses to an item the glimpse network
# could classify at the convnet's level.
# The policy's levers (2026-11-26, seed 1, the same data; ram-train options kept: --loc-lr,
# --loc-samples M with a leave-one-out baseline, --reward prob, --normalize-advantage, and
# the log's saturated = share of |mu| > 0.9 and loc_norm = the locator's weight norm;
# "v6 / t6" = best validation / test error (1 sample) after 6 epochs, the recipe 38.8 / 39.25;
# distances as above, glimpses 2-6):
#   - why the policy drifts (measured): at the recipe's 6-epoch model the locator's REINFORCE
#     gradient is noise: over 60 batches of 64 its mean has 0.095 of the batches' RMS norm
#     (pure noise would give 1/sqrt(60) = 0.13; the action network's cross-entropy gradient
#     0.52), and its RMS norm (8.2) is most of the step's (about 10: every step is clipped
#     at --clip 5). Adam turns it into a random walk of the locator's weights: their norm
#     grows from 0.84 as the square root of the steps (0.93, 1.11, 1.38 at steps 500, 2000,
#     5000 of the 16-epoch --clip 0 run below; a displacement of about 0.7 lr sqrt(steps) a
#     weight), and as the core's ReLU
#     state also grows, tanh saturates: 5-19% of the means beyond +-0.9, the glimpses at the
#     border. --reward prob raises the ratio to 0.17, M = 4 paths to 0.17, both 0.12 (a
#     throw-away diagnostic program; 64 paths a batch each time);
#   - --loc-lr 1e-4: no drift (saturated 0.1%, norm 0.84 throughout) but no localisation
#     either (13-16 px: the canvas centre's distance): v6 / t6 38.7 / 36.05; with --reward
#     prob 38.0 / 37.40; with --clip 0 38.8 / 37.85; --loc-samples 2 --reward prob
#     --normalize-advantage, batch 32, 3 epochs (the same steps and paths) 38.0 / 39.75;
#   - the locator frozen as an option (--loc-lr 1e-9, clip 5): 40.6 / 39.2; with --clip 0 (so the
#     REINFORCE gradient's noise no longer shrinks the classifier's clipped step, as in the
#     temporary build above) 34.3 / 35.15; at 16 epochs 27.90% test (best validation 29.1%)
#     against the recipe with --clip 0, 31.05% (29.4%; its glimpses drift as before: 16, 22,
#     24, 27, 29 px, 19% clipped by glimpse 6). These 6-epoch figures of near-identical
#     locators spread over 35-40%: differences under about 3 points are run-to-run noise;
#   - --loc-samples 4 --reward prob --clip 0 (4 times the paths and time a step): the
#     drift stops at the full lr (saturated 0.02%, 13-16 px) but the glimpses still do not
#     go to the item; v6 / t6 33.5 / 35.30, frozen the same way 34.0 / 33.80, with --loc-lr 3e-4
#     33.2 / 36.75 (13-14 px): M's gain is the classifier's (4 paths an image), not the
#     policy's. Its 16-epoch run (4 times the recipe's time) did not fit this session.
# The pipeline's recipe is unchanged: no lever gives a learned policy that localises.
# Best figure reached: 26.90% test (the frozen locator, no learned attention; 27.90% with
# --loc-lr 1e-9 --clip 0), 7.5 points above the convnet; the best learned policy is the
# recipe's 29.85%. Closing the rest needs a policy that brings the glimpses to the item
# (17.9% with every glimpse on it): our reading is that the score-function gradient is too
# weak at this scale (5,000 steps; the paper trains for millions), and what would likely
# close it is a lower-variance location signal than one reward per path, e.g. a
# differentiable (reparameterised, or soft-attention-pretrained) locator, or a supervised
# warm start of the locator towards the item's box, neither of which is RAM as the paper
# trains it.
# Duration: 2085 s of training and evaluation (35 min; the convnet alone about 23 min),
# 49 min wall in all with image-gen, on the 2-core machine at a load average of 12-17 from
# other work (nice 10; 11.3 min of CPU): over the 30 minutes asked, because of the load.
# The earlier figures (4 training slices a step, before ram-train used 2): cluttered 50.35%
# vs 57.55%, translated (8 epochs) 36.15%.
#   pipelines/ram.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools image-gen ram-train ram-run
need_fmnist

if [ "$quick" = 1 ]; then
  ntrain=1000 nvalid=200 ntest=200 epochs=1 tepochs=1 samples=2
else
  ntrain=20000 nvalid=1000 ntest=2000 epochs=8 tepochs=16 samples=5
fi
work_dir
have_img=0
command -v img-train >/dev/null && command -v img-run >/dev/null && have_img=1

gen() {  # gen TASK SPLIT COUNT SEED OUT [OPTION...]
  local task=$1 split=$2 count=$3 s=$4 out=$5
  shift 5
  image-gen --task "$task" --split "$split" --canvas 60 --count "$count" --seed "$s" "$@" -o "$out"
}
for task in translated cluttered; do
  extra=()
  [ "$task" = cluttered ] && extra=(--clutter 4)
  gen "$task" train "$ntrain" "$seed" "$dir/$task-train.npz" "${extra[@]}"
  gen "$task" train "$nvalid" $((seed + 500)) "$dir/$task-valid.npz" "${extra[@]}"
  gen "$task" test "$ntest" $((seed + 1000)) "$dir/$task-test.npz" "${extra[@]}"
done
# The untranslated 28 x 28 items themselves (a seeded sample of each split).
image-gen --task plain --split train --sample --count "$ntrain" --seed "$seed" -q -o "$dir/plain-train.npz"
image-gen --task plain --split train --sample --count "$nvalid" --seed $((seed + 500)) -q -o "$dir/plain-valid.npz"
image-gen --task plain --split test --sample --count "$ntest" --seed $((seed + 1000)) -q -o "$dir/plain-test.npz"

ram() {  # ram NAME TASK EPOCHS OPTION...: trains, evaluates, appends a table row
  local name=$1 task=$2 ep=$3
  shift 3
  ram-train -i "$dir/$task-train.npz" --valid "$dir/$task-valid.npz" --epochs "$ep" \
    --glimpses 6 --seed "$seed" --threads 2 --quiet "$@" -o "$dir/$name.akm" --log "$dir/$name.tsv"
  for m in 1 "$samples"; do
    ram-run --model "$dir/$name.akm" -i "$dir/$task-test.npz" --eval --samples "$m" \
      --seed $((seed + 7)) --threads 2 |
      awk -F'\t' -v t="$task" -v m="$name" 'NR == 2 { print t "\t" m "\t" $2 "\t" $3 }' >> "$dir/table.tsv"
  done
}
echo -e "task\tmodel\tsamples\ttest_error" > "$dir/table.tsv"
start=$(date +%s)
ram ram-learned cluttered "$epochs" --glimpse-scales 2
ram ram-random cluttered "$epochs" --glimpse-scales 2 --random-glimpses
ram ram translated "$tepochs"
ram ram-plain plain "$epochs" --glimpse-size 8 --glimpse-scales 2
if [ "$have_img" = 1 ]; then
  for arch in mlp cnn; do
    ep=$tepochs
    [ "$arch" = cnn ] && ep=$epochs
    img-train --arch "$arch" -i "$dir/translated-train.npz" --valid "$dir/translated-valid.npz" \
      --epochs "$ep" --seed "$seed" --threads 2 --quiet -o "$dir/$arch.akm"
    img-run --model "$dir/$arch.akm" -i "$dir/translated-test.npz" --eval |
      awk -F'\t' -v m="$arch" '$1 == "all" { printf "translated\t%s\t1\t%.4f\n", m, 1 - $4 }' >> "$dir/table.tsv"
  done
else
  echo "$PIPELINE: img-train/img-run not found (the vision branch's): the translated baselines are not measured" >&2
fi
echo "$PIPELINE: training and evaluation took $(( $(date +%s) - start )) s" >&2
cat "$dir/table.tsv"

for task in translated cluttered plain; do
  m=ram
  [ "$task" = cluttered ] && m=ram-learned
  [ "$task" = plain ] && m=ram-plain
  ram-run --model "$dir/$m.akm" -i "$dir/$task-test.npz" --seed $((seed + 7)) --trace "$dir/$task-trace.tsv" \
    --draw "$dir/$task.png" --draw-count 4 -o /dev/null
done
learning_curve "$dir/learning-curve.png" "RAM on 60 x 60 Fashion-MNIST canvases" \
  "$dir/ram-learned.tsv:valid_error:cluttered, learned" "$dir/ram-random.tsv:valid_error:cluttered, random" \
  "$dir/ram.tsv:valid_error:translated" "$dir/ram-plain.tsv:valid_error:plain 28 x 28"

awk -F '\t' -v quick="$quick" -v have_img="$have_img" '
  NR > 1 && $3 == 1 { e[$1 " " $2] = $4; n++ }
  NR > 1 { all[$1 " " $2 " " $3] = $4 }
  END {
    for (k in all) if (all[k] < 0 || all[k] > 1) { printf "claim failed: %s error %s outside [0, 1]\n", k, all[k]; bad++ }
    if (quick) {
      if (n < 4) { print "claim failed: the table is incomplete"; bad++ }
      if (bad) exit 1
      printf "checked (smoke): cluttered learned %.3f, random %.3f; translated %.3f; plain 28 x 28 %.3f%s\n", e["cluttered ram-learned"], e["cluttered ram-random"], e["translated ram"], e["plain ram-plain"], have_img ? "" : " (img-train not found: baselines not measured)"
      exit 0
    }
    gap = e["cluttered ram-random"] - e["cluttered ram-learned"]
    if (gap < 0.05) { printf "claim failed: cluttered learned %.4f vs random %.4f: gap %.1f points < 5\n", e["cluttered ram-learned"], e["cluttered ram-random"], 100 * gap; bad++ }
    if (!have_img) { print "claim failed: img-train not found: RAM against the 2 x 64 network and the convnet not measured"; bad++ }
    else {
      if (!(e["translated ram"] < e["translated mlp"])) { printf "claim failed: translated RAM %.4f does not beat the 2 x 64 network %.4f\n", e["translated ram"], e["translated mlp"]; bad++ }
      if (e["translated ram"] > e["translated cnn"] + 0.01) { printf "claim failed: translated RAM %.4f is more than 1 point above the convnet %.4f\n", e["translated ram"], e["translated cnn"]; bad++ }
    }
    if (bad) exit 1
    printf "checked: cluttered learned %.4f vs random %.4f (%.1f points); translated RAM %.4f, 2 x 64 %.4f, convnet %.4f; plain 28 x 28 RAM %.4f (no claim)\n", e["cluttered ram-learned"], e["cluttered ram-random"], 100 * gap, e["translated ram"], e["translated mlp"], e["translated cnn"], e["plain ram-plain"]
  }' "$dir/table.tsv" >&2
