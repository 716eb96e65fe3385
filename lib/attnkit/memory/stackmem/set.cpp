#include "attnkit/memory/stackmem/set.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tsv_log.h"

namespace attnkit::memory {

// ---- double precision

namespace {

// Neumaier's compensated sum: the result is the exact sum rounded once, up to O(n u²), so
// that the order of the terms (the slots') changes it by at most an ulp.
struct Sum {
  double s = 0.0, c = 0.0;
  void add(double x) {
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

void check_finite(const std::vector<double>& v, const char* what) {
  for (double x : v)
    if (!std::isfinite(x)) throw DataError(std::string(what) + " must be finite");
}
void check_unit(double x, const char* what) {
  if (!std::isfinite(x) || x < 0.0 || x > 1.0)
    throw DataError(std::string(what) + " must be in [0, 1], got " + std::to_string(x));
}
void check_width(const std::vector<double>& v, int64_t m, const char* what) {
  if (v.size() != static_cast<size_t>(m))
    throw ShapeError(std::string(what) + " has " + std::to_string(v.size()) +
                     " numbers, the memory's width is " + std::to_string(m));
}

// ρ_i = s_i exp(q·k_i) / (exp(τ) + Σ_j s_j exp(q·k_j)) over n slots; ops counted.
std::vector<double> content_weights(const std::vector<double>& s, const std::vector<double>& k,
                                    const std::vector<double>& q, int64_t m, int64_t& ops,
                                    double tau = 0.0) {
  const size_t n = s.size(), M = static_cast<size_t>(m);
  std::vector<double> z(n);
  double top = tau;  // the sentinel's logit
  for (size_t i = 0; i < n; ++i) {
    double d = 0.0;
    for (size_t c = 0; c < M; ++c) d += q[c] * k[i * M + c];
    z[i] = d;
    top = std::max(top, d);
  }
  Sum total;
  total.add(std::exp(tau - top));
  std::vector<double> e(n);
  for (size_t i = 0; i < n; ++i) total.add(e[i] = s[i] * std::exp(z[i] - top));
  const double Z = total.value();
  for (size_t i = 0; i < n; ++i) e[i] /= Z;
  ops += static_cast<int64_t>(n) * (m + 3);  // the dots, the exps and products, the divisions
  return e;
}

}  // namespace

SetStepOut set_step(const SetStepIn& in) {
  const int64_t m = in.m;
  if (m < 1) throw ShapeError("the key and value width must be at least 1");
  const size_t n = in.strengths.size(), M = static_cast<size_t>(m);
  for (const auto* v : {&in.keys, &in.values})
    if (v->size() != n * M)
      throw ShapeError("the memory has " + std::to_string(v->size()) + " numbers in its " +
                       (v == &in.keys ? "keys" : "values") + "; " + std::to_string(n) +
                       " slots of width " + std::to_string(m) + " need " + std::to_string(n * M));
  check_width(in.key, m, "the written key");
  check_width(in.value, m, "the written value");
  check_width(in.read_key, m, "the read key");
  check_width(in.erase_key, m, "the erase key");
  check_finite(in.keys, "the memory's keys");
  check_finite(in.values, "the memory's values");
  check_finite(in.key, "the written key");
  check_finite(in.value, "the written value");
  check_finite(in.read_key, "the read key");
  check_finite(in.erase_key, "the erase key");
  for (double x : in.strengths) check_unit(x, "a strength");
  check_unit(in.write, "the write strength");
  check_unit(in.erase, "the erase strength");
  if (!std::isfinite(in.threshold)) throw DataError("the read threshold must be finite");
  SetStepOut out;
  // (1) erase by content
  out.erase_weights = content_weights(in.strengths, in.keys, in.erase_key, m, out.ops);
  out.strengths.resize(n + 1);
  for (size_t i = 0; i < n; ++i)
    out.strengths[i] = in.strengths[i] * (1.0 - in.erase * out.erase_weights[i]);
  out.ops += static_cast<int64_t>(n);
  // (2) read by content, the slots as erased
  const std::vector<double> kept(out.strengths.begin(), out.strengths.begin() + n);
  out.read_weights = content_weights(kept, in.keys, in.read_key, m, out.ops, in.threshold);
  std::vector<Sum> r(M + 1);
  for (size_t i = 0; i < n; ++i) {
    const double w = out.read_weights[i];
    for (size_t c = 0; c < M; ++c) r[c].add(w * in.values[i * M + c]);
    r[M].add(w);
  }
  out.ops += static_cast<int64_t>(n) * (m + 1);
  out.read.resize(M + 1);
  for (size_t c = 0; c <= M; ++c) out.read[c] = r[c].value();
  // (3) write a slot
  out.strengths[n] = in.write;
  out.keys = in.keys;
  out.keys.insert(out.keys.end(), in.key.begin(), in.key.end());
  out.values = in.values;
  out.values.insert(out.values.end(), in.value.begin(), in.value.end());
  return out;
}

std::string format_set_step(const SetStepOut& o) {
  auto line = [](const char* head, const std::vector<double>& v) {
    std::string s = head;
    for (double x : v) s += " " + io::format_double(x);
    return s + "\n";
  };
  return line("strengths", o.strengths) + line("erase_weights", o.erase_weights) +
         line("read_weights", o.read_weights) + line("read", o.read) + "ops " +
         std::to_string(o.ops) + "\n";
}

// ---- on the tape

using ad::Tape;
using ad::Var;

Var set_weights(Var s, Var keys, Var q, Var tau) {
  Tape& t = s.tape();
  if (&keys.tape() != &t || &q.tape() != &t || (tau.valid() && &tau.tape() != &t))
    throw Error("set_weights: operands from two different tapes");
  const Tensor& S = s.value();
  const Tensor& K = keys.value();
  const Tensor& Q = q.value();
  if (S.rank() != 2 || K.rank() != 3 || K.dim(0) != S.dim(0) || K.dim(1) != S.dim(1) ||
      Q.shape() != Shape{S.dim(0), K.dim(2)})
    throw ShapeError(
        "set_weights: strengths must be [B, n], keys [B, n, m] and the query [B, m]; got " +
        shape_str(S.shape()) + ", " + shape_str(K.shape()) + ", " + shape_str(Q.shape()));
  const int64_t B = S.dim(0), n = S.dim(1), m = K.dim(2);
  if (tau.valid() && tau.shape() != Shape{B, 1})
    throw ShapeError("set_weights: the threshold must be [B, 1]; got " + shape_str(tau.shape()));
  Tensor y = t.alloc({B, n});
  // u_i = exp(z_i) / Z (what ρ is before the strengths), kept for the backward; and the
  // sentinel's exp(τ) / Z per row.
  auto u = std::make_shared<std::vector<double>>(static_cast<size_t>(B * n));
  auto u0 = std::make_shared<std::vector<double>>(static_cast<size_t>(B));
  std::vector<double> z(static_cast<size_t>(n));
  for (int64_t b = 0; b < B; ++b) {
    const float* pq = Q.data() + b * m;
    const double tb = tau.valid() ? static_cast<double>(tau.value()[b]) : 0.0;
    double top = tb;
    for (int64_t i = 0; i < n; ++i) {
      const float* pk = K.data() + (b * n + i) * m;
      double d = 0.0;
      for (int64_t c = 0; c < m; ++c) d += static_cast<double>(pq[c]) * pk[c];
      z[static_cast<size_t>(i)] = d;
      top = std::max(top, d);
    }
    double Z = std::exp(tb - top);
    double* pu = u->data() + b * n;
    for (int64_t i = 0; i < n; ++i) {
      pu[i] = std::exp(z[static_cast<size_t>(i)] - top);
      Z += static_cast<double>(S[b * n + i]) * pu[i];
    }
    (*u0)[static_cast<size_t>(b)] = std::exp(tb - top) / Z;
    for (int64_t i = 0; i < n; ++i) {
      pu[i] /= Z;
      y[b * n + i] = static_cast<float>(S[b * n + i] * pu[i]);
    }
  }
  std::vector<Var> inputs{s, keys, q};
  if (tau.valid()) inputs.push_back(tau);
  return t.push(std::move(y), inputs, [s, keys, q, tau, u, u0, B, n, m](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const Tensor& S = t.value(s);
    const Tensor& K = t.value(keys);
    const Tensor& Q = t.value(q);
    float* gs = t.requires_grad(s) ? t.grad(s).data() : nullptr;
    float* gk = t.requires_grad(keys) ? t.grad(keys).data() : nullptr;
    float* gq = t.requires_grad(q) ? t.grad(q).data() : nullptr;
    float* gt = tau.valid() && t.requires_grad(tau) ? t.grad(tau).data() : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      const double* pu = u->data() + b * n;
      // ρ_i = s_i u_i: ∂ρ_i/∂z_k = ρ_i (δ_ik − ρ_k), ∂ρ_i/∂s_k = δ_ik u_i − ρ_i u_k.
      double c = 0.0;
      for (int64_t i = 0; i < n; ++i) c += static_cast<double>(g[b * n + i]) * S[b * n + i] * pu[i];
      // ∂ρ_i/∂τ = −ρ_i exp(τ)/Z
      if (gt) gt[b] += static_cast<float>(-c * (*u0)[static_cast<size_t>(b)]);
      for (int64_t k = 0; k < n; ++k) {
        const double d = g[b * n + k] - c;
        if (gs) gs[b * n + k] += static_cast<float>(pu[k] * d);
        const double gz = S[b * n + k] * pu[k] * d;
        if (gz == 0.0) continue;
        const float* pk = K.data() + (b * n + k) * m;
        if (gq)
          for (int64_t j = 0; j < m; ++j) gq[b * m + j] += static_cast<float>(gz * pk[j]);
        if (gk) {
          const float* pq = Q.data() + b * m;
          float* pg = gk + (b * n + k) * m;
          for (int64_t j = 0; j < m; ++j) pg[j] += static_cast<float>(gz * pq[j]);
        }
      }
    }
  });
}

Var set_read(Var rho, Var values) {
  Tape& t = rho.tape();
  if (&values.tape() != &t) throw Error("set_read: operands from two different tapes");
  const Tensor& R = rho.value();
  const Tensor& V = values.value();
  if (R.rank() != 2 || V.rank() != 3 || V.dim(0) != R.dim(0) || V.dim(1) != R.dim(1))
    throw ShapeError("set_read: the weights must be [B, n] and the values [B, n, m]; got " +
                     shape_str(R.shape()) + ", " + shape_str(V.shape()));
  const int64_t B = R.dim(0), n = R.dim(1), m = V.dim(2);
  Tensor y = t.alloc({B, m + 1});
  std::vector<double> acc(static_cast<size_t>(m + 1));
  for (int64_t b = 0; b < B; ++b) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const double w = R[b * n + i];
      const float* pv = V.data() + (b * n + i) * m;
      for (int64_t c = 0; c < m; ++c) acc[static_cast<size_t>(c)] += w * pv[c];
      acc[static_cast<size_t>(m)] += w;
    }
    for (int64_t c = 0; c <= m; ++c)
      y[b * (m + 1) + c] = static_cast<float>(acc[static_cast<size_t>(c)]);
  }
  return t.push(std::move(y), {rho, values}, [rho, values, B, n, m](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const Tensor& R = t.value(rho);
    const Tensor& V = t.value(values);
    float* gr = t.requires_grad(rho) ? t.grad(rho).data() : nullptr;
    float* gv = t.requires_grad(values) ? t.grad(values).data() : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      const float* gb = g + b * (m + 1);
      for (int64_t i = 0; i < n; ++i) {
        const float* pv = V.data() + (b * n + i) * m;
        if (gr) {
          double d = gb[m];
          for (int64_t c = 0; c < m; ++c) d += static_cast<double>(gb[c]) * pv[c];
          gr[b * n + i] += static_cast<float>(d);
        }
        if (gv) {
          const float w = R[b * n + i];
          float* pg = gv + (b * n + i) * m;
          for (int64_t c = 0; c < m; ++c) pg[c] += w * gb[c];
        }
      }
    }
  });
}

