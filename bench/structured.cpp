// Structured attention's cost (issue 34; bench/structured.sh runs it beside the PyTorch peer
// bench/structured_torch.py, the same dynamic programmes in batched log space with autograd):
//   chain  the linear-chain CRF's marginals and their backward pass (ad::chain_marginals,
//          forward-backward), B = 32 chains of n = 100 binary selections, pairwise per link
//   tree   the dependency CRF's marginals and their backward (ad::tree_marginals, Eisner's
//          inside-outside), B = 8 trees of n = 30 words
//   memn2n one training step (forward, backward) of the memory network at memn2n-train's
//          single-task size (vocabulary 40, d = 20, 2 hops, memory 50 sentences of 8 words,
//          batch 32, PE TE) with --attention softmax, then crf (the hop chain over the 50
//          slots); the figure to compare is their ratio.
// The backward passes are seeded by a fixed direction r (L = Σ r ⊙ marginals), as the peer.
//   bench-structured [REPS] [THREADS] → TSV: impl what size ms_per_iter
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/autodiff/ops_structured.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/nn/loss.h"

using namespace attnkit;

namespace {

Tensor uniform(Shape s, Rng& rng, float scale) {
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i)
    t[i] = scale * (2.0f * static_cast<float>(rng.uniform()) - 1.0f);
  return t;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ms per call of f (after 2 warm-up calls); *cpu_ms (if given): the calling thread's CPU time
// per call, which a loaded machine inflates far less than the wall clock (one thread only).
double time_ms(int reps, const std::function<void()>& f, double* cpu_ms = nullptr) {
  for (int i = 0; i < 2; ++i) f();
  const double c0 = thread_cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  if (cpu_ms) *cpu_ms = 1e3 * (thread_cpu_s() - c0) / reps;
  return 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

memory::MemBatch memn2n_batch(int64_t V, Rng& rng) {
  const int64_t B = 32, M = 50, J = 8, Jq = 4;
  memory::MemBatch b;
  b.B = B, b.M = M, b.J = J, b.Jq = Jq;
  b.story.assign(static_cast<size_t>(B * M * J), 0);
  for (int64_t s = 0; s < B * M; ++s) {
    const int64_t len = 3 + static_cast<int64_t>(rng.below(6));
    for (int64_t j = 0; j < len; ++j)
      b.story[static_cast<size_t>(s * J + j)] = 4 + static_cast<int32_t>(rng.below(V - 4));
  }
  for (int64_t s = 0; s < B * M; ++s) b.time.push_back(static_cast<int32_t>(s % M));
  b.mask = Tensor({B, M}, 1.0f);
  for (int64_t i = 0; i < B * Jq; ++i)
    b.query.push_back(4 + static_cast<int32_t>(rng.below(V - 4)));
  for (int64_t i = 0; i < B; ++i) b.answer.push_back(4 + static_cast<int32_t>(rng.below(V - 4)));
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  set_max_threads(threads);
  blas_set_threads(threads);
  Rng rng(7);
  ad::Tape t;

  {  // chain
    const int64_t B = 32, n = 100;
    const Tensor u = uniform({B, n}, rng, 2.0f), p = uniform({B, n - 1, 2, 2}, rng, 1.0f),
                 r = uniform({B, n}, rng, 1.0f);
    const double ms = time_ms(reps, [&] {
      t.clear();
      ad::Var uv = t.input(u.clone()), pv = t.input(p.clone());
      t.backward(ad::chain_marginals(uv, pv), r);
    });
    std::printf("attnkit\tchain\tB%lld_n%lld\t%.3f\n", static_cast<long long>(B),
                static_cast<long long>(n), ms);
  }
  {  // tree
    const int64_t B = 8, n = 30;
    const Tensor a = uniform({B, n, n}, rng, 2.0f), r = uniform({B, n, n}, rng, 1.0f);
    const double ms = time_ms(reps, [&] {
      t.clear();
      ad::Var av = t.input(a.clone());
      t.backward(ad::tree_marginals(av), r);
    });
    std::printf("attnkit\ttree\tB%lld_n%lld\t%.3f\n", static_cast<long long>(B),
                static_cast<long long>(n), ms);
  }
  // memn2n steps
  const int64_t V = 40;
  const memory::MemBatch b = memn2n_batch(V, rng);
  double soft = 0, soft_cpu = 0;
  for (memory::HopAttention a : {memory::HopAttention::Softmax, memory::HopAttention::Crf}) {
    memory::MemN2NConfig cfg;
    cfg.vocab = V, cfg.dim = 20, cfg.hops = 2, cfg.memory = 50, cfg.pe = cfg.te = true;
    cfg.mask_empty = true;
    cfg.attention = a;
    memory::MemN2N model(cfg, 1);
    double cpu = 0;
    const double ms = time_ms(
        reps,
        [&] {
          t.clear();
          t.backward(nn::cross_entropy(model.forward(t, b, true), b.answer));
          model.params().zero_grad();
        },
        threads == 1 ? &cpu : nullptr);
    if (a == memory::HopAttention::Softmax) soft = ms, soft_cpu = cpu;
    std::printf("attnkit\tmemn2n-%s\tB32_M50_K2\t%.3f\n", memory::hop_attention_name(a), ms);
    if (a != memory::HopAttention::Crf) continue;
    std::printf("# memn2n step crf/softmax: %.2f\n", ms / soft);
    if (threads == 1)
      std::printf("# memn2n step crf/softmax, thread CPU time: %.2f\n", cpu / soft_cpu);
  }
}
