// Training throughput of the End-To-End Memory Network at the size of the paper's joint bAbI
// model: vocabulary 180, embedding 50, 3 hops (adjacent tying), memory 50 sentences of up to
// 11 words, queries of up to 6, PE + TE, batch 32, SGD 0.01 with clipping at 40. Synthetic
// batches (random words, sentence lengths 4-11); the PyTorch peer is bench/memn2n_torch.py.
//   bench-memn2n [STEPS] [THREADS] → impl threads steps sec_per_step examples_per_s loss
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"

using namespace attnkit;

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  // "spectral": clip as memn2n-train does by default (each weight group's spectral norm at
  // 40); otherwise the global L2 norm at 40, as the PyTorch peer does.
  const bool spectral = argc > 3 && std::string(argv[3]) == "spectral";
  set_max_threads(threads);
  blas_set_threads(threads);
  const int64_t V = 180, B = 32, M = 50, J = 11, Jq = 6;
  memory::MemN2NConfig cfg;
  cfg.vocab = V;
  cfg.dim = 50;
  cfg.hops = 3;
  cfg.pe = cfg.te = true;
  cfg.pe_form = memory::PeForm::Paper;  // the peer's weights (the same cost as the code's)
  // empty slots take part in the softmax (the default): the memory is full here, so the
  // peer's plain softmax computes the same weights
  memory::MemN2N model(cfg, 1);
  nn::SGD sgd(model.params().params(), 0.01);
  Rng rng(2);
  // 8 distinct batches, cycled
  std::vector<memory::MemBatch> batches(8);
  for (auto& b : batches) {
    b.B = B, b.M = M, b.J = J, b.Jq = Jq;
    b.story.assign(static_cast<size_t>(B * M * J), 0);
    for (int64_t s = 0; s < B * M; ++s) {
      const int64_t len = 4 + static_cast<int64_t>(rng.below(8));
      for (int64_t j = 0; j < len; ++j)
        b.story[static_cast<size_t>(s * J + j)] = 4 + static_cast<int32_t>(rng.below(V - 4));
    }
    for (int64_t s = 0; s < B * M; ++s) b.time.push_back(static_cast<int32_t>(s % M));
    b.mask = Tensor({B, M}, 1.0f);
    b.query.assign(static_cast<size_t>(B * Jq), 0);
    for (int64_t i = 0; i < B * Jq; ++i)
      b.query[static_cast<size_t>(i)] = 4 + static_cast<int32_t>(rng.below(V - 4));
    for (int64_t i = 0; i < B; ++i) b.answer.push_back(4 + static_cast<int32_t>(rng.below(V - 4)));
  }
  ad::Tape t;
  double loss = 0;
  auto step = [&](int i) {
    const memory::MemBatch& b = batches[static_cast<size_t>(i % 8)];
    t.clear();
    ad::Var l =
        ad::mul(nn::cross_entropy(model.forward(t, b, true), b.answer), static_cast<float>(B));
    t.backward(l);
    if (spectral)
      for (const auto& group : model.weight_groups()) nn::clip_grad_spectral(group, 40.0);
    else
      nn::clip_grad_norm(sgd.params(), 40.0);
    sgd.step();
    sgd.zero_grad();
    loss = l.value()[0] / B;
  };
  for (int i = 0; i < 10; ++i) step(i);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step(i);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s\t%d\t%d\t%.6f\t%.1f\t%.4f\n", spectral ? "attnkit-spectral" : "attnkit", threads,
              steps, sec / steps, static_cast<double>(steps * B) / sec, loss);
}
