#!/usr/bin/env bash
# Downloads the bAbI tasks v1.2 (Weston et al. 2015, CC BY 3.0) from Facebook's official
# archive, unpacks it and checks the MD5 of every en/ and en-10k/ file against
# pipelines/babi.md5 (the sums of ../shared/data/babi/SOURCE.md, which match those published
# in facebookresearch/ParlAI#1805), then copies the data:
#   pipelines/fetch-babi.sh [DIR]     (default DIR: ../shared/data/babi beside this tree)
#   pipelines/fetch-babi.sh --help    (this text)
# Leaves DIR/en, DIR/en-10k, ... (tasks_1-20_v1-2). Needs curl (or wget), md5sum and tar, and
# internet access; the tests never run it (they use testdata/babi).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
data_args "$@"
dir=${data_dir:-$top/../shared/data/babi}
url=http://www.thespermwhale.com/jaseweston/babi/tasks_1-20_v1-2.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-babi.sh: downloading $url" >&2
if command -v curl >/dev/null; then curl -fsSL -o "$tmp/babi.tar.gz" "$url"
else wget -q -O "$tmp/babi.tar.gz" "$url"; fi
tar -xzf "$tmp/babi.tar.gz" -C "$tmp"
if ! (cd "$tmp/tasks_1-20_v1-2" && md5sum -c --quiet "$top/pipelines/babi.md5"); then
  echo "fetch-babi.sh: checksum mismatch (see above); nothing copied" >&2
  exit 1
fi
mkdir -p "$dir"
cp -r "$tmp"/tasks_1-20_v1-2/* "$dir"/
echo "fetch-babi.sh: bAbI v1.2 in $dir" >&2
