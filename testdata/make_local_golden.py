#!/usr/bin/python3
"""Golden files for Luong's location score, local attention (monotonic and predictive) and
key padding in attn-score (lib/attnkit/attention/attention.h), computed with PyTorch tensor
ops in float64 on float32-representable inputs (Luong, Pham & Manning 2015, eqs. 8-10).

    /usr/bin/python3 testdata/make_local_golden.py      # writes testdata/local/

Outputs are text (%.9g; -inf for masked scores), one row per line, a blank line between the
matrices of a batch.
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "local")
torch.manual_seed(20240602)
NEG = float("-inf")


def save_text(name, a):
    a = np.asarray(a, dtype=np.float64)
    mats = [a] if a.ndim == 2 else list(a)
    with open(os.path.join(OUT, name), "w") as f:
        for m, mat in enumerate(mats):
            if m:
                f.write("\n")
            for row in mat:
                f.write(" ".join("-inf" if np.isneginf(x) else "%.9g" % x for x in row) + "\n")


def r(*shape, scale=1.0):
    return (torch.randn(*shape) * scale).float().double()


def softmax(s):
    w = torch.softmax(s, -1)
    return torch.nan_to_num(w, nan=0.0)  # all-masked rows: zero weights


def write(prefix, s, w, v):
    save_text(prefix + "_scores.txt", s)
    save_text(prefix + "_weights.txt", w)
    save_text(prefix + "_context.txt", w @ v)


def main():
    os.makedirs(OUT, exist_ok=True)
    n_q, n_k, d = 5, 9, 4
    Q, K, V = r(n_q, d), r(n_k, d), r(n_k, 3)
    for n, t in (("Q", Q), ("K", K), ("V", V)):
        save_text(n + ".txt", t)
    Wa = r(n_k, d)
    Wp, vp = r(3, d), r(3, scale=0.7)
    np.savez(os.path.join(OUT, "params.npz"), Wa=Wa.float().numpy(), Wp=Wp.float().numpy(),
             vp=vp.float().numpy())
    np.savez(os.path.join(OUT, "wa_bad.npz"), Wa=r(n_k - 1, d).float().numpy())
    np.savez(os.path.join(OUT, "no_vp.npz"), Wp=Wp.float().numpy())
    # Location: a_i = softmax(Wa q_i).
    s = Q @ Wa.T
    write("location", s, softmax(s), V)
    sd = Q @ K.T / np.sqrt(d)
    j = torch.arange(n_k, dtype=torch.float64)[None, :]
    # Local-m, D = 2: keys |j - i| <= D.
    i = torch.arange(n_q, dtype=torch.float64)[:, None]
    s = sd.masked_fill((j - i).abs() > 2, NEG)
    write("local_m", s, softmax(s), V)
    # Local-p, D = 2: p_i = n_k sigmoid(vp . tanh(Wp q_i)); window |j - p_i| <= D; softmax over
    # the window times the Gaussian exp(-(j - p_i)^2 / (2 sigma^2)), sigma = D / 2.
    D = 2
    p = n_k * torch.sigmoid(torch.tanh(Q @ Wp.T) @ vp)[:, None]
    save_text("local_p_positions.txt", p)
    s = sd.masked_fill((j - p).abs() > D, NEG)
    w = softmax(s) * torch.exp(-(j - p) ** 2 / (2 * (D / 2) ** 2))
    write("local_p", s, w, V)
    # Local-p with Luong's "general" (bilinear) score, W from params too.
    W = r(d, d)
    np.savez(os.path.join(OUT, "general.npz"), W=W.float().numpy(), Wp=Wp.float().numpy(),
             vp=vp.float().numpy())
    sg = (Q @ W.T @ K.T).masked_fill((j - p).abs() > D, NEG)
    write("local_p_general", sg, softmax(sg) * torch.exp(-(j - p) ** 2 / 2.0), V)
    # Key padding over a batch: lengths 9 and 4 (and a 0 that empties every row).
    Qb, Kb, Vb = r(3, n_q, d), r(3, n_k, d), r(3, n_k, 3)
    for n, t in (("Qb", Qb), ("Kb", Kb), ("Vb", Vb)):
        np.save(os.path.join(OUT, n + ".npy"), t.float().numpy())
    lengths = [9, 4, 0]
    np.savetxt(os.path.join(OUT, "lengths.txt"), np.array(lengths), fmt="%d")
    kpm = torch.arange(n_k)[None, :] >= torch.tensor(lengths)[:, None]
    s = (Qb @ Kb.transpose(1, 2) / np.sqrt(d)).masked_fill(kpm[:, None, :], NEG)
    write("padding", s, softmax(s), Vb)


if __name__ == "__main__":
    main()
