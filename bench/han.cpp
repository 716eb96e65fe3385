// Training and inference throughput of the Hierarchical Attention Network (models/han) at the
// paper's sizes: embedding 200, GRU 50 per direction, context vectors 100, vocabulary 8,000,
// 2 classes; documents of 2-12 sentences of 3-30 words (about the fine-food reviews' shape),
// random words. Training: han-train's step (models/han/train.h: batches of 64 documents of
// similar length in 4 slices, dropout 0.5, Adam 1e-3, clipping at 5) over 1,024 documents.
// Inference: han-run's predict_docs (groups of 64 on the threads) over the same documents.
// The PyTorch peer is bench/han_torch.py.
//   bench-han train|infer [STEPS|REPS] [THREADS]
//     → impl mode threads items sec items_per_s cpu_sec items_per_cpu_s
// (cpu_sec: the process's CPU time, all threads; on a loaded machine the fairer measure at
// 1 thread, where the wall clock counts the time other processes had the core)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/models/han/train.h"
#include "attnkit/train/module.h"

using namespace attnkit;
using namespace attnkit::models::han;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "train";
  const int n = argc > 2 ? std::atoi(argv[2]) : 40;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  if (mode != "train" && mode != "infer") {
    std::fprintf(stderr, "usage: bench-han train|infer [STEPS|REPS] [THREADS]\n");
    return 2;
  }
  set_max_threads(threads);
  blas_set_threads(threads);
  const int64_t V = 8000, N = 1024, B = 64;
  Rng rng(2);
  std::vector<data::TextDoc> docs(static_cast<size_t>(N));
  for (size_t i = 0; i < docs.size(); ++i) {
    auto& d = docs[i];
    d.label = i % 2 ? "a" : "b", d.line = static_cast<int64_t>(i) + 1;
    const int64_t s = 2 + static_cast<int64_t>(rng.below(11));
    for (int64_t k = 0; k < s; ++k) {
      std::vector<std::string> w(3 + rng.below(28));
      for (auto& x : w) x = "w" + std::to_string(rng.below(V));
      d.sentences.push_back(std::move(w));
    }
  }
  HanConfig c;  // the paper's sizes, dropout 0.5
  c.min_freq = 1;
  HanTrainOptions o;
  o.batch = B, o.lr = 1e-3;
  HanTraining m(c, o, docs, {}, "bench", "", 1000000, 0, 1, "");
  double items = 0, sec = 0;
  std::clock_t c0 = 0;
  if (mode == "train") {
    nn::TrainState s;
    train::Tapes tapes;
    auto step = [&] {
      const int64_t rows = m.begin_batch(s);
      train::step(m, tapes, rows, 1, s.step, 5.0);
      ++s.step;
      s.advance(m.batches_per_epoch());
      return rows;
    };
    for (int i = 0; i < 3; ++i) step();  // warm-up
    c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) items += static_cast<double>(step());
    sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    std::vector<Doc> enc = encode_docs(docs, m.vocab(), m.labels(), "bench", false);
    predict_docs(m.model(), enc, threads);  // warm-up
    c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      items += static_cast<double>(predict_docs(m.model(), enc, threads).dim(0));
    sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("attnkit\t%s\t%d\t%.0f\t%.3f\t%.1f\t%.3f\t%.1f\n", mode.c_str(), threads, items, sec,
              items / sec, cpu, items / cpu);
}
