#!/usr/bin/python3
"""Golden files for structured attention (lib/attnkit/attention/structured.h, attn-struct):
the linear-chain CRF's and the projective dependency CRF's log partition, marginals, marginal
gradients (Hessian-vector products), most likely structures and contexts, computed
independently with PyTorch autograd (float64) through log-space dynamic programmes written
here: the forward algorithm for the chain, Eisner's inside algorithm for the tree. The
marginals are the gradient of log Z, the Hessian-vector products autograd's double backward,
the argmax tree the (sub)gradient of the max-plus Eisner score.

    /usr/bin/python3 testdata/make_struct_golden.py     # writes testdata/struct/

Deterministic: fixed seed, inputs rounded to float32 and written with 9 significant digits
(read back exactly); outputs with 17. Text, one row per line, a blank line between the
matrices of a batch. Padded positions (beyond an item's length) have marginal 0, context
rows 0 and head -1.
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "struct")
torch.manual_seed(20261126)
torch.set_default_dtype(torch.float64)


def f32(t):
    return t.float().double()


def save_text(name, a, digits=17):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    mats = [a] if a.ndim == 2 else list(a)
    with open(os.path.join(OUT, name), "w") as f:
        for m, mat in enumerate(mats):
            if m:
                f.write("\n")
            for row in mat:
                f.write(" ".join("%.*g" % (digits, x) for x in row) + "\n")


def chain_log_z(u, P):
    """Forward algorithm: u [n] (score of z_i = 1), P [2, 2] shared by the links."""
    n = u.shape[0]
    if n == 0:
        return torch.zeros(())
    zero = torch.zeros((), dtype=u.dtype)
    alpha = torch.stack([zero, u[0]])
    for i in range(1, n):
        unary = torch.stack([zero, u[i]])
        alpha = torch.logsumexp(alpha[:, None] + P, dim=0) + unary
    return torch.logsumexp(alpha, dim=0)


def eisner(A, agg):
    """Eisner's inside algorithm over positions 0..n (0 the root), A [n, n] in torch-struct's
    layout (A[i, j]: head i of word j, A[j, j]: the root heads j). agg: log-sum-exp or max
    over a list of scores."""
    n = A.shape[0]
    if n == 0:
        return torch.zeros(())

    def S(h, d):  # positions
        return A[d - 1, d - 1] if h == 0 else A[h - 1, d - 1]

    zero = torch.zeros((), dtype=A.dtype)
    C, I = {}, {}
    for s in range(n + 1):
        C[s, s, "L"] = zero
        C[s, s, "R"] = zero
    for w in range(1, n + 1):
        for s in range(0, n + 1 - w):
            t = s + w
            terms = [C[s, r, "R"] + C[r + 1, t, "L"] for r in range(s, t)
                     if (s, r, "R") in C and (r + 1, t, "L") in C]
            inner = agg(terms)
            I[s, t, "R"] = inner + S(s, t)
            if s > 0:
                I[s, t, "L"] = inner + S(t, s)
            left = [C[s, r, "L"] + I[r, t, "L"] for r in range(s, t)
                    if (s, r, "L") in C and (r, t, "L") in I]
            if left:
                C[s, t, "L"] = agg(left)
            C[s, t, "R"] = agg([I[s, r, "R"] + C[r, t, "R"] for r in range(s + 1, t + 1)])
    return C[0, n, "R"]


def lse(terms):
    return torch.logsumexp(torch.stack(terms), dim=0)


def mx(terms):
    return torch.max(torch.stack(terms))


def main():
    os.makedirs(OUT, exist_ok=True)

    # ---- chain: a batch of 3, n = 7, lengths 7, 4, 1; P shared by the links and the batch
    B, n = 3, 7
    lengths = [7, 4, 1]
    U = f32(torch.randn(B, n) * 1.5)
    P = f32(torch.randn(2, 2))
    G = f32(torch.randn(B, n))  # the direction: d loss / d marginals
    V = f32(torch.randn(B, n, 4))
    save_text("chain_unary.txt", U, 9)
    save_text("chain_pairwise.txt", P, 9)
    save_text("chain_lengths.txt", np.array(lengths)[:, None], 9)
    save_text("chain_dir.txt", G, 9)
    save_text("chain_values.txt", V, 9)
    u = U.clone().requires_grad_(True)
    p = P.clone().requires_grad_(True)
    logz, marg = [], torch.zeros(B, n)
    loss = torch.zeros(())
    for b, L in enumerate(lengths):
        z = chain_log_z(u[b, :L], p)
        (m,) = torch.autograd.grad(z, u, create_graph=True)
        marg[b, :L] = m[b, :L].detach()
        loss = loss + (m[b, :L] * G[b, :L]).sum()
        logz.append(z.item())
    gu, gp = torch.autograd.grad(loss, (u, p))
    save_text("chain_logz.txt", np.array(logz))
    save_text("chain_marginals.txt", marg)
    save_text("chain_hvp_unary.txt", gu)
    save_text("chain_hvp_pairwise.txt", gp)
    save_text("chain_context.txt", (marg[:, None, :] @ V))

    # ---- tree: a batch of 3, n = 6, lengths 6, 4, 1
    n = 6
    lengths = [6, 4, 1]
    A = f32(torch.randn(B, n, n) * 1.5)
    G = f32(torch.randn(B, n, n))
    save_text("tree_arcs.txt", A, 9)
    save_text("tree_lengths.txt", np.array(lengths)[:, None], 9)
    save_text("tree_dir.txt", G, 9)
    a = A.clone().requires_grad_(True)
    logz, marg, hvp = [], torch.zeros(B, n, n), torch.zeros(B, n, n)
    heads = -np.ones((B, n))
    for b, L in enumerate(lengths):
        z = eisner(a[b, :L, :L], lse)
        (m,) = torch.autograd.grad(z, a, create_graph=True)
        marg[b] = m[b].detach()
        (h,) = torch.autograd.grad((m[b] * G[b]).sum(), a)
        hvp[b] = h[b]
        logz.append(z.item())
        (best,) = torch.autograd.grad(eisner(a[b, :L, :L], mx), a)  # the argmax tree, 0/1
        for j in range(L):
            (i,) = torch.nonzero(best[b, :, j]).flatten().tolist()
            heads[b, j] = 0 if i == j else i + 1
    save_text("tree_logz.txt", np.array(logz))
    save_text("tree_marginals.txt", marg)
    save_text("tree_hvp.txt", hvp)
    save_text("tree_heads.txt", heads)
    off = marg * (1 - torch.eye(n))
    save_text("tree_values.txt", V[:, :n, :], 9)
    save_text("tree_context.txt", off @ V[:, :n, :])


if __name__ == "__main__":
    main()
