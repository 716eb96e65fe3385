#!/usr/bin/python3
"""PyTorch reference NTM for bench/ntm.sh: the same model as bench/ntm.cpp (LSTM controller
100, one read and one write head, memory 128 x 20, batch 1, copy task of 8-bit sequences of
length 1..20), written the way the common PyTorch implementations write it (an LSTMCell, one
Linear per head, the addressing as tensor ops), trained with RMSprop (centred, momentum 0.9,
alpha 0.95, lr 1e-4) and gradients clipped by value to 10.
  ntm_torch.py [SEQUENCES] [THREADS] [SEED] -> TSV: impl threads sequences sec seq_per_s bits"""
import sys
import time

import torch
import torch.nn.functional as F

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.set_num_threads(threads)
torch.manual_seed(seed)
N, M, H, W, R = 128, 20, 100, 8, 1
IN, OUT = W + 1, W
K = 2 * R + 1


class NTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTMCell(IN + M, H)
        self.read = torch.nn.Linear(H, M + 3 + K)
        self.write = torch.nn.Linear(H, M + 3 + K + 2 * M)
        self.out = torch.nn.Linear(H + M, OUT)
        self.r0 = torch.nn.Parameter(torch.randn(1, M) * 0.01)
        self.w0 = torch.nn.Parameter(torch.randn(2, N))

    def address(self, mem, p, prev):
        k, beta, g = p[:, :M], F.softplus(p[:, M:M + 1]), torch.sigmoid(p[:, M + 1:M + 2])
        s, gamma = F.softmax(p[:, M + 2:M + 2 + K], dim=1), 1 + F.softplus(p[:, M + 2 + K:M + 3 + K])
        cos = F.cosine_similarity(k.unsqueeze(1), mem.unsqueeze(0), dim=2, eps=1e-8)
        wc = F.softmax(beta * cos, dim=1)
        wg = g * wc + (1 - g) * prev
        ws = sum(s[:, d + R:d + R + 1] * torch.roll(wg, d, dims=1) for d in range(-R, R + 1))
        return F.softmax(gamma * torch.log(ws + 1e-12), dim=1)

    def forward(self, x):
        mem = torch.full((N, M), 1e-6)
        w0 = F.softmax(self.w0, dim=1)
        wr, ww, r = w0[0:1], w0[1:2], self.r0
        h = c = torch.zeros(1, H)
        ys = []
        for t in range(x.shape[0]):
            h, c = self.lstm(torch.cat([x[t:t + 1], r], 1), (h, c))
            wr = self.address(mem, self.read(h), wr)
            r = wr @ mem
            p = self.write(h)
            ww = self.address(mem, p, ww)
            e = torch.sigmoid(p[:, M + 3 + K:2 * M + 3 + K])
            a = torch.tanh(p[:, 2 * M + 3 + K:])
            mem = mem * (1 - ww.t() @ e) + ww.t() @ a
            ys.append(self.out(torch.cat([h, r], 1)))
        return torch.cat(ys, 0)


def episode(g):
    L = int(torch.randint(1, 21, (1,), generator=g))
    seq = torch.randint(0, 2, (L, W), generator=g).float()
    x = torch.zeros(2 * L + 1, IN)
    x[:L, :W] = seq
    x[L, W] = 1
    y = torch.zeros(2 * L + 1, OUT)
    y[L + 1:] = seq
    return x, y, L


model = NTM()
opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, alpha=0.95, momentum=0.9, eps=1e-4,
                          centered=True)
g = torch.Generator().manual_seed(seed + 1000)
wrong = counted = 0
t0 = time.perf_counter()
for i in range(n):
    x, y, L = episode(g)
    logits = model(x)
    loss = F.binary_cross_entropy_with_logits(logits[L + 1:], y[L + 1:])
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 10.0)
    opt.step()
    if i >= n - n // 10:
        wrong += int(((logits[L + 1:] > 0).float() != y[L + 1:]).sum())
        counted += 1
sec = time.perf_counter() - t0
print("pytorch\t%d\t%d\t%.3f\t%.2f\t%.3f" % (threads, n, sec, n / sec, wrong / max(counted, 1)))
