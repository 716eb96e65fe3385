// bench-stackmem: the Stack-LSTM's training step, timed (bench/stackmem.sh sets it beside the
// same model in PyTorch, bench/stackmem_torch.py).
//   bench-stackmem LEN STEPS THREADS [SLICES [BATCH]]
//       reversal of LEN symbols (10 symbols), batch BATCH (default 16), the training layer's
//       step (StackTraining's slices, one per 32 rows, or SLICES of them when > 0; Adam,
//       clipping at 5) → sequences/s
// Model: stackmem-train's defaults of exercise 8-4 (embed 32, hidden 64, width 16, the
// paper's form). Prints one TSV line: impl, task, model, threads, steps, sec (a step),
// sequences/s, the last loss.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/heap.h"
#include "attnkit/core/parallel.h"
#include "attnkit/memory/stackmem/model.h"
#include "attnkit/train/module.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench-stackmem LEN STEPS THREADS [SLICES [BATCH]]\n");
    return 2;
  }
  const int64_t len = std::atoll(argv[1]);
  const int steps = std::atoi(argv[2]), threads = std::atoi(argv[3]);
  const int64_t slices = argc > 4 ? std::atoll(argv[4]) : 0;  // 0: the module's
  const int64_t B = argc > 5 ? std::atoll(argv[5]) : 16;
  if (len < 1 || steps < 1 || threads < 1 || slices < 0 || B < 1) {
    std::fprintf(stderr, "bench-stackmem: LEN, STEPS, THREADS and BATCH must be >= 1\n");
    return 2;
  }
  blas_set_threads(threads);
  set_max_threads(threads);
  keep_freed_memory();  // as the tools do (core/heap.h): no page faults between steps
  data::TokenCounts counts;
  for (int s = 1; s <= 10; ++s) counts[std::to_string(s)] = 1;
  data::Vocab vocab = data::Vocab::build(counts, 1);
  Rng r(1);
  std::vector<memory::TransduceExample> data;
  for (int64_t i = 0; i < B; ++i) {
    memory::TransduceExample e;
    for (int64_t k = 0; k < len; ++k) e.source.push_back(vocab.id(std::to_string(1 + r.below(10))));
    e.target.assign(e.source.rbegin(), e.source.rend());
    data.push_back(std::move(e));
  }
  memory::StackLstmConfig c;
  c.memory = "stack", c.embed = 32, c.hidden = 64, c.width = 16;
  memory::StackTrainOptions o;
  o.batch = B, o.lr = 3e-3;
  memory::StackTraining m(c, o, std::move(vocab), std::move(data), {}, 1000000, 1, 1, "");
  nn::TrainState s;
  const int64_t rows = m.begin_batch(s);
  train::Tapes tapes;
  double last = 0;
  int64_t k = 0;
  auto step = [&] { last = train::step(m, tapes, rows, 3, k++, 5.0, false, slices).loss; };
  for (int i = 0; i < 3; ++i) step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("attnkit\ttrain\tstack-lstm-rev%lld\t%d\t%d\t%.5f\t%.1f\t%.4f\n",
              static_cast<long long>(len), threads, steps, sec, B / sec, last);
  return 0;
}
