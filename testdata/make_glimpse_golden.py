#!/usr/bin/env python3
"""Golden files for the glimpse sensor (lib/attnkit/vision/glimpse.h), by an independent
NumPy crop-and-resize: the image is zero-padded by the largest patch's side on every edge,
each patch is cut out of the padded image with plain slicing, and brought down to g x g by
reshaping it to (g, r, g, r) and averaging over the r x r blocks.

Each case is testdata/glimpse/<name>.npz with images [N, H, W], locations [N, 2] (x, y),
config [3] = (g, k, s) and glimpses [N, k, g, g]. Locations are random in [-1.4, 1.4]^2
plus the corners, edges, centre and points beyond the border (patches partly or wholly
outside the image). Run from the repository's top:
    /usr/bin/python3 testdata/make_glimpse_golden.py
"""
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "glimpse")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20261125)


def crop_resize(img, x, y, g, k, s):
    h, w = img.shape
    big = g * s ** (k - 1)
    pad = np.zeros((h + 4 * big, w + 4 * big), dtype=np.float64)
    off = 2 * big
    pad[off:off + h, off:off + w] = img
    cy = (float(y) + 1.0) * h / 2.0
    cx = (float(x) + 1.0) * w / 2.0
    out = []
    for j in range(k):
        side = g * s ** j
        top = math.floor(cy - side / 2.0 + 0.5)
        left = math.floor(cx - side / 2.0 + 0.5)
        assert -off <= top and top + side <= h + off, "location too far out for the padding"
        patch = pad[off + top:off + top + side, off + left:off + left + side]
        r = side // g
        out.append(patch.reshape(g, r, g, r).mean(axis=(1, 3)))
    return np.stack(out)


def case(name, n, h, w, g, k, s):
    images = rng.random((n, h, w)).astype(np.float32)
    fixed = [(-1, -1), (1, 1), (-1, 1), (1, -1), (0, 0), (1, 0), (0, -1), (1.3, -1.2),
             (-1.5, 0.2), (0.97, 0.99), (-0.99, -0.95)]
    locs = rng.uniform(-1.4, 1.4, size=(n, 2))
    for i, xy in enumerate(fixed[:n]):
        locs[i] = xy
    locs = locs.astype(np.float32)
    out = np.stack([crop_resize(images[i].astype(np.float64), locs[i, 0], locs[i, 1], g, k, s)
                    for i in range(n)])
    np.savez(os.path.join(OUT, name + ".npz"), images=images, locations=locs,
             config=np.array([g, k, s], dtype=np.float32), glimpses=out.astype(np.float32))


case("g4_k3_s2", 24, 20, 17, 4, 3, 2)     # odd width, patches 4, 8, 16
case("g3_k2_s3", 16, 11, 13, 3, 2, 3)     # odd sides, patches 3, 9
case("g12_k3_s2", 16, 60, 60, 12, 3, 2)   # the pipeline's canvases: 12, 24, 48
case("g5_k1_s1", 12, 9, 8, 5, 1, 1)       # one patch, no resampling
case("g2_k4_s2", 12, 28, 28, 2, 4, 2)     # 2, 4, 8, 16 at Fashion-MNIST's size
