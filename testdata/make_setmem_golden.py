#!/usr/bin/env python3
"""Golden cases for the set memory (lib/attnkit/memory/stackmem/set.h, equations 1-3), in float64
with NumPy, written independently of the C++ (vectorised, with a log-sum-exp over the slots
and the sentinel instead of loops). Makes testdata/setmem/cases.txt, read by
tests/unit/setmem_test.cpp and tests/cli/setmem.sh.

  erase  a = s exp(K e) / (1 + sum s exp(K e));  s <- s (1 - eps a)
  read   rho = s exp(K q) / (exp(tau) + sum s exp(K q));  r = [rho V, sum rho]  (the erased slots)
  write  append the slot (w, k_w, v_w)

Format, per case: "case M N", then "strengths ..." (N), "keys ..." (N x M, row-major),
"values ..." (N x M), "write W EPS TAU", "key ...", "value ...", "read_key ...", "erase_key ...",
and the expected "out_strengths ..." (N + 1), "out_erase_weights ..." (N),
"out_read_weights ..." (N), "out_read ..." (M + 1). Numbers as repr(float).
   python3 testdata/make_setmem_golden.py
"""
import os

import numpy as np


def weights(s, K, q, tau=0.0):
    z = K @ q if len(s) else np.zeros(0)
    logits = np.concatenate([[tau], z])  # the sentinel first
    top = logits.max()
    e = np.exp(logits - top)
    denom = e[0] + (s * e[1:]).sum()
    return s * e[1:] / denom


def step(s, K, V, w, eps, tau, k, v, q, e):
    a = weights(s, K, e)
    kept = s * (1.0 - eps * a)
    rho = weights(kept, K, q, tau)
    r = np.concatenate([rho @ V if len(s) else np.zeros(len(q)), [rho.sum()]])
    return np.concatenate([kept, [w]]), a, rho, r


def fmt(name, xs):
    return name + " " + " ".join(repr(float(x)) for x in np.ravel(xs)) + "\n"


def main():
    rng = np.random.default_rng(35)
    out = []
    for n, m in ((0, 1), (1, 2), (3, 2), (5, 3), (8, 4), (8, 4), (12, 1), (16, 8), (6, 5)):
        s = rng.uniform(0, 1, n)
        if n >= 8:  # exact zeros and ones, as trained memories have
            s[rng.integers(0, n, 2)] = 0.0
            s[rng.integers(0, n, 1)] = 1.0
        scale = 3.0 if n == 6 else 1.0  # large logits: the max is subtracted
        K = rng.uniform(-1, 1, (n, m)) * scale
        V = rng.normal(size=(n, m))
        w, eps = rng.uniform(0, 1, 2)
        tau = 0.0 if n in (1, 8) else float(rng.uniform(-2, 6))
        k = rng.uniform(-1, 1, m) * scale
        v = rng.normal(size=m)
        q = rng.uniform(-1, 1, m) * scale
        e = rng.uniform(-1, 1, m) * scale
        if n == 5:  # read with the key of a stored slot, erase another
            q = K[2].copy()
            e = K[4].copy()
        s2, a, rho, r = step(s, K, V, w, eps, tau, k, v, q, e)
        text = f"case {m} {n}\n" + fmt("strengths", s) + fmt("keys", K) + fmt("values", V)
        text += fmt("write", [w, eps, tau]) + fmt("key", k) + fmt("value", v)
        text += fmt("read_key", q) + fmt("erase_key", e)
        text += fmt("out_strengths", s2) + fmt("out_erase_weights", a)
        text += fmt("out_read_weights", rho) + fmt("out_read", r)
        out.append(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "setmem", "cases.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("".join(out))
    print(f"wrote {path}: {len(out)} cases")


if __name__ == "__main__":
    main()
