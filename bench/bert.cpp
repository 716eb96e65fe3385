// bench-bert: BERT pretraining's step, timed (bench/threads.sh: thread scaling).
//   bench-bert STEPS THREADS
// The bert-tiny recipe (pipelines/bert-tiny.sh): 2 layers, hidden 128, 2 heads, ff 256,
// len-max 64, dropout 0.1, batch 128 (4 slices), Adam at 1e-3, no clipping; on a synthetic
// corpus of bAbI's shape (200 documents of 15 sentences of 4-9 words from 150 words, uniform).
// Prints one TSV line: impl, task, model, threads, steps, sec (a step), pairs/s, loss.
// Warm-up: 25 steps, untimed and (ATTNKIT_TRACE_THREADS) untraced. The tapes' buffer pools
// (autodiff/tape.h) grow whenever a slice is longer than any before it (its padded length
// sets every activation's size): on this corpus steps 2, 3, 5, 6 and 22 each faulted in 34-60
// MB of fresh memory (8,500-14,700 minor faults, getrusage) and cost 2-4 times a steady step
// (0.11 s of CPU at 1 thread), on the thread whose slices grew; the next such step comes
// between steps 36 and 45 (records get rarer as the run goes on). A window that held them
// measured the run's start, not its steps: at 2 threads the growth is mostly serial, so 3
// warm-up steps gave bert 1.51x where the trace of its steady steps predicts 1.92x. Steps
// 26-35 (10 steps, bench/threads.sh's) hold none.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnkit/core/blas.h"
#include "attnkit/core/heap.h"
#include "attnkit/core/parallel.h"
#include "attnkit/models/bert/model.h"
#include "attnkit/train/module.h"

using namespace attnkit;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench-bert STEPS THREADS\n");
    return 2;
  }
  const int steps = std::atoi(argv[1]), threads = std::atoi(argv[2]);
  constexpr int64_t B = 128;
  blas_set_threads(threads);
  set_max_threads(threads);
  keep_freed_memory();  // as the tools do (core/heap.h): no page faults between steps
  data::TokenCounts counts;
  for (int w = 0; w < 150; ++w) counts["w" + std::to_string(w)] = 1;
  data::Vocab vocab = data::Vocab::build(counts, 1);
  Rng r(1);
  models::BertCorpus corpus;
  for (int d = 0; d < 200; ++d) {
    corpus.docs.emplace_back();
    for (int s = 0; s < 15; ++s) {
      std::vector<int32_t> sentence;
      const int64_t n = 4 + static_cast<int64_t>(r.below(6));
      for (int64_t k = 0; k < n; ++k)
        sentence.push_back(static_cast<int32_t>(vocab.id("w" + std::to_string(r.below(150)))));
      corpus.docs.back().push_back(std::move(sentence));
    }
  }
  models::BertConfig c;  // the defaults are bert-tiny's model
  c.layers = 2, c.hidden = 128, c.heads = 2, c.ff = 256, c.max_len = 64, c.dropout = 0.1f;
  models::BertTrainOptions o;
  o.batch = B, o.lr = 1e-3;
  models::BertTraining m(c, o, std::move(vocab), std::move(corpus), {}, 1000000, 0, 1, "");
  nn::TrainState s;
  train::Tapes tapes;
  double last = 0;
  auto step = [&] {
    const int64_t rows = m.begin_batch(s);
    last = train::step(m, tapes, rows, 3, s.step, 0.0).loss;
    ++s.step;
    s.advance(m.batches_per_epoch());
  };
  for (int i = 0; i < 25; ++i) step();
  // The trace restarts here (the file is rewritten), so that it holds the timed steps only.
  if (const char* trace = std::getenv("ATTNKIT_TRACE_THREADS"); trace && *trace)
    train::set_thread_trace(trace);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("attnkit\ttrain\tbert-tiny\t%d\t%d\t%.5f\t%.1f\t%.4f\n", threads, steps, sec, B / sec,
              last);
  return 0;
}
