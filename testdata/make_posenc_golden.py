#!/usr/bin/python3
"""Golden files for posenc (lib/attnkit/posenc, tools/posenc), computed in NumPy float64.

Run from anywhere with Debian's Python (its numpy):  /usr/bin/python3 testdata/make_posenc_golden.py
Writes testdata/posenc/:
  cases.tsv        name, length, dim, base, offset, layout (one encoding case per line)
  <name>.txt       the L x D encoding of that case (text, 9 decimals: exact to < 1e-9)
  add_x.txt/.npy   a float32 5 x 6 matrix X;  add_x.expected.txt = X + encoding(5, 6)
  add_b.txt        a float32 2 x 3 x 4 batch B; add_b.expected.txt = B + encoding(3, 4) per item
The tests read these files; they never run Python.
"""
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "posenc")

# name, L, D, base, offset, layout
CASES = [
    ("basic", 8, 16, 10000.0, 0, "interleaved"),
    ("split", 8, 16, 10000.0, 0, "split"),
    ("odd_dim", 6, 7, 10000.0, 0, "interleaved"),
    ("odd_dim_split", 6, 7, 10000.0, 0, "split"),
    ("dim1", 5, 1, 10000.0, 0, "interleaved"),
    ("offset", 4, 10, 10000.0, 37, "interleaved"),
    ("base100", 6, 8, 100.0, 3, "split"),
    # Large positions: accuracy of the angle p / base^(2i/D) at p ~ 10^6.
    ("long", 8, 512, 10000.0, 1000000, "interleaved"),
]


def encoding(length, dim, base, offset, layout):
    """Straight from the formula, in float64: column pair i has angle p / base^(2i/D)."""
    p = np.arange(offset, offset + length, dtype=np.float64)[:, None]
    n_sin, n_cos = (dim + 1) // 2, dim // 2
    i_sin = np.arange(n_sin, dtype=np.float64)
    i_cos = np.arange(n_cos, dtype=np.float64)
    sin = np.sin(p / np.power(base, 2.0 * i_sin / dim))
    cos = np.cos(p / np.power(base, 2.0 * i_cos / dim))
    out = np.empty((length, dim), dtype=np.float64)
    if layout == "interleaved":
        out[:, 0::2] = sin
        out[:, 1::2] = cos
    else:
        out[:, :n_sin] = sin
        out[:, n_sin:] = cos
    return out


def write_matrix(f, m, fmt):
    for row in m:
        f.write(" ".join(fmt % v for v in row) + "\n")


def write_text(path, t, fmt="%.9f", header=None):
    with open(path, "w") as f:
        if header:
            f.write("# " + header + "\n")
        if t.ndim == 2:
            write_matrix(f, t, fmt)
        else:
            for k, m in enumerate(t):
                if k:
                    f.write("\n")
                write_matrix(f, m, fmt)


def main():
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, "cases.tsv"), "w") as f:
        f.write("# name\tlength\tdim\tbase\toffset\tlayout\n")
        for name, length, dim, base, offset, layout in CASES:
            f.write(f"{name}\t{length}\t{dim}\t{base:g}\t{offset}\t{layout}\n")
            pe = encoding(length, dim, base, offset, layout)
            write_text(os.path.join(HERE, name + ".txt"), pe)

    rng = np.random.default_rng(20240801)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    np.save(os.path.join(HERE, "add_x.npy"), x)
    write_text(os.path.join(HERE, "add_x.txt"), x, fmt="%.9g")
    write_text(os.path.join(HERE, "add_x.expected.txt"),
               x.astype(np.float64) + encoding(5, 6, 10000.0, 0, "interleaved"))

    b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    write_text(os.path.join(HERE, "add_b.txt"), b, fmt="%.9g")
    write_text(os.path.join(HERE, "add_b.expected.txt"),
               b.astype(np.float64) + encoding(3, 4, 10000.0, 0, "interleaved")[None])


if __name__ == "__main__":
    main()
