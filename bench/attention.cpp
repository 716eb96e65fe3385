// One measurement per process (so the peak RSS is this case's own), printed as one TSV line:
//   bench-attention fused  N HEADS D REPS [ROWS KEYS]   streaming scaled-dot contexts
//   bench-attention naive  N HEADS D REPS               whole weight matrices (the reference)
//   bench-attention sgemm  N REPS                      square sgemm, the machine's ceiling
//   bench-attention profile N D REPS [ROWS KEYS]       where the streaming kernel's time goes,
//                                                      one thread, one head: the Q Kᵀ gemms,
//                                                      the online-softmax steps, the P V gemms
//   bench-attention mha    N HEADS E BATCH REPS        multi-head self-attention (random
//                                                      parameters), as attn-mha computes it
// Line: impl  N  heads  d  seconds(best)  GFLOP/s (4·N²·d per head)  peak_RSS_MB  threads.
// Inputs are standard normal; Q, K, V are [heads, N, d] as one tensor each. Run by
// bench/attention.sh.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attnkit/attention/block_kernels.h"
#include "attnkit/attention/fused.h"
#include "attnkit/attention/mha.h"
#include "attnkit/attention/online_softmax.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"

using namespace attnkit;

namespace {

void fill(Tensor& t, uint64_t seed) {
  Rng rng(seed);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.normal());
}

// Seconds by the wall clock, or with ATTNKIT_BENCH_CLOCK=cpu by the process's CPU time: at
// one thread that is the quiet machine's wall time, far less disturbed by other processes.
double seconds_now() {
  static const bool cpu = [] {
    const char* c = std::getenv("ATTNKIT_BENCH_CLOCK");
    return c && std::string(c) == "cpu";
  }();
  if (!cpu)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = seconds_now();
    f();
    best = std::min(best, seconds_now() - t0);
  }
  return best;
}

