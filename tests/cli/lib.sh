# Shared helpers of the command-line tests (sourced by tests/cli/*.sh).
# Each test runs in a fresh temporary directory; a failed check prints what was expected and
# what came, and the script exits 1 at the end. Exit 77 means skipped.
set -u
: "${ATTNKIT_BIN:?run through ctest (ATTNKIT_BIN unset)}"
: "${ATTNKIT_SRC:?}" "${ATTNKIT_TESTDATA:?}"
export PATH="$ATTNKIT_BIN:$PATH"
export LC_ALL=C
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
FAILED=0
CHECKS=0

fail() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }

# sanitized: true in a sanitizer build (make test-sanitize; CMake sets ATTNKIT_SANITIZED),
# where a script may run its long loops over fewer cases; the error paths always run.
sanitized() { [ -n "${ATTNKIT_SANITIZED:-}" ]; }
# vlimit KB: the shell command that caps a run's address space at KB (ulimit -v), for a
# check that a run stays within its memory; under the sanitizers, whose shadow memory needs
# terabytes of address space, none (":"): the run and its output are still checked.
vlimit() { if sanitized; then echo ":"; else echo "ulimit -v $1"; fi; }

# alive PID: the process runs (not ended, nor a zombie waiting for `wait`).
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# run CMD...: runs a command, keeping stdout in $T/out, stderr in $T/err, status in $RC.
run() {
  "$@" >"$T/out" 2>"$T/err"
  RC=$?
  CHECKS=$((CHECKS + 1))
}

# expect STATUS CMD...: runs CMD and checks its exit status.
expect() {
  local want=$1; shift
  run "$@"
  if [ "$RC" != "$want" ]; then
    fail "'$*' exited $RC, expected $want; stderr: $(head -c 400 "$T/err")"
  fi
}

# expect_err STATUS TEXT CMD...: status, and TEXT (a fixed string) on stderr.
expect_err() {
  local want=$1 text=$2; shift 2
  expect "$want" "$@"
  grep -qF -- "$text" "$T/err" || fail "'$*': stderr lacks '$text'; got: $(head -c 400 "$T/err")"
}

# expect_out TEXT CMD...: status 0 and exactly TEXT on stdout.
expect_out() {
  local text=$1; shift
  expect 0 "$@"
  [ "$(cat "$T/out")" = "$text" ] || fail "'$*': stdout was '$(head -c 400 "$T/out")', expected '$text'"
}

