#!/usr/bin/env bash
# Installs the Amazon fine-food reviews (Debian's r-cran-modeldata: small_fine_foods, 4,000
# training and 1,000 test reviews labelled great or other) and converts them once, with
# r-base-core's Rscript, into documents for han-train and han-run (LABEL<TAB>TEXT a line):
#   pipelines/data-reviews.sh [DIR]    (default DIR: $ATTNKIT_DATA/fine-foods, ATTNKIT_DATA
#                                       defaulting to ~/.cache/attnkit)
#   pipelines/data-reviews.sh --help   (this text)
# Leaves DIR/train.tsv, DIR/test.tsv and DIR/SOURCE (the package's version). `make data` runs
# it. The data go to a cache outside the repository (nothing converted is committed): every
# checkout and build folder of this machine then finds them, and a fresh machine rebuilds
# them from the package. The conversion reads R's own lazy-load database through R, rather
# than a reader of R's serialisation of our own: one small script, exact by construction.
# Tabs and line breaks inside a review become spaces; "<br />" tags become spaces.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
data_args "$@"
dir=${data_dir:-$(reviews_dir)}
apt_need r-cran-modeldata r-base-core
version=$(dpkg-query -W -f='${Version}' r-cran-modeldata)
data_current "$dir" "r-cran-modeldata $version" train.tsv test.tsv && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.convert.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
Rscript --vanilla - "$tmp" <<'R'
out <- commandArgs(trailingOnly = TRUE)[1]
e <- new.env()
data("small_fine_foods", package = "modeldata", envir = e)
clean <- function(x) {
  x <- gsub("<br */?>", " ", x, ignore.case = TRUE)
  x <- gsub("[\t\r\n]+", " ", x)
  trimws(gsub(" +", " ", x))
}
put <- function(d, name) {
  d <- as.data.frame(d)
  lines <- paste0(as.character(d$score), "\t", clean(as.character(d$review)))
  con <- file(file.path(out, name), open = "w", encoding = "UTF-8")
  writeLines(enc2utf8(lines), con, useBytes = TRUE)
  close(con)
}
put(e$training_data, "train.tsv")
put(e$testing_data, "test.tsv")
R
mv "$tmp/train.tsv" "$tmp/test.tsv" "$dir"/
echo "r-cran-modeldata $version" > "$dir/SOURCE"
echo "$PIPELINE: wrote $dir/train.tsv ($(wc -l < "$dir/train.tsv") reviews) and $dir/test.tsv ($(wc -l < "$dir/test.tsv"))" >&2
