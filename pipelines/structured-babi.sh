#!/usr/bin/env bash
# Usage: pipelines/structured-babi.sh [--quick] [--seed S] [--keep DIR]
# Structured attention in memory networks on bAbI 1k (Kim, Denton, Hoang & Rush 2017,
# Table 4): memn2n-train --attention softmax (MemN2N), unary (independent hops) and crf (a
# chain CRF linking the hops) on tasks 2, 3, 11, 13, 14, 15, 17 with the paper's K (3 hops
# for task 3, 2 for the others), memn2n-train's other defaults (PE TE LS RN, the authors'
# schedule), STRUCT_SEEDS seeds each (default 3: seeds S..S+2 from --seed S). memn2n-eval
# gives each model's test answer accuracy and its supporting-fact selection (hop k's argmax
# sentence against the k-th fact bAbI marks; memn2n-eval(1)).
# Best-of, as the paper: runs are ranked by their error on the training questions (the
# MemN2N paper's criterion, never the test set); the answer % is the best run's, the fact %
# the mean over the best half of the runs (the paper: the best 10 of 20).
# Prints the table, one row per task, cells "answer%/fact%", with the paper's figures beside:
#   task  K  softmax  unary  crf  paper-memn2n  paper-crf
# and checks the issue's two claims:
#   the CRF's mean fact selection over tasks 2, 11, 13, 15, 17 is >= 20 points above softmax's;
#   the CRF's answer accuracy is at most 3 points below softmax's on each task.
# This MemN2N selects the facts far better than the paper's (doc/experiments/structured-babi.md),
# so the first claim would need more than 100% on some tasks; beside the claims it reports,
# as "RESTATED PASS/FAIL" lines that leave the exit status alone, the restatement proposed for
# issue 34: the CRF's fact selection within 5 points of the paper's CRF column, or above it,
# on each of tasks 2, 11, 13, 15, 17; its answers at most 3 points below softmax's on tasks
# 2, 11 and 15. It is set for STRUCT_SEEDS=10 (the fact % the best 5 of 10, as the paper's
# best 10 of 20); with 3 seeds one seed that does not learn a task weighs on the best 2.
# The data: BABI=DIR (holding en/), default ../shared/data/babi of this tree; absent, the
# script says so and exits 77 (skipped).
# MEMN2N_ARGS: more memn2n-train options for every run (as memn2n-babi.sh), e.g. the setting
# of the authors' code (harvardnlp/struct-attn's train-qa.lua and harvardnlp/MemN2N's
# train.lua, their defaults: bag of words, no temporal encoding, no random noise, 25
# sentences of memory, 20 epochs of linear start at 0.01, the global gradient norm clipped
# at 40, 80 epochs after it):
#   MEMN2N_ARGS="--no-pe --no-te --no-rn --memory-size 25 --ls-lr 0.01 --lr 0.01
#                --epochs 80 --clip-global --clip-kind l2"
# and with PE and TE (their README's -pe -te), the same without --no-pe --no-te. The claims
# have been checked in memn2n-train's default setting and in these two
# (doc/experiments/structured-babi.md).
# STRUCT_TASKS (default "2 3 11 13 14 15 17") and STRUCT_KINDS (default "softmax unary crf"):
# a subset; a kind not run prints -/-. STRUCT_KINDS may also name crf-kim (memn2n-train's
# authors' binary CRF), whose column then follows crf's. The claims are checked only when the
# run holds tasks 2 11 13 15 17, softmax and a crf kind, for each crf kind run (crf,
# crf-kim). STRUCT_JOBS (default 1): runs at a time, one thread each when more than one (one
# run alone uses every core).
# --quick: the tiny task-1 fixture of testdata/babi, 1 seed, 5 epochs (2 of linear start);
# the table is printed, the claims are not checked (seconds).
# Exits 1 when a claim fails.
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools memn2n-train memn2n-eval
work_dir
status=0
claim() {  # claim WHAT OK
  if [ "$2" = 1 ]; then echo "$PIPELINE: PASS: $1" >&2; else echo "$PIPELINE: FAIL: $1" >&2; status=1; fi
}
columns="softmax unary crf"
kinds=${STRUCT_KINDS:-$columns}
case " $kinds " in *" crf-kim "*) columns="$columns crf-kim" ;; esac
for k in $kinds; do
  case " softmax unary crf crf-kim " in *" $k "*) ;; *) pipeline_usage_error "STRUCT_KINDS: unknown kind '$k'" ;; esac
