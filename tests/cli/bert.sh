#!/usr/bin/env bash
# BERT: bert-pretrain (the same model for any --threads, exact resume, the log's columns and
# masking statistics), bert-fill (probabilities, order, determinism), bert-embed (shapes, .npz
# and .npy) and every documented error, on a tiny model trained for a few steps.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

# 60 documents of 4 sentences from a small grammar (an LCG, the same everywhere).
awk 'BEGIN { s = 7; split("mary john sandra daniel", who); split("kitchen garden office hallway bedroom", where)
  split("went moved travelled journeyed", verb)
  for (d = 1; d <= 60; d++) { if (d > 1) print ""
    for (k = 1; k <= 4; k++) { s = (s * 69069 + 1) % 4294967296; a = who[int(s / 65536) % 4 + 1]
      s = (s * 69069 + 1) % 4294967296; b = where[int(s / 65536) % 5 + 1]
      s = (s * 69069 + 1) % 4294967296; v = verb[int(s / 65536) % 4 + 1]
      if (k == 4) print "Where is " toupper(substr(a, 1, 1)) substr(a, 2) "? " b
      else print toupper(substr(a, 1, 1)) substr(a, 2) " " v " to the " b "." } } }' > text.txt
head -8 text.txt > valid.txt; printf '\n' >> valid.txt; sed -n 11,18p text.txt >> valid.txt
small=(-i text.txt --valid valid.txt --layers 1 --hidden 16 --heads 2 --ff 32 --len-max 24
       --batch-size 32 --lr 0.01 --min-freq 1 --seed 3 --log-every 2 --eval-every 6)
expect 0 bert-pretrain "${small[@]}" -q --steps 12 --threads 1 -o m1.akm --log m1.tsv
expect 0 bert-pretrain "${small[@]}" -q --steps 12 --threads 2 -o m2.akm
CHECKS=$((CHECKS + 1)); cmp -s m1.akm m2.akm || fail "the model depends on --threads"
# SIGTERM within a step (ATTNKIT_FAULT=slice:N, core/fault.h: the run sends itself SIGTERM as
# its N-th slice pass starts; 8 passes a step, 4 slices forward and back): pass 61 is step
# 8's fifth, so the run drops step 8 and leaves the checkpoint of step 7 (exit 130, no model).
expect_err 130 "interrupted at step 7;" env ATTNKIT_FAULT=slice:61 bert-pretrain "${small[@]}" -q --steps 12 --threads 1 -o r.akm --log r.tsv --checkpoint-every 3
CHECKS=$((CHECKS + 1)); [ -s r.akm.ckpt ] || fail "no checkpoint after SIGTERM"
no_file r.akm
expect 0 bert-pretrain -i text.txt --valid valid.txt --steps 12 --threads 2 -q -o r.akm --log r.tsv --resume
CHECKS=$((CHECKS + 1)); cmp -s m1.akm r.akm || fail "resumed model differs"
check_eq "$(cat r.tsv)" "$(cat m1.tsv)" "resumed log"
check_eq "$(head -1 m1.tsv | cut -f6-)" "$(printf 'mlm_loss\tnsp_loss\tmlm_acc\tnsp_acc\tmask_share\tmask_as_mask\tmask_as_random\tmask_as_kept\tvalid_mlm_loss\tvalid_nsp_loss\tvalid_mlm_acc\tvalid_nsp_acc\tvalid_majority')" "log columns"
# The last row: masking over 12 steps of 32 pairs (~3,700 words): 15% within 2 points, the
# split 80/10/10 within 5; accuracies are shares, losses positive.
check_eq "$(awk -F'\t' 'END { ok = $10 > 0.13 && $10 < 0.17 && $11 > 0.75 && $11 < 0.85 && $12 > 0.05 && $12 < 0.15 && $13 > 0.05 && $13 < 0.15
  ok = ok && $11 + $12 + $13 > 0.9999 && $11 + $12 + $13 < 1.0001 && $6 > 0 && $7 > 0 && $8 >= 0 && $8 <= 1 && $9 >= 0 && $9 <= 1
  ok = ok && $16 >= 0 && $16 <= 1 && $17 >= 0 && $17 <= 1 && $18 > 0 && $18 < 1; print ok + 0 }' m1.tsv)" 1 "masking statistics and metrics in range"
