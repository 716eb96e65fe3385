// bench-conv: conv2d forward + backward (input, weight and bias gradients) on the tape, timed
// (bench/conv.sh sets it beside torch.nn.functional.conv2d, bench/conv_torch.py).
//   bench-conv N C H W O K PAD STEPS THREADS
// Prints one TSV line: impl, case (N×C×H×W→O kK), threads, steps, sec (a step), rate
// (images/s), gflops (forward + backward, 3 × 2·N·O·C·K²·Ho·Wo).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 10) {
    std::fprintf(stderr, "usage: bench-conv N C H W O K PAD STEPS THREADS\n");
    return 2;
  }
  int64_t a[9];
  for (int i = 0; i < 9; ++i) a[i] = std::atoll(argv[i + 1]);
  const int64_t n = a[0], c = a[1], h = a[2], w = a[3], o = a[4], k = a[5], pad = a[6];
  const int steps = static_cast<int>(a[7]), threads = static_cast<int>(a[8]);
  blas_set_threads(threads);
  set_max_threads(threads);
  Rng rng(1);
  auto rnd = [&](Shape s) {
    Tensor t(std::move(s));
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.normal());
    return t;
  };
  // The input as a parameter: entered without a copy, its gradient computed (as PyTorch's
  // x.requires_grad).
  ad::Parameter W("w", rnd({o, c, k, k})), b("b", rnd({o})), X("x", rnd({n, c, h, w}));
  ad::Conv2dOptions opt;
  opt.pad_h = opt.pad_w = pad;
  ad::Tape t;
  double best = 1e30;
  int64_t ho = 0, wo = 0;
  for (int s = 0; s < steps + 2; ++s) {  // two warm-up steps
    const auto t0 = std::chrono::steady_clock::now();
    ad::Var xv = t.param(X);
    ad::Var y = ad::conv2d(xv, t.param(W), t.param(b), opt);
    ho = y.dim(2), wo = y.dim(3);
    t.backward(ad::sum(y));
    t.clear();
    W.grad.values().assign(W.grad.values().size(), 0.0f);  // as PyTorch's grad = None
    b.grad.values().assign(b.grad.values().size(), 0.0f);
    X.grad.values().assign(X.grad.values().size(), 0.0f);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 2 && sec < best) best = sec;
  }
  const double flops = 3.0 * 2.0 * n * o * c * k * k * ho * wo;
  std::printf("attnkit\t%ldx%ldx%ldx%ld->%ld k%ld\t%d\t%d\t%.6f\t%.1f\t%.2f\n",
              static_cast<long>(n), static_cast<long>(c), static_cast<long>(h),
              static_cast<long>(w), static_cast<long>(o), static_cast<long>(k), threads, steps,
              best, n / best, flops / best * 1e-9);
}
