#include "attnkit/attention/mha.h"

#include <algorithm>
#include <cmath>

#include "attnkit/attention/fused.h"
#include "attnkit/attention/part.h"
#include "attnkit/attention/score.h"
#include "attnkit/attention/softmax.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::attention {

namespace {

std::string dims(std::initializer_list<int64_t> d) { return shape_str(Shape(d)); }

Tensor take(std::map<std::string, Tensor>& arrays, const std::string& name, const Shape& need,
            const std::string& spelled) {
  auto it = arrays.find(name);
  if (it == arrays.end()) throw DataError("no array '" + name + "' (needs " + spelled + ")");
  Tensor t = std::move(it->second);
  arrays.erase(it);
  if (t.shape() != need)
    throw DataError("array '" + name + "' has shape " + shape_str(t.shape()) + " but needs " +
                    spelled + " = " + shape_str(need));
  return t;
}

// Rows [r0, r1) of a matrix as a new tensor.
Tensor rows(const Tensor& t, int64_t r0, int64_t r1) {
  const int64_t c = t.dim(1);
  return Tensor({r1 - r0, c}, std::vector<float>(t.data() + r0 * c, t.data() + r1 * c));
}
Tensor slice(const Tensor& t, int64_t a, int64_t b) {
  return Tensor({b - a}, std::vector<float>(t.data() + a, t.data() + b));
}

// y = x Wᵀ + b over every row of x [n, d_in] into y [n, d_out] (a view: may be columns of a
// wider matrix).
void linear_into(ConstMat x, const Tensor& w, const Tensor& b, Mat y) {
  gemm(Trans::No, Trans::Yes, 1.0f, x, mat(w), 0.0f, y);
  for (int64_t i = 0; i < y.rows; ++i) {
    float* r = y.data + i * y.ld;
    for (int64_t c = 0; c < y.cols; ++c) r[c] += b[c];
  }
}
Tensor linear(ConstMat x, const Tensor& w, const Tensor& b) {
  Tensor y({x.rows, w.dim(0)});
  linear_into(x, w, b, mat(y));
  return y;
}

// Rows of a, then rows of b, then rows of c as one tensor (the weights or biases of Q, K, V).
Tensor stack3(const Tensor& a, const Tensor& b, const Tensor& c) {
  std::vector<float> v;
  v.reserve(static_cast<size_t>(a.size() + b.size() + c.size()));
  for (const Tensor* t : {&a, &b, &c}) v.insert(v.end(), t->values().begin(), t->values().end());
  Shape s = a.shape();
  s[0] *= 3;
  return Tensor(s, std::move(v));
}

// All rows of a rank-2 or rank-3 tensor as one matrix [B·N, d].
ConstMat all_rows(const Tensor& t) {
  const Shape s = as_batch_shape(t.shape());
  return {t.data(), s[0] * s[1], s[2], std::max<int64_t>(1, s[2])};
}

}  // namespace

MhaParams mha_params(std::map<std::string, Tensor>& arrays) {
  for (const char* unsupported : {"bias_k", "bias_v"})
    if (arrays.count(unsupported))
      throw DataError(std::string("array '") + unsupported +
                      "' (add_bias_kv=True) is not supported");
  MhaParams p;
  auto ow = arrays.find("out_proj.weight");
  if (ow == arrays.end()) throw DataError("no array 'out_proj.weight' (needs [E, E])");
  if (ow->second.rank() != 2)
    throw DataError("array 'out_proj.weight' has shape " + shape_str(ow->second.shape()) +
                    " but needs [E, E]");
  const int64_t E = p.embed = ow->second.dim(0);
  p.wo = take(arrays, "out_proj.weight", {E, E}, "[E, E]");
  const bool has_in_bias = arrays.count("in_proj_bias") > 0;
  const bool has_out_bias = arrays.count("out_proj.bias") > 0;
  if (has_in_bias != has_out_bias)
    throw DataError(std::string("no array '") + (has_in_bias ? "out_proj.bias" : "in_proj_bias") +
                    "' (a module with bias has both in_proj_bias and out_proj.bias)");
  if (arrays.count("in_proj_weight")) {
    Tensor w = take(arrays, "in_proj_weight", {3 * E, E}, "[3E, E]");
    p.kdim = p.vdim = E;
    p.wq = rows(w, 0, E);
    p.wk = rows(w, E, 2 * E);
    p.wv = rows(w, 2 * E, 3 * E);
  } else {
    if (!arrays.count("q_proj_weight"))
      throw DataError("no array 'in_proj_weight' (needs [3E, E] = " + dims({3 * E, E}) +
                      ") nor q_proj_weight, k_proj_weight, v_proj_weight");
    p.wq = take(arrays, "q_proj_weight", {E, E}, "[E, E]");
    for (const char* name : {"k_proj_weight", "v_proj_weight"}) {
      auto it = arrays.find(name);
      if (it == arrays.end())
        throw DataError(std::string("no array '") + name + "' (needs [E, d])");
      if (it->second.rank() != 2 || it->second.dim(0) != E)
        throw DataError(std::string("array '") + name + "' has shape " +
                        shape_str(it->second.shape()) +
                        " but needs [E, d] with E = " + std::to_string(E));
    }
    p.kdim = arrays.at("k_proj_weight").dim(1);
    p.vdim = arrays.at("v_proj_weight").dim(1);
    p.wk = take(arrays, "k_proj_weight", {E, p.kdim}, "[E, kdim]");
    p.wv = take(arrays, "v_proj_weight", {E, p.vdim}, "[E, vdim]");
  }
  if (has_in_bias) {
    Tensor b = take(arrays, "in_proj_bias", {3 * E}, "[3E]");
    p.bq = slice(b, 0, E);
    p.bk = slice(b, E, 2 * E);
    p.bv = slice(b, 2 * E, 3 * E);
    p.bo = take(arrays, "out_proj.bias", {E}, "[E]");
  } else {
    p.bq = Tensor({E});
    p.bk = Tensor({E});
    p.bv = Tensor({E});
    p.bo = Tensor({E});
  }
  if (p.kdim == E && p.vdim == E) {
    p.w_in = stack3(p.wq, p.wk, p.wv);
    p.b_in = stack3(p.bq, p.bk, p.bv);
  }
  return p;
}

