"""The PyTorch peer of bench/memaccess.cpp: the same in-place accesses of the hard tree (HAM),
the set, the stack and the queue, float32 on the CPU, under torch.no_grad().
   memaccess_torch.py tree|set|stack|queue N SECONDS THREADS
     -> pytorch access KIND-nN threads accesses sec_per_access accesses_per_s ops checksum
B = 16 memories of N leaves (slots), width m = 32, controller state c = 64, accesses from 8
states in turn for at least SECONDS.
tree: nodes [B, 2N, m] in heap order (node k's children 2k, 2k + 1; the leaves N .. 2N - 1);
  per level the node each row reached is gathered, SEARCH's logit w_x . x + (w_h . h + b) says
  right when >= 0; the leaf is read, replaced by tanh(W_w [x; h] + b_w), and the log2 N nodes
  above it re-JOINed, tanh(W_j [x_2k; x_2k+1] + b_j), from the leaf up.
set: the control layer [3 + 4m, c] gives the write and erase strengths (sigmoid), key, value,
  read key, erase key (tanh) and the read's threshold; the erase and the read by content over
  the N slots (memory/stackmem/set.h's (1) and (2)), the new slot written at position N (the
  set is held at N slots, as bench-memaccess holds it).
stack, queue: the control layer [2 + m, c] gives the push and pop strengths (sigmoid) and the
  value (tanh); the pop over the N stored strengths from the memory's end (the top: the last
  slot; the queue's: the first), each strength less what the pop has left after the strengths
  nearer the end (exclusive cumulative sums); the value pushed at position N; the read from
  the end up to a strength of 1 (memory/stackmem/memory.h's (2) and (3)). Held at N values as
  the set is."""
import math
import sys
import time

import torch

kind, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
torch.set_num_threads(int(sys.argv[4]))
torch.manual_seed(1)
B, m, c, H = 16, 32, 64, 8
d = int(math.log2(n))
hs = torch.randn(H, B, c)
ar = torch.arange(B)

if kind == "tree":
    Wj, bj = torch.randn(m, 2 * m) * 0.15, torch.randn(m) * 0.1
    ws = torch.randn(m + c) * 0.2
    Ww, bw = torch.randn(m, m + c) * 0.1, torch.randn(m) * 0.1
    wx, wh = ws[:m].clone(), ws[m:].clone()
    Wwx, Wwh = Ww[:, :m].t().contiguous(), Ww[:, m:].t().contiguous()
    WjT = Wj.t().contiguous()
    nodes = torch.zeros(B, 2 * n, m)
    nodes[:, n:] = torch.randn(B, n, m) * 0.5
    for k in range(n - 1, 0, -1):  # the summaries, JOINed from the leaves
        nodes[:, k] = torch.tanh(nodes[:, 2 * k:2 * k + 2].reshape(B, 2 * m) @ WjT + bj)
    ops = B * ((c + 1) + d * m + m * (m + c) + d * 2 * m * m)

    def access(h):
        hsb = h @ wh  # [B]: SEARCH's state part, once
        k = torch.ones(B, dtype=torch.long)
        for _ in range(d):
            k = 2 * k + ((nodes[ar, k] @ wx + hsb) >= 0).long()
        read = nodes[ar, k].clone()
        nodes[ar, k] = torch.tanh(read @ Wwx + h @ Wwh + bw)
        for _ in range(d):
            k = k // 2
            pair = nodes[ar.unsqueeze(1), (2 * k).unsqueeze(1) + torch.arange(2)].reshape(B, 2 * m)
            nodes[ar, k] = torch.tanh(pair @ WjT + bj)
        return read
elif kind in ("stack", "queue"):
    C = 2 + m
    Wc, bc = torch.randn(C, c) * 0.1, torch.randn(C) * 0.1
    WcT = Wc.t().contiguous()
    S = torch.zeros(B, n + 1)
    S[:, :n] = torch.rand(B, n) * 0.25
    V = torch.zeros(B, n + 1, m)
    V[:, :n] = torch.randn(B, n, m) * 0.5
    ops = B * (C * c + C + 2 * n + (n + 1) * (m + 2))
    top = kind == "stack"

    def nearer(s):  # the sum of the strengths nearer the end than each, exclusive
        if top:
            return torch.flip(torch.cumsum(torch.flip(s, [1]), 1), [1]) - s
        return torch.cumsum(s, 1) - s

    def access(h):
        o = h @ WcT + bc
        d, u = torch.sigmoid(o[:, 0]), torch.sigmoid(o[:, 1:2])
        s = S[:, :n]
        s.copy_(torch.clamp(s - torch.clamp(u - nearer(s), min=0), min=0))
        S[:, n] = d
        V[:, n] = torch.tanh(o[:, 2:])
        w = torch.minimum(S, torch.clamp(1 - nearer(S), min=0))
        return torch.bmm(w.unsqueeze(1), V).squeeze(1)
else:
    C = 3 + 4 * m
    Wc, bc = torch.randn(C, c) * 0.1, torch.randn(C) * 0.1
    WcT = Wc.t().contiguous()
    S = torch.zeros(B, n + 1)
    S[:, :n] = torch.rand(B, n)
    K = torch.zeros(B, n + 1, m)
    V = torch.zeros(B, n + 1, m)
    K[:, :n] = torch.randn(B, n, m) * 0.5
    V[:, :n] = torch.randn(B, n, m) * 0.5
    ops = B * (C * c + 4 * m + 3 * n * (m + 1) + 2 * n)

    def access(h):
        o = h @ WcT + bc
        w, er = torch.sigmoid(o[:, 0]), torch.sigmoid(o[:, 1:2])
        t = torch.tanh(o[:, 2:2 + 4 * m])
        key, val, q, e = t[:, :m], t[:, m:2 * m], t[:, 2 * m:3 * m], t[:, 3 * m:]
        tau = o[:, 2 + 4 * m:]
        s, k_, v_ = S[:, :n], K[:, :n], V[:, :n]
        a = s * torch.exp(torch.bmm(k_, e.unsqueeze(2)).squeeze(2))
        s.mul_(1 - er * a / (1 + a.sum(1, keepdim=True)))
        a = s * torch.exp(torch.bmm(k_, q.unsqueeze(2)).squeeze(2))
        rho = a / (torch.exp(tau) + a.sum(1, keepdim=True))
        read = torch.cat([torch.bmm(rho.unsqueeze(1), v_).squeeze(1), rho.sum(1, keepdim=True)], 1)
        S[:, n] = w
        K[:, n] = key
        V[:, n] = val
        return read

with torch.no_grad():
    i = 0
    for _ in range(3):
        read = access(hs[i % H])
        i += 1
    t0 = time.perf_counter()
    done, sec = 0, 0.0
    while done < 20 or sec < seconds:
        for _ in range(10):
            read = access(hs[i % H])
            i += 1
        done += 10
        sec = time.perf_counter() - t0
print("pytorch\taccess\t%s-n%d\t%s\t%d\t%.3e\t%.1f\t%d\t%.4f" %
      (kind, n, sys.argv[4], done, sec / done, done / sec, ops, float(read.sum())))
