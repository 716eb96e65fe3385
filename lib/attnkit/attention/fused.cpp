#include "attnkit/attention/fused.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "attnkit/attention/block_kernels.h"
#include "attnkit/attention/online_softmax.h"
#include "attnkit/attention/softmax.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"

namespace attnkit::attention {

namespace {

std::string dims(ConstMat m) {
  return "[" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + "]";
}

void check_problem(const Problem& p, bool need_v) {
  if (p.q.cols != p.k.cols)
    throw ShapeError("Q " + dims(p.q) + " and K " + dims(p.k) + " differ in width");
  if (need_v && (p.v.rows != p.k.rows || p.out.rows != p.q.rows || p.out.cols != p.v.cols))
    throw ShapeError("K " + dims(p.k) + ", V " + dims(p.v) + " and the context " + dims(p.out) +
                     " do not fit Q " + dims(p.q));
  if (p.mask.mask.data && (p.mask.mask.rows != p.q.rows || p.mask.mask.cols != p.k.rows))
    throw ShapeError("mask " + dims(p.mask.mask) + " does not fit the scores [" +
                     std::to_string(p.q.rows) + ", " + std::to_string(p.k.rows) + "]");
}

// The keys [0, end) that can be visible to some query of rows [r0, r1), and the first one.
int64_t keys_end(const KeyMask& m, int64_t n_k, int64_t r1) {
  int64_t end = n_k;
  if (m.key_len >= 0) end = std::min(end, m.key_len);
  if (m.causal) end = std::min(end, r1);
  if (m.window >= 0) end = std::min(end, r1 - 1 + m.window + 1);
  return std::max<int64_t>(0, end);
}
int64_t keys_begin(const KeyMask& m, int64_t r0) {
  return m.window >= 0 ? std::max<int64_t>(0, r0 - m.window) : 0;
}

// Tasks are (problem, row block); visiting them in the order 0, n-1, 1, n-2, ... gives each
// thread's contiguous chunk a mix of early (cheap under a causal mask) and late blocks.
int64_t balanced(int64_t t, int64_t n) { return (t % 2 == 0) ? t / 2 : n - 1 - t / 2; }

struct Task {
  int64_t problem, r0, r1;
};

std::vector<Task> make_tasks(const std::vector<Problem>& ps, int64_t rows) {
  std::vector<Task> tasks;
  for (size_t p = 0; p < ps.size(); ++p)
    for (int64_t r0 = 0; r0 < ps[p].q.rows; r0 += rows) {
      const int64_t r1 = std::min(ps[p].q.rows, r0 + rows);
      if (r1 <= ps[p].row_begin || (ps[p].row_end >= 0 && r0 >= ps[p].row_end)) continue;
      tasks.push_back({static_cast<int64_t>(p), r0, r1});
    }
  return tasks;
}

// One block of query rows of one problem, streaming over blocks of keys. out's rows hold the
// running (unnormalised) context; m and l the running maximum and sum of each row. With kall
// (all of p's keys packed by pack_keys, when every key block starts on a panel) or kbuf (room
// for packed_keys_floats(key_block, d) floats: each block packed there) the products run
// through the hand-written kernels (block_kernels.h) instead of sgemm.
void fused_block(const Problem& p, float scale, int64_t r0, int64_t r1, int64_t key_block,
                 float* sbuf, float* m, double* l, const float* kall, float* kbuf) {
  const int64_t rows = r1 - r0, d_v = p.v.cols;
  const Mat out = rows_of(p.out, r0, r1);
  for (int64_t i = 0; i < rows; ++i) {
    m[i] = kNegInf;
    l[i] = 0.0;
    float* o = out.data + i * out.ld;
    for (int64_t c = 0; c < d_v; ++c) o[c] = 0.0f;
  }
  const ConstMat q = rows_of(p.q, r0, r1);
  const int64_t c_begin = keys_begin(p.mask, r0), c_end = keys_end(p.mask, p.k.rows, r1);
  for (int64_t c0 = c_begin; c0 < c_end; c0 += key_block) {
    const int64_t c1 = std::min(c_end, c0 + key_block), nk = c1 - c0;
    const Mat s{sbuf, rows, nk, std::max<int64_t>(1, nk)};
    if (kall) {
      detail::scores_packed(q, kall + c0 * p.k.cols, nk, scale, s);
    } else if (kbuf) {
      detail::pack_keys(rows_of(p.k, c0, c1), kbuf);
      detail::scores_packed(q, kbuf, nk, scale, s);
    } else {
      gemm(Trans::No, Trans::Yes, scale, q, rows_of(p.k, c0, c1), 0.0f, s);
    }
    apply_key_mask(p.mask, r0, c0, s);
    detail::online_softmax_block(s, m, l, out);
    if (kall || kbuf)
      detail::add_context(s, rows_of(p.v, c0, c1), out);
    else
      gemm(Trans::No, Trans::No, 1.0f, s, rows_of(p.v, c0, c1), 1.0f, out);
  }
  for (int64_t i = 0; i < rows; ++i) {
    const float inv = l[i] > 0.0 ? static_cast<float>(1.0 / l[i]) : 0.0f;
    float* o = out.data + i * out.ld;
    for (int64_t c = 0; c < d_v; ++c) o[c] *= inv;
  }
}

}  // namespace

void apply_key_mask(const KeyMask& mk, int64_t row0, int64_t col0, Mat s) {
  if (mk.mask.data) {
    const ConstMat sub{mk.mask.data + row0 * mk.mask.ld + col0, s.rows, s.cols, mk.mask.ld};
    apply_mask(sub, s);
  }
  if (!mk.causal && mk.key_len < 0 && mk.window < 0) return;
  for (int64_t i = 0; i < s.rows; ++i) {
    const int64_t gi = row0 + i;
    // Visible global columns [lo, hi).
    int64_t lo = 0, hi = col0 + s.cols;
    if (mk.key_len >= 0) hi = std::min(hi, mk.key_len);
    if (mk.causal) hi = std::min(hi, gi + 1);
    if (mk.window >= 0) {
      hi = std::min(hi, gi + mk.window + 1);
      lo = std::max<int64_t>(lo, gi - mk.window);
    }
    float* row = s.data + i * s.ld;
    const int64_t a = std::clamp<int64_t>(lo - col0, 0, s.cols);
    const int64_t b = std::clamp<int64_t>(hi - col0, a, s.cols);
    for (int64_t j = 0; j < a; ++j) row[j] = kNegInf;
    for (int64_t j = b; j < s.cols; ++j) row[j] = kNegInf;
  }
}

void masked_scores(ConstMat q, ConstMat k, float scale, const KeyMask& mask, int64_t row0, Mat s) {
  gemm(Trans::No, Trans::Yes, scale, q, k, 0.0f, s);
  apply_key_mask(mask, row0, 0, s);
}

void fused_context(const std::vector<Problem>& problems, float scale, FusedBlocks blocks,
                   int threads) {
  if (blocks.rows < 1 || blocks.keys < 1) throw Error("fused_context: empty blocks");
  int64_t total_rows = 0;
  for (const Problem& p : problems) {
    check_problem(p, true);
    total_rows += p.q.rows;
  }
  // About 8 tasks at least, when the rows allow (see FusedBlocks).
  const int64_t cap = std::max<int64_t>(32, (total_rows + 8 * 16 - 1) / (8 * 16) * 16);
  blocks.rows = std::min(blocks.rows, cap);
  const std::vector<Task> tasks = make_tasks(problems, blocks.rows);
  const int64_t n = static_cast<int64_t>(tasks.size());
  // The tasks are the parallelism: their gemms run on one BLAS thread whatever the thread
  // count, also when parallel_for keeps them on the caller's thread (it then leaves BLAS its
  // threads, and a multi-threaded sgemm may split a block differently: other rounding).
  const int pool = static_cast<int>(std::min<int64_t>(threads > 0 ? threads : max_threads(), n));
  struct SingleBlas {
    int before = 0;
    bool on = false;
    void set() {
      before = blas_threads();
      blas_set_threads(1);
      on = true;
    }
    ~SingleBlas() {
      if (on) blas_set_threads(before);
    }
  } single;
  if (pool <= 1) single.set();
  // The hand-written kernels where the CPU has them. A problem whose key blocks all start on
  // a panel (no local window, blocks a whole number of panels) has its keys packed once, for
  // all its tasks (as many floats as its keys, rounded up to a panel); the others pack each
  // block into their task's buffer.
  const bool hand = detail::block_kernels_on();
  const bool whole_blocks = blocks.keys % detail::kKeyPanel == 0;
  std::vector<int64_t> at(problems.size(), -1);
  std::vector<char> used(problems.size(), 0);  // problems with rows to compute
  for (const Task& t : tasks) used[static_cast<size_t>(t.problem)] = 1;
  int64_t whole = 0, kfloats = 0;
  if (hand)
    for (size_t i = 0; i < problems.size(); ++i) {
      const Problem& p = problems[i];
      if (!used[i]) continue;
      if (whole_blocks && p.mask.window < 0) {
        at[i] = whole;
        whole += detail::packed_keys_floats(p.k.rows, p.k.cols);
      } else {
        kfloats = std::max(kfloats, detail::packed_keys_floats(blocks.keys, p.k.cols));
      }
    }
  const detail::AlignedFloats packed_store(whole);
  float* packed = packed_store.data;
  if (packed)
    parallel_for(
        static_cast<int64_t>(problems.size()),
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            if (at[static_cast<size_t>(i)] >= 0)
              detail::pack_keys(problems[static_cast<size_t>(i)].k,
                                packed + at[static_cast<size_t>(i)]);
        },
        threads);
  parallel_for(
      n,
      [&](int64_t begin, int64_t end) {
        std::vector<float> sbuf(static_cast<size_t>(blocks.rows * blocks.keys));
        std::vector<float> m(static_cast<size_t>(blocks.rows));
        std::vector<double> l(static_cast<size_t>(blocks.rows));
        const detail::AlignedFloats kstore(kfloats);
        float* kbuf = kstore.data;
        for (int64_t t = begin; t < end; ++t) {
          const Task& task = tasks[static_cast<size_t>(balanced(t, n))];
          const int64_t from = at[static_cast<size_t>(task.problem)];
          fused_block(problems[static_cast<size_t>(task.problem)], scale, task.r0, task.r1,
                      blocks.keys, sbuf.data(), m.data(), l.data(),
                      from >= 0 ? packed + from : nullptr, from >= 0 ? nullptr : kbuf);
        }
      },
      threads);
}

void naive_context(const std::vector<Problem>& problems, float scale, int threads) {
  for (const Problem& p : problems) check_problem(p, true);
  const int64_t rows = 64;
  const std::vector<Task> tasks = make_tasks(problems, rows);
  const int64_t n = static_cast<int64_t>(tasks.size());
  parallel_for(
      n,
      [&](int64_t begin, int64_t end) {
        std::vector<float> sbuf;
        for (int64_t t = begin; t < end; ++t) {
          const Task& task = tasks[static_cast<size_t>(t)];
          const Problem& p = problems[static_cast<size_t>(task.problem)];
          const int64_t nr = task.r1 - task.r0, nk = p.k.rows;
          sbuf.assign(static_cast<size_t>(std::max<int64_t>(1, nr * nk)), 0.0f);
          const Mat s{sbuf.data(), nr, nk, std::max<int64_t>(1, nk)};
          masked_scores(rows_of(p.q, task.r0, task.r1), p.k, scale, p.mask, task.r0, s);
          softmax_rows(s);
          gemm(Trans::No, Trans::No, 1.0f, s, p.v, 0.0f, rows_of(p.out, task.r0, task.r1));
        }
      },
      threads);
}

}  // namespace attnkit::attention
