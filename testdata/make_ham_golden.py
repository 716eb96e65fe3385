#!/usr/bin/env python3
"""Golden cases for the tree memory (HAM, Andrychowicz & Kurach 2016; lib/attnkit/memory/stackmem/ham.h),
in float64 with NumPy, written independently of the C++: the summaries level by level with
matrix products over all pairs of a level, the soft leaf weights as products over each
leaf's bits (the path read off its index), the hard descent by the same bits. Makes
testdata/ham/cases.txt, read by tests/unit/ham_test.cpp and tests/cli/ham.sh.

  JOIN(l, r) = tanh(Wj [l; r] + bj)   SEARCH(x, h) = sigmoid(ws . [x; h] + bs)  (right)
  WRITE(x, h) = tanh(Ww [x; h] + bw)
  soft: a_i = prod over the levels of p or 1 - p on leaf i's path; r = sum a_i x_i;
        x_i <- (1 - a_i) x_i + a_i WRITE(x_i, h); the summaries rebuilt
  hard: at each node the likelier child (right when p >= 0.5); r = x_leaf;
        x_leaf <- WRITE(x_leaf, h); the summaries rebuilt

Format, per case: "case MODE M C N" (MODE soft or hard), then "join_w" (M x 2M), "join_b",
"search_w" (M + C), "search_b", "write_w" (M x (M + C)), "write_b", "leaves" (N x M), "h"
(C), and the expected "out_summaries" ((N - 1) x M, heap order: root, its children, ...),
"out_leaves", "out_weights" (N), "out_read" (M), and for hard "out_leaf".
   python3 testdata/make_ham_golden.py
"""
import os

import numpy as np


def summaries(leaves, Wj, bj):
    levels = [leaves]
    while len(levels[0]) > 1:
        x = levels[0]
        pairs = x.reshape(len(x) // 2, -1)  # [x_2j, x_2j+1] side by side
        levels.insert(0, np.tanh(pairs @ Wj.T + bj))
    return levels  # root level first


def search_p(levels, ws, bs, h):
    m = levels[0].shape[1]
    return [1.0 / (1.0 + np.exp(-(lv @ ws[:m] + ws[m:] @ h + bs))) for lv in levels[:-1]]


def step(mode, Wj, bj, ws, bs, Ww, bw, leaves, h):
    n, m = leaves.shape
    d = int(np.log2(n))
    levels = summaries(leaves, Wj, bj)
    probs = search_p(levels, ws, bs, h)
    write = lambda x: np.tanh(np.concatenate([x, h]) @ Ww.T + bw)
    new = leaves.copy()
    if mode == "soft":
        a = np.ones(n)
        for i in range(n):
            for l in range(d):
                node = i >> (d - l)  # index within level l
                right = (i >> (d - l - 1)) & 1
                p = probs[l][node]
                a[i] *= p if right else 1.0 - p
        r = a @ leaves
        for i in range(n):
            new[i] = (1.0 - a[i]) * leaves[i] + a[i] * write(leaves[i])
        leaf = None
    else:
        node = 0
        for l in range(d):
            node = 2 * node + (1 if probs[l][node] >= 0.5 else 0)
        leaf = node
        a = np.zeros(n)
        a[leaf] = 1.0
        r = leaves[leaf].copy()
        new[leaf] = write(leaves[leaf])
    out = summaries(new, Wj, bj)
    summ = np.concatenate(out[:-1]) if d > 0 else np.zeros((0, m))
    return summ, new, a, r, leaf


def fmt(name, xs):
    return name + " " + " ".join(repr(float(x)) for x in np.ravel(xs)) + "\n"


def main():
    rng = np.random.default_rng(1602)
    out = []
    for mode in ("soft", "hard"):
        for n, m, c in ((2, 1, 1), (4, 2, 3), (8, 3, 2), (16, 4, 4), (32, 2, 5)):
            Wj = rng.normal(size=(m, 2 * m)) * 0.8
            bj = rng.normal(size=m) * 0.3
            ws = rng.normal(size=m + c) * 1.5
            bs = float(rng.normal() * 0.3)
            Ww = rng.normal(size=(m, m + c)) * 0.8
            bw = rng.normal(size=m) * 0.3
            leaves = rng.uniform(-1, 1, (n, m))
            h = rng.uniform(-1, 1, c)
            summ, new, a, r, leaf = step(mode, Wj, bj, ws, bs, Ww, bw, leaves, h)
            text = f"case {mode} {m} {c} {n}\n" + fmt("join_w", Wj) + fmt("join_b", bj)
            text += fmt("search_w", ws) + fmt("search_b", [bs]) + fmt("write_w", Ww)
            text += fmt("write_b", bw) + fmt("leaves", leaves) + fmt("h", h)
            text += fmt("out_summaries", summ) + fmt("out_leaves", new)
            text += fmt("out_weights", a) + fmt("out_read", r)
            if mode == "hard":
                text += f"out_leaf {leaf}\n"
            out.append(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ham", "cases.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("".join(out))
    print(f"wrote {path}: {len(out)} cases")


if __name__ == "__main__":
    main()
