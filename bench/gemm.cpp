// bench-gemm: sgemm GFLOP/s through attnkit's BLAS boundary, for square sizes.
// Runs under the same start-up as every tool (so the OpenBLAS kernel choice is the tools').
// Output: TSV "size  seconds  gflops  core  threads", one line per size.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/rng.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("bench-gemm", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::vector<int> sizes;
    double min_seconds = 0.5;
    app.describe("Measure sgemm GFLOP/s through attnkit's BLAS boundary.", "[--size N]...");
    app.options().add_options()("size", po::value(&sizes)->value_name("N")->multitoken(),
                                "matrix sizes (default 256 512 1024 2048)")(
        "min-seconds", po::value(&min_seconds)->value_name("S")->default_value(0.5),
        "time each size for at least S seconds");
    app.parse();
    if (sizes.empty()) sizes = {256, 512, 1024, 2048};
    std::printf("size\tseconds\tgflops\tcore\tthreads\n");
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
      std::printf("%d\t%.6f\t%.1f\t%s\t%d\n", n, per, 2.0 * n * n * double(n) / per / 1e9,
                  attnkit::blas_core().c_str(), attnkit::blas_threads());
    }
  });
}
