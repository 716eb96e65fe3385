// bench-caption: the Show-Attend-Tell training step, timed (bench/caption.sh sets it beside the
// same model in PyTorch, bench/caption_torch.py).
//   bench-caption STEPS THREADS    64 images 56x56 (image-gen's scene size) with captions of
//                                  5 to 11 words, the training layer's step (4 slices, Adam,
//                                  clipping at 5) → images/s
// Model: CNN 16,32,64 (7x7 regions of 64), embed 64, hidden 128, attention 64, lambda 1, a
// vocabulary of 20 ids. Prints one TSV line: impl, task, model, threads, steps, sec (a step),
// rate (images/s), loss.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/heap.h"
#include "attnkit/core/parallel.h"
#include "attnkit/models/caption/model.h"
#include "attnkit/train/module.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench-caption STEPS THREADS\n");
    return 2;
  }
  const int steps = std::atoi(argv[1]), threads = std::atoi(argv[2]);
  blas_set_threads(threads);
  set_max_threads(threads);
  keep_freed_memory();  // as the tools do (core/heap.h): no page faults between steps
  constexpr int64_t B = 64;
  models::CaptionData d;
  d.images = Tensor({B, 56, 56});
  Rng r(1);
  for (float& v : d.images.values()) v = r.uniform();
  // 16 words: captions of 5 + (i % 7) words, word j of caption i = w((i + 3 j) % 16).
  for (int64_t i = 0; i < B; ++i) {
    std::vector<std::string> c;
    for (int64_t j = 0; j < 5 + i % 7; ++j) c.push_back("w" + std::to_string((i + 3 * j) % 16));
    d.captions.push_back(c);
    d.cells.push_back({});
  }
  models::CaptionConfig c;
  c.channels = {16, 32, 64};
  c.coords = true;  // as pipelines/lib.sh caption_recipe trains it
  models::CaptionTrainOptions o;
  o.batch = B;
  models::CaptionTraining m(c, o, std::move(d), {}, 1000000, 1, 1, "");
  nn::TrainState s;
  const int64_t rows = m.begin_batch(s);
  train::Tapes tapes;
  double last = 0;
  int64_t k = 0;
  auto step = [&] {
    const auto out = train::step(m, tapes, rows, 3, k++, 5.0);
    m.end_step(s, out.loss, out.sums);
    last = out.loss;
  };
  for (int i = 0; i < 2; ++i) step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("attnkit\ttrain\tcaption\t%d\t%d\t%.5f\t%.1f\t%.4f\n", threads, steps, sec, B / sec,
              last);
  return 0;
}
