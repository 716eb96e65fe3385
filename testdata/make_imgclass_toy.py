#!/usr/bin/env python3
"""A toy image-classification set for tests/cli/img-train.sh (NumPy): 8x8 binary images,
class 0 a 3x3 square somewhere in the top-left quarter, class 1 in the bottom-right one, class
2 a square in the top-right one; train 300, valid 150 (classes in turn), and nolabels.npz (no
labels) and big.npz (10x10 images) for the errors.
Run from the repository: python3 testdata/make_imgclass_toy.py"""
import os

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imgclass")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(5)
corner = {0: (0, 0), 1: (4, 4), 2: (0, 4)}


def make(n, size=8):
    x = np.zeros((n, size, size), np.float32)
    y = np.arange(n) % 3
    for i in range(n):
        r, c = corner[y[i]]
        r += rng.integers(0, 2)
        c += rng.integers(0, 2)
        x[i, r:r + 3, c:c + 3] = 1.0
    return x, y.astype(np.float32)


x, y = make(300)
np.savez_compressed(os.path.join(out, "train.npz"), images=x, labels=y)
x, y = make(150)
np.savez_compressed(os.path.join(out, "valid.npz"), images=x, labels=y)
np.savez_compressed(os.path.join(out, "nolabels.npz"), images=x)
x, y = make(6, 10)
np.savez_compressed(os.path.join(out, "big.npz"), images=x, labels=y)