# Without -q: the pairs, steps and vocabulary size (the text's words, 4 reserved, [MASK]).
words=$(tr 'A-Z' 'a-z' < text.txt | sed 's/\([.?]\)/ \1/g' | tr ' ' '\n' | grep -v '^$' | sort -u | wc -l)
expect 0 bert-pretrain "${small[@]}" --steps 1 -o v.akm
grep -qF "bert-pretrain: 180 sentence pairs an epoch (6 steps), a vocabulary of $((words + 5)) tokens" "$T/err" || fail "no summary line: $(head -3 "$T/err")"
# Its progress line fits 80 columns (it was 400 wide with every metric).
check_eq "$(grep -F 'bert-pretrain: step ' "$T/err" | awk 'length($0) > 80' | wc -l)" 0 "progress lines over 80 columns"
grep -qF 'bert-pretrain: step 1/1 (100%)' "$T/err" || fail "no progress line: $(head -3 "$T/err")"

# bert-fill: a header, K rows a [MASK], probabilities falling and summing to at most 1.
printf 'Mary went to the [MASK].\n\n[mask] is in the garden . where is [MASK] ?\n' > fill.txt
expect 0 bert-fill --model m1.akm -i fill.txt --top-k 4
cp "$T/out" fill1.tsv
check_eq "$(head -1 fill1.tsv)" "$(printf 'line\tposition\trank\tword\tprobability')" "fill header"
check_eq "$(awk -F'\t' 'NR > 1 { print $1 "/" $2 }' fill1.tsv | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "1/5:4 3/1:4 3/9:4 " "4 words for each [MASK], by line and position"
check_eq "$(awk -F'\t' 'NR > 1 { k = $1 "/" $2; s[k] += $5; if ($3 > 1 && $5 > last + 1e-9) bad++; last = $5 }
  END { for (k in s) if (s[k] > 1.000001 || s[k] <= 0) bad++; print bad + 0 }' fill1.tsv)" 0 "probabilities fall and sum to at most 1"
check_eq "$(awk -F'\t' 'NR > 1 && ($4 ~ /^</ || $4 == "[mask]") { bad++ } END { print bad + 0 }' fill1.tsv)" 0 "no reserved token listed"
expect 0 bert-fill --model m1.akm --top-k 4 -o fill2.tsv --threads 1 < fill.txt
CHECKS=$((CHECKS + 1)); cmp -s fill1.tsv fill2.tsv || fail "bert-fill is not deterministic"
expect 0 bert-fill --model m1.akm -i fill.txt --top-k 100
check_eq "$(awk -F'\t' 'NR > 1 && $1 == 1' "$T/out" | wc -l)" "$words" "every ordinary word listed when K exceeds them"

# bert-embed: token embeddings [words + 2, hidden] a line; [CLS] vectors [lines, hidden].
printf 'Mary went to the kitchen.\nwhere is john ?\n' > emb.txt
expect 0 bert-embed --model m1.akm -i emb.txt -o e.npz
expect 0 tensor-info e.npz:line1
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" 8x16 "line 1: [CLS] 6 words [SEP]"
expect 0 tensor-info e.npz:line2
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" 6x16 "line 2"
expect 0 bert-embed --model m1.akm -i emb.txt --cls -o c.npy
expect 0 tensor-info c.npy
check_eq "$(awk -F'\t' 'NR == 2 { print $4 }' "$T/out")" 2x16 "[CLS] vectors"
expect 0 bert-embed --model m1.akm -i emb.txt --cls -o c.txt
expect 0 tensor-convert e.npz:line2 -o l2.txt
check_eq "$(head -1 l2.txt)" "$(sed -n 2p c.txt)" "[CLS] row = the token embeddings' first row"
expect 0 bert-embed --model m1.akm -i emb.txt -o e2.npz
CHECKS=$((CHECKS + 1)); cmp -s e.npz e2.npz || fail "bert-embed is not deterministic"

