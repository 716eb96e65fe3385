#include "attnkit/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnkit/attention/fused.h"
#include "attnkit/attention/part.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"

namespace attnkit::attention {

namespace {

// Rows of scores handled at once on the way to a context: a block of ~1 MB of scores stays in
// cache between the score gemm, the softmax and the context gemm.
int64_t block_rows(int64_t n_q, int64_t n_k) {
  const int64_t target = (int64_t{1} << 18) / std::max<int64_t>(1, n_k);
  return std::max<int64_t>(1, std::min<int64_t>(n_q, std::max<int64_t>(16, target)));
}

const char* name_of(Operand op) {
  switch (op) {
    case Operand::Query:
      return "Q";
    case Operand::Key:
      return "K";
    case Operand::Value:
      return "V";
    case Operand::Mask:
      return "mask";
    case Operand::Params:
      return "params";
  }
  return "?";
}

void need_matrix_or_batch(const Tensor& t, Operand op) {
  if (t.rank() != 2 && t.rank() != 3)
    throw InputShapeError(std::string(name_of(op)) + " must be a matrix or a batch of " +
                              "matrices, got shape " + shape_str(t.shape()),
                          op);
}

}  // namespace

Output parse_output(const std::string& name) {
  return parse_choice<Output>("output kind", name,
                              {
                                  {"scores", Output::Scores},
                                  {"weights", Output::Weights},
                                  {"context", Output::Context},
                              });
}

Local parse_local(const std::string& name) {
  return parse_choice<Local>("local attention", name,
                             {
                                 {"m", Local::Monotonic},
                                 {"monotonic", Local::Monotonic, true},
                                 {"p", Local::Predictive},
                                 {"predictive", Local::Predictive, true},
                             });
}

Hard parse_hard(const std::string& name) {
  return parse_choice<Hard>("hard attention", name,
                            {
                                {"argmax", Hard::Argmax},
                                {"sample", Hard::Sample},
                            });
}

std::vector<float> local_positions(const LocalSpec& local, ConstMat q, int64_t n_k) {
  const Tensor& Wp = local.Wp;
  if (Wp.rank() != 2 || Wp.dim(1) != q.cols)
    throw InputShapeError("local Wp has shape " + shape_str(Wp.shape()) +
                              " but needs [d_p, d_q] with d_q = " + std::to_string(q.cols),
                          Operand::Params);
  const int64_t d_p = Wp.dim(0);
  const Tensor& vp = local.vp;
  const bool v_ok = vp.size() == d_p &&
                    (vp.rank() == 1 || (vp.rank() == 2 && (vp.dim(0) == 1 || vp.dim(1) == 1)));
  if (!v_ok)
    throw InputShapeError("local vp has shape " + shape_str(vp.shape()) + " but needs [d_p] = [" +
                              std::to_string(d_p) + "]",
                          Operand::Params);
  Tensor h({q.rows, d_p});
  gemm(Trans::No, Trans::Yes, 1.0f, q, mat(Wp), 0.0f, mat(h));
  std::vector<float> p(static_cast<size_t>(q.rows));
  for (int64_t i = 0; i < q.rows; ++i) {
    double a = 0.0;
    for (int64_t c = 0; c < d_p; ++c) a += static_cast<double>(vp[c]) * std::tanh(h.at(i, c));
    p[static_cast<size_t>(i)] = static_cast<float>(static_cast<double>(n_k) / (1.0 + std::exp(-a)));
  }
  return p;
}

Tensor attend(const Scorer& scorer, const Tensor& q, const Tensor& k, const Tensor* v,
              const Options& opt) {
  if (opt.output == Output::Context && v == nullptr) throw UsageError("the context needs values V");
  if (opt.output == Output::Scores && opt.hard != Hard::None)
    throw UsageError("hard attention applies to weights and context, not to scores");
  const Local local = opt.local ? opt.local->kind : Local::None;
  if (local != Local::None && opt.local->window < 0)
    throw UsageError("the local window must be at least 0");
  need_matrix_or_batch(q, Operand::Query);
  need_matrix_or_batch(k, Operand::Key);
  if (v) need_matrix_or_batch(*v, Operand::Value);
  if (opt.mask) need_matrix_or_batch(*opt.mask, Operand::Mask);

  // The batch size: every rank-3 operand must agree with the first one.
  int64_t batch = 1;
  bool batched = false;
  const Tensor* first = nullptr;
  Operand first_op = Operand::Query;
  auto take = [&](const Tensor* t, Operand op) {
    if (!t || t->rank() != 3) return;
    if (!batched) {
      batched = true;
      batch = t->dim(0);
      first = t;
      first_op = op;
    } else if (t->dim(0) != batch) {
      throw InputShapeError(
          std::string(name_of(first_op)) + " is a batch of " + std::to_string(batch) + " but " +
              name_of(op) + " of " + std::to_string(t->dim(0)) + " (" + name_of(first_op) + " " +
              shape_str(first->shape()) + ", " + name_of(op) + " " + shape_str(t->shape()) + ")",
          op);
    }
  };
  take(&q, Operand::Query);
  take(&k, Operand::Key);
  if (opt.output == Output::Context) take(v, Operand::Value);
  take(opt.mask, Operand::Mask);

  const Shape qs = as_batch_shape(q.shape()), ks = as_batch_shape(k.shape());
  const int64_t n_q = qs[1], d_q = qs[2], n_k = ks[1], d_k = ks[2];
  check_scorer(scorer, d_q, d_k, n_k);
  int64_t d_v = 0;
  if (v && opt.output == Output::Context) {
    const Shape vs = as_batch_shape(v->shape());
    if (vs[1] != n_k)
      throw InputShapeError("K has " + std::to_string(n_k) + " rows but V has " +
                                std::to_string(vs[1]) + " (K " + shape_str(k.shape()) + ", V " +
                                shape_str(v->shape()) + ")",
                            Operand::Value);
    d_v = vs[2];
  }
  if (opt.mask) {
    const Shape ms = as_batch_shape(opt.mask->shape());
    if (ms[1] != n_q || ms[2] != n_k)
      throw InputShapeError("mask " + shape_str(opt.mask->shape()) + " does not fit the scores [" +
                                std::to_string(n_q) + ", " + std::to_string(n_k) + "] of Q " +
                                shape_str(q.shape()) + " and K " + shape_str(k.shape()),
                            Operand::Mask);
    check_mask_values(*opt.mask);
  }
  if (opt.key_lengths) {
    if (static_cast<int64_t>(opt.key_lengths->size()) != batch)
      throw ShapeError("key padding has " + std::to_string(opt.key_lengths->size()) +
                       " lengths but the batch has " + std::to_string(batch));
    for (int64_t len : *opt.key_lengths)
      if (len < 0 || len > n_k)
        throw DataError("key length " + std::to_string(len) + " is not in [0, " +
                        std::to_string(n_k) + "]");
  }
  if (local == Local::Predictive && n_q > 0) local_positions(*opt.local, mat(q, 0), n_k);

  // The part of the result asked for (Options::part_begin/part_end): items or rows [p0, p1).
  const Part pt(opt.part_begin, opt.part_end, batched, batch, n_q);
  const bool part = pt.part;
  if (part && opt.hard == Hard::Sample)
    throw UsageError("hard sampling cannot compute a part of the rows alone");
  const int64_t b_lo = pt.b_lo, b_hi = pt.b_hi, r_lo = pt.r_lo, r_hi = pt.r_hi;
  auto take_part = [&](Tensor full) { return pt.take(std::move(full)); };

  auto key_mask = [&](int64_t b) {
    KeyMask km;
    km.causal = opt.causal;
    if (opt.mask) km.mask = mat(*opt.mask, opt.mask->rank() == 3 ? b : 0);
    if (opt.key_lengths) km.key_len = (*opt.key_lengths)[static_cast<size_t>(b)];
    if (local == Local::Monotonic) km.window = opt.local->window;
    return km;
  };
  const int64_t cols = opt.output == Output::Context ? d_v : n_k;
  Tensor out(batched ? Shape{batch, n_q, cols} : Shape{n_q, cols});

  // Streaming contexts for dot products.
  if (opt.output == Output::Context && opt.hard == Hard::None && local != Local::Predictive &&
      (scorer.kind == ScoreKind::Dot || scorer.kind == ScoreKind::ScaledDot)) {
    std::vector<Problem> ps;
    for (int64_t b = 0; b < batch; ++b) {
      ps.push_back({mat(q, q.rank() == 3 ? b : 0), mat(k, k.rank() == 3 ? b : 0),
                    mat(*v, v->rank() == 3 ? b : 0), mat(out, batched ? b : 0), key_mask(b)});
      const bool in = b >= b_lo && b < b_hi;
      ps.back().row_begin = in ? r_lo : 0;
      ps.back().row_end = in ? r_hi : 0;
    }
    const float scale = scorer.kind == ScoreKind::Dot || d_k == 0
                            ? 1.0f
                            : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_k)));
    fused_context(ps, scale, FusedBlocks{}, opt.threads);
    return take_part(std::move(out));
  }

  // Key-side work once per key matrix.
  std::vector<PreparedKeys> keys;
  for (int64_t b = 0; b < (k.rank() == 3 ? batch : 1); ++b)
    keys.push_back(prepare_keys(scorer, mat(k, b)));
  const int64_t block = opt.output == Output::Context ? block_rows(n_q, n_k) : 64;
  struct Task {
    int64_t b, r0, r1;
  };
  std::vector<Task> tasks;
  for (int64_t b = b_lo; b < b_hi; ++b)
    for (int64_t r0 = 0; r0 < n_q; r0 += block) {
      const int64_t r1 = std::min(n_q, r0 + block);
      if (r1 > r_lo && r0 < r_hi) tasks.push_back({b, r0, r1});
    }
  Rng rng(opt.seed);
  // The whole problem's tasks spread over threads run their gemms on one BLAS thread each; a
  // part with a single task would run on the caller's thread with BLAS's threads, which may
  // split a gemm differently (other rounding): it too uses one BLAS thread then.
  struct SingleBlas {
    int before = 0;
    bool on = false;
    ~SingleBlas() {
      if (on) blas_set_threads(before);
    }
  } single;
  if (part && opt.hard != Hard::Sample) {
    const int64_t budget = opt.threads > 0 ? opt.threads : max_threads();
    const int64_t whole_tasks = batch * ((n_q + block - 1) / block);
    if (std::min(budget, whole_tasks) > 1 && std::min<int64_t>(budget, tasks.size()) <= 1) {
      single.before = blas_threads();
      blas_set_threads(1);
      single.on = true;
    }
  }
  const double sigma = local == Local::Predictive ? opt.local->window / 2.0 : 1.0;
  // Sampling draws from one generator in row order: one thread then.
  const int threads = opt.hard == Hard::Sample ? 1 : opt.threads;
  parallel_for(
      static_cast<int64_t>(tasks.size()),
      [&](int64_t begin, int64_t end) {
        Tensor buf(opt.output == Output::Context ? Shape{block, n_k} : Shape{0});
        for (int64_t t = begin; t < end; ++t) {
          const auto [b, r0, r1] = tasks[static_cast<size_t>(t)];
          const ConstMat qb = rows_of(mat(q, q.rank() == 3 ? b : 0), r0, r1);
          const Mat ob = mat(out, batched ? b : 0);
          Mat s = opt.output == Output::Context
                      ? Mat{buf.data(), r1 - r0, n_k, std::max<int64_t>(1, n_k)}
                      : rows_of(ob, r0, r1);
          score_into(scorer, qb, keys[static_cast<size_t>(k.rank() == 3 ? b : 0)], s);
          apply_key_mask(key_mask(b), r0, 0, s);
          std::vector<float> pos;
          if (local == Local::Predictive) {
            pos = local_positions(*opt.local, qb, n_k);
            const double D = static_cast<double>(opt.local->window);
            for (int64_t i = 0; i < s.rows; ++i)
              for (int64_t j = 0; j < n_k; ++j)
                if (std::fabs(static_cast<double>(j) - pos[static_cast<size_t>(i)]) > D)
                  s.data[i * s.ld + j] = -std::numeric_limits<float>::infinity();
          }
          if (opt.output == Output::Scores) continue;
          if (opt.hard == Hard::Argmax) {
            argmax_rows(s);
          } else {
            softmax_rows(s);
            if (local == Local::Predictive)
              for (int64_t i = 0; i < s.rows; ++i)
                for (int64_t j = 0; j < n_k; ++j) {
                  const double d = static_cast<double>(j) - pos[static_cast<size_t>(i)];
                  s.data[i * s.ld + j] *=
                      static_cast<float>(std::exp(-d * d / (2.0 * sigma * sigma)));
                }
            if (opt.hard == Hard::Sample) sample_rows(s, rng);
          }
          if (opt.output == Output::Context)
            gemm(Trans::No, Trans::No, 1.0f, s, mat(*v, v->rank() == 3 ? b : 0), 0.0f,
                 rows_of(ob, r0, r1));
        }
      },
      threads);
  return take_part(std::move(out));
}

}  // namespace attnkit::attention
