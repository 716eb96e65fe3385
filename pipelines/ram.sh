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
# With --quick (a smoke run: 300 canvases, 1 epoch) only the plumbing is checked: every
# error is in [0, 1], the trace and pictures are written.
# Measured results (dates, loads, earlier recipes): doc/experiments/ram.md.
#   pipelines/ram.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools image-gen ram-train ram-run
need_fmnist

if [ "$quick" = 1 ]; then
  ntrain=300 nvalid=100 ntest=100 epochs=1 tepochs=1 samples=2
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
  -y "validation error (share of images misclassified)" \
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