# --max-size: the most frequent words only (6 of them with the reserved four), [MASK] one more.
expect 0 bert-pretrain "${small[@]}" --steps 1 --max-size 10 -o cap.akm
grep -q "a vocabulary of 11 tokens (\[MASK\] included)" "$T/err" || fail "--max-size 10: $(grep vocabulary "$T/err")"

# Errors.
printf 'one sentence.\nanother one.\n' > onedoc.txt
expect_err 1 "bert-pretrain: onedoc.txt: next-sentence prediction needs at least two documents (blank lines between them); found 1" bert-pretrain -i onedoc.txt --min-freq 1 -o x.akm
printf 'a b.\n\nc d.\n' > singles.txt
expect_err 1 "bert-pretrain: singles.txt: no document has two sentences" bert-pretrain -i singles.txt --min-freq 1 -o x.akm
head -3 text.txt > valid-one.txt
expect_err 1 "bert-pretrain: valid-one.txt: next-sentence prediction needs at least two documents" bert-pretrain -i text.txt --valid valid-one.txt --min-freq 1 -o x.akm
expect_err 1 "bert-pretrain: text.txt: no word is seen --min-freq (100000) times" bert-pretrain -i text.txt --min-freq 100000 -o x.akm
printf 'good line.\nbad \xff line.\n' > bad.txt
expect_err 1 "bert-pretrain: bad.txt:2:" bert-pretrain -i bad.txt -o x.akm
: > empty.txt
expect_err 1 "bert-pretrain: empty.txt: no sentence in the text" bert-pretrain -i empty.txt -o x.akm
expect_err 2 "bert-pretrain: --heads (3) must divide hidden (16)" bert-pretrain -i text.txt --hidden 16 --heads 3 -o x.akm
expect_err 2 "bert-pretrain: --len-max must be >= 5" bert-pretrain -i text.txt --len-max 4 -o x.akm
expect_err 2 "bert-pretrain: --dropout must be in [0, 1)" bert-pretrain -i text.txt --dropout 1 -o x.akm
expect_err 2 "bert-pretrain: --min-freq must be >= 1" bert-pretrain -i text.txt --min-freq 0 -o x.akm
expect_err 2 "bert-pretrain: --max-size must be 0 or at least 5" bert-pretrain -i text.txt --max-size 4 -o x.akm
no_file x.akm
printf 'no mask here .\n' > nomask.txt
expect_err 1 "bert-fill: nomask.txt: no line has a [MASK]" bert-fill --model m1.akm -i nomask.txt -o f.tsv
no_file f.tsv
# A line without [MASK] is skipped with a warning naming it; the other lines are filled.
{ cat nomask.txt; cat fill.txt; } > some.txt
expect_err 0 "bert-fill: some.txt:1: no [MASK] in the line: skipped" bert-fill --model m1.akm -i some.txt --top-k 4 -o f.tsv
check_eq "$(awk -F'\t' 'NR > 1 { print $1 "/" $2 }' f.tsv | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "2/5:4 4/1:4 4/9:4 " "the other lines filled"
awk 'BEGIN { for (i = 0; i < 23; i++) printf "mary "; print "[MASK]" }' > long.txt
expect_err 1 "bert-fill: long.txt:1: 24 tokens: longer than the model's 22" bert-fill --model m1.akm -i long.txt
expect_err 1 "bert-embed: long.txt:1: 24 tokens: longer than the model's 22" bert-embed --model m1.akm -i long.txt -o e3.npz
no_file e3.npz
expect_err 2 "bert-fill: --top-k must be >= 1" bert-fill --model m1.akm -i fill.txt --top-k 0
expect_err 1 "bert-fill: text.txt: not an attnkit model file" bert-fill --model text.txt -i fill.txt
expect_err 2 "bert-embed: -o: token embeddings (lines of different lengths) go to a .npz" bert-embed --model m1.akm -i emb.txt -o e.npy
expect_err 1 "bert-embed: empty.txt: no line to embed" bert-embed --model m1.akm -i empty.txt --cls -o c2.npy
finish
