# Helpers shared by the bench scripts (sourced, not run).

# bench_coretype: export OPENBLAS_CORETYPE as attnkit's tools choose it on this CPU (the
# user's own OPENBLAS_CORETYPE is kept), so that both sides of a comparison run the same
# kernels and no script forces a core the CPU lacks. Asks a built tool (under ATTNKIT_BUILD,
# or the script's top/build); exit 1 naming it when not built.
bench_coretype() {
  if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    local tool="${ATTNKIT_BUILD:-$top/build}/bin/tensor-rand" c
    [ -x "$tool" ] || { echo "bench: no $tool (build first: make)" >&2; exit 1; }
    c=$(env -u OPENBLAS_CORETYPE "$tool" --version | sed -n 's/.*OpenBLAS core \([A-Za-z0-9_]*\).*/\1/p')
    [ -n "$c" ] || { echo "bench: no OpenBLAS core in '$tool --version'" >&2; exit 1; }
    OPENBLAS_CORETYPE=$c
  fi
  export OPENBLAS_CORETYPE
}

# torch_best RATE_COL THREADS_COL BUDGET CMD [ARG]...
# PyTorch's fastest run of CMD within a budget of BUDGET threads: Debian's torch runs OpenMP
# threads and OpenBLAS's own pthreads, and with both at N on N cores they oversubscribe (3-4x
# slower than 1 thread on these machines). So for BUDGET > 1 the command runs three times —
# torch N / OpenBLAS N, torch N / OpenBLAS 1, torch 1 / OpenBLAS N — with every "@T" in its
# arguments replaced by torch's thread count; for BUDGET 1 once, at 1 / 1. CMD prints one TSV
# line; the fastest by column RATE_COL is printed with column THREADS_COL set to BUDGET and
# the setting ("torch 1/openblas 2") appended as a last column. Fails if no run printed a rate.
torch_best() {
  local col=$1 thcol=$2 th=$3
  shift 3
  local settings=("1 1") best="" brate=0 s omp blas line rate a
  [ "$th" -gt 1 ] && settings=("$th $th" "$th 1" "1 $th")
  for s in "${settings[@]}"; do
    read -r omp blas <<< "$s"
    local args=()
    for a in "$@"; do args+=("${a//@T/$omp}"); done
    line=$(OMP_NUM_THREADS=$omp OPENBLAS_NUM_THREADS=$blas "${args[@]}") || return 1
    rate=$(echo "$line" | cut -f"$col")
    if awk -v a="$rate" -v b="$brate" 'BEGIN { exit !(a + 0 > b + 0) }'; then
      brate=$rate
      best=$(echo "$line" | awk -F'\t' -v OFS='\t' -v c="$thcol" -v th="$th" -v s="torch $omp/openblas $blas" \
        '{ $c = th; print $0, s }')
    fi
  done
  [ -n "$best" ] || { echo "torch_best: no rate in column $col from: $*" >&2; return 1; }
  echo "$best"
}

# median_ratios FILE KEY IMPL_COL RATE_COL THREADS
# FILE holds one line per measurement: the repetition, a tab, then the measurement's TSV
# (columns counted in FILE's lines, the repetition being column 1). KEY is an awk expression
# naming a measurement's case (e.g. '$4 " " $5'), IMPL_COL the column that says attnkit or
# pytorch, RATE_COL the rate (higher is faster). Prints per case, sorted: the median of the
# same-repetition ratios attnkit / pytorch, and their smallest and largest.
median_ratios() {
  local file=$1 key=$2 impl=$3 rate=$4 th=$5
  echo -e "case\tthreads\tratio_median\tratio_min\tratio_max"
  awk -F'\t' -v th="$th" -v ic="$impl" -v rc="$rate" "function casekey() { return $key }"'
    { k = casekey() }
    $ic == "attnkit" { ar[$1, k] = $rc; keys[k] = 1 }
    $ic == "pytorch" { pr[$1, k] = $rc }
    END {
      for (k in keys) {
        m = 0
        for (r = 1; (r, k) in ar; r++) if ((r, k) in pr && pr[r, k] > 0) q[++m] = ar[r, k] / pr[r, k]
        if (!m) continue
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
        printf "%s\t%s\t%.2f\t%.2f\t%.2f\n", k, th, (m % 2 ? q[(m + 1) / 2] : (q[m / 2] + q[m / 2 + 1]) / 2), q[1], q[m]
      }
    }' "$file" | sort
}

# peer_setup NAME: for a script that sets `top`: bin=$top/build/bench/bench-NAME (or under
# ATTNKIT_BUILD; exit 1 naming it when not built), OPENBLAS_CORETYPE as the tools set it,
# py=$PYTHON (default /usr/bin/python3) when it imports torch (else empty, with a comment line saying the peer
# is skipped), out= a temporary file of the measurements (removed at exit); prints the
# header of the measurement lines that bench-NAME and its peer write.
peer_setup() {
  bin="${ATTNKIT_BUILD:-$top/build}/bench/bench-$1"
  [ -x "$bin" ] || { echo "$1.sh: no $bin (build first: make)" >&2; exit 1; }
  bench_coretype
  PYTHON=${PYTHON:-/usr/bin/python3}
  py=
  "$PYTHON" -c 'import torch' 2>/dev/null && py=$PYTHON
  [ -n "$py" ] || echo "# PyTorch not importable by $PYTHON: peer skipped"
  [ -z "$py" ] || "$py" -c 'import sys, torch; print("# peer: PyTorch %s (%s)" % (torch.__version__, sys.executable))'
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  echo -e "impl\ttask\tmodel\tthreads\tsteps\tsec\trate\tloss\tsetting"
}

# peer_pair REP THREADS ARG... -- SCRIPT ARG...: one repetition of both sides: $bin ARG... at
# THREADS, then (when py is set) SCRIPT ARG... at PyTorch's best setting (torch_best, rate in
# column 7, threads in 4); each line is printed and kept in $out behind REP.
peer_pair() {
  local r=$1 th=$2 line
  shift 2
  local mine=()
  while [ "$1" != -- ]; do mine+=("$1"); shift; done
  shift
  line=$(OMP_NUM_THREADS=$th "$bin" "${mine[@]}"); echo "$line"; echo -e "$r\t$line" >> "$out"
  [ -n "$py" ] || return 0
  line=$(torch_best 7 4 "$th" "$py" "$@"); echo "$line"; echo -e "$r\t$line" >> "$out"
}