# check_eq A B WHAT: plain comparison.
check_eq() {
  CHECKS=$((CHECKS + 1))
  [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

# no_file PATH: a failed run left no output behind (also no temporary beside it).
no_file() {
  CHECKS=$((CHECKS + 1))
  local d; d=$(dirname "$1")
  [ ! -e "$1" ] || fail "output file $1 left behind"
  if ls -a "$d" | grep -q "^\.$(basename "$1")\.tmp" 2>/dev/null; then fail "temporary left in $d"; fi
}

# close_enough FILE1 FILE2 TOL: two text tensors equal within TOL (absolute), same layout.
close_enough() {
  CHECKS=$((CHECKS + 1))
  local msg
  if ! msg=$(awk -v tol="$3" '
      NR == FNR { a[FNR] = $0; n = FNR; next }
      { if (!(FNR in a)) { print "extra line " FNR; exit 1 }
        na = split(a[FNR], x); nb = split($0, y)
        if (na != nb) { print "line " FNR ": " na " vs " nb " fields"; exit 1 }
        for (i = 1; i <= na; i++) { d = x[i] - y[i]; if (d < 0) d = -d
          if (d > tol) { print "line " FNR " field " i ": " x[i] " vs " y[i]; exit 1 } } }
      END { if (FNR != n) { print "line count " n " vs " FNR; exit 1 } }' "$1" "$2"); then
    fail "$1 vs $2: $msg"
  fi
}

# help_ok TOOL: --help on stdout with status 0, --version names attnkit, no args or a bad
# option is a usage error (2) with a 'TOOL:' message.
help_ok() {
  local tool=$1
  expect 0 "$tool" --help
  grep -q "^Usage: $tool" "$T/out" || fail "$tool --help: no 'Usage: $tool' line"
  [ -s "$T/err" ] && fail "$tool --help wrote to stderr"
  expect 0 "$tool" --version
  grep -q "attnkit" "$T/out" || fail "$tool --version: no 'attnkit'"
  grep -q "OpenBLAS core" "$T/out" || fail "$tool --version: no BLAS core"
  expect_err 2 "$tool: " "$tool" --no-such-option
  grep -qF -- "Try '$tool --help'" "$T/err" || fail "$tool: usage error without the --help hint"
}

# pipeline_usage_ok SCRIPT [TEXT]: the pipelines' shared options (pipelines/lib.sh): an
# unknown argument and a bad --seed are usage errors (2); --help prints the script's
# documentation (containing TEXT, when given) with status 0.
pipeline_usage_ok() {
  local script=$1 text=${2:-}
  expect_err 2 "unknown argument '--bogus'" "$script" --bogus
  expect_err 2 "--seed needs a whole number" "$script" --seed x
  expect 0 "$script" --help
  [ -s "$T/out" ] || fail "$script --help printed nothing"
  if [ -n "$text" ]; then grep -q "$text" "$T/out" || fail "$script --help does not describe the exercise"; fi
}

# finish: prints the count and exits with the result.
finish() {
  if [ "$FAILED" -ne 0 ]; then
    echo "$FAILED of $CHECKS checks failed" >&2
    exit 1
  fi
  echo "$CHECKS checks passed"
  exit 0
}

# shard_ok CMD...: CMD --shard 1/3, 2/3 and 3/3, their standard outputs concatenated in order,
# give CMD's own output byte for byte (which must not be empty); bad --shard values (0/3, 4/3,
# x, 3, 1/0) are usage errors (2) naming --shard (checked at the first call of each tool).
shard_ok() {
  local k bad
  run "$@"
  [ "$RC" = 0 ] || { fail "'$*' exited $RC; stderr: $(head -c 400 "$T/err")"; return; }
  [ -s "$T/out" ] || fail "'$*': empty output (nothing to shard)"
  cp "$T/out" "$T/shard-whole"
  : >"$T/shard-cat"
  for k in 1 2 3; do
    run "$@" --shard "$k/3"
    [ "$RC" = 0 ] || fail "'$* --shard $k/3' exited $RC; stderr: $(head -c 400 "$T/err")"
    cat "$T/out" >>"$T/shard-cat"
  done
  CHECKS=$((CHECKS + 1))
  cmp -s "$T/shard-whole" "$T/shard-cat" ||
    fail "'$*': the three shards concatenated differ from the whole run ($(cmp "$T/shard-whole" "$T/shard-cat" 2>&1 | head -1))"
  # The bad values, once a tool (the same parse whatever the other options).
  case " $SHARD_ERRORS_DONE " in *" $1 "*) return ;; esac
  SHARD_ERRORS_DONE="$SHARD_ERRORS_DONE $1"
  for bad in 0/3 4/3 x 3 1/0; do expect_err 2 "--shard: bad value '$bad'" "$@" --shard "$bad"; done
}
SHARD_ERRORS_DONE=

# tiny_trainer_data: the small inputs that every trainer's cheap runs share, in the current
# directory: x.npy (48 pictures 16 x 16) with y.txt (their labels, 8 classes), text.txt (bAbI-like
# stories for bert-pretrain), scenes.txt with caps.tsv (24 scenes of two bars in a 2 x 2 grid,
# 8 x 8 pixels, and their captions).
tiny_trainer_data() {
  expect 0 tensor-rand --shape 48,16,16 --seed 4 -o x.npy
  awk 'BEGIN { for (i = 0; i < 48; i++) print i % 8 }' >y.txt
  awk 'BEGIN { split("mary john sandra daniel", who); split("kitchen garden office hallway", where)
    for (d = 1; d <= 40; d++) { if (d > 1) print ""
      for (k = 1; k <= 4; k++) print who[(d + k) % 4 + 1] " went to the " where[(d * k) % 4 + 1] "." } }' >text.txt
  awk 'BEGIN { for (k = 0; k < 24; k++) {
      a = k % 4; b = (k + 1 + k % 3) % 4; if (b == a) b = (a + 1) % 4
      for (r = 0; r < 8; r++) { line = ""
        for (c = 0; c < 8; c++) { cell = int(r / 4) * 2 + int(c / 4)
          v = (cell == a && r % 2) || (cell == b && c % 2); line = line (c ? " " : "") v }
        print line > "scenes.txt" }
      if (k < 23) print "" > "scenes.txt"
      print "a hbar and a vbar\t-1 " a " -1 -1 " b > "caps.tsv" } }'
}
