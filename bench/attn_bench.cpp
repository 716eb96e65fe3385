// Times the library's scaled-dot attention (context = softmax(Q Kᵀ/√d) V) against the raw
// sgemm of the same two products, and a square sgemm, in the same run. Built and run by
// bench/attn-score.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "attnkit/attention/attention.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/rng.h"

using namespace attnkit;

namespace {

Tensor randn(int64_t r, int64_t c, uint64_t seed) {
  Rng rng(seed);
  Tensor t({r, c});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.normal());
  return t;
}

// Best of `reps` wall-clock runs, in seconds.
double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t d = 64;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 3;
  std::printf("# OpenBLAS core %s, %d threads\n", blas_core().c_str(), blas_threads());
  {
    const int64_t n = 2048;
    Tensor a = randn(n, n, 1), b = randn(n, n, 2), c({n, n});
    const double t = best_of(reps, [&] { gemm(Trans::No, Trans::No, 1, mat(a), mat(b), 0, mat(c)); });
    std::printf("# square sgemm %ld^3: %.1f GFLOP/s\n", static_cast<long>(n), 2.0 * n * n * n / t / 1e9);
  }
  std::printf("n\td\tattention_ms\tgemms_ms\tattention_GFLOPs\tgemms_GFLOPs\tratio\n");
  for (int64_t n : {1024, 2048, 4096}) {
    Tensor q = randn(n, d, 3), k = randn(n, d, 4), v = randn(n, d, 5);
    attention::Scorer s;  // scaled-dot
    attention::Options o;  // context, no mask
    const double ta = best_of(reps, [&] { Tensor c = attention::attend(s, q, k, &v, o); });
    Tensor sc({n, n}), ctx({n, d});
    const double tg = best_of(reps, [&] {
      gemm(Trans::No, Trans::Yes, 0.125f, mat(q), mat(k), 0, mat(sc));
      gemm(Trans::No, Trans::No, 1, mat(sc), mat(v), 0, mat(ctx));
    });
    const double flops = 4.0 * n * n * d;
    std::printf("%ld\t%ld\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\n", static_cast<long>(n),
                static_cast<long>(d), ta * 1e3, tg * 1e3, flops / ta / 1e9, flops / tg / 1e9,
                tg / ta);
  }
  return 0;
}
