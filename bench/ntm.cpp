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
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"

using namespace attnkit;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 200;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  blas_set_threads(threads);
  memory::NtmConfig cfg;
  nn::ParamStore ps;
  Rng rng(seed);
  memory::Ntm ntm(ps, cfg, rng);
  nn::RMSProp opt(ntm.trainable(), 1e-4);
  auto task = data::SeqTaskOptions::defaults(data::SeqTask::Copy);
  Rng dr(seed + 1000);
  ad::Tape t;
  int64_t wrong = 0, counted = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    data::Episode e = data::make_episode(task, dr);
    Tensor mask({e.target.dim(0), e.target.dim(1)});
    for (int64_t k = 0; k < mask.size(); ++k) mask[k] = e.mask[k / e.target.dim(1)];
    ad::Var y = ntm.forward(t, e.input);
    t.backward(nn::bce_with_logits(y, e.target, &mask));
    if (i >= n - n / 10) {
      wrong += memory::wrong_bits(y.value(), e.target, &e.mask);
      ++counted;
    }
    nn::clip_grad_value(ntm.trainable(), 10.0);
    opt.step();
    opt.zero_grad();
    t.clear();
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("attnkit\t%d\t%lld\t%.3f\t%.2f\t%.3f\n", threads, static_cast<long long>(n), sec,
              static_cast<double>(n) / sec,
              counted ? static_cast<double>(wrong) / static_cast<double>(counted) : 0.0);
}
