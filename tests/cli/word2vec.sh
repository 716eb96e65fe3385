#!/usr/bin/env bash
# labels: text
# word2vec: a two-topic text where each word's nearest vectors (cosine, computed here in awk)
# are its topic's words; the text format; the same vectors for a seed and any --threads;
# han-train --embeddings reads the output; every documented error (status, message, no file).
. "$ATTNKIT_SRC/tests/cli/lib.sh"

help_ok word2vec

# 400 lines of two sentences, each sentence's words from one topic; labels on half the lines
# (ignored).
awk 'BEGIN { srand(4)
  split("cat dog pet fur paw", a); split("car road wheel engine tyre", b)
  for (i = 0; i < 400; i++) { line = ""
    for (s = 0; s < 2; s++) { t = (i + s) % 2
      for (w = 0; w < 5; w++) line = line (t ? b[1 + int(rand() * 5)] : a[1 + int(rand() * 5)]) " "
      line = line ". " }
    print (i % 2 ? "x\t" : "") line } }' > text.txt
opts="--embed 8 --window 2 --min-freq 1 --subsample 0 --epochs 5 -q"
expect 0 word2vec -i text.txt $opts --seed 1 -o v1.txt
check_eq "$(head -1 v1.txt)" "11 8" "header: 10 words and '.', 8 dimensions"
check_eq "$(awk 'NR > 1 && NF != 9' v1.txt | wc -l)" 0 "WORD and 8 numbers a line"
check_eq "$(sed -n 2p v1.txt | cut -d' ' -f1)" "." "the most frequent word first"
# Each word's 4 nearest by cosine are its own topic's.
bad=$(awk 'NR > 1 && $1 != "." { n++; w[n] = $1; for (i = 2; i <= NF; i++) x[n, i] = $i; d = NF }
  END { split("cat dog pet fur paw", a); for (i in a) pet[a[i]] = 1
    for (p = 1; p <= n; p++) { m = 0
      for (q = 1; q <= n; q++) if (q != p) { s = 0; u = 0; v = 0
        for (i = 2; i <= d; i++) { s += x[p, i] * x[q, i]; u += x[p, i] ^ 2; v += x[q, i] ^ 2 }
        m++; c[m] = s / sqrt(u * v); o[m] = w[q] }
      for (k = 1; k <= 4; k++) { best = 0
        for (j = 1; j <= m; j++) if (!(j in used) && (best == 0 || c[j] > c[best])) best = j
        used[best] = 1; if ((w[p] in pet) != (o[best] in pet)) print w[p] " near " o[best] }
      delete used } }' v1.txt)
check_eq "$bad" "" "nearest words from the other topic"
expect 0 word2vec -i text.txt $opts --seed 1 --threads 2 -o v2.txt
CHECKS=$((CHECKS + 1)); cmp -s v1.txt v2.txt || fail "the vectors depend on --threads"
expect 0 word2vec -i text.txt $opts --seed 2 -o v3.txt
CHECKS=$((CHECKS + 1)); cmp -s v1.txt v3.txt && fail "seeds 1 and 2 gave the same vectors"
# Standard output, the summary on stderr without -q.
expect 0 word2vec -i text.txt --embed 8 --min-freq 1 --epochs 1 -o -
check_eq "$(head -1 "$T/out")" "11 8" "standard output"
grep -q "^word2vec: 11 words, 8 dimensions" "$T/err" || fail "no summary on stderr"
# han-train starts its embeddings from them.
awk 'NR % 2 { print "a\tcat dog pet ." } NR % 2 == 0 { print "b\tcar road tyre ." }' text.txt | head -40 > docs.tsv
expect 0 han-train -i docs.tsv --embed 8 --hidden 4 --context 4 --min-freq 1 --epochs 1 -o h.akm --embeddings v1.txt
grep -q "v1.txt: 7 of 11 words found" "$T/err" || fail "han-train did not read the vectors: $(cat "$T/err")"

# Errors: status, message, no file left behind.
expect_err 2 "word2vec: --window must be at least 1" word2vec -i text.txt --window 0 -o x.txt
no_file x.txt
expect_err 2 "word2vec: the text has 0 distinct words seen --min-freq times or more" word2vec -i text.txt --min-freq 100000 -o x.txt
no_file x.txt
printf 'some words .\n\nmore words .\n' > blank.txt
expect_err 1 "word2vec: blank.txt:2: empty document" word2vec -i blank.txt -o x.txt
no_file x.txt
printf 'ok words .\nbad \xff byte\n' > utf.txt
expect_err 1 "utf.txt:2" word2vec -i utf.txt -o x.txt
no_file x.txt
expect_err 1 "word2vec: " word2vec -i no-such-file.txt -o x.txt
no_file x.txt
expect 1 word2vec -i text.txt $opts -o no-such-dir/x.txt
finish
