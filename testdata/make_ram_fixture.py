#!/usr/bin/env python3
"""Small image sets in image-gen's layout (images [N, H, W] float32 in [0, 1], labels [N])
for tests/cli/ram.sh: the toy task of tests/unit/ram_test.cpp (12 x 12 noise whose top-left
6 x 6 quarter says the class: all 1 for class 1, all 0 for class 0), and files that must be
refused (another image size, a label that is not a class id, a missing member).
Run from the repository's top:  /usr/bin/python3 testdata/make_ram_fixture.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ram")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20261125)


def corner(n):
    y = rng.integers(0, 2, n)
    x = rng.integers(0, 2, (n, 12, 12)).astype(np.float32)
    x[:, :6, :6] = y[:, None, None]
    return x, y.astype(np.float32)


x, y = corner(256)
np.savez(os.path.join(OUT, "corner-train.npz"), images=x, labels=y)
x, y = corner(100)
np.savez(os.path.join(OUT, "corner-test.npz"), images=x, labels=y)
np.savez(os.path.join(OUT, "size10.npz"), images=x[:4, :10, :10], labels=y[:4])
bad = y[:4].copy()
bad[2] = 7
np.savez(os.path.join(OUT, "label7.npz"), images=x[:4], labels=bad)
np.savez(os.path.join(OUT, "nolabels.npz"), images=x[:4])