double peak_rss_mb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench-attention fused|naive N HEADS D REPS [ROWS KEYS]\n"
               "       bench-attention sgemm N REPS\n"
               "       bench-attention profile N D REPS [ROWS KEYS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string impl = argv[1];
  const int threads = max_threads();
  if (impl == "sgemm") {
    if (argc != 4) return usage();
    const int64_t n = std::atoll(argv[2]);
    const int reps = std::atoi(argv[3]);
    Tensor a({n, n}), b({n, n}), c({n, n});
    fill(a, 1);
    fill(b, 2);
    const double t =
        best_of(reps, [&] { gemm(Trans::No, Trans::No, 1, mat(a), mat(b), 0, mat(c)); });
    std::printf("sgemm\t%ld\t-\t-\t%.4f\t%.1f\t%.0f\t%d\n", static_cast<long>(n), t,
                2.0 * n * n * n / t / 1e9, peak_rss_mb(), blas_threads());
    return 0;
  }
  if (impl == "profile") {
    // The loop of fused_block (fused.cpp) with a timer around each phase, on one thread.
    if (argc != 5 && argc != 7) return usage();
    const int64_t n = std::atoll(argv[2]), d = std::atoll(argv[3]);
    const int reps = std::atoi(argv[4]);
    attention::FusedBlocks blocks;
    if (argc == 7) {
      blocks.rows = std::atoll(argv[5]);
      blocks.keys = std::atoll(argv[6]);
    }
    blas_set_threads(1);
    Tensor q({n, d}), k({n, d}), v({n, d}), out({n, d});
    fill(q, 3);
    fill(k, 4);
    fill(v, 5);
    std::vector<float> sbuf(static_cast<size_t>(blocks.rows * blocks.keys)), m(blocks.rows);
    std::vector<double> l(blocks.rows);
    // As fused_context: all keys packed once when the key blocks are whole panels, else each
    // block packed before its scores.
    const bool hand = attention::detail::block_kernels_on();
    const bool once = blocks.keys % attention::detail::kKeyPanel == 0;
    const attention::detail::AlignedFloats kstore(
        hand ? attention::detail::packed_keys_floats(once ? n : blocks.keys, d) : 0);
    float* const kbuf = kstore.data;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    double best[3] = {1e30, 1e30, 1e30};
    // The thread's CPU time, not the wall clock: one thread, so the same thing on a quiet
    // machine, and far less disturbed when other processes share the cores.
    struct clock {
      static double now() {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
      }
    };
    for (int r = 0; r < reps; ++r) {
      double t[3] = {0, 0, 0};
      if (hand && once) {  // the packing counts as the scores' time
        const auto t0 = clock::now();
        attention::detail::pack_keys(ConstMat{k.data(), n, d, d}, kbuf);
        t[0] += clock::now() - t0;
      }
      for (int64_t r0 = 0; r0 < n; r0 += blocks.rows) {
        const int64_t rows = std::min(blocks.rows, n - r0);
        const ConstMat qb{q.data() + r0 * d, rows, d, d};
        const Mat ob{out.data() + r0 * d, rows, d, d};
        std::fill(m.begin(), m.end(), -INFINITY);
        std::fill(l.begin(), l.end(), 0.0);
        for (int64_t c0 = 0; c0 < n; c0 += blocks.keys) {
          const int64_t nk = std::min(blocks.keys, n - c0);
          const Mat s{sbuf.data(), rows, nk, nk};
          const auto t0 = clock::now();
          const ConstMat kb{k.data() + c0 * d, nk, d, d}, vb{v.data() + c0 * d, nk, d, d};
          if (hand && once) {
            attention::detail::scores_packed(qb, kbuf + c0 * d, nk, scale, s);
          } else if (hand) {
            attention::detail::pack_keys(kb, kbuf);
            attention::detail::scores_packed(qb, kbuf, nk, scale, s);
          } else {
            gemm(Trans::No, Trans::Yes, scale, qb, kb, 0.0f, s);
          }
          const auto t1 = clock::now();
          attention::detail::online_softmax_block(s, m.data(), l.data(), ob);
          const auto t2 = clock::now();
          if (hand)
            attention::detail::add_context(s, vb, ob);
          else
            gemm(Trans::No, Trans::No, 1.0f, s, vb, 1.0f, ob);
          const auto t3 = clock::now();
          t[0] += t1 - t0;
          t[1] += t2 - t1;
          t[2] += t3 - t2;
        }
      }
      for (int i = 0; i < 3; ++i) best[i] = std::min(best[i], t[i]);
    }
    const double half = 2.0 * static_cast<double>(n) * n * d, total = best[0] + best[1] + best[2];
    std::printf(
        "profile\t%ld\t1\t%ld\tblocks %ldx%ld, 1 thread (its CPU time), softmax path %s, "
        "products by %s: QK^T %.4f s "
        "(%.0f GFLOP/s), softmax %.4f s (%.2f ns/score, %.0f%%), PV %.4f s (%.0f GFLOP/s); "
        "%.0f GFLOP/s overall\n",
        static_cast<long>(n), static_cast<long>(d), static_cast<long>(blocks.rows),
        static_cast<long>(blocks.keys),
        attention::detail::path_name(attention::detail::SoftmaxPath::Auto),
        hand ? "the AVX-512 block kernels" : "sgemm", best[0], half / best[0] / 1e9, best[1],
        best[1] / (double(n) * n) * 1e9, 100.0 * best[1] / total, best[2], half / best[2] / 1e9,
        2 * half / total / 1e9);
    return 0;
  }
  if (impl == "mha") {
    if (argc != 7) return usage();
    const int64_t n = std::atoll(argv[2]), heads = std::atoll(argv[3]), E = std::atoll(argv[4]),
                  batch = std::atoll(argv[5]);
    const int reps = std::atoi(argv[6]);
    std::map<std::string, Tensor> arrays;
    arrays.emplace("in_proj_weight", Tensor({3 * E, E}));
    arrays.emplace("in_proj_bias", Tensor({3 * E}));
    arrays.emplace("out_proj.weight", Tensor({E, E}));
    arrays.emplace("out_proj.bias", Tensor({E}));
    uint64_t seed = 10;
    for (auto& [name, t] : arrays) fill(t, seed++);
    for (float& x : arrays.at("in_proj_weight").values()) x *= 0.05f;
    const attention::MhaParams p = attention::mha_params(arrays);
    Tensor x({batch, n, E});
    fill(x, 7);
    attention::MhaOptions o;
    o.heads = heads;
    const double t =
        best_of(reps, [&] { Tensor y = attention::multi_head_attention(p, x, x, x, o); });
    std::printf("attnkit-mha\t%ld\t%ld\t%ld\t%.4f\t-\t%.0f\t%d\n", static_cast<long>(n),
                static_cast<long>(heads), static_cast<long>(E), t, peak_rss_mb(), threads);
    return 0;
  }
  if ((impl != "fused" && impl != "naive") || (argc != 6 && argc != 8)) return usage();
  const int64_t n = std::atoll(argv[2]), heads = std::atoll(argv[3]), d = std::atoll(argv[4]);
  const int reps = std::atoi(argv[5]);
  attention::FusedBlocks blocks;
  if (argc == 8) {
    blocks.rows = std::atoll(argv[6]);
    blocks.keys = std::atoll(argv[7]);
  }
  Tensor q({heads, n, d}), k({heads, n, d}), v({heads, n, d}), out({heads, n, d});
  fill(q, 3);
  fill(k, 4);
  fill(v, 5);
  std::vector<attention::Problem> ps;
  for (int64_t h = 0; h < heads; ++h)
    ps.push_back({mat(q, h), mat(k, h), mat(v, h), mat(out, h), {}});
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const double t = best_of(reps, [&] {
    if (impl == "fused")
      attention::fused_context(ps, scale, blocks);
    else
      attention::naive_context(ps, scale);
  });
  const double flops = 4.0 * static_cast<double>(n) * n * d * heads;
  std::printf("attnkit-%s\t%ld\t%ld\t%ld\t%.4f\t%.1f\t%.0f\t%d\n", impl.c_str(),
              static_cast<long>(n), static_cast<long>(heads), static_cast<long>(d), t,
              flops / t / 1e9, peak_rss_mb(), threads);
  return 0;
}
