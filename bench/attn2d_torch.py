"""The PyTorch peer of bench/attn2d.cpp: SAGAN's block (f, g: C -> C/8 and h: C -> C 1x1
convolutions, softmax attention over all positions, y = gamma o + x) forward + backward of
sum(y) to the input (the parameters fixed, as attn2d applies given ones), float32 on the CPU,
the best of STEPS after two warm-up steps.
   attn2d_torch.py N C H W STEPS THREADS
     -> pytorch case threads steps sec_per_step images_per_s"""
import sys
import time

import torch
import torch.nn.functional as F

n, c, h, w, steps, threads = (int(a) for a in sys.argv[1:7])
torch.set_num_threads(threads)
torch.manual_seed(1)
q = c // 8
wq, bq = torch.randn(q, c, 1, 1) / c ** 0.5, torch.randn(q) / c ** 0.5
wk, bk = torch.randn(q, c, 1, 1) / c ** 0.5, torch.randn(q) / c ** 0.5
wv, bv = torch.randn(c, c, 1, 1) / c ** 0.5, torch.randn(c) / c ** 0.5
gamma = torch.tensor([0.5])
x = torch.randn(n, c, h, w, requires_grad=True)
best = 1e30
for s in range(steps + 2):
    t0 = time.perf_counter()
    f = F.conv2d(x, wq, bq).view(n, q, h * w)
    g = F.conv2d(x, wk, bk).view(n, q, h * w)
    v = F.conv2d(x, wv, bv).view(n, c, h * w)
    a = torch.softmax(torch.bmm(f.transpose(1, 2), g), dim=-1)
    o = torch.bmm(v, a.transpose(1, 2)).view(n, c, h, w)
    y = gamma * o + x
    y.sum().backward()
    x.grad = None
    sec = time.perf_counter() - t0
    if s >= 2:
        best = min(best, sec)
print(f"pytorch\t{n}x{c}x{h}x{w}\t{threads}\t{steps}\t{best:.6f}\t{n / best:.1f}")
