// bench-gemm: sgemm GFLOP/s through attnkit's BLAS boundary, for square sizes, beside the
// machine's fp32 FMA peak on the same threads (a loop of independent fused multiply-adds in
// the widest vectors the build targets: -march=native like the library, nothing forced).
// Runs under the same start-up as every tool (so the OpenBLAS kernel choice is the tools').
// Output: TSV "size  seconds  gflops  core  threads  peak_share", one line per size, after a
// line "peak  seconds  gflops  core  threads  1" for the FMA loop (size "peak").
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/rng.h"

namespace {

// One thread's share of the FMA peak: 10 independent chains acc = acc * m + c in the widest
// vectors this build targets (-march=native: 16 floats with AVX-512, 8 with AVX, else 4), kept
// in registers; CMake compiles this file with -ffp-contract=fast, so each is one fused
// multiply-add where the CPU has them. Ten chains hide the FMA's latency on two units.
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif
constexpr int kLanes = kVecBytes / 4, kChains = 10;
typedef float Vec __attribute__((vector_size(kVecBytes)));

double fma_loop(int64_t steps, float* sink) {
  Vec init[kChains];
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < kLanes; ++l) init[j][l] = 1.0f + 0.1f * j + 1e-3f * l;
  Vec a0 = init[0], a1 = init[1], a2 = init[2], a3 = init[3], a4 = init[4], a5 = init[5],
      a6 = init[6], a7 = init[7], a8 = init[8], a9 = init[9];
  const float m = 0.9999999f, c = 1e-7f;  // fixed point 1: no overflow, no denormals
  for (int64_t s = 0; s < steps; ++s) {
    a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c, a3 = a3 * m + c, a4 = a4 * m + c;
    a5 = a5 * m + c, a6 = a6 * m + c, a7 = a7 * m + c, a8 = a8 * m + c, a9 = a9 * m + c;
  }
  const Vec t = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
  float total = 0;
  for (int l = 0; l < kLanes; ++l) total += t[l];
  *sink = total;  // the result is used: the loop stays
  return 2.0 * kChains * kLanes * static_cast<double>(steps);
}

// The FMA peak on `threads` threads at once: GFLOP/s and the seconds of one round.
double fma_peak(int threads, double min_seconds, double* seconds) {
  using clock = std::chrono::steady_clock;
  int64_t steps = 1 << 16;
  std::vector<float> sink(static_cast<size_t>(threads));
  for (;;) {
    const auto t0 = clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { fma_loop(steps, &sink[static_cast<size_t>(t)]); });
    for (auto& th : pool) th.join();
    const double secs = std::chrono::duration<double>(clock::now() - t0).count();
    if (secs >= min_seconds) {
      *seconds = secs;
      return 2.0 * kChains * kLanes * static_cast<double>(steps) * threads / secs / 1e9;
    }
    steps *= 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return attnkit::cli::run("bench-gemm", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::vector<int> sizes;
    double min_seconds = 0.5;
    app.describe("Measure sgemm GFLOP/s through attnkit's BLAS boundary, beside the fp32 FMA peak.",
                 "[--size N]...");
    app.options().add_options()("size", po::value(&sizes)->value_name("N")->multitoken(),
                                "matrix sizes (default 256 512 1024 2048)")(
        "min-seconds", po::value(&min_seconds)->value_name("S")->default_value(0.5),
        "time each size for at least S seconds");
    app.parse();
    if (sizes.empty()) sizes = {256, 512, 1024, 2048};
    std::printf("size\tseconds\tgflops\tcore\tthreads\tpeak_share\n");
    const int threads = attnkit::blas_threads();
    double peak_secs = 0;
    const double peak = fma_peak(threads, min_seconds, &peak_secs);
    std::printf("peak\t%.6f\t%.1f\t%s\t%d\t1\n", peak_secs, peak, attnkit::blas_core().c_str(),
                threads);
    attnkit::Rng rng(1);
    for (int n : sizes) {
      attnkit::Tensor a({n, n}), b({n, n}), c({n, n});
      for (int64_t i = 0; i < a.size(); ++i) {
        a[i] = rng.uniform() - 0.5f;
        b[i] = rng.uniform() - 0.5f;
      }
      using clock = std::chrono::steady_clock;
      attnkit::gemm(attnkit::Trans::No, attnkit::Trans::No, 1, attnkit::mat(a), attnkit::mat(b), 0,
                    attnkit::mat(c));  // warm-up
      int reps = 0;
      const auto t0 = clock::now();
      double secs = 0;
      do {
        attnkit::gemm(attnkit::Trans::No, attnkit::Trans::No, 1, attnkit::mat(a), attnkit::mat(b),
                      0, attnkit::mat(c));
        ++reps;
        secs = std::chrono::duration<double>(clock::now() - t0).count();
      } while (secs < min_seconds);
      const double per = secs / reps;
      const double gflops = 2.0 * n * n * double(n) / per / 1e9;
      std::printf("%d\t%.6f\t%.1f\t%s\t%d\t%.2f\n", n, per, gflops, attnkit::blas_core().c_str(),
                  threads, gflops / peak);
    }
  });
}
