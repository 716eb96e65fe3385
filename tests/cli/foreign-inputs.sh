#!/usr/bin/env bash
# cost: 8
# Issue 36, items 9, 10, 13-15: inputs that are not what a tool expects. A JPEG, GIF, BMP or
# WebP where a picture or a tensor is expected: "convert it to PNG"; an archive or a picture
# where text is expected: named in words; no message ever holds the file's raw bytes.
# ptrtask-gen's own .npz is read back by ptr-train and ptr-run. A picture beyond the pixel
# cap is refused from its header (--max-pixels raises the cap). A pair too long to train is
# refused naming its file and line. Data errors name their file and line and exit 1.
. "$ATTNKIT_SRC/tests/cli/lib.sh"

# no_raw_bytes: the last stderr holds only printable ASCII (the files here are not text).
no_raw_bytes() {
  CHECKS=$((CHECKS + 1))
  if LC_ALL=C grep -q '[^[:print:][:space:]]' "$T/err"; then
    fail "raw bytes in the message: $(od -c "$T/err" | head -5)"
  fi
}

printf '\377\330\377\340\000\020JFIF\000\001\001\000\000\001\000\001\000\000\377\333' >photo.jpg
printf 'GIF89a\001\000\001\000\200\000\000\377\377\377\000\000\000' >anim.gif
printf 'BM\072\000\000\000\000\000\000\000\066\000\000\000\050\000\000\000' >pic.bmp
printf 'RIFF\044\000\000\000WEBPVP8 \030\000\000\000' >pic.webp

# Where a tensor or a picture is expected.
expect_err 1 "tensor-info: photo.jpg: a JPEG picture: convert it to PNG" tensor-info photo.jpg
no_raw_bytes
expect_err 1 "tensor-convert: anim.gif: a GIF picture: convert it to PNG" tensor-convert anim.gif -o x.npy
no_raw_bytes
no_file x.npy
expect_err 1 "pic.bmp: a BMP picture: convert it to PNG" tensor-info pic.bmp
expect_err 1 "pic.webp: a WebP picture: convert it to PNG" tensor-info pic.webp
printf '\001\002\003\000\377\376' >blob.bin
expect_err 1 "tensor-info: blob.bin: binary data, not a tensor" tensor-info blob.bin
no_raw_bytes
# A stray byte in a text matrix is quoted escaped.
printf '1 2\n3 \377\n' >stray.txt
expect_err 1 "tensor-info: stray.txt:2: not a number: '\\xFF'" tensor-info stray.txt
no_raw_bytes

# Where text is expected: the readers of pairs, corpora, vocabularies, references, bAbI.
expect_err 1 "stackmem-train: photo.jpg: a JPEG picture, expected text" stackmem-train -i photo.jpg -o x.akm
no_raw_bytes
printf '1 2\n' >ok.txt
expect 0 tensor-convert ok.txt -o a.npz
expect_err 1 "bleu: a.npz: an .npz archive (binary data), expected text" bleu --ref a.npz stray.txt
no_raw_bytes
expect_err 1 "vocab-build: blob.bin: binary data, expected text" vocab-build -i blob.bin -o v.txt
no_raw_bytes
no_file v.txt

# ptrtask-gen's .npz: read by ptr-train and ptr-run as its text is.
expect 0 ptrtask-gen --task sort --n 4 --count 64 --seed 3 -o p.npz
expect 0 ptrtask-gen --task sort --n 4 --count 64 --seed 3 -o p.txt
ptr="--task sort --embed 8 --hidden 8 --batch-size 16 --steps 4 --seed 2 --threads 1 -q"
expect 0 ptr-train $ptr -i p.npz -o pn.akm
expect 0 ptr-train $ptr -i p.txt -o pt.akm
# float32 keeps about 7 of the text's 9 decimals: the same answers, nearly the same model
expect 0 ptr-run --model pt.akm -i p.npz --eval
npz_eval=$(cat "$T/out")
expect 0 ptr-run --model pt.akm -i p.txt --eval
check_eq "$(cut -f1-2 <<<"$npz_eval")" "$(cut -f1-2 "$T/out")" "ptr-run --eval on the .npz = on the text"
expect_err 1 "ptr-train: photo.jpg: a JPEG picture, expected problems as text" ptr-train --task sort -i photo.jpg -o x.akm
no_raw_bytes
expect_err 1 "ptr-train: p.npz: points must be [count, n, 2]" ptr-train --task tsp -i p.npz -o x.akm
no_file x.akm

