# Shared set-up of the pipelines, sourced by each script:
#   . "$(dirname "$0")/lib.sh"
#   pipeline_args "$@"      # --quick, --seed S, --keep DIR, -h/--help → quick, seed, keep
#   need_tools T...         # exit 1 naming the first tool not found
#   work_dir                # dir: the --keep folder, or a temporary one removed at exit
#   keep_recipe TEXT [FUNC...]  # exit 2 when the --keep folder holds a run of other settings
#   run_parallel N FUNC JOB...      # FUNC JOB's words, N at a time; 1 when any failed
#   ntm_bits MODEL OPT...   # ntm-run --eval OPT...: bits per sequence over all lengths
#   ntm_wrong MODEL OPT...  # ntm-run --eval OPT...: each length's wrong-bit fraction, tab-separated
#   learning_curve PNG TITLE LOG:COLUMN[:LABEL]...  # a trainer's --log columns against step, as PNG
#   need_fmnist             # exit 77 (skipped) with a message when Fashion-MNIST is absent
#   caption_recipe          # the Show-Attend-Tell pipelines' sizes: ntrain ntest epochs size
#   caption_scenes NTRAIN NTEST   # image-gen scenes: $dir/train.npz|tsv, $dir/test.npz|tsv
#   caption_model NAME OPT...     # caption-train on them, caption-run --eval: NAME<TAB>its row
#   data_args "$@"          # the data scripts' [DIR] or --help → data_dir
#   apt_need PKG...         # apt-get install those not installed
#   data_current DIR SOURCE FILE...  # true when DIR holds FILE... made from SOURCE
#   bert_sizes; bert_runs TITLE FILL; bert_claims NSP MAX_SECS PEER   # the BERT pipelines' runs
#   han_models SEEDS MODELS # han-train/han-run each model and seed: $dir/runs.tsv, table.tsv
# The tools come from ATTNKIT_BIN, else build/bin of this tree, else PATH.
PIPELINE=$(basename "$0")
top=$(cd "$(dirname "$0")/.." && pwd)
PATH="${ATTNKIT_BIN:-$top/build/bin}:$PATH"

# The script's leading comment block (its documentation), without the '#', its usage first:
# "Usage: " and the block's first line naming pipelines/<script> and the indented lines that
# follow it (more usage forms, the options), then a blank line and the rest of the block.
# What was measured when, and how, is in doc/experiments/, not here.
pipeline_usage() {
  awk -v me="pipelines/$PIPELINE" '
    NR == 1 { next }
    /^#/ { sub(/^# ?/, ""); line[++n] = $0; next }
    { exit }
    END {
      for (i = 1; i <= n && !u; i++) if (index(line[i], me) && line[i] ~ /^ +pipelines\//) u = i
      if (!u) { for (i = 1; i <= n; i++) print line[i]; exit }
      e = u
      while (e < n && line[e + 1] ~ /^  +[^ ]/) e++
      sub(/^ +/, "", line[u])
      print "Usage: " line[u]
      for (i = u + 1; i <= e; i++) print line[i]
      print ""
      for (i = 1; i <= n; i++) if (i < u || i > e) print line[i]
    }' "$0"
}

# pipeline_usage_error TEXT: "<pipeline>: TEXT" and the usage on stderr, exit 2.
pipeline_usage_error() {
  echo "$PIPELINE: $1" >&2
  pipeline_usage >&2
  exit 2
}

pipeline_args() {
  quick=0 seed=1 keep=
  while [ $# -gt 0 ]; do
    case $1 in
      --quick) quick=1 ;;
      --seed) [ $# -ge 2 ] || pipeline_usage_error "--seed needs a value"; seed=$2; shift ;;
      --keep) [ -n "${2:-}" ] || pipeline_usage_error "--keep needs a directory"; keep=$2; shift ;;
      -h|--help) pipeline_usage; exit 0 ;;
      *) pipeline_usage_error "unknown argument '$1'" ;;
    esac
    shift
  done
  case $seed in ''|*[!0-9]*) echo "$PIPELINE: --seed needs a whole number" >&2; exit 2 ;; esac
}

