// Neural Turing Machine training speed on the copy task: LSTM controller 100, one read and
// one write head, memory 128 x 20, batch 1, copy of 8-bit sequences of length 1..20, RMSProp
// (Graves' centred form, lr 1e-4), gradients clipped by value to 10 — the paper's set-up and
// that of the PyTorch reference bench/ntm_torch.py, which bench/ntm.sh runs in the same run.
//   bench-ntm [SEQUENCES] [THREADS] [SEED]
//     → TSV: impl threads sequences sec seq_per_s bits_per_seq(last 10%)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm/train.h"

using namespace attnkit;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 200;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  blas_set_threads(threads);
  set_max_threads(threads);
  memory::NtmConfig cfg;
  // The training layer's step on an NTM module, as ntm-train runs it (batch 1, RMSProp at
  // the paper's 1e-4 as the PyTorch peer, gradients clamped to [-10, 10]).
  memory::NtmTrainOptions o;
  o.lr = 1e-4;
  memory::NtmSource src;
  src.task = data::SeqTaskOptions::defaults(data::SeqTask::Copy);
  memory::NtmTraining m(cfg, o, std::move(src), n, seed);
  train::Tapes tapes;
  nn::TrainState s;
  double wrong = 0;
  int64_t counted = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t rows = m.begin_batch(s);
    const train::StepOut out = train::step(m, tapes, rows, seed, i, 0.0);
    const train::StepEnd end = m.end_step(s, out.loss, out.sums);
    if (i >= n - n / 10) {
      wrong += end.metrics[0].second;
      ++counted;
    }
    s.advance(m.batches_per_epoch());
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("attnkit\t%d\t%lld\t%.3f\t%.2f\t%.3f\n", threads, static_cast<long long>(n), sec,
              static_cast<double>(n) / sec, counted ? wrong / static_cast<double>(counted) : 0.0);
}