# Item 13: ptr-train's data errors name the file and the problem's line.
printf '0.1 0.2 output 1 2\n\n0.3 0.4\n' >noans.txt
expect_err 1 "ptr-train: noans.txt:3: a training problem without an answer" ptr-train --task sort -i noans.txt -o x.akm
expect_err 1 "ptr-train: noans.txt:3: a validation problem without an answer" ptr-train --task sort -i p.txt --valid noans.txt -o x.akm
no_file x.akm
# ... and running out of memory names what was being read: a 150 MB (sparse) model file
# under a 100 MB address space (the sanitizers' runs, uncapped, refuse its bytes instead).
truncate -s 150M huge.akm
expect 1 bash -c "export OPENBLAS_NUM_THREADS=1; $(vlimit 100000); ptr-run --threads 1 --model huge.akm -i p.txt"
sanitized || grep -qF "ptr-run: huge.akm: out of memory while reading it (150 MB)" "$T/err" || fail "out of memory names nothing: $(head -c 300 "$T/err")"
rm -f huge.akm

# Item 10: a 16 KB black 4096 x 4096 PNG is refused from its header, at once and in little
# memory; --max-pixels raises the cap.
{
  printf '\223NUMPY\001\000\166\000'
  printf "{'descr': '|u1', 'fortran_order': False, 'shape': (4096, 4096), }"
  printf '%*s\n' 52 ''
  head -c 16777216 /dev/zero
} >black.npy
expect 0 tensor-convert black.npy -o black.png
check_eq "$(($(wc -c <black.png) < 100000))" 1 "the black picture is small ($(wc -c <black.png) bytes)"
expect_err 1 "tensor-info: black.png: PNG: 4096x4096 pixels, more than the limit of 4194304 (--max-pixels raises it)" \
  bash -c "export OPENBLAS_NUM_THREADS=1; $(vlimit 400000); tensor-info --threads 1 black.png"
# caption-run: its models are convolutional (any picture size from the grid's minimum up),
# so the cap is the check; the picture is refused, not scaled.
awk 'BEGIN { for (k = 0; k < 8; k++) { for (r = 0; r < 8; r++) { line = ""
      for (c = 0; c < 8; c++) line = line (c ? " " : "") ((r + c + k) % 3 == 0)
      print line > "scenes.txt" }
    if (k < 7) print "" > "scenes.txt"
    print "a bar" > "caps.tsv" } }'
expect 0 caption-train -i scenes.txt --captions caps.tsv --embed 4 --hidden 8 --attention-size 4 \
  --channels 2,2 --batch-size 4 --steps 1 -q -o cap.akm
expect_err 1 "caption-run: black.png: PNG: 4096x4096 pixels, more than the limit of 4194304" \
  bash -c "export OPENBLAS_NUM_THREADS=1; $(vlimit 600000); caption-run --threads 1 --model cap.akm -i black.png"
expect_err 1 "caption-run: photo.jpg: a JPEG picture: convert it to PNG" caption-run --model cap.akm -i photo.jpg
no_raw_bytes
expect 0 tensor-info --max-pixels 16777216 black.png
grep -q "4096" "$T/out" || fail "--max-pixels 16777216: $(cat "$T/out")"
expect_err 2 "--max-pixels must be >= 1" tensor-info --max-pixels 0 black.png

# Item 9: training states its bound and refuses a longer pair, naming its file and line.
awk 'BEGIN { print "a b\tb a"; s = "a"; for (i = 1; i < 4000; i++) s = s " b"; print s "\ta" }' >long.tsv
expect_err 1 "stackmem-train: long.tsv:2: a pair of 4000 + 1 symbols needs about" stackmem-train -i long.tsv -o x.akm
no_file x.akm
grep -q "more than 2048 MB" <(stackmem-train --help) || fail "stackmem-train --help does not state the bound"
# ... with its batch: every row of a step is as long as its longest pair (a pair of 1,000
# symbols takes about 0.6 GB alone, 16 times that in the default batch of 16).
awk 'BEGIN { for (i = 0; i < 20; i++) print "a b\tb a"; s = "a"; for (i = 1; i < 1000; i++) s = s " b"; print s "\ta" }' >mid.tsv
expect_err 1 "stackmem-train: mid.tsv:21: a pair of 1000 + 1 symbols needs about" stackmem-train -i mid.tsv -o x.akm
grep -q "in a batch of 16" "$T/err" || fail "the batch is not named: $(cat "$T/err")"
no_file x.akm
finish