SetUpdate set_update(Tape& t, const SetState& prev, Var write, Var key, Var value, Var read_key,
                     Var erase, Var erase_key, Var threshold) {
  const int64_t b = write.dim(0), m = key.rank() == 2 ? key.dim(1) : -1;
  for (Var v : {key, value, read_key, erase_key})
    if (v.shape() != Shape{b, m})
      throw ShapeError("set_update: keys and values must be [B, m]; got " + shape_str(v.shape()));
  if (write.shape() != Shape{b, 1} || erase.shape() != Shape{b, 1})
    throw ShapeError("set_update: the write and erase strengths must be [B, 1]; got " +
                     shape_str(write.shape()) + ", " + shape_str(erase.shape()));
  SetUpdate out;
  out.state.size = prev.size + 1;
  Var k = ad::reshape(key, {b, 1, m}), v = ad::reshape(value, {b, 1, m});
  if (prev.size == 0) {
    out.state.strengths = write;
    out.state.keys = k;
    out.state.values = v;
    out.read = t.constant(Tensor({b, m + 1}, 0.0f));  // nothing to find
    return out;
  }
  Var a = set_weights(prev.strengths, prev.keys, erase_key);
  Var kept = ad::sub(prev.strengths, ad::mul(prev.strengths, ad::mul(a, erase)));
  out.weights = set_weights(kept, prev.keys, read_key, threshold);
  out.read = set_read(out.weights, prev.values);
  out.state.strengths = ad::concat({kept, write}, 1);
  out.state.keys = ad::concat({prev.keys, k}, 1);
  out.state.values = ad::concat({prev.values, v}, 1);
  return out;
}

}  // namespace attnkit::memory
