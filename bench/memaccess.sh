#!/usr/bin/env bash
# The access time of the tree (HAM, the hard access), the set, the stack and the queue as the
# memory grows, attnkit (bench/memaccess.cpp) against the same accesses in PyTorch
# (bench/memaccess_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE: B = 16 memories of N = 16, 64, 256, 1024 leaves (slots, stored
# values), width 32, controller state 64. PyTorch at the best of its three thread settings
# within THREADS (bench/lib.sh's torch_best); attnkit's accesses are single-threaded loops
# over the rows. Prints every measurement as TSV (rate: accesses/s of the 16 rows; then the
# multiply-adds of an access and a checksum), then per case the median ratio attnkit /
# pytorch and the range of the per-repetition ratios, then attnkit's time per access relative
# to N = 16 (the tree's should grow as log N, the others' as N).
#   bench/memaccess.sh [REPS] [THREADS] [SECONDS]     (defaults 3 2 0.3: each run's least time)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
reps=${1:-3} th=${2:-2} secs=${3:-0.3}
kinds="tree set stack queue"
peer_setup memaccess
for r in $(seq "$reps"); do
  for kind in $kinds; do
    for n in 16 64 256 1024; do
      line=$("$bin" "$kind" "$n" "$secs")
      echo "$line"
      echo -e "$r\t$line" >> "$out"
      [ -n "$py" ] || continue
      line=$(torch_best 7 4 "$th" "$py" "$top/bench/memaccess_torch.py" "$kind" "$n" "$secs" @T)
      echo "$line"
      echo -e "$r\t$line" >> "$out"
    done
  done
done
echo
echo "# attnkit: median time per access against N = 16's (log2 N / 4 for the tree's, N / 16 for the others')"
echo -e "model\tsec_median\trelative\tlog2N/4\tN/16"
awk -F'\t' -v kinds="$kinds" '$2 == "attnkit" { split($4, a, "-n"); t[a[1], a[2], ++c[a[1], a[2]]] = $7 }
  END {
    nk = split(kinds, kind, " ")
    for (ki = 1; ki <= nk; ki++) {
      k = kind[ki]
      for (ni = 0; ni < 4; ni++) {
        n = 16 * 4 ^ ni; m = c[k, n]
        for (i = 1; i <= m; i++) q[i] = t[k, n, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (q[j] < q[i]) { x = q[i]; q[i] = q[j]; q[j] = x }
        med[n] = m % 2 ? q[(m + 1) / 2] : (q[m / 2] + q[m / 2 + 1]) / 2
        printf "%s-n%d\t%.3e\t%.2f\t%.2f\t%d\n", k, n, med[n], med[n] / med[16], log(n) / log(2) / 4, n / 16
      }
    }
  }' "$out"
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$4' 2 8 "$th"
