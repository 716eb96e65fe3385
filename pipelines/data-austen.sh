#!/usr/bin/env bash
# Installs Jane Austen's six novels (Debian's r-cran-janeaustenr: the texts as Project Gutenberg
# prints them, one line of the book an element, line order kept) and converts them once into
# text for bert-pretrain: one sentence a line, a blank line between chapters (a chapter is a
# document, so next-sentence pairs are real), the novels in publication order:
#   pipelines/data-austen.sh [DIR]    (default DIR: $ATTNKIT_DATA/austen, ATTNKIT_DATA
#                                      defaulting to ~/.cache/attnkit)
#   pipelines/data-austen.sh --help   (this text)
# Leaves DIR/novels.txt and DIR/SOURCE (the package's version). `make data` runs it. The data
# go to a cache outside the repository (nothing converted is committed). The package keeps the
# novels in R's lazy-load database (data/Rdata.rdb + .rdx: R-serialised objects, compressed);
# as for the fine-food reviews (pipelines/data-reviews.sh), R itself reads them (Rscript, a
# few lines, exact by construction) rather than a reader of R's serialisation of our own.
# Paragraphs (runs of non-blank lines) are cut into sentences after ".", "!" or "?" (and any
# closing quotes) before a space, except after Mr. Mrs. Dr. St.; the italics marks "_" go;
# the title pages before each novel's first chapter are left out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
data_args "$@"
dir=${data_dir:-$(austen_dir)}
apt_need r-cran-janeaustenr r-base-core
version=$(dpkg-query -W -f='${Version}' r-cran-janeaustenr)
data_current "$dir" "r-cran-janeaustenr $version" novels.txt && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.convert.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The books' lines, each novel starting with a line "@@BOOK name".
Rscript --vanilla - "$tmp/lines.txt" <<'R'
out <- commandArgs(trailingOnly = TRUE)[1]
e <- new.env()
books <- c("sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey",
           "persuasion")
con <- file(out, open = "w", encoding = "UTF-8")
for (b in books) {
  data(list = b, package = "janeaustenr", envir = e)
  writeLines(enc2utf8(c(paste("@@BOOK", b), gsub("[\t\r]", " ", e[[b]]))), con, useBytes = TRUE)
}
close(con)
R
LC_ALL=C awk '
  function flush(  s, n, i, c, rest) {
    if (para == "" || !inbook) { para = ""; return }
    gsub(/_/, "", para); gsub(/  +/, " ", para); sub(/^ /, "", para); sub(/ $/, "", para)
    if (!started) { print ""; started = 1 } else if (newdoc) print ""
    newdoc = 0; s = ""
    n = split(para, w, " ")
    for (i = 1; i <= n; i++) {
      s = s (s == "" ? "" : " ") w[i]
      if (i < n && w[i] ~ /[.!?]["'"'"')]*$/ && w[i] !~ /^(Mr|Mrs|Dr|St|Messrs)\.$/) { print s; s = "" }
    }
    if (s != "") print s
    para = ""
  }
  /^@@BOOK / { flush(); inbook = 0; next }
  /^ *(CHAPTER|Chapter|VOLUME|Volume) [IVXLC0-9]+\.? *$/ { flush(); inbook = 1; newdoc = 1; next }
  /^ *$/ { flush(); next }
  { para = para " " $0 }
  END { flush() }' "$tmp/lines.txt" | sed '1{/^$/d}' > "$tmp/novels.txt"
mv "$tmp/novels.txt" "$dir/novels.txt"
echo "r-cran-janeaustenr $version" > "$dir/SOURCE"
echo "$PIPELINE: wrote $dir/novels.txt ($(grep -c . "$dir/novels.txt") sentences in $(($(grep -c '^$' "$dir/novels.txt") + 1)) chapters)" >&2
