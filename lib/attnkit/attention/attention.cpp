#include "attnkit/attention/attention.h"

#include <algorithm>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"

namespace attnkit::attention {

namespace {

// Rows of scores handled at once on the way to a context: a block of ~1 MB of scores stays in
// cache between the score gemm, the softmax and the context gemm.
int64_t block_rows(int64_t n_q, int64_t n_k) {
  const int64_t target = (int64_t{1} << 18) / std::max<int64_t>(1, n_k);
  return std::max<int64_t>(1, std::min<int64_t>(n_q, std::max<int64_t>(16, target)));
}

ConstMat rows_of(ConstMat m, int64_t r0, int64_t r1) {
  return {m.data + r0 * m.ld, r1 - r0, m.cols, m.ld};
}
Mat rows_of(Mat m, int64_t r0, int64_t r1) { return {m.data + r0 * m.ld, r1 - r0, m.cols, m.ld}; }

const char* name_of(Operand op) {
  switch (op) {
    case Operand::Query: return "Q";
    case Operand::Key: return "K";
    case Operand::Value: return "V";
    case Operand::Mask: return "mask";
    case Operand::Params: return "params";
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
  if (name == "scores") return Output::Scores;
  if (name == "weights") return Output::Weights;
  if (name == "context") return Output::Context;
  throw UsageError("unknown --output '" + name + "' (choose scores, weights or context)");
}

Hard parse_hard(const std::string& name) {
  if (name == "argmax") return Hard::Argmax;
  if (name == "sample") return Hard::Sample;
  throw UsageError("unknown --hard '" + name + "' (choose argmax or sample)");
}

Tensor attend(const Scorer& scorer, const Tensor& q, const Tensor& k, const Tensor* v,
              const Options& opt) {
  if (opt.output == Output::Context && v == nullptr)
    throw UsageError("the context needs values V");
  if (opt.output == Output::Scores && opt.hard != Hard::None)
    throw UsageError("hard attention applies to weights and context, not to scores");
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
      throw InputShapeError(std::string(name_of(first_op)) + " is a batch of " +
                                std::to_string(batch) + " but " + name_of(op) + " of " +
                                std::to_string(t->dim(0)) + " (" + name_of(first_op) + " " +
                                shape_str(first->shape()) + ", " + name_of(op) + " " +
                                shape_str(t->shape()) + ")",
                            op);
    }
  };
  take(&q, Operand::Query);
  take(&k, Operand::Key);
  if (opt.output == Output::Context) take(v, Operand::Value);
  take(opt.mask, Operand::Mask);

  const Shape qs = as_batch_shape(q.shape()), ks = as_batch_shape(k.shape());
  const int64_t n_q = qs[1], d_q = qs[2], n_k = ks[1], d_k = ks[2];
  check_scorer(scorer, d_q, d_k);
  int64_t d_v = 0;
  if (v && opt.output == Output::Context) {
    const Shape vs = as_batch_shape(v->shape());
    if (vs[1] != n_k)
      throw InputShapeError("K has " + std::to_string(n_k) + " rows but V has " +
                                std::to_string(vs[1]) + " (K " + shape_str(k.shape()) +
                                ", V " + shape_str(v->shape()) + ")",
                            Operand::Value);
    d_v = vs[2];
  }
  if (opt.mask) {
    const Shape ms = as_batch_shape(opt.mask->shape());
    if (ms[1] != n_q || ms[2] != n_k)
      throw InputShapeError("mask " + shape_str(opt.mask->shape()) +
                                " does not fit the scores [" + std::to_string(n_q) + ", " +
                                std::to_string(n_k) + "] of Q " + shape_str(q.shape()) +
                                " and K " + shape_str(k.shape()),
                            Operand::Mask);
    check_mask_values(*opt.mask);
  }

  const int64_t cols = opt.output == Output::Context ? d_v : n_k;
  Tensor out(batched ? Shape{batch, n_q, cols} : Shape{n_q, cols});
  Rng rng(opt.seed);
  const int64_t block = opt.output == Output::Context ? block_rows(n_q, n_k) : n_q;
  Tensor buf(opt.output == Output::Context ? Shape{block, n_k} : Shape{0});

  for (int64_t b = 0; b < batch; ++b) {
    const ConstMat qb = mat(q, q.rank() == 3 ? b : 0);
    const PreparedKeys keys = prepare_keys(scorer, mat(k, k.rank() == 3 ? b : 0));
    const Mat ob = mat(out, batched ? b : 0);
    for (int64_t r0 = 0; r0 < n_q; r0 += block) {
      const int64_t r1 = std::min(n_q, r0 + block);
      Mat s = opt.output == Output::Context ? Mat{buf.data(), r1 - r0, n_k, std::max<int64_t>(1, n_k)}
                                            : rows_of(ob, r0, r1);
      score_into(scorer, rows_of(qb, r0, r1), keys, s);
      if (opt.causal) mask_causal(s, r0);
      if (opt.mask)
        apply_mask(rows_of(mat(*opt.mask, opt.mask->rank() == 3 ? b : 0), r0, r1), s);
      if (opt.output == Output::Scores) continue;
      if (opt.hard == Hard::Argmax) {
        argmax_rows(s);
      } else {
        softmax_rows(s);
        if (opt.hard == Hard::Sample) sample_rows(s, rng);
      }
      if (opt.output == Output::Context)
        gemm(Trans::No, Trans::No, 1.0f, s, mat(*v, v->rank() == 3 ? b : 0), 0.0f,
             rows_of(ob, r0, r1));
    }
  }
  return out;
}

}  // namespace attnkit::attention
