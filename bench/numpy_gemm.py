"""sgemm GFLOP/s of NumPy's float32 matmul, the peer of bench-gemm (same sizes, same TSV)."""
import sys
import time

import numpy as np

sizes = [int(s) for s in sys.argv[1:]] or [256, 512, 1024, 2048]
rng = np.random.default_rng(1)
print("size\tseconds\tgflops")
for n in sizes:
    a = rng.random((n, n), dtype=np.float32) - 0.5
    b = rng.random((n, n), dtype=np.float32) - 0.5
    a @ b
    reps, t0 = 0, time.perf_counter()
    while True:
        a @ b
        reps += 1
        secs = time.perf_counter() - t0
        if secs >= 0.5:
            break
    per = secs / reps
    print(f"{n}\t{per:.6f}\t{2.0 * n ** 3 / per / 1e9:.1f}")
