# Shared set-up of the pipelines, sourced by each script:
#   . "$(dirname "$0")/lib.sh"
#   pipeline_args "$@"      # --quick, --seed S, --keep DIR, -h/--help → quick, seed, keep
#   need_tools T...         # exit 1 naming the first tool not found
#   work_dir                # dir: the --keep folder, or a temporary one removed at exit
#   ntm_bits MODEL OPT...   # ntm-run --eval OPT...: bits per sequence over all lengths
#   ntm_wrong MODEL OPT...  # ntm-run --eval OPT...: each length's wrong-bit fraction, tab-separated
# The tools come from ATTNKIT_BIN, else build/bin of this tree, else PATH.
PIPELINE=$(basename "$0")
top=$(cd "$(dirname "$0")/.." && pwd)
PATH="${ATTNKIT_BIN:-$top/build/bin}:$PATH"

# The script's leading comment block (its documentation), without the '#'.
pipeline_usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }

pipeline_args() {
  quick=0 seed=1 keep=
  while [ $# -gt 0 ]; do
    case $1 in
      --quick) quick=1 ;;
      --seed) seed=${2:?--seed needs a value}; shift ;;
      --keep) keep=${2:?--keep needs a directory}; shift ;;
      -h|--help) pipeline_usage; exit 0 ;;
      *) echo "$PIPELINE: unknown argument '$1'" >&2; pipeline_usage >&2; exit 2 ;;
    esac
    shift
  done
  case $seed in ''|*[!0-9]*) echo "$PIPELINE: --seed needs a whole number" >&2; exit 2 ;; esac
}

need_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$PIPELINE: $t not found (build first)" >&2; exit 1; }
  done
}

work_dir() {
  if [ -n "$keep" ]; then
    mkdir -p "$keep"
    dir=$keep
  else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
  fi
}

ntm_bits() {
  local model=$1
  shift
  ntm-run --model "$model" --eval "$@" -q | awk -F'\t' '$1 == "all" { print $3 }'
}

ntm_wrong() {
  local model=$1
  shift
  ntm-run --model "$model" --eval "$@" -q |
    awk -F'\t' '$1 != "length" && $1 != "all" { printf "%s%s", sep, $4; sep = "\t" }'
}
