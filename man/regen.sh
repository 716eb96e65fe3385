#!/usr/bin/env bash
# Regenerates man/man1/<tool>.1 from each tool's --help plus the hand-written man/<tool>.x
# (NAME, DESCRIPTION, FILE FORMATS, EXAMPLES, EXIT STATUS, SEE ALSO), with help2man.
#   man/regen.sh [BINDIR] [TOOL...]     BINDIR defaults to build/bin
# With ATTNKIT_MAN_OUT=DIR the pages go to DIR instead (the tests compare them with the
# committed ones).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/build/bin}
shift || true
out=${ATTNKIT_MAN_OUT:-$top/man/man1}
command -v help2man >/dev/null || { echo "regen.sh: help2man is not installed (make deps)" >&2; exit 1; }
version=$(sed -n 's/^project(attnkit VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
tools=("$@")
if [ ${#tools[@]} -eq 0 ]; then
  for src in "$top"/tools/*.cpp; do tools+=("$(basename "$src" .cpp)"); done
fi
mkdir -p "$out"
for t in "${tools[@]}"; do
  x="$top/man/$t.x"
  [ -f "$x" ] || { echo "regen.sh: missing $x" >&2; exit 1; }
  [ -x "$bin/$t" ] || { echo "regen.sh: missing $bin/$t (build first)" >&2; exit 1; }
  # A fixed date keeps the pages reproducible: the .x file's last commit, else today.
  date=$(git -C "$top" log -1 --format=%ct -- "man/$t.x" 2>/dev/null || true)
  date=${date:-$(date +%s)}
  # Trainers (on the training layer, cli/training.h) share one TRAINING section.
  extra=()
  if grep -q 'cli/training.h' "$top/tools/$t.cpp"; then
    extra=(--include "$top/man/training.x")
    d2=$(git -C "$top" log -1 --format=%ct -- man/training.x 2>/dev/null || true)
    [ -n "$d2" ] && [ "$d2" -gt "$date" ] && date=$d2
  fi
  SOURCE_DATE_EPOCH=$date help2man --no-info --no-discard-stderr \
    --version-string "attnkit $version" --include "$x" "${extra[@]}" --output "$out/$t.1" "$bin/$t"
  # mandoc wants an ISO date in .TH; help2man writes "Month Year".
  iso=$(date -u -d "@$date" +%Y-%m-%d)
  sed -i "s/^\(\.TH [^ ]* \"1\" \)\"[^\"]*\"/\1\"$iso\"/" "$out/$t.1"
done
