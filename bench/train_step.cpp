// One training step of an LSTM encoder-decoder with additive (Bahdanau) attention on the
// tape (lib/attnkit/autodiff + nn), timed: vocabulary 1000, embeddings 64, hidden 128,
// batch 64, source and target length 20, Adam. The peer is bench/torch_train_step.py (the
// same model in PyTorch); bench/train-step.sh runs both with the same threads and core type.
//   bench-train_step [STEPS] [THREADS]  → TSV: impl threads steps sec_per_step tokens_per_s loss
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/rnn.h"

using namespace attnkit;
using ad::Tape;
using ad::Var;

namespace {
constexpr int64_t V = 1000, E = 64, H = 128, B = 64, T = 20;

struct Model {
  nn::ParamStore ps;
  Rng rng{1};
  nn::Embedding src_emb{ps, "src_emb", V, E, rng}, tgt_emb{ps, "tgt_emb", V, E, rng};
  nn::RecurrentEncoder enc{ps, "enc", {nn::CellKind::LSTM, E, H, 1, false, 0.0f}, rng};
  nn::RecurrentCell dec{ps, "dec", nn::CellKind::LSTM, E + H, H, rng};
  nn::Linear att_k{ps, "att.k", H, H, rng, false}, att_q{ps, "att.q", H, H, rng};
  nn::Linear att_v{ps, "att.v", H, 1, rng, false};
  nn::Linear out{ps, "out", 2 * H, V, rng};

  // Mean cross-entropy of the target sequence given the source (teacher forcing).
  Var loss(Tape& t, const std::vector<int32_t>& src, const std::vector<int32_t>& tgt_in,
           const std::vector<int32_t>& tgt_out) {
    auto e = enc(t, src_emb(t, src, {B, T}), std::vector<int64_t>(B, T));
    Var Hs = e.outputs;                  // [B, T, H]
    Var keys = att_k(t, Hs);             // [B, T, H], once per sequence
    Var Y = tgt_emb(t, tgt_in, {T, B});  // time-major target embeddings
    nn::State s = e.final[0];
    std::vector<Var> feats(T);
    for (int64_t k = 0; k < T; ++k) {
      Var scores =
          ad::reshape(ad::additive_scores(keys, att_q(t, s.h), t.param(*att_v.W)), {B, 1, T});
      Var alpha = ad::softmax(scores);
      Var ctx = ad::reshape(ad::matmul(alpha, Hs), {B, H});
      s = dec(t, ad::concat({ad::index(Y, k), ctx}, -1), s);
      feats[static_cast<size_t>(k)] = ad::concat({s.h, ctx}, -1);
    }
    Var logits = out(t, ad::stack(feats, 0));  // [T, B, V], one gemm for all steps
    return nn::cross_entropy(logits, tgt_out);
  }
};
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  blas_set_threads(threads);
  Model m;
  nn::Adam adam(m.ps.params(), 1e-3);
  Rng data(2);
  std::vector<int32_t> src(B * T), tin(T * B), tout(T * B);
  auto fill = [&] {
    for (auto& v : src) v = static_cast<int32_t>(data.below(V));
    for (auto& v : tout) v = static_cast<int32_t>(data.below(V));
    for (int64_t k = 0; k < T; ++k)  // time-major: previous target token, 0 = start
      for (int64_t b = 0; b < B; ++b)
        tin[static_cast<size_t>(k * B + b)] = k ? tout[static_cast<size_t>((k - 1) * B + b)] : 0;
  };
  Tape t(3);
  float last = 0;
  auto step = [&] {
    fill();
    adam.zero_grad();
    Var loss = m.loss(t, src, tin, tout);
    t.backward(loss);
    nn::clip_grad_norm(m.ps.params(), 5.0);
    adam.step();
    last = loss.value()[0];
    t.clear();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: buffers reach their steady state
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("attnkit\t%d\t%d\t%.5f\t%.0f\t%.4f\n", threads, steps, sec, B * T / sec, last);
  return 0;
}
