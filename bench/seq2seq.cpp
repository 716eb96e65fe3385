// Training and decoding speed of the seq2seq models (lib/attnkit/models/seq2seq/model.h) on random
// data of fixed shape; the peer is bench/seq2seq_torch.py (the same models in PyTorch), run
// side by side by bench/seq2seq.sh.
//   bench-seq2seq train rnn|transformer STEPS THREADS
//     → TSV: impl task model threads steps sec_per_step tgt_tokens_per_s loss gflop_per_step
//       (gflop_per_step: the matrix products of one training step, 2mnk per gemm, counted at
//       attnkit's BLAS boundary; the PyTorch model does the same products)
//   bench-seq2seq gemms rnn|transformer REPS THREADS
//     → TSV: impl(gemms) task(train) model threads reps sec_per_replay gflop_per_s - gflop
//       (the matrix products of one training step, recorded at attnkit's BLAS boundary with
//       their shapes, transposes and beta, then replayed alone REPS times on buffers of
//       their sizes: the rate the step's products reach at their own shapes without the rest
//       of the step, with the data hot in cache: a ceiling for the step's rate. THREADS > 1
//       replays contiguous parts of the list on THREADS threads, single-threaded BLAS each,
//       as the step's slices run)
//   bench-seq2seq decode rnn|transformer BEAM SENTENCES THREADS
//     → TSV: impl task model threads sentences sec sentences_per_s beam
//     (environment: DECODE_LEN=L tokens a sentence, default 20; KV_CACHE=0 recomputes the
//     Transformer's prefix every step instead of caching keys and values)
// Models: LSTM encoder-decoder with additive (Bahdanau) attention, vocabulary 1000,
// embeddings 64, hidden 128; Transformer, 2+2 layers, d_model 128, 4 heads, d_ff 512.
// Batches of 64 pairs of length 20 (source: 19 tokens + <eos>; target: <bos> + 19 tokens +
// <eos>, so 20 predicted tokens a row), Adam 1e-3, clipping at 5, dropout 0 (the Transformer:
// the environment's DROPOUT if set, on embeddings, sublayer outputs, feed-forward hidden
// units and attention weights, as PyTorch's layers place it). Decoding emits
// exactly 20 tokens a sentence (no early <eos>), one sentence at a time; THREADS > 1
// translates sentences in parallel (one tape per thread); training cuts each batch into
// slices of at most 32 pairs (2 at 64) on their own tapes, on THREADS threads, as
// seq2seq-train does (the training layer's train::step: spare threads compute panels of the
// slices' large products; the same bits at any THREADS).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/models/seq2seq/model.h"
#include "attnkit/models/seq2seq/train.h"
#include "attnkit/nn/optim.h"
#include "attnkit/train/dist.h"

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
    if (const char* p = std::getenv("DROPOUT")) c.dropout = static_cast<float>(std::atof(p));
  }
  return c;
}

