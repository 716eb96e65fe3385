"""The NumPy peer of bench-hopfield_bench: the same dynamics written the straightforward way
over the same .npy files (float32 throughout, like attnkit).

async: for each probe, sweeps in a fresh random order; each visited neuron takes the sign of
its field W[i] @ s (a zero field keeps it); stop after a sweep without a flip.
sync: the whole batch at once, H = S @ W, S = sign(H) (zero keeps), until no probe changes
or every probe is at a fixed point or in a 2-cycle (the new states equal those of two steps
back), as hopfield-recall stops.

    numpy_hopfield.py DIR [ASYNC_PROBES]

ASYNC_PROBES (default 50) limits the async run to the first probes, which is slow in Python;
per_probe_ms is what to compare. Prints the same TSV as the C++ side.
"""
import sys
import time

import numpy as np

d = sys.argv[1]
async_probes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
W = np.load(f"{d}/W.npy").astype(np.float32)
probes = np.load(f"{d}/probes.npy").astype(np.float32)
targets = np.load(f"{d}/targets.npy").astype(np.float32)
n = W.shape[0]
rng = np.random.default_rng(1)


def quality(states, want):
    bad = (states != want).sum(axis=1)
    return bad.sum() / want.size, (bad == 0).mean()


print("mode\tprobes\tseconds\tper_probe_ms\tbit_error\texact")
k = min(async_probes, len(probes))
t0 = time.perf_counter()
out = probes[:k].copy()
for p in range(k):
    s = out[p]
    for sweep in range(100):
        flips = 0
        for i in rng.permutation(n):
            h = W[i] @ s
            v = 1.0 if h > 0 else (-1.0 if h < 0 else s[i])
            if v != s[i]:
                s[i] = v
                flips += 1
        if flips == 0:
            break
secs = time.perf_counter() - t0
err, exact = quality(out, targets[:k])
print(f"async\t{k}\t{secs:.4f}\t{1e3 * secs / k:.4f}\t{err:.6f}\t{exact:.4f}")

t0 = time.perf_counter()
S = probes.copy()
prev = None
steps = 0
for step in range(100):
    H = S @ W
    new = np.where(H > 0, 1.0, np.where(H < 0, -1.0, S)).astype(np.float32)
    if np.array_equal(new, S) or (prev is not None and np.array_equal(new, prev)):
        break
    prev, S = S, new
    steps += 1
secs = time.perf_counter() - t0
err, exact = quality(S, targets)
print(f"numpy sync: {steps} steps", file=sys.stderr)
print(f"sync\t{len(probes)}\t{secs:.4f}\t{1e3 * secs / len(probes):.4f}\t{err:.6f}\t{exact:.4f}")
