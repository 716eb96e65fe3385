// bench-attn2d: SAGAN's self-attention block (nn/attn2d.h) forward + backward to the input,
// timed (bench/attn2d.sh sets it beside a PyTorch module of the block, bench/attn2d_torch.py).
//   bench-attn2d N C H W STEPS THREADS
// Prints one TSV line: impl, case (N×C×H×W), threads, steps, sec (a step), rate (images/s).
#include "attnkit/nn/attn2d.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: bench-attn2d N C H W STEPS THREADS\n");
    return 2;
  }
  int64_t a[6];
  for (int i = 0; i < 6; ++i) a[i] = std::atoll(argv[i + 1]);
  const int64_t n = a[0], c = a[1], h = a[2], w = a[3];
  const int steps = static_cast<int>(a[4]), threads = static_cast<int>(a[5]);
  blas_set_threads(threads);
  set_max_threads(threads);
  Rng rng(1);
  auto rnd = [&](Shape s, float scale) {
    Tensor t(std::move(s));
    for (int64_t i = 0; i < t.size(); ++i) t[i] = scale * static_cast<float>(rng.normal());
    return t;
  };
  const int64_t q = c / 8;
  const float sc = 1.0f / std::sqrt(static_cast<float>(c));
  std::map<std::string, Tensor> p;
  p.emplace("query_conv.weight", rnd({q, c, 1, 1}, sc));
  p.emplace("query_conv.bias", rnd({q}, sc));
  p.emplace("key_conv.weight", rnd({q, c, 1, 1}, sc));
  p.emplace("key_conv.bias", rnd({q}, sc));
  p.emplace("value_conv.weight", rnd({c, c, 1, 1}, sc));
  p.emplace("value_conv.bias", rnd({c}, sc));
  p.emplace("gamma", Tensor({1}, 0.5f));
  ad::Parameter X("x", rnd({n, c, h, w}, 1.0f));
  ad::Tape t;
  double best = 1e30;
  for (int s = 0; s < steps + 2; ++s) {  // two warm-up steps
    const auto t0 = std::chrono::steady_clock::now();
    ad::Var y = nn::attn2d(nn::Attn2dKind::Sagan, p, t.param(X)).y;
    t.backward(ad::sum(y));
    t.clear();
    X.grad.values().assign(X.grad.values().size(), 0.0f);  // as PyTorch's grad = None
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 2 && sec < best) best = sec;
  }
  std::printf("attnkit\t%ldx%ldx%ldx%ld\t%d\t%d\t%.6f\t%.1f\n", static_cast<long>(n),
              static_cast<long>(c), static_cast<long>(h), static_cast<long>(w), threads, steps,
              best, n / best);
}
