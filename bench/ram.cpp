// bench-ram: the recurrent attention model's training step, timed (bench/ram.sh sets it
// beside the same model in PyTorch, bench/ram_torch.py).
//   bench-ram STEPS THREADS [GLIMPSES]
// 60 x 60 images (uniform noise, random labels of 10 classes), batch 64, glimpses of 3
// patches of 12, 24, 48 pixels averaged to 12 x 12, h_g = h_l = 128, g and the RNN core 256,
// 6 glimpses (ram-train's defaults), loc-std 0.1; the training layer's step (2 slices, Adam,
// clipping at 5). Prints one TSV line: impl, task, model, threads, steps, sec (a step),
// images/s, loss.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "attnkit/core/blas.h"
#include "attnkit/core/heap.h"
#include "attnkit/core/parallel.h"
#include "attnkit/models/ram/model.h"
#include "attnkit/train/module.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench-ram STEPS THREADS [GLIMPSES]\n");
    return 2;
  }
  const int steps = std::atoi(argv[1]), threads = std::atoi(argv[2]);
  constexpr int64_t B = 64;
  blas_set_threads(threads);
  set_max_threads(threads);
  keep_freed_memory();  // as the tools do (core/heap.h): no page faults between steps
  models::RamConfig c;
  if (argc > 3) c.glimpses = std::atoll(argv[3]);
  models::ImageSet data;
  data.images = Tensor({B, 60, 60});
  Rng r(1);
  for (int64_t i = 0; i < data.images.size(); ++i) data.images[i] = r.uniform();
  for (int64_t i = 0; i < B; ++i) data.labels.push_back(static_cast<int32_t>(r.below(10)));
  data.labels[0] = 9;
  models::RamTrainOptions o;
  o.batch = B;
  models::RamTraining m(c, o, std::move(data), {}, 1000000, 1, 1, "");
  nn::TrainState s;
  const int64_t rows = m.begin_batch(s);
  train::Tapes tapes;
  double last = 0;
  int64_t k = 0;
  auto step = [&] { last = train::step(m, tapes, rows, 3, k++, 5.0).loss; };
  for (int i = 0; i < 3; ++i) step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("attnkit\ttrain\tram%lld\t%d\t%d\t%.5f\t%.1f\t%.4f\n",
              static_cast<long long>(c.glimpses), threads, steps, sec, B / sec, last);
  return 0;
}
