// Classic Hopfield recall, attnkit's library side of bench/hopfield.sh: N neurons, P random
// patterns stored by the Hebb rule, `probes` probes with 10% of their bits flipped. Writes
// the patterns, probes and W as .npy into DIR (the NumPy peer reads the same data), then
// times recall() in async (random order) and sync mode and prints a TSV:
//   mode  probes  seconds  per_probe_ms  bit_error  exact
// bit_error = fraction of bits of the final states that differ from the probe's pattern;
// exact = fraction of probes that end exactly on their pattern.
//   bench-hopfield_bench DIR [N P PROBES]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnkit/core/blas.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor_random.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield/model.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench-hopfield_bench DIR [N P PROBES]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int64_t pc = argc > 3 ? std::atoll(argv[3]) : 400;
  const int64_t probes = argc > 4 ? std::atoll(argv[4]) : 1000;
  Tensor x({pc, n});
  Rng rng(2024);
  fill_random(x, rng, RandomSpec{Distribution::Sign});
  Tensor target({probes, n});
  for (int64_t k = 0; k < probes; ++k)
    for (int64_t j = 0; j < n; ++j) target.at(k, j) = x.at(k % pc, j);
  const Tensor noisy = memory::flip_bits(target, memory::flip_count(0.1, n), 7);
  const memory::Net net = memory::store(x, memory::Rule::Hebb);
  io::write_tensor(dir + "/patterns.npy", x);
  io::write_tensor(dir + "/probes.npy", noisy);
  io::write_tensor(dir + "/targets.npy", target);
  io::write_tensor(dir + "/W.npy", net.W);
  std::printf("mode\tprobes\tseconds\tper_probe_ms\tbit_error\texact\n");
  for (memory::Mode mode : {memory::Mode::Async, memory::Mode::Sync}) {
    memory::RecallOptions opt;
    opt.mode = mode;
    opt.seed = 1;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = memory::recall(net, noisy, opt);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    int64_t bad = 0, exact = 0;
    for (int64_t k = 0; k < probes; ++k) {
      int64_t b = 0;
      for (int64_t j = 0; j < n; ++j) b += r.states.at(k, j) != target.at(k, j);
      bad += b;
      exact += b == 0;
    }
    std::printf("%s\t%lld\t%.4f\t%.4f\t%.6f\t%.4f\n",
                mode == memory::Mode::Async ? "async" : "sync", static_cast<long long>(probes),
                secs, 1e3 * secs / probes, static_cast<double>(bad) / (probes * n),
                static_cast<double>(exact) / probes);
  }
  std::fprintf(stderr, "bench-hopfield_bench: OpenBLAS core %s, %d threads\n", blas_core().c_str(),
               blas_threads());
  return 0;
}
