#!/usr/bin/python3
"""Golden outputs of ntm-address from an independent NumPy (float64) implementation of the
NTM paper's addressing equations (Graves, Wayne & Danihelka 2014, eqs. 5-9), written directly
from the paper: the shift as a sum of np.roll'ed copies, the sharpening as w^gamma / sum.

Run with Debian's Python (numpy): /usr/bin/python3 testdata/make_ntm_golden.py
Writes testdata/ntm/case<K>.{memory,key,shift,prev}.txt, case<K>.args (beta gate gamma) and
case<K>.expected.txt (4 rows: wc, wg, wshift, w)."""
import os

import numpy as np

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ntm")
os.makedirs(here, exist_ok=True)


def address(M, k, beta, g, s, gamma, prev):
    eps = 1e-8  # the cosine's norms: sqrt(u.u + eps), as attnkit documents
    cos = (M @ k) / (np.sqrt((M * M).sum(1) + eps) * np.sqrt(k @ k + eps))
    z = beta * cos
    wc = np.exp(z - z.max())
    wc /= wc.sum()
    wg = g * wc + (1 - g) * prev
    R = (len(s) - 1) // 2
    # w~(i) = sum_j wg(j) s((i - j) mod N): a shift by d moves weight from j to j + d.
    ws = sum(s[d + R] * np.roll(wg, d) for d in range(-R, R + 1))
    w = ws ** gamma
    w /= w.sum()
    return np.stack([wc, wg, ws, w])


def vec(x):
    return " ".join(repr(float(v)) for v in np.asarray(x, dtype=np.float32))


rng = np.random.default_rng(20140520)
cases = []
for k in range(6):
    N, Mw = [(16, 6), (8, 3), (32, 5), (16, 6), (10, 4), (12, 4)][k]
    R = 2 if k == 2 else 1
    M = rng.normal(size=(N, Mw)).astype(np.float32)
    key = rng.normal(size=Mw).astype(np.float32)
    s = rng.uniform(0.05, 1, size=2 * R + 1)
    s = (s / s.sum()).astype(np.float32)
    prev = rng.uniform(0.01, 1, size=N)
    prev = (prev / prev.sum()).astype(np.float32)
    beta, g, gamma = [(2.5, 0.8, 1.5), (10.0, 0.3, 3.0), (1.0, 1.0, 1.0), (0.0, 0.5, 2.0),
                      (100.0, 0.9, 50.0), (5.0, 0.0, 20.0)][k]
    if k == 3:
        M[:] = 0  # zero memory: uniform content weighting
    cases.append((M, key, beta, g, s, gamma, prev))

for k, (M, key, beta, g, s, gamma, prev) in enumerate(cases, 1):
    f64 = lambda a: np.asarray(a, dtype=np.float64)
    out = address(f64(M), f64(key), beta, g, f64(s), gamma, f64(prev))
    assert np.all(np.isfinite(out))
    base = os.path.join(here, "case%d" % k)
    with open(base + ".memory.txt", "w") as f:
        for row in M:
            f.write(vec(row) + "\n")
    for name, v in (("key", key), ("shift", s), ("prev", prev)):
        with open(base + "." + name + ".txt", "w") as f:
            f.write(vec(v) + "\n")
    with open(base + ".args", "w") as f:
        f.write("%r %r %r\n" % (beta, g, gamma))
    with open(base + ".expected.txt", "w") as f:
        for row in out:
            f.write(" ".join("%.9g" % v for v in row) + "\n")
print("wrote %d cases to %s" % (len(cases), here))
