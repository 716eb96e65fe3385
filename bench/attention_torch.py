#!/usr/bin/python3
"""PyTorch peer of bench/attention.cpp, one measurement per process, same TSV line:
    attention_torch.py sdpa N HEADS D REPS     F.scaled_dot_product_attention where this PyTorch
                                               has it (2.0 on), else the materialised form
                                               torch.softmax(q @ k^T / sqrt(d), -1) @ v
    attention_torch.py mha  N HEADS E BATCH REPS   nn.MultiheadAttention(E, H, batch_first)
    attention_torch.py peer                    one line naming the PyTorch and the form used
Line: impl N heads d seconds(best) GFLOP/s peak_RSS_MB threads. A failed allocation prints
the case with 'fail' (the error on stderr). Threads: torch.set_num_threads(ATTNKIT_THREADS).
"""
import math
import os
import resource
import sys
import time

import torch


def best_of(reps, f):
    best = 1e30
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    threads = int(os.environ.get("ATTNKIT_THREADS", "2"))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    kind = sys.argv[1]
    fused = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if kind == "peer":
        form = ("torch.nn.functional.scaled_dot_product_attention" if fused else
                "torch.softmax(q @ k^T / sqrt(d), -1) @ v (materialised: this PyTorch has no "
                "scaled_dot_product_attention)")
        print("# peer: PyTorch %s (%s), attention as %s" % (torch.__version__, sys.executable, form))
        return
    with torch.no_grad():
        if kind == "sdpa":
            n, h, d, reps = map(int, sys.argv[2:6])
            try:
                q, k, v = (torch.randn(h, n, d) for _ in range(3))
                scale = 1.0 / math.sqrt(d)
                if fused:
                    t = best_of(reps, lambda: fused(q, k, v))
                else:
                    t = best_of(reps, lambda: torch.softmax(q @ k.transpose(-2, -1) * scale, -1) @ v)
            except RuntimeError as e:
                print(str(e).splitlines()[0], file=sys.stderr)
                print("torch-sdpa\t%d\t%d\t%d\tfail\t-\t%.0f\t%d" % (n, h, d, rss_mb(), threads))
                return
            print("torch-sdpa\t%d\t%d\t%d\t%.4f\t%.1f\t%.0f\t%d"
                  % (n, h, d, t, 4.0 * n * n * d * h / t / 1e9, rss_mb(), threads))
        elif kind == "mha":
            n, h, e, b, reps = map(int, sys.argv[2:7])
            m = torch.nn.MultiheadAttention(e, h, batch_first=True).eval()
            x = torch.randn(b, n, e)
            t = best_of(reps, lambda: m(x, x, x, need_weights=False))
            print("torch-mha\t%d\t%d\t%d\t%.4f\t-\t%.0f\t%d" % (n, h, e, t, rss_mb(), threads))


if __name__ == "__main__":
    main()
