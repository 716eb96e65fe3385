#!/usr/bin/python3
"""The PyTorch peer of bench/structured.cpp: the same dynamic programmes written here in
batched log space (no PyTorch library has them), differentiated by autograd. The marginals
are the gradient of log Z (torch.autograd.grad with create_graph), and their backward pass,
seeded by a fixed direction r, is autograd's double backward. float64, as attnkit's DPs.

  chain  the linear-chain CRF over binary selections (the forward algorithm), B = 32, n = 100
  tree   the projective dependency CRF (Eisner's inside algorithm, root at position 0 heading
         any number of words; A[i, j] = i heads j, the diagonal the root), B = 8, n = 30

    structured_torch.py [REPS] [THREADS] -> TSV: impl what size ms_per_iter
    structured_torch.py check              the DPs against brute-force enumeration
"""
import sys
import time

import torch

torch.set_default_dtype(torch.float64)
NEG = -1e30


def chain_logz(u, p):
    # u [B, n]: score of z_i = 1; p [B, n-1, 2, 2]: P_i[z_i, z_{i+1}]
    B, n = u.shape
    zero = torch.zeros_like(u[:, 0])
    alpha = torch.stack([zero, u[:, 0]], 1)  # [B, 2]
    for i in range(1, n):
        emit = torch.stack([zero, u[:, i]], 1)
        alpha = torch.logsumexp(alpha.unsqueeze(2) + p[:, i - 1], 1) + emit
    return torch.logsumexp(alpha, 1)


def tree_logz(a):
    # a [B, n, n] → arcs S [B, N, N] over N = n + 1 positions, 0 the root
    B, n, _ = a.shape
    N = n + 1
    eye = torch.eye(n, dtype=torch.bool)
    S = torch.full((B, N, N), NEG)
    S[:, 1:, 1:] = a.masked_fill(eye, NEG)
    S[:, 0, 1:] = torch.diagonal(a, dim1=1, dim2=2)
    # charts as dicts of [B] tensors: Cr/Cl complete (head left/right), Ir/Il incomplete
    zero = torch.zeros(B)
    Cr = {(s, s): zero for s in range(N)}
    Cl = {(s, s): zero for s in range(N)}
    Ir, Il = {}, {}
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            inner = torch.logsumexp(torch.stack([Cr[s, r] + Cl[r + 1, t] for r in range(s, t)], 0), 0)
            Ir[s, t] = inner + S[:, s, t]
            Il[s, t] = inner + S[:, t, s] if s > 0 else torch.full((B,), NEG)
            Cl[s, t] = torch.logsumexp(torch.stack([Cl[s, r] + Il[r, t] for r in range(s, t)], 0), 0)
            Cr[s, t] = torch.logsumexp(torch.stack([Ir[s, r] + Cr[r, t] for r in range(s + 1, t + 1)], 0), 0)
    return Cr[0, N - 1]


def marginals_and_backward(logz_fn, inputs, r):
    x = [t.clone().requires_grad_(True) for t in inputs]
    logz = logz_fn(*x)
    marg = torch.autograd.grad(logz.sum(), x[0], create_graph=True)[0]
    (marg * r).sum().backward()
    return marg


def time_ms(reps, f):
    for _ in range(2):
        f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return 1e3 * (time.perf_counter() - t0) / reps


def projective_trees(n):
    """Every head vector (heads[j] in 0..n, 0 the root) of a projective tree over n words."""
    import itertools

    for heads in itertools.product(range(n + 1), repeat=n):
        h = (None,) + heads
        ok = True
        for j in range(1, n + 1):  # acyclic: every word reaches the root
            seen, k = set(), j
            while k != 0 and ok:
                if k in seen:
                    ok = False
                seen.add(k)
                k = h[k]
        if not ok:
            continue
        arcs = [(min(h[j], j), max(h[j], j)) for j in range(1, n + 1)]
        if any(a < c < b < d for a, b in arcs for c, d in arcs):
            continue
        yield heads


def check():
    """The peer's marginals against brute-force enumeration (n = 5): its DPs are right."""
    import itertools

    g = torch.Generator().manual_seed(3)
    n = 5
    u = torch.randn(1, n, generator=g)
    p = torch.randn(1, n - 1, 2, 2, generator=g)
    x = u.clone().requires_grad_(True)
    m = torch.autograd.grad(chain_logz(x, p).sum(), x)[0][0]
    want = torch.zeros(n)
    zs = list(itertools.product((0, 1), repeat=n))
    sc = torch.stack([sum(u[0, i] * z[i] for i in range(n)) +
                      sum(p[0, i, z[i], z[i + 1]] for i in range(n - 1)) for z in zs])
    w = torch.softmax(sc, 0)
    for k, z in enumerate(zs):
        want += w[k] * torch.tensor(z, dtype=torch.float64)
    assert torch.allclose(m, want, atol=1e-9), (m, want)
    a = torch.randn(1, n, n, generator=g)
    x = a.clone().requires_grad_(True)
    m = torch.autograd.grad(tree_logz(x).sum(), x)[0][0]
    trees = list(projective_trees(n))
    sc = torch.stack([sum(a[0, h - 1 if h else j, j] for j, h in enumerate(t)) for t in trees])
    w = torch.softmax(sc, 0)
    want = torch.zeros(n, n)
    for k, t in enumerate(trees):
        for j, h in enumerate(t):
            want[h - 1 if h else j, j] += w[k]
    assert torch.allclose(m, want, atol=1e-9), (m, want)
    print(f"check: chain and tree marginals equal brute force (n = {n}, {len(trees)} trees)")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        return check()
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(7)
    B, n = 32, 100
    u = 2 * (2 * torch.rand(B, n, generator=g) - 1)
    p = 2 * torch.rand(B, n - 1, 2, 2, generator=g) - 1
    r = 2 * torch.rand(B, n, generator=g) - 1
    ms = time_ms(reps, lambda: marginals_and_backward(chain_logz, [u, p], r))
    print(f"pytorch\tchain\tB{B}_n{n}\t{ms:.3f}")
    B, n = 8, 30
    a = 2 * (2 * torch.rand(B, n, n, generator=g) - 1)
    r = 2 * torch.rand(B, n, n, generator=g) - 1
    ms = time_ms(max(1, reps // 4), lambda: marginals_and_backward(tree_logz, [a], r))
    print(f"pytorch\ttree\tB{B}_n{n}\t{ms:.3f}")


if __name__ == "__main__":
    main()
