#!/usr/bin/env python3
"""Golden files for the picture readers (lib/attnkit/io/image.cpp): PGM (P2, P5; 8 and 16
bits) and PNG (grey 8 and 16 bits, RGB) written byte by byte here (struct, zlib), each with
the tensor its reader must give (.npy, float32 in [0,1]); and damaged files for the errors.
Run from the repository: python3 testdata/make_image_golden.py"""
import os
import struct
import zlib

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image")
os.makedirs(out, exist_ok=True)


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def want(name, values):
    np.save(os.path.join(out, name + ".npy"), np.asarray(values, dtype=np.float32))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width, height, depth, colour_type, rows):
    """rows: bytes of each row without the filter byte."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


rng = np.random.default_rng(17)

# P5, 8 bits, 5 wide x 3 high (every byte value class: 0, 255, between).
a = rng.integers(0, 256, size=(3, 5)).astype(np.uint8)
a[0, 0], a[2, 4] = 0, 255
save("grey8.pgm", b"P5\n# made by make_image_golden.py\n5 3\n255\n" + a.tobytes())
want("grey8.pgm", a / 255.0)
# P2, maxval 15, comments and ragged white space.
b = rng.integers(0, 16, size=(2, 4))
text = "P2 # ascii\n4 2 15\n" + " ".join(map(str, b[0])) + "\n# a comment\n  " + \
    "\t".join(map(str, b[1])) + "\n\n"
save("grey4_ascii.pgm", text.encode())
want("grey4_ascii.pgm", b / 15.0)
# P5, 16 bits (big-endian), maxval 65535, 4 x 2; and maxval 1000.
c = rng.integers(0, 65536, size=(2, 4)).astype(">u2")
save("grey16.pgm", b"P5 4 2 65535\n" + c.tobytes())
want("grey16.pgm", c.astype(np.float64) / 65535.0)
d = rng.integers(0, 1001, size=(3, 2)).astype(">u2")
save("grey1000.pgm", b"P5\n2 3\n1000\n" + d.tobytes())
want("grey1000.pgm", d.astype(np.float64) / 1000.0)

# PNG grey 8-bit 5 x 3; grey 16-bit 4 x 2; RGB 8-bit 3 x 2 (luma 0.299 R + 0.587 G + 0.114 B).
save("grey8.png", png(5, 3, 8, 0, [r.tobytes() for r in a]))
want("grey8.png", a / 255.0)
save("grey16.png", png(4, 2, 16, 0, [r.tobytes() for r in c]))
want("grey16.png", c.astype(np.float64) / 65535.0)
e = rng.integers(0, 256, size=(2, 3, 3)).astype(np.uint8)
e[0, 0] = (255, 0, 0)
e[1, 2] = (90, 90, 90)
save("rgb.png", png(3, 2, 8, 2, [r.tobytes() for r in e]))
want("rgb.png", (0.299 * e[..., 0] + 0.587 * e[..., 1] + 0.114 * e[..., 2]) / 255.0)

# Damaged files.
save("cut.pgm", b"P5\n5 3\n255\n" + a.tobytes()[:10])
save("huge.pgm", b"P5\n100000 100000\n255\n" + bytes(64))
save("above.pgm", b"P2\n2 1\n10\n3 11\n")
save("cut.png", png(5, 3, 8, 0, [r.tobytes() for r in a])[:45])
save("huge.png", png(50000, 50000, 8, 0, [b""])[:33] + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
     + chunk(b"IEND", b""))