MhaOutput parse_mha_output(const std::string& name) {
  return parse_choice<MhaOutput>("output kind", name,
                                 {
                                     {"context", MhaOutput::Context},
                                     {"weights", MhaOutput::Weights},
                                     {"head-weights", MhaOutput::HeadWeights},
                                 });
}

std::vector<int64_t> key_lengths_from(const Tensor& t, int64_t batch, int64_t n_k) {
  if (t.size() != batch)
    throw ShapeError("key padding has " + std::to_string(t.size()) + " lengths " +
                     shape_str(t.shape()) + " but the batch has " + std::to_string(batch) +
                     (batch == 1 ? " item" : " items"));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.size(); ++i) {
    const float x = t[i];
    if (!(x >= 0.0f && x <= static_cast<float>(n_k) && x == std::floor(x)))
      throw DataError("key length " + io::format_number(x) + " of item " + std::to_string(i) +
                      " is not an integer in [0, " + std::to_string(n_k) + "]");
    out.push_back(static_cast<int64_t>(x));
  }
  return out;
}

Tensor multi_head_attention(const MhaParams& p, const Tensor& x_q, const Tensor& x_k,
                            const Tensor& x_v, const MhaOptions& opt) {
  const int64_t E = p.embed, H = opt.heads;
  if (H < 1 || E % H != 0)
    throw UsageError("the number of heads, " + std::to_string(H) +
                     ", does not divide the embedding size E = " + std::to_string(E));
  auto need_rank = [](const Tensor& t, const char* name, Operand op) {
    if (t.rank() != 2 && t.rank() != 3)
      throw InputShapeError(std::string(name) + " must be a matrix or a batch of matrices, got " +
                                "shape " + shape_str(t.shape()),
                            op);
  };
  need_rank(x_q, "Q", Operand::Query);
  need_rank(x_k, "K", Operand::Key);
  need_rank(x_v, "V", Operand::Value);
  const Shape qs = as_batch_shape(x_q.shape()), ks = as_batch_shape(x_k.shape()),
              vs = as_batch_shape(x_v.shape());
  const bool batched = x_q.rank() == 3;
  const int64_t B = qs[0], n_q = qs[1], n_k = ks[1];
  if (x_k.rank() != x_q.rank() || ks[0] != B)
    throw InputShapeError(
        "Q " + shape_str(x_q.shape()) + " and K " + shape_str(x_k.shape()) + " differ in batch",
        Operand::Key);
  if (x_v.rank() != x_q.rank() || vs[0] != B || vs[1] != n_k)
    throw InputShapeError("K " + shape_str(x_k.shape()) + " and V " + shape_str(x_v.shape()) +
                              " differ in batch or rows",
                          Operand::Value);
  if (qs[2] != E)
    throw InputShapeError("Q has " + std::to_string(qs[2]) + " columns but the parameters " +
                              "have E = " + std::to_string(E),
                          Operand::Query);
  if (ks[2] != p.kdim)
    throw InputShapeError("K has " + std::to_string(ks[2]) + " columns but the parameters " +
                              "have kdim = " + std::to_string(p.kdim),
                          Operand::Key);
  if (vs[2] != p.vdim)
    throw InputShapeError("V has " + std::to_string(vs[2]) + " columns but the parameters " +
                              "have vdim = " + std::to_string(p.vdim),
                          Operand::Value);
  if (opt.mask) {
    const Tensor& m = *opt.mask;
    const Shape ms = as_batch_shape(m.shape());
    if ((m.rank() != 2 && m.rank() != 3) || (m.rank() == 3 && ms[0] != B) || ms[1] != n_q ||
        ms[2] != n_k)
      throw InputShapeError("mask " + shape_str(m.shape()) + " does not fit the scores [" +
                                std::to_string(n_q) + ", " + std::to_string(n_k) +
                                "] of a batch of " + std::to_string(B),
                            Operand::Mask);
    check_mask_values(m);
  }
  if (opt.key_lengths && static_cast<int64_t>(opt.key_lengths->size()) != B)
    throw ShapeError("key padding has " + std::to_string(opt.key_lengths->size()) +
                     " lengths but the batch has " + std::to_string(B));

  // The part asked for (MhaOptions::part_begin/part_end): items or rows [p0, p1). Everything
  // is blocked as for the whole problem (projections of every row; the attention of the
  // part's row blocks only), so the part's numbers are the whole result's.
  const Part pt(opt.part_begin, opt.part_end, batched, B, n_q);
  const bool part = pt.part;
  if (part && opt.output == MhaOutput::HeadWeights)
    throw UsageError("each head's weights are head-major: a part of the rows is not one block");
  const int64_t b_lo = pt.b_lo, b_hi = pt.b_hi, r_lo = pt.r_lo, r_hi = pt.r_hi;
  auto take_part = [&](Tensor full) { return pt.take(std::move(full)); };

  // Projections of every row of every batch item at once: Q', K', V' are column blocks of
  // one [B·N, 3E] matrix in self-attention (one gemm), separate matrices otherwise.
  const bool self = &x_q == &x_k && &x_q == &x_v && p.kdim == E && p.vdim == E;
  Tensor qkv, qp, kp, vp;
  ConstMat q_all, k_all, v_all;  // [B·N, E] views
  if (self) {
    qkv = Tensor({B * n_q, 3 * E});
    if (p.w_in.rank() == 2 && p.w_in.dim(0) == 3 * E && p.b_in.size() == 3 * E) {
      linear_into(all_rows(x_q), p.w_in, p.b_in, mat(qkv));
    } else {
      linear_into(all_rows(x_q), stack3(p.wq, p.wk, p.wv), stack3(p.bq, p.bk, p.bv), mat(qkv));
    }
    q_all = {qkv.data(), B * n_q, E, 3 * E};
    k_all = {qkv.data() + E, B * n_k, E, 3 * E};
    v_all = {qkv.data() + 2 * E, B * n_k, E, 3 * E};
  } else {
    qp = linear(all_rows(x_q), p.wq, p.bq);
    kp = linear(all_rows(x_k), p.wk, p.bk);
    vp = linear(all_rows(x_v), p.wv, p.bv);
    q_all = mat(qp);
    k_all = mat(kp);
    v_all = mat(vp);
  }
  const int64_t hd = E / H;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  auto key_mask = [&](int64_t b) {
    KeyMask km;
    km.causal = opt.causal;
    if (opt.mask) km.mask = mat(*opt.mask, opt.mask->rank() == 3 ? b : 0);
    if (opt.key_lengths) km.key_len = (*opt.key_lengths)[static_cast<size_t>(b)];
    return km;
  };
  // Head h of item b: rows b·n .. (b+1)·n, columns h·hd .. (h+1)·hd of a projection.
  auto head = [&](ConstMat all, int64_t b, int64_t n, int64_t h) {
    return ConstMat{all.data + b * n * all.ld + h * hd, n, hd, all.ld};
  };

  if (opt.output == MhaOutput::Context) {
    Tensor ctx({B * n_q, E});
    std::vector<Problem> ps;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        ps.push_back({head(q_all, b, n_q, h), head(k_all, b, n_k, h), head(v_all, b, n_k, h),
                      Mat{ctx.data() + b * n_q * E + h * hd, n_q, hd, E}, key_mask(b)});
        const bool in = b >= b_lo && b < b_hi;
        ps.back().row_begin = in ? r_lo : 0;
        ps.back().row_end = in ? r_hi : 0;
      }
    fused_context(ps, scale);
    Tensor y = linear(mat(ctx), p.wo, p.bo);
    y.reshape(batched ? Shape{B, n_q, E} : Shape{n_q, E});
    return take_part(std::move(y));
  }

  Tensor hw({B * H, n_q, n_k});
  parallel_for(B * H, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / H, h = t % H;
      if (b < b_lo || b >= b_hi) continue;
      const Mat s = mat(hw, t);
      masked_scores(head(q_all, b, n_q, h), head(k_all, b, n_k, h), scale, key_mask(b), 0, s);
      softmax_rows(s);
    }
  });
  if (opt.output == MhaOutput::HeadWeights) {
    hw.reshape(batched ? Shape{B, H, n_q, n_k} : Shape{H, n_q, n_k});
    return hw;
  }
  Tensor avg(batched ? Shape{B, n_q, n_k} : Shape{n_q, n_k});
  const int64_t per = n_q * n_k;
  for (int64_t b = 0; b < B; ++b) {
    float* o = avg.data() + b * per;
    for (int64_t h = 0; h < H; ++h) {
      const float* w = hw.data() + (b * H + h) * per;
      for (int64_t i = 0; i < per; ++i) o[i] += w[i];
    }
    for (int64_t i = 0; i < per; ++i) o[i] /= static_cast<float>(H);
  }
  return take_part(std::move(avg));
}

}  // namespace attnkit::attention
