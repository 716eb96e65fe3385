"""The PyTorch peer of bench/memn2n.cpp: the same End-To-End Memory Network (vocabulary 180,
embedding 50, 3 hops with adjacent tying, memory 50 x 11 words, query 6, position encoding
per sentence length, temporal encoding, batch 32, SGD 0.01, clipping at 40), float32 on the CPU.
   memn2n_torch.py [STEPS] [THREADS] → impl threads steps sec_per_step examples_per_s loss"""
import sys
import time

import torch
from torch import nn

V, D, K, B, M, J, JQ = 180, 50, 3, 32, 50, 11, 6
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
torch.manual_seed(1)


def pe_table(jmax, d):
    """pe[n, j, k] = (1 - j/n) - (k/d)(1 - 2j/n) for words j = 1..n of a sentence of n words."""
    t = torch.zeros(jmax + 1, jmax, d)
    k = torch.arange(1, d + 1, dtype=torch.float32) / d
    for n in range(1, jmax + 1):
        for j in range(1, n + 1):
            t[n, j - 1] = (1 - j / n) - k * (1 - 2 * j / n)
    return t


class MemN2N(nn.Module):
    def __init__(self):
        super().__init__()
        self.E = nn.ParameterList([nn.Parameter(torch.randn(V, D) * 0.1) for _ in range(K + 1)])
        self.T = nn.ParameterList([nn.Parameter(torch.randn(M + M // 10 + 1, D) * 0.1) for _ in range(K + 1)])
        self.register_buffer("pe", pe_table(max(J, JQ), D))

    def encode(self, table, ids):  # ids [..., L], 0 = no word (words first)
        lens = (ids != 0).sum(-1)
        w = self.pe[lens][..., : ids.shape[-1], :]            # [..., L, D]
        e = table[ids] * (ids != 0).unsqueeze(-1)
        return (e * w).sum(-2)

    def forward(self, story, time_idx, query, answer):
        u = self.encode(self.E[0], query)                     # [B, D]
        m = self.encode(self.E[0], story) + self.T[0][time_idx]
        for k in range(K):
            c = self.encode(self.E[k + 1], story) + self.T[k + 1][time_idx]
            p = torch.softmax(torch.bmm(m, u.unsqueeze(2)).squeeze(2), -1)
            u = u + torch.bmm(p.unsqueeze(1), c).squeeze(1)
            m = c
        logits = u @ self.E[K].t()
        return nn.functional.cross_entropy(logits, answer, reduction="sum")


g = torch.Generator().manual_seed(2)
batches = []
for _ in range(8):
    lens = torch.randint(4, 12, (B, M), generator=g)
    words = torch.randint(4, V, (B, M, J), generator=g)
    story = torch.where(torch.arange(J).view(1, 1, J) < lens.unsqueeze(-1), words, torch.zeros_like(words))
    time_idx = torch.arange(M).repeat(B, 1)
    batches.append((story, time_idx, torch.randint(4, V, (B, JQ), generator=g), torch.randint(4, V, (B,), generator=g)))

model = MemN2N()
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def step(i):
    opt.zero_grad()
    loss = model(*batches[i % 8])
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 40.0)
    opt.step()
    return loss.item() / B


for i in range(10):
    step(i)
t0 = time.perf_counter()
for i in range(steps):
    loss = step(i)
sec = time.perf_counter() - t0
print(f"pytorch\t{threads}\t{steps}\t{sec / steps:.6f}\t{steps * B / sec:.1f}\t{loss:.4f}")