done
pipeline_jobs STRUCT_JOBS 1
# the paper's Table 4: task K MemN2N(answer/facts) binary-CRF(answer/facts)
paper() {
  case $1 in
    2) echo "87.3/46.8 84.7/81.8" ;; 3) echo "52.6/1.4 40.5/0.1" ;;
    11) echo "97.8/38.2 97.7/80.8" ;; 13) echo "95.6/14.8 97.0/36.4" ;;
    14) echo "99.9/77.6 99.7/98.2" ;; 15) echo "100.0/59.3 100.0/89.5" ;;
    17) echo "61.1/23.9 60.6/49.6" ;; *) echo "- -" ;;
  esac
}
if [ "$quick" = 1 ]; then
  data=$top/testdata/babi tasks=1 seeds=$seed extra="--epochs 5 --ls-max-epochs 2"
else
  babi=${BABI:-$top/../shared/data/babi}
  if [ ! -d "$babi/en" ]; then
    echo "$PIPELINE: skipped: no bAbI 1k data in $babi/en (set BABI, or run pipelines/fetch-babi.sh)" >&2
    exit 77
  fi
  data=$babi/en tasks=${STRUCT_TASKS:-2 3 11 13 14 15 17} extra=""
  seeds=$(seq "$seed" $((seed + ${STRUCT_SEEDS:-3} - 1)))
fi
hops() { [ "$1" = 3 ] && echo 3 || echo 2; }
row() {  # row FILE TASK: "error facts" of the task's row of a memn2n-eval table
  awk -v t="$2" '$1 == t { print $2, $4 }' "$1"
}
one() {  # one TASK KIND SEED: train, evaluate → $dir/tTASK-KIND-sSEED.akm and its .row
  local t=$1 k=$2 s=$3 m=$dir/t$1-$2-s$3.akm te tf re
  echo "$PIPELINE: task $t, $k, seed $s ..." >&2
  nice memn2n-train -q -i "$data" --task "$t" --hops "$(hops "$t")" --attention "$k" \
    --seed "$s" --threads "$threads" $extra ${MEMN2N_ARGS:-} -o "$m" || return 1
  memn2n-eval --model "$m" -i "$data" --threads "$threads" >"$m.test.tsv" || return 1
  memn2n-eval --model "$m" -i "$data" --split train --threads "$threads" >"$m.train.tsv" || return 1
  read -r te tf < <(row "$m.test.tsv" "$t")
  read -r re _ < <(row "$m.train.tsv" "$t")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$k" "$s" "$te" "$tf" "$re" >"$m.row"
}
# the runs, STRUCT_JOBS at a time; each run's test error, test facts, train error → runs.tsv
order=()
for t in $tasks; do
  for k in $kinds; do
    for s in $seeds; do order+=("$t $k $s"); done
  done
done
run_parallel "$njobs" one "${order[@]}" || { echo "$PIPELINE: a run failed (its message is above)" >&2; exit 1; }
printf 'task\tkind\tseed\ttest_error\tfacts\ttrain_error\n' >"$dir/runs.tsv"
for t in $tasks; do
  for k in $kinds; do
    for s in $seeds; do cat "$dir/t$t-$k-s$s.akm.row" >>"$dir/runs.tsv"; done
  done
