"""The PyTorch peer of bench/conv.cpp: torch.nn.functional.conv2d forward + backward (input,
weight and bias gradients) of sum(y), float32 on the CPU, the best of STEPS after two warm-up
steps.
   conv_torch.py N C H W O K PAD STEPS THREADS
     -> pytorch case threads steps sec_per_step images_per_s gflops"""
import sys
import time

import torch
import torch.nn.functional as F

n, c, h, w, o, k, pad, steps, threads = (int(a) for a in sys.argv[1:10])
torch.set_num_threads(threads)
torch.manual_seed(1)
x = torch.randn(n, c, h, w, requires_grad=True)
wt = torch.randn(o, c, k, k, requires_grad=True)
b = torch.randn(o, requires_grad=True)
best = 1e30
for s in range(steps + 2):
    t0 = time.perf_counter()
    y = F.conv2d(x, wt, b, padding=pad)
    y.sum().backward()
    x.grad = wt.grad = b.grad = None
    sec = time.perf_counter() - t0
    if s >= 2:
        best = min(best, sec)
ho, wo = y.shape[2], y.shape[3]
flops = 3.0 * 2.0 * n * o * c * k * k * ho * wo
print(f"pytorch\t{n}x{c}x{h}x{w}->{o} k{k}\t{threads}\t{steps}\t{best:.6f}\t{n / best:.1f}\t{flops / best * 1e-9:.2f}")
