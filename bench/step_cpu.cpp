// bench-step_cpu: where a training step's CPU time goes, measured so that a loaded machine
// does not change the figures much: CPU seconds, not wall seconds. The model and batches are
// bench-seq2seq's (LSTM + Bahdanau or Transformer, vocabulary 1000, batch 64 of length 20,
// 2 slices of 32), the step the training layer's train::step.
//   bench-step_cpu rnn|transformer STEPS THREADS
//     → TSV: model threads steps wall_s cpu_s main_cpu_s (each a step) and the speedup over
//       one thread that an unloaded machine would give at most, cpu_s(1 thread) / main_cpu_s:
//       the calling thread runs the serial parts and one slice of each parallel part, so its
//       CPU time is a lower bound of the step's critical path (run THREADS 1 first: the bound
//       needs its cpu_s; the script bench/threads.sh's CPU table does it).
// Wall time under load says little about scaling (other processes take the cores); CPU time
// does: the process's (all threads: the work, including what parallelism adds) and the main
// thread's (the critical path's lower bound).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/models/seq2seq/model.h"
#include "attnkit/models/seq2seq/train.h"

using namespace attnkit;

namespace {
constexpr int32_t V = 1000;
constexpr int64_t B = 64, T = 20;

models::Seq2SeqConfig config(const std::string& type) {
  models::Seq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = V;
  if (type == "rnn") {
    c.type = models::ModelType::RNN;
    c.cell = nn::CellKind::LSTM;
    c.embed = 64;
    c.hidden = 128;
    c.attention = models::AttentionKind::Bahdanau;
  } else {
    c.type = models::ModelType::Transformer;
    c.layers = 2;
    c.d_model = 128;
    c.heads = 4;
    c.d_ff = 512;
  }
  return c;
}

std::vector<int32_t> sentence(Rng& r, int64_t n) {
  std::vector<int32_t> s;
  for (int64_t i = 0; i < n; ++i) s.push_back(4 + static_cast<int32_t>(r.below(V - 4)));
  return s;
}

double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench-step_cpu rnn|transformer STEPS THREADS\n");
    return 2;
  }
  const std::string type = argv[1];
  const int steps = std::atoi(argv[2]), threads = std::atoi(argv[3]);
  blas_set_threads(threads);
  set_max_threads(threads);
  Rng data(2);
  models::Seq2SeqData d;
  data::TokenCounts counts;
  for (int32_t i = 4; i < V; ++i) counts["w" + std::to_string(i)] = 1;
  d.source_vocab = d.target_vocab = data::Vocab::build(counts);
  std::vector<data::EncodedPair> pairs(B);
  std::vector<size_t> rows(B);
  auto fill = [&] {
    for (int64_t b = 0; b < B; ++b) {
      auto& p = pairs[static_cast<size_t>(b)];
      p.source = sentence(data, T - 1);
      p.source.push_back(2);
      p.target = {1};
      auto y = sentence(data, T - 1);
      p.target.insert(p.target.end(), y.begin(), y.end());
      p.target.push_back(2);
      rows[static_cast<size_t>(b)] = static_cast<size_t>(b);
    }
  };
  fill();
  d.train = pairs;
  models::Seq2SeqRecipe r;
  r.batch_size = B;
  r.steps = 1;
  models::Seq2SeqTraining m(config(type), d, r);
  train::Tapes tapes;
  int64_t k = 0;
  auto step = [&] {
    fill();
    m.set_batch(data::make_batch(pairs, rows));
    train::step(m, tapes, B, 3, k++, 5.0);
  };
  for (int i = 0; i < 3; ++i) step();
  const double c0 = cpu_seconds(RUSAGE_SELF), t0 = cpu_seconds(RUSAGE_THREAD);
  const auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / steps;
  const double cpu = (cpu_seconds(RUSAGE_SELF) - c0) / steps;
  const double main_cpu = (cpu_seconds(RUSAGE_THREAD) - t0) / steps;
  std::printf("%s\t%d\t%d\t%.5f\t%.5f\t%.5f\n", type.c_str(), threads, steps, wall, cpu, main_cpu);
  return 0;
}