done
# best-of: the run of least training error (ties: the first seed) gives the answer %, the
# best half (rounded up) the mean fact %
cell() {  # cell TASK KIND → "answer/facts"
  awk -F'\t' -v t="$1" -v k="$2" 'NR > 1 && $1 == t && $2 == k { print $6 "\t" $3 "\t" $4 "\t" $5 }' \
    "$dir/runs.tsv" | sort -t$'\t' -k1,1g -k2,2n |
    awk -F'\t' '{ n++; err[n] = $3; f[n] = $4 }
      END { if (!n) { print "-/-"; exit }
            h = int((n + 1) / 2); s = 0; m = 0
            for (i = 1; i <= h; i++) if (f[i] != "-") { s += f[i]; m++ }
            printf "%.1f/%s\n", 100 - err[1], m ? sprintf("%.1f", s / m) : "-" }'
}
{
  printf 'task\tK'
  for k in $columns; do printf '\t%s' "$k"; done
  printf '\tpaper-memn2n\tpaper-crf\n'
  for t in $tasks; do
    printf '%s\t%s' "$t" "$(hops "$t")"
    for k in $columns; do printf '\t%s' "$(cell "$t" "$k")"; done
    read -r pm pc < <(paper "$t")
    printf '\t%s\t%s\n' "$pm" "$pc"
  done
} | tee "$dir/table.tsv"
[ "$quick" = 1 ] && exit 0
for need in 2 11 13 15 17 softmax; do
  case " $(echo $tasks $kinds) " in
    *" $need "*) ;;
    *) echo "$PIPELINE: claims not checked: $need was not run" >&2; exit 0 ;;
  esac
done
crfs=""
for k in crf crf-kim; do case " $kinds " in *" $k "*) crfs="$crfs $k" ;; esac; done
[ -n "$crfs" ] || { echo "$PIPELINE: claims not checked: no crf kind was run" >&2; exit 0; }

ans() { awk -F'\t' -v t="$1" -v c="$2" 'NR > 1 && $1 == t { split($c, a, "/"); print a[1] }' "$dir/table.tsv"; }
facts() { awk -F'\t' -v t="$1" -v c="$2" 'NR > 1 && $1 == t { split($c, a, "/"); print a[2] }' "$dir/table.tsv"; }
col() {  # col KIND: its column in table.tsv
  local c=3 k
  for k in $columns; do [ "$k" = "$1" ] && { echo $c; return; }; c=$((c + 1)); done
}
for crf in $crfs; do
  cc=$(col "$crf")
  read -r fs fc < <(for t in 2 11 13 15 17; do echo "$(facts "$t" 3) $(facts "$t" "$cc")"; done |
    awk '{ s += $1; c += $2; n++ } END { printf "%.1f %.1f\n", s / n, c / n }')
  claim "tasks 2 11 13 15 17: $crf mean fact selection $fc% >= softmax's $fs% + 20" \
    "$(awk -v a="$fc" -v b="$fs" 'BEGIN { print (a >= b + 20) ? 1 : 0 }')"
  for t in $tasks; do
    a=$(ans "$t" "$cc") b=$(ans "$t" 3)
    claim "task $t: $crf answer accuracy $a% >= softmax's $b% - 3" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN { print (a >= b - 3) ? 1 : 0 }')"
  done
done
# the restatement (the header): reported, not in the exit status
restated() {  # restated WHAT OK
  if [ "$2" = 1 ]; then echo "$PIPELINE: RESTATED PASS: $1" >&2; else echo "$PIPELINE: RESTATED FAIL: $1" >&2; fi
}
for crf in $crfs; do
  cc=$(col "$crf")
  for t in 2 11 13 15 17; do
    read -r _ pc < <(paper "$t")
    f=$(facts "$t" "$cc") want=${pc#*/}
    restated "task $t: $crf fact selection $f% >= the paper's CRF $want% - 5" \
      "$(awk -v a="$f" -v b="$want" 'BEGIN { print (a != "-" && a + 0 >= b - 5) ? 1 : 0 }')"
  done
  for t in 2 11 15; do
    a=$(ans "$t" "$cc") b=$(ans "$t" 3)
    restated "task $t: $crf answer accuracy $a% >= softmax's $b% - 3" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN { print (a >= b - 3) ? 1 : 0 }')"
  done
done
exit $status
