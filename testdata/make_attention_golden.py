#!/usr/bin/python3
"""Golden files for lib/attnkit/attention and attn-score, computed independently in NumPy
(float64 maths on float32-representable inputs).

    /usr/bin/python3 testdata/make_attention_golden.py     # writes testdata/attention/

Deterministic: fixed seed, inputs rounded to float32 and written with 9 significant digits
(read back exactly). Outputs are text, one row per line, a blank line between the matrices
of a batch; masked scores are written as -inf.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention")
rng = np.random.default_rng(20240521)


def f32(a):
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def fmt(x):
    if np.isneginf(x):
        return "-inf"
    return "%.9g" % x


def save_text(name, a, header=None):
    a = np.asarray(a, dtype=np.float64)
    mats = [a] if a.ndim == 2 else list(a)
    with open(os.path.join(OUT, name), "w") as f:
        if header:
            f.write("# %s\n" % header)
        for m, mat in enumerate(mats):
            if m:
                f.write("\n")
            for row in mat:
                f.write(" ".join(fmt(x) for x in row) + "\n")


def save_npy(name, a):
    np.save(os.path.join(OUT, name), np.asarray(a, dtype=np.float32))


# ---- the reference maths (float64)
def score(kind, q, k, params=None, beta=1.0):
    if kind == "dot":
        return q @ k.T
    if kind == "scaled-dot":
        return q @ k.T / np.sqrt(k.shape[1])
    if kind == "bilinear":
        W = params["W"]                                   # [d_k, d_q]
        return np.einsum("jk,kq,iq->ij", k, W, q)         # k_j^T W q_i
    if kind == "additive":
        Wk, Wq, v = params["Wk"], params["Wq"], params["v"]
        pk = k @ Wk.T                                     # [n_k, d_a]
        pq = q @ Wq.T                                     # [n_q, d_a]
        return np.tanh(pq[:, None, :] + pk[None, :, :]) @ v
    if kind == "cosine":
        nq = np.linalg.norm(q, axis=1, keepdims=True)
        nk = np.linalg.norm(k, axis=1, keepdims=True)
        uq = np.divide(q, nq, out=np.zeros_like(q), where=nq > 0)
        uk = np.divide(k, nk, out=np.zeros_like(k), where=nk > 0)
        return beta * (uq @ uk.T)
    raise ValueError(kind)


def masked(s, causal=False, mask=None):
    s = s.copy()
    n_q, n_k = s.shape
    if causal:  # query i sees keys j <= i (aligned at the start, like numpy.tril)
        s[np.triu(np.ones((n_q, n_k), dtype=bool), k=1)] = -np.inf
    if mask is not None:
        s[mask == 0] = -np.inf
    return s


def softmax(s):
    w = np.zeros_like(s)
    for i, row in enumerate(s):
        if np.all(np.isneginf(row)):
            continue  # every key masked: zero weights
        e = np.exp(row - row.max())
        w[i] = e / e.sum()
    return w


def argmax_onehot(s):
    w = np.zeros_like(s)
    for i, row in enumerate(s):
        if not np.all(np.isneginf(row)):
            w[i, int(np.argmax(row))] = 1.0  # numpy: first index on ties
    return w


def write_case(prefix, s, v):
    w = softmax(s)
    save_text(prefix + "_scores.txt", s)
    save_text(prefix + "_weights.txt", w)
    save_text(prefix + "_context.txt", w @ v)


def main():
    os.makedirs(OUT, exist_ok=True)
    n_q, n_k, d_k, d_q, d_v, d_a = 5, 6, 4, 3, 3, 7
    Q = f32(rng.normal(size=(n_q, d_k)))
    K = f32(rng.normal(size=(n_k, d_k)))
    V = f32(rng.normal(size=(n_k, d_v)))
    Qx = f32(rng.normal(size=(n_q, d_q)))               # d_q != d_k for bilinear/additive
    Qc = f32(Q * 3.0)
    Qc[2] = 0.0                                          # a zero query: cosine 0 everywhere
    for name, a in [("Q", Q), ("K", K), ("V", V), ("Qx", Qx), ("Qc", Qc)]:
        save_text(name + ".txt", a)
    for name, a in [("Q", Q), ("K", K), ("V", V)]:
        save_npy(name + ".npy", a)
    save_text("K_bad.txt", K[:, :3])                     # 3 columns against Q's 4

    bil = {"W": f32(rng.normal(size=(d_k, d_q)))}
    add = {"Wk": f32(rng.normal(size=(d_a, d_k)) * 0.5),
           "Wq": f32(rng.normal(size=(d_a, d_q)) * 0.5),
           "v": f32(rng.normal(size=(d_a,)))}
    np.savez(os.path.join(OUT, "bilinear.npz"), **{k: v.astype(np.float32) for k, v in bil.items()})
    np.savez(os.path.join(OUT, "additive.npz"), **{k: v.astype(np.float32) for k, v in add.items()})
    # additive parameters without v, and with a mis-shaped Wq
    np.savez(os.path.join(OUT, "additive_no_v.npz"),
             Wk=add["Wk"].astype(np.float32), Wq=add["Wq"].astype(np.float32))
    np.savez(os.path.join(OUT, "additive_bad_wq.npz"), Wk=add["Wk"].astype(np.float32),
             Wq=add["Wq"][:, :2].astype(np.float32), v=add["v"].astype(np.float32))

    write_case("dot", score("dot", Q, K), V)
    write_case("scaled-dot", score("scaled-dot", Q, K), V)
    write_case("cosine", score("cosine", Qc, K, beta=2.5), V)   # --beta 2.5
    write_case("bilinear", score("bilinear", Qx, K, bil), V)
    write_case("additive", score("additive", Qx, K, add), V)

    # masks (scaled-dot): causal with n_q = 5 < n_k = 6, and a 0/1 file with row 2 all zero
    s = score("scaled-dot", Q, K)
    write_case("causal", masked(s, causal=True), V)
    mask = (rng.random(size=(n_q, n_k)) < 0.6).astype(np.float64)
    mask[2] = 0.0
    mask[0, 0] = 1.0
    save_text("mask.txt", mask, "0/1 mask; row 2 masks every key")
    write_case("mask", masked(s, mask=mask), V)
    bad = mask.copy()
    bad[1, 3] = 0.5
    save_text("mask_bad.txt", bad)

    # hard argmax with ties (dot scores of small integers are exact in float32)
    tq = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.float64)
    tk = np.array([[2, 1], [1, 2], [2, 1], [1, 2], [0, 0]], dtype=np.float64)
    save_text("tie_Q.txt", tq)
    save_text("tie_K.txt", tk)
    save_text("tie_argmax.txt", argmax_onehot(score("dot", tq, tk)))
    # argmax under the causal mask (row 0 sees only key 0)
    save_text("tie_argmax_causal.txt", argmax_onehot(masked(score("dot", tq, tk), causal=True)))

    # a batch: Q and K are 3-D (2 items), V is shared
    B = 2
    Qb = f32(rng.normal(size=(B, n_q, d_k)))
    Kb = f32(rng.normal(size=(B, n_k, d_k)))
    save_npy("Qb.npy", Qb)
    save_npy("Kb.npy", Kb)
    save_text("Kb.txt", Kb)
    sb = np.stack([score("scaled-dot", Qb[b], Kb[b]) for b in range(B)])
    wb = np.stack([softmax(sb[b]) for b in range(B)])
    save_text("batch_weights.txt", wb)
    save_text("batch_context.txt", np.stack([wb[b] @ V for b in range(B)]))
    # the batch with a causal mask and additive scores (K shared per item)
    sab = np.stack([masked(score("additive", Qb[b][:, :3], Kb[b], add), causal=True)
                    for b in range(B)])
    save_npy("Qxb.npy", Qb[:, :, :3])
    wab = np.stack([softmax(sab[b]) for b in range(B)])
    save_text("batch_additive_causal_context.txt", np.stack([wab[b] @ V for b in range(B)]))


if __name__ == "__main__":
    main()