# gnuplot, its "empty x range" (and y) warnings dropped: a curve of one point (a --quick run's
# one log row) is drawn all the same, and the warning told the user nothing to do. Any other
# message is shown whole; the status is gnuplot's.
gnuplot() {
  local err rc=0
  err=$(mktemp)
  command gnuplot "$@" 2>"$err" || rc=$?
  if grep -v -e '^Warning: empty [xyz]2\{0,1\} range \[.*\], adjusting to' "$err" | grep -q .; then
    cat "$err" >&2
  fi
  rm -f "$err"
  return $rc
}

need_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$PIPELINE: $t not found (build first)" >&2; exit 1; }
  done
}

work_dir() {
  if [ -n "$keep" ]; then
    mkdir -p "$keep"
    dir=$keep
  else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
  fi
}

# pipeline_jobs VAR DEFAULT: how many trainings run at a time, from the environment variable
# VAR (DEFAULT when unset): sets njobs, and threads for each (1 when several run side by
# side, else 0: every core for the one). A value that is not a whole number >= 1 exits 2.
pipeline_jobs() {
  local _pj_v=${!1:-$2}
  case $_pj_v in '' | *[!0-9]*) _pj_v=0 ;; esac
  njobs=$((10#$_pj_v))
  [ "$njobs" != 0 ] || { echo "$PIPELINE: $1 needs a whole number >= 1, not '${!1}'" >&2; exit 2; }
  threads=1
  [ "$njobs" != 1 ] || threads=0
}

# run_parallel N FUNC JOB...: FUNC with each JOB's words as its arguments, N at a time in the
# background; after all have ended, status 1 when any failed (each says why itself).
run_parallel() {
  # (bash's locals are seen by the functions called: these names must not hide FUNC's globals)
  local _rp_n=$1 _rp_f=$2 _rp_running=0 _rp_status=0 _rp_job
  shift 2
  for _rp_job in "$@"; do
    if [ "$_rp_running" -ge "$_rp_n" ]; then
      wait -n || _rp_status=1
      _rp_running=$((_rp_running - 1))
    fi
    # shellcheck disable=SC2086 # the job's words are FUNC's arguments
    "$_rp_f" $_rp_job &
    _rp_running=$((_rp_running + 1))
  done
  while [ "$_rp_running" -gt 0 ]; do
    wait -n || _rp_status=1
    _rp_running=$((_rp_running - 1))
  done
  return $_rp_status
}

# keep_recipe TEXT [FUNCTION...]: for a pipeline that keeps what a stopped run had made in
# --keep DIR and goes on from it: DIR/recipe holds TEXT (the settings every kept file depends
# on) and, when FUNCTIONs are named, a checksum of their code as `declare -f` prints it (the
# comments aside), so that an edit to the flags a training function passes counts as other
# settings too; a DIR made with other settings is refused (exit 2) and left as it was, so
# that no model of another recipe is reused. Call it after the FUNCTIONs are defined and
# before anything is written to DIR.
keep_recipe() {
  [ -n "$keep" ] || return 0
  local _kr_text=$1
  shift
  declare -F "$@" >/dev/null || { echo "$PIPELINE: keep_recipe: no function among: $*" >&2; exit 1; }
  [ $# = 0 ] || _kr_text="$_kr_text code $(declare -f "$@" | cksum | cut -d' ' -f1)"
  if [ -e "$dir/recipe" ] && [ "$(cat "$dir/recipe")" != "$_kr_text" ]; then
    echo "$PIPELINE: $dir holds a run of other settings; use another --keep DIR (or remove it)" >&2
    echo "  there: $(cat "$dir/recipe")" >&2
    echo "  now:   $_kr_text" >&2
    exit 2
  fi
  printf '%s\n' "$_kr_text" >"$dir/recipe"
}

ntm_bits() {
  local model=$1
  shift
  ntm-run --model "$model" --eval "$@" -q | awk -F'\t' '$1 == "all" { print $3 }'
}

ntm_wrong() {
  local model=$1
  shift
  ntm-run --model "$model" --eval "$@" -q |
    awk -F'\t' '$1 != "length" && $1 != "all" { printf "%s%s", sep, $4; sep = "\t" }'
}

# learning_curve PNG TITLE [-y YLABEL] LOG:COLUMN[:LABEL]...: the named columns of training logs (the
# TSV of --log: a header, then a row every --log-every steps) against the step column, one
# line each, drawn by gnuplot (make deps installs gnuplot-nox) into PNG; says where on
# stderr. Rows whose value is nan (e.g. validation columns between evaluations) are skipped.
learning_curve() {
  local png=$1 title=$2 plots="" spec log col label n tmp k=0 ylabel=
  shift 2
  if [ "${1:-}" = -y ]; then ylabel=$2; shift 2; fi
  # The y axis says what is plotted: -y LABEL, else the first column's name.
  [ -n "$ylabel" ] || { IFS=: read -r log ylabel label <<< "$1"; }
  command -v gnuplot >/dev/null || { echo "$PIPELINE: gnuplot is not installed (make deps): no $png" >&2; return 0; }
  tmp=$(mktemp -d)
  for spec in "$@"; do
    IFS=: read -r log col label <<< "$spec"
    [ -s "$log" ] || continue
    n=$(head -1 "$log" | tr '\t' '\n' | grep -nx -- "$col" | cut -d: -f1)
    [ -n "$n" ] || { echo "$PIPELINE: $log has no column $col" >&2; rm -rf "$tmp"; return 1; }
    k=$((k + 1))
    awk -F'\t' -v c="$n" 'NR > 1 && $c != "nan" && $c != "" { print $1 "\t" $c }' "$log" > "$tmp/$k.tsv"
    plots="$plots${plots:+, }'$tmp/$k.tsv' using 1:2 with linespoints lw 2 pt 7 ps 0.6 title '${label:-$col}'"
  done
  if [ -n "$plots" ]; then
    gnuplot -e "set terminal png size 900,500 noenhanced; set output '$png'; set title '$title'; set key top right;
      set xlabel 'step'; set ylabel '$ylabel'; set grid; plot $plots" && echo "$PIPELINE: learning curve: $png" >&2
  fi
  rm -rf "$tmp"
}

need_fmnist() {
  local f=/usr/share/datasets/fashion-mnist
  if [ ! -e "$f/train-images-idx3-ubyte.gz" ] && [ ! -e "$f/train-images-idx3-ubyte" ]; then
    echo "$PIPELINE: skipped: Fashion-MNIST is not installed in $f (make deps installs dataset-fashion-mnist)" >&2
    exit 77
  fi
}

# caption_recipe [CHANNELS]: the Show-Attend-Tell pipelines' shared recipe (--quick: the smoke
# sizes); the regions carry coordinate channels and the 56x56 scenes are padded by 4 to 64x64
# (caption-train's defaults: --pad auto, coordinates unless --no-coords). CHANNELS replaces
# the full recipe's CNN blocks (16,32,64: an 8x8 grid of regions).
caption_recipe() {
  if [ "$quick" = 1 ]; then
    ntrain=256 ntest=64 epochs=1 size="--channels 4,8,8 --embed 16 --hidden 32 --attention-size 16"
  else
    ntrain=6000 ntest=1000 epochs=7 size="--channels ${1:-16,32,64} --embed 64 --hidden 128 --attention-size 64"
  fi
}

# caption_scenes NTRAIN NTEST: image-gen's composed scenes with captions, the train split
# seeded by $seed and the compositional test split by $seed + 1, into $dir.
caption_scenes() {
  image-gen --task scenes --split train --count "$1" --seed "$seed" -q -o "$dir/train.npz" --captions "$dir/train.tsv"
  image-gen --task scenes --split test --count "$2" --seed $((seed + 1)) -q -o "$dir/test.npz" --captions "$dir/test.tsv"
}

# caption_model NAME OPTIONS...: caption-train on $dir/train.* with $size, $epochs, batch 64,
# lr 1e-3 and OPTIONS into $dir/NAME.akm (log $dir/NAME.tsv), then caption-run --eval on the
# test split; prints NAME<TAB>the evaluation row (images, bleu4, nouns, noun_in_cell,
# coverage_dev).
caption_model() {
  local name=$1
  shift
  # shellcheck disable=SC2086
  caption-train -i "$dir/train.npz" --captions "$dir/train.tsv" $size --epochs "$epochs" \
    --batch-size 64 --lr 1e-3 --seed "$seed" --log "$dir/$name.tsv" -q -o "$dir/$name.akm" "$@"
  caption-run --model "$dir/$name.akm" -i "$dir/test.npz" --captions "$dir/test.tsv" --eval \
    -o "$dir/$name.eval.tsv"
  printf '%s\t' "$name"
  tail -1 "$dir/$name.eval.tsv"
}

# data_args "$@": the data scripts' arguments, [DIR] or -h/--help (the usage, exit 0); an
# option or a second folder is a usage error (exit 2). Sets data_dir to DIR, empty when none.
data_args() {
  case ${1:-} in
    -h|--help) pipeline_usage; exit 0 ;;
    -*) pipeline_usage_error "unknown argument '$1'" ;;
  esac
  [ $# -le 1 ] || pipeline_usage_error "one folder at most"
  data_dir=${1:-}
}
# apt_need PKG...: installs those of the Debian packages that are not installed (apt-get,
# through sudo unless root; apt-get update first only when the install fails without it).
apt_need() {
  local p missing="" sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
  [ -n "$missing" ] || return 0
  echo "$PIPELINE: installing$missing" >&2
  [ "$(id -u)" = 0 ] || sudo=sudo
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing ||
    { $sudo apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing; }
}
# data_current DIR SOURCE FILE...: true, and says so, when DIR/SOURCE reads SOURCE (what the
# data were made from) and every DIR/FILE is there and not empty.
data_current() {
  local dir=$1 source=$2 f
  shift 2
  for f in "$@"; do [ -s "$dir/$f" ] || return 1; done
  [ "$(cat "$dir/SOURCE" 2>/dev/null)" = "$source" ] || return 1
  echo "$PIPELINE: $dir is up to date ($source)" >&2
}
# reviews_dir: where pipelines/data-reviews.sh (make data) puts the fine-food reviews.
reviews_dir() { echo "${ATTNKIT_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/attnkit}/fine-foods"; }
# need_reviews: sets reviews to that folder, or exits 77 (skipped) with a message when absent.
need_reviews() {
  reviews=$(reviews_dir)
  if [ ! -s "$reviews/train.tsv" ] || [ ! -s "$reviews/test.tsv" ]; then
    echo "$PIPELINE: skipped: the fine-food reviews are not installed ($reviews; run 'make data')" >&2
    exit 77
  fi
}
# austen_dir: where pipelines/data-austen.sh (make data) puts Jane Austen's novels.
austen_dir() { echo "${ATTNKIT_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/attnkit}/austen"; }
# brown_dir: where pipelines/data-brown.sh (make data) puts the Brown corpus's sentences.
brown_dir() { echo "${ATTNKIT_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/attnkit}/brown"; }
# need_brown: sets brown to that folder, or exits 77 (skipped) with a message when absent.
need_brown() {
  brown=$(brown_dir)
  if [ ! -s "$brown/sentences.txt" ]; then
    echo "$PIPELINE: skipped: the Brown corpus is not installed ($brown; run 'make data')" >&2
    exit 77
  fi
}

# bert_sizes: the BERT pipelines' model and runs, d2l's (a small model and a few steps with
# --quick): model (bert-pretrain's model options), d2l (d2l's recipe: batch and steps), long
# (the longer run's batch, steps and evaluation interval).
bert_sizes() {
  if [ "$quick" = 1 ]; then
    model="--layers 1 --hidden 32 --heads 2 --ff 64 --len-max 64 --min-freq 5"
    d2l="--batch-size 64 --steps 5" long="--batch-size 64 --steps 20 --eval-every 10"
  else
    model="--layers 2 --hidden 128 --heads 2 --ff 256 --len-max 64 --min-freq 5"
    d2l="--batch-size 512 --steps 50" long="--batch-size 128 --steps 2400 --eval-every 400"
  fi
}

# bert_runs TITLE FILL: on $dir/train.txt (documents of one sentence a line, a blank line
# between them) and $dir/valid.txt, with bert_sizes' settings: bert-pretrain with d2l's recipe
# (Adam 0.01, dropout 0.2; $dir/d2l.tsv, the vocabulary's size in V); beside it the same recipe
# in PyTorch (pipelines/bert_d2l_torch.py, independent of attnkit; $dir/d2l-torch.tsv, in full
# runs when Debian's python3-torch is there); the longer run (Adam 1e-3, dropout 0.1; timed:
# secs; $dir/train.tsv, $dir/bert.akm), its learning curve titled TITLE ($dir/curve.png), and
# bert-fill's top 3 words for each [MASK] of FILL's sentences, printed.
bert_runs() {
  local title=$1 fill=$2 start
  # shellcheck disable=SC2086
  bert-pretrain -i "$dir/train.txt" $model $d2l --lr 0.01 --dropout 0.2 --seed "$seed" \
    --log-every 1 --log "$dir/d2l.tsv" -o "$dir/d2l.akm" 2> "$dir/d2l.err" || { cat "$dir/d2l.err" >&2; exit 1; }
  V=$(sed -n 's/.*a vocabulary of \([0-9]*\) tokens.*/\1/p' "$dir/d2l.err")
  : > "$dir/d2l-torch.tsv"
  if [ "$quick" = 0 ]; then
    if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
      /usr/bin/python3 "$top/pipelines/bert_d2l_torch.py" "$dir/train.txt" --seed "$seed" \
        2> "$dir/d2l-torch.err" > "$dir/d2l-torch.tsv" || { cat "$dir/d2l-torch.err" >&2; exit 1; }
    else
      echo "$PIPELINE: python3-torch is not installed: no PyTorch peer for the d2l recipe (make bench, or apt-get install python3-torch, installs it)" >&2
    fi
  fi
  start=$(date +%s)
  # shellcheck disable=SC2086
  bert-pretrain -i "$dir/train.txt" --valid "$dir/valid.txt" $model $long --lr 0.001 \
    --dropout 0.1 --seed "$seed" --log-every 50 --log "$dir/train.tsv" -q -o "$dir/bert.akm"
  secs=$(($(date +%s) - start))
  learning_curve "$dir/curve.png" "$title: training (window means) and held-out" \
    -y "loss (nats) and accuracy" \
    "$dir/train.tsv:mlm_loss:MLM loss" "$dir/train.tsv:nsp_loss:NSP loss" \
    "$dir/train.tsv:mlm_acc:MLM accuracy" "$dir/train.tsv:nsp_acc:NSP accuracy" \
    "$dir/train.tsv:valid_mlm_acc:held-out MLM accuracy" "$dir/train.tsv:valid_nsp_acc:held-out NSP accuracy"
  bert-fill --model "$dir/bert.akm" -i "$fill" --top-k 3 -o "$dir/fill.tsv"
  awk -F'\t' 'NR == FNR { s[FNR] = $0; next } FNR > 1 { out[$1] = out[$1] sprintf("  %s %.3f", $4, $5) }
    END { for (i = 1; i in s; i++) print "bert-fill: " s[i] " ->" out[i] }' "$fill" "$dir/fill.tsv" >&2
}

# bert_claims NSP MAX_SECS PEER: bert_runs' figures ("measured: ..." lines) and claims, exit 1
# when one fails: held-out masked-word accuracy >= 2x the unigram baseline (always the training
# text's most frequent word); held-out NSP accuracy >= NSP; the masking over the run within 1
# point of 15% chosen and of 80/10/10 ([MASK]/random/kept); the longer run within MAX_SECS
# seconds (0: not a claim); and d2l's recipe's mean MLM loss against PyTorch's: PEER "within"
# (within 0.1 either way) or "below" (at most PyTorch's + 0.1; 0.6 ln|V| reported beside it).
# --quick checks only that the figures are there.
bert_claims() {
  col() { head -1 "$2" | tr '\t' '\n' | grep -nx -- "$1" | cut -d: -f1; }
  awk -F'\t' -v quick="$quick" -v V="$V" -v secs="$secs" -v nspbar="$1" -v maxsecs="$2" -v peermode="$3" \
    -v cm="$(col mlm_loss "$dir/d2l.tsv")" -v cs="$(col mask_share "$dir/train.tsv")" \
    -v cv="$(col valid_mlm_acc "$dir/train.tsv")" '
    FNR == 1 { file++; if (file < 3) next }
    file == 1 { d2l += $cm; n++ }
    file == 3 { peer[$1] = $2; next }
    file == 2 { share = $cs; mask = $(cs + 1); rnd = $(cs + 2); kept = $(cs + 3)
                vm = $(cv - 2); acc = $cv; nsp = $(cv + 1); maj = $(cv + 2) }
    END {
      if (n < 1 || V < 6 || acc == "" || acc == "nan") { print "claim failed: no log rows or no evaluation"; exit 1 }
      d2l /= n
      printf "measured: %d s; d2l recipe: mean MLM loss over %d steps %.3f, ln|V| = ln %d = %.3f\n", secs, n, d2l, V, log(V)
      printf "measured: held-out MLM accuracy %.4f (unigram baseline %.4f), NSP accuracy %.4f, MLM loss %.3f\n", acc, maj, nsp, vm
      printf "measured: masking over the run: %.4f chosen; %.4f [MASK], %.4f random, %.4f kept\n", share, mask, rnd, kept
      if (quick) { print "checked (smoke): the logs, the evaluation and the masking columns"; exit 0 }
      if ("mean_mlm_loss" in peer) {
        p = peer["mean_mlm_loss"]; gap = d2l - p
        printf "measured: PyTorch, d2l model and recipe, same text: mean MLM loss %.3f (|V| %d); the masked words unigram entropy %.3f\n", p, peer["vocab"], peer["unigram_entropy"]
        if (peermode == "within" && (gap > 0.1 || gap < -0.1)) { printf "claim failed: d2l recipe MLM loss %.3f not within 0.1 of PyTorch %.3f\n", d2l, p; bad++ }
        else if (peermode == "below" && gap > 0.1) { printf "claim failed: d2l recipe MLM loss %.3f > PyTorch %.3f + 0.1\n", d2l, p; bad++ }
        else if (peermode == "within") printf "checked: d2l recipe MLM loss %.3f within 0.1 of PyTorch %.3f\n", d2l, p
        else printf "checked: d2l recipe MLM loss %.3f <= PyTorch %.3f + 0.1\n", d2l, p
      } else print "not checked: the d2l recipe against PyTorch (no python3-torch: make bench or apt-get install python3-torch)"
      if (peermode == "below" && d2l > 0.6 * log(V))
        printf "not met (reported, not a claim): d2l recipe MLM loss %.3f > 0.6 ln|V| = %.3f\n", d2l, 0.6 * log(V)
      if (acc < 2 * maj) { printf "claim failed: held-out MLM accuracy %.4f < 2 x unigram baseline %.4f\n", acc, maj; bad++ }
      if (nsp < nspbar) { printf "claim failed: held-out NSP accuracy %.4f < %s\n", nsp, nspbar; bad++ }
      if (share < 0.14 || share > 0.16 || mask < 0.79 || mask > 0.81 || rnd < 0.09 || rnd > 0.11 || kept < 0.09 || kept > 0.11) {
        print "claim failed: masking statistics outside 15% +-1 and 80/10/10 +-1"; bad++ }
      if (maxsecs > 0 && secs > maxsecs) { printf "claim failed: %d s > %d s\n", secs, maxsecs; bad++ }
      if (bad) exit 1
      printf "checked: MLM accuracy %.4f >= 2 x unigram baseline %.4f; NSP %.4f >= %s; masking within 1 point", acc, maj, nsp, nspbar
      if (maxsecs > 0) printf "; %d s <= %d", secs, maxsecs
      printf "\n"
    }' "$dir/d2l.tsv" "$dir/train.tsv" "$dir/d2l-torch.tsv" >&2
}

# han_models SEEDS MODELS: for each seed and model, han-train on $dir/train.tsv (options
# $common; by architecture: ngram-lr $ngram_opts, mean $mean_opts, han and flat $rnn_opts) and
# han-run --eval on $dir/test.tsv. A model is han, flat, mean or ngram-lr, or one of those with
# "-w2v": started from the vectors $dir/w2v-SEED.vec. Writes $dir/runs.tsv (model, seed, test
# accuracy; each row also on stderr) and $dir/table.tsv, also printed: the majority class, then
# each model's runs, mean and sd, in MODELS' order.
han_models() {
  local seeds=$1 models=$2 s model arch vec opts acc majority
  printf 'model\tseed\ttest_accuracy\n' > "$dir/runs.tsv"
  for s in $seeds; do
    for model in $models; do
      arch=${model%-w2v} vec=
      [ "$model" = "$arch" ] || vec="--embeddings $dir/w2v-$s.vec"
      case $arch in
        ngram-lr) opts=$ngram_opts ;;
        mean) opts=$mean_opts ;;
        *) opts=$rnn_opts ;;
      esac
      # shellcheck disable=SC2086
      han-train $common --arch "$arch" $opts $vec --seed "$s" --log "$dir/$model-$s.tsv" -o "$dir/$model-$s.akm"
      acc=$(han-run -m "$dir/$model-$s.akm" -i "$dir/test.tsv" --eval | awk -F'\t' '$1 == "accuracy" { print $2 }')
      printf '%s\t%s\t%s\n' "$model" "$s" "$acc" | tee -a "$dir/runs.tsv" >&2
    done
  done
  majority=$(cut -f1 "$dir/test.tsv" | sort | uniq -c | sort -rn | awk 'NR == 1 { m = $1 } { n += $1 } END { printf "%.4f", m / n }')
  awk -F'\t' -v maj="$majority" -v models="$models" 'NR > 1 { n[$1]++; s[$1] += $3; q[$1] += $3 * $3 }
    END {
      print "model\truns\tmean\tsd"
      printf "majority\t1\t%.4f\t0\n", maj
      k = split(models, order, " ")
      for (i = 1; i <= k; i++) { m = order[i]; mu = s[m] / n[m]; v = n[m] > 1 ? (q[m] - n[m] * mu * mu) / (n[m] - 1) : 0
        printf "%s\t%d\t%.4f\t%.4f\n", m, n[m], mu, sqrt(v > 0 ? v : 0) }
    }' "$dir/runs.tsv" | tee "$dir/table.tsv"
}
