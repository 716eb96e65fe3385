#!/usr/bin/env python3
"""Golden cases for the neural stack, queue and deque (Grefenstette et al. 2015, eqs. 1-3 and
the queue's and deque's variants), in float64 with NumPy, written independently of the C++
(vectorised with cumulative sums instead of loops). Makes testdata/stackmem/cases.txt, read by
tests/unit/stackmem_test.cpp and tests/cli/stackmem-step.sh.

Deque (as memory/stackmem/memory.h defines it): pop u_top from the top, then u_bot from the bottom of
what is left, push v_bot (d_bot) at the bottom and v_top (d_top) at the top, read both ends.

Format, per case: a line "case KIND M N", then the lines "strengths ...", "values ..." (N x M,
row-major, bottom first), "push D U [D_BOT U_BOT]", "value ...", ["value_bottom ..."], and the
expected "out_strengths ...", "out_values ...", "out_read ...". Numbers as repr(float).
   python3 testdata/make_stackmem_golden.py
"""
import os

import numpy as np


def pop(s, u, from_top):
    if from_top:  # strength above i: the sum over j > i
        above = s.sum() - np.cumsum(s)
    else:  # below i: the sum over j < i
        above = np.cumsum(s) - s
    return np.maximum(0.0, s - np.maximum(0.0, u - above))


def read(s, v, from_top):
    above = (s.sum() - np.cumsum(s)) if from_top else (np.cumsum(s) - s)
    w = np.minimum(s, np.maximum(0.0, 1.0 - above))
    return w @ v if len(s) else np.zeros(v.shape[1])


def step(kind, s, v, d, u, val, d_bot=0.0, u_bot=0.0, val_bot=None):
    if kind in ("stack", "queue"):
        top = kind == "stack"
        s2 = np.concatenate([pop(s, u, top), [d]])
        v2 = np.vstack([v, val[None, :]])
        return s2, v2, read(s2, v2, top)
    s1 = pop(pop(s, u, True), u_bot, False)
    s2 = np.concatenate([[d_bot], s1, [d]])
    v2 = np.vstack([val_bot[None, :], v, val[None, :]])
    return s2, v2, np.concatenate([read(s2, v2, True), read(s2, v2, False)])


def fmt(name, xs):
    return name + " " + " ".join(repr(float(x)) for x in np.ravel(xs)) + "\n"


def main():
    rng = np.random.default_rng(84)
    out = []
    for kind in ("stack", "queue", "deque"):
        for n, m in ((0, 1), (1, 2), (3, 2), (5, 3), (8, 4), (8, 4), (12, 1)):
            s = rng.uniform(0, 1, n)
            if n >= 8:  # some exact zeros and ones, as trained memories have
                s[rng.integers(0, n, 2)] = 0.0
                s[rng.integers(0, n, 1)] = 1.0
            v = rng.normal(size=(n, m))
            d, u = rng.uniform(0, 1, 2)
            val = rng.normal(size=m)
            db, ub = rng.uniform(0, 1, 2)
            vb = rng.normal(size=m)
            s2, v2, r = step(kind, s, v.reshape(n, m), d, u, val, db, ub, vb)
            text = f"case {kind} {m} {n}\n" + fmt("strengths", s) + fmt("values", v)
            text += fmt("push", [d, u, db, ub] if kind == "deque" else [d, u]) + fmt("value", val)
            if kind == "deque":
                text += fmt("value_bottom", vb)
            text += fmt("out_strengths", s2) + fmt("out_values", v2) + fmt("out_read", r)
            out.append(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stackmem", "cases.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("".join(out))
    print(f"wrote {path}: {len(out)} cases")


if __name__ == "__main__":
    main()
