#!/usr/bin/env python3
"""Golden files for the IDX reader (lib/attnkit/io/idx.cpp), written by an independent
implementation: Python's struct and gzip modules and NumPy's big-endian dtypes.

For each IDX element type, a small tensor of values that type holds exactly, as
testdata/idx/<type>.idx (plain), <type>.idx.gz (gzip) and <type>.npy (the same values as
float32, what the reader must give). Run from the repository's top:
    /usr/bin/python3 testdata/make_idx_golden.py
"""
import gzip
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idx")
rng = np.random.default_rng(20261125)

# code, NumPy big-endian dtype, shape, values
cases = {
    "u8": (0x08, ">u1", (3, 4, 5), rng.integers(0, 256, (3, 4, 5))),
    "i8": (0x09, ">i1", (7,), rng.integers(-128, 128, (7,))),
    "i16": (0x0B, ">i2", (2, 3), rng.integers(-32768, 32768, (2, 3))),
    "i32": (0x0C, ">i4", (4, 2), rng.integers(-(1 << 24), 1 << 24, (4, 2))),  # exact in float32
    "f32": (0x0D, ">f4", (2, 2, 2), rng.standard_normal((2, 2, 2))),
    "f64": (0x0E, ">f8", (3, 1), np.array([[0.1], [-2.5e-3], [1e30]])),
}
os.makedirs(OUT, exist_ok=True)
for name, (code, dtype, shape, values) in cases.items():
    a = np.asarray(values).astype(dtype).reshape(shape)
    header = struct.pack(">BBBB", 0, 0, code, len(shape)) + b"".join(
        struct.pack(">I", d) for d in shape)
    raw = header + a.tobytes()
    with open(os.path.join(OUT, name + ".idx"), "wb") as f:
        f.write(raw)
    with open(os.path.join(OUT, name + ".idx.gz"), "wb") as f:
        # mtime 0: the same bytes on every run
        f.write(gzip.compress(raw, mtime=0))
    np.save(os.path.join(OUT, name + ".npy"), a.astype(np.float32))