std::vector<int32_t> sentence(Rng& r, int64_t n) {
  std::vector<int32_t> s;
  for (int64_t i = 0; i < n; ++i) s.push_back(4 + static_cast<int32_t>(r.below(V - 4)));
  return s;
}
// Seconds a replay of `calls` takes, the median of `reps` replays: each call made again on
// buffers of its sizes filled with random values (one set per thread, reused), the list cut
// into `threads` contiguous parts run side by side with single-threaded BLAS.
double replay(const std::vector<GemmCall>& calls, int reps, int threads) {
  int64_t na = 1, nb = 1, nc = 1;
  for (const auto& c : calls) {
    na = std::max(na, c.m * c.k);
    nb = std::max(nb, c.k * c.n);
    nc = std::max(nc, c.m * c.n);
  }
  struct Buffers {
    std::vector<float> a, b, c;
  };
  std::vector<Buffers> bufs(static_cast<size_t>(threads));
  Rng r(3);
  for (auto& b : bufs) {
    for (auto* v : {&b.a, &b.b, &b.c}) {
      v->resize(static_cast<size_t>(v == &b.a ? na : v == &b.b ? nb : nc));
      for (float& x : *v) x = r.uniform() - 0.5f;
    }
  }
  const int64_t n = static_cast<int64_t>(calls.size());
  auto part = [&](int64_t t) {
    auto& b = bufs[static_cast<size_t>(t)];
    for (int64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
      const GemmCall& c = calls[static_cast<size_t>(i)];
      const float beta = c.accumulate ? 1.0f : 0.0f;
      // op(A) is m x k: A itself is k x m when transposed; likewise B
      ConstMat a{b.a.data(), c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.ta ? c.m : c.k};
      Mat out{b.c.data(), c.m, c.n, c.n};
      if (c.gemv) {
        gemv(c.ta ? Trans::Yes : Trans::No, 1, a, b.b.data(), c.k, beta, b.c.data(), c.m);
        continue;
      }
      ConstMat bm{b.b.data(), c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.tb ? c.k : c.n};
      gemm(c.ta ? Trans::Yes : Trans::No, c.tb ? Trans::Yes : Trans::No, 1, a, bm, beta, out);
    }
  };
  auto once = [&] {
    parallel_for(
        threads,
        [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) part(t);
        },
        threads);
  };
  once();  // warm-up
  std::vector<double> secs;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return secs[secs.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: bench-seq2seq train|gemms rnn|transformer STEPS THREADS\n"
                 "       bench-seq2seq decode rnn|transformer BEAM SENTENCES THREADS\n");
    return 2;
  }
  const std::string task = argv[1], type = argv[2];
  auto model = models::Seq2Seq::create(config(type), 1);
  Rng data(2);
  if (task == "train" || task == "gemms") {
    const int steps = std::atoi(argv[3]), threads = std::atoi(argv[4]);
    blas_set_threads(threads);
    set_max_threads(threads);
    // The training layer's step, as seq2seq-train runs it: each batch cut into slices of at
    // most 32 pairs on their own tapes (data parallelism), Adam, clipping at 5.
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
    float last = 0;
    int64_t k = 0;
    auto step = [&] {
      fill();
      m.set_batch(data::make_batch(pairs, rows));
      last = static_cast<float>(train::step(m, tapes, B, 3, k++, 5.0).loss);
    };
    for (int i = 0; i < 2; ++i) step();
    blas_count_flops(true);  // the third warm-up step: the arithmetic of one step (gemm, gemv)
    step();
    const double gflop = static_cast<double>(blas_flops()) * 1e-9;
    blas_count_flops(false);
    if (task == "gemms") {
      blas_record_calls(true);
      step();
      blas_record_calls(false);
      const double sec = replay(blas_recorded_calls(), steps, threads);
      std::printf("gemms\ttrain\t%s\t%d\t%d\t%.5f\t%.1f\t-\t%.3f\n", type.c_str(), threads, steps,
                  sec, gflop / sec, gflop);
      return 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
    // Under mpirun (bench/ddp.sh) every rank runs its slices of the same global batch of B
    // pairs; rank 0 reports, the threads column counting ranks x threads.
    if (train::dist::rank() == 0)
      std::printf("attnkit\ttrain\t%s\t%d\t%d\t%.5f\t%.0f\t%.4f\t%.3f\n", type.c_str(),
                  threads * train::dist::ranks(), steps, sec, B * T / sec, last, gflop);
    return 0;
  }
  const int beam = std::atoi(argv[3]), n = std::atoi(argv[4]),
            threads = argc > 5 ? std::atoi(argv[5]) : 1;
  blas_set_threads(threads);
  set_max_threads(threads);
  std::vector<std::vector<int32_t>> src;
  for (int i = 0; i < n; ++i) {
    src.push_back(sentence(data, T - 1));
    src.back().push_back(2);
  }
  // DECODE_LEN=L (environment): emit L tokens a sentence instead of T (bench/decode-length.sh);
  // KV_CACHE=0: recompute the Transformer's prefix every step (models::DecodeOptions::kv_cache).
  const char* dl = std::getenv("DECODE_LEN");
  const int L = dl && *dl ? std::atoi(dl) : static_cast<int>(T);
  if (L < 1) {
    std::fprintf(stderr, "bench-seq2seq: DECODE_LEN must be >= 1\n");
    return 2;
  }
  const char* kv = std::getenv("KV_CACHE");
  models::DecodeOptions o;
  o.beam = beam;
  o.max_length = o.min_length = L;
  o.kv_cache = !(kv && std::strcmp(kv, "0") == 0);
  std::vector<size_t> lens(static_cast<size_t>(n));
  model->translate(src[0], o);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          lens[static_cast<size_t>(i)] =
              model->translate(src[static_cast<size_t>(i)], o).tokens.size();
      },
      threads);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t l : lens)
    if (l != static_cast<size_t>(L)) {
      std::fprintf(stderr, "bench-seq2seq: a translation of %zu tokens\n", l);
      return 1;
    }
  std::printf("attnkit\tdecode\t%s\t%d\t%d\t%.4f\t%.1f\t%d\n", type.c_str(), threads, n, sec,
              n / sec, beam);
  return 0;
}
