// Fused ops of ops_fused.h.
#include "attnkit/autodiff/ops_fused.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "attnkit/attention/softmax.h"
#include "attnkit/autodiff/detail.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::ad {

namespace fm = fastmath;

Var additive_attention(Var keys, Var q, Var v, Var memory, const Tensor* mask, Tensor* alpha) {
  Tape& t = detail::tape_of(keys, q);
  detail::tape_of(keys, v);
  detail::tape_of(keys, memory);
  const Tensor& K = keys.value();
  const Tensor& Q = q.value();
  const Tensor& W = v.value();
  const Tensor& M = memory.value();
  if (K.rank() != 3 || Q.rank() != 2 || Q.dim(0) != K.dim(0) || Q.dim(1) != K.dim(2) ||
      W.size() != K.dim(2) || M.rank() != 3 || M.dim(0) != K.dim(0) || M.dim(1) != K.dim(1))
    throw ShapeError("additive_attention: keys " + shape_str(K.shape()) + ", query " +
                     shape_str(Q.shape()) + ", v " + shape_str(W.shape()) + " and memory " +
                     shape_str(M.shape()) + " are not [B, S, a], [B, a], [a], [B, S, h]");
  const int64_t B = K.dim(0), S = K.dim(1), A = K.dim(2), H = M.dim(2);
  if (mask && (mask->size() != B * S))
    throw ShapeError("additive_attention: mask " + shape_str(mask->shape()) +
                     " does not fit [B, S] = [" + std::to_string(B) + ", " + std::to_string(S) +
                     "]");
  Tensor* th = t.scratch(K.shape());  // tanh(keys + q), for backward
  Tensor* al = t.scratch({B, S});     // α
  Tensor y = t.alloc({B, H});
  const float ninf = -std::numeric_limits<float>::infinity();
  const float* pw = W.data();
  for (int64_t b = 0; b < B; ++b) {
    const float* pq = Q.data() + b * A;
    float* pa = al->data() + b * S;
    for (int64_t s = 0; s < S; ++s) {
      if (mask && (*mask)[b * S + s] == 0.0f) {
        pa[s] = ninf;
        continue;
      }
      const float* pk = K.data() + (b * S + s) * A;
      float* ph = th->data() + (b * S + s) * A;
      for (int64_t a = 0; a < A; ++a) ph[a] = fm::fast_tanh(pk[a] + pq[a]);
      pa[s] = fm::lane_dot(pw, ph, A);
    }
  }
  attention::softmax_rows(detail::view(al->data(), B, S));
  float* py = y.data();
  for (int64_t b = 0; b < B; ++b) {
    float* yb = py + b * H;
    std::fill(yb, yb + H, 0.0f);
    const float* pa = al->data() + b * S;
    for (int64_t s = 0; s < S; ++s) {
      const float w = pa[s];
      if (w == 0.0f) continue;
      const float* pm = M.data() + (b * S + s) * H;
      for (int64_t j = 0; j < H; ++j) yb[j] += w * pm[j];
    }
  }
  if (alpha) *alpha = al->clone();
  return t.push(std::move(y), {keys, q, v, memory},
                [keys, q, v, memory, th, al, B, S, A, H](Tape& t, Var out) {
                  const float* g = t.grad(out).data();
                  const float* W = t.value(v).data();
                  const float* M = t.value(memory).data();
                  const float* Al = al->data();
                  const float* Th = th->data();
                  float* gk = t.requires_grad(keys) ? t.grad(keys).data() : nullptr;
                  float* gq = t.requires_grad(q) ? t.grad(q).data() : nullptr;
                  float* gv = t.requires_grad(v) ? t.grad(v).data() : nullptr;
                  float* gm = t.requires_grad(memory) ? t.grad(memory).data() : nullptr;
                  std::vector<float> ds(static_cast<size_t>(S)), dpre(static_cast<size_t>(A));
                  for (int64_t b = 0; b < B; ++b) {
                    const float* gb = g + b * H;
                    const float* pa = Al + b * S;
                    // dα_s = g · m_s; d score_s = α_s (dα_s - Σ α dα); memory: gm_s += α_s g
                    double dot = 0.0;
                    for (int64_t s = 0; s < S; ++s) {
                      const float w = pa[s];
                      if (w == 0.0f) {
                        ds[static_cast<size_t>(s)] = 0.0f;
                        continue;
                      }
                      const float d = fm::lane_dot(gb, M + (b * S + s) * H, H);
                      ds[static_cast<size_t>(s)] = d;
                      dot += static_cast<double>(w) * d;
                      if (gm) {
                        float* pgm = gm + (b * S + s) * H;
                        for (int64_t j = 0; j < H; ++j) pgm[j] += w * gb[j];
                      }
                    }
                    const float fdot = static_cast<float>(dot);
                    for (int64_t s = 0; s < S; ++s) {
                      const float w = pa[s];
                      if (w == 0.0f) continue;
                      const float gs = w * (ds[static_cast<size_t>(s)] - fdot);
                      const float* __restrict ph = Th + (b * S + s) * A;
                      if (gv)
                        for (int64_t a = 0; a < A; ++a) gv[a] += gs * ph[a];
                      // d pre-tanh = gs v (1 - tanh²), into the keys' and the query's gradients
                      float* __restrict pd = dpre.data();
                      for (int64_t a = 0; a < A; ++a) pd[a] = gs * W[a] * (1.0f - ph[a] * ph[a]);
                      if (gk) {
                        float* __restrict pk = gk + (b * S + s) * A;
                        for (int64_t a = 0; a < A; ++a) pk[a] += pd[a];
                      }
                      if (gq) {
                        float* __restrict pq = gq + b * A;
                        for (int64_t a = 0; a < A; ++a) pq[a] += pd[a];
                      }
                    }
                  }
                });
}

Var linear_cross_entropy(Var x, Var w, Var b, const std::vector<int32_t>& targets,
                         int32_t ignore_index, float label_smoothing) {
  Tape& t = detail::tape_of(x, w);
  if (b.valid()) detail::tape_of(x, b);
  const Tensor& X = x.value();
  const Tensor& Wt = w.value();
  if (Wt.rank() != 2 || X.rank() < 1 || X.shape().back() != Wt.dim(1))
    throw ShapeError("linear_cross_entropy: input " + shape_str(X.shape()) +
                     " does not fit weight " + shape_str(Wt.shape()) + " [V, in]");
  const int64_t F = Wt.dim(1), V = Wt.dim(0), N = detail::lead_rows(X);
  if (b.valid() && b.value().size() != V)
    throw ShapeError("linear_cross_entropy: bias " + shape_str(b.value().shape()) +
                     " does not fit weight " + shape_str(Wt.shape()));
  if (static_cast<int64_t>(targets.size()) != N)
    throw ShapeError("linear_cross_entropy: " + std::to_string(targets.size()) + " targets for " +
                     std::to_string(N) + " rows");
  const double eps = label_smoothing;
  if (!(eps >= 0.0 && eps < 1.0))
    throw Error("linear_cross_entropy: label smoothing must be in [0, 1)");
  // The counted rows, gathered (no product for padding).
  auto rows = std::make_shared<std::vector<int64_t>>();
  rows->reserve(static_cast<size_t>(N));
  for (int64_t r = 0; r < N; ++r) {
    const int32_t y = targets[static_cast<size_t>(r)];
    if (y == ignore_index) continue;
    if (y < 0 || y >= V)
      throw DataError("linear_cross_entropy: target " + std::to_string(y) + " at position " +
                      std::to_string(r) + " is outside [0, " + std::to_string(V) + ")");
    rows->push_back(r);
  }
  const int64_t n = static_cast<int64_t>(rows->size());
  const bool all = n == N;
  Tensor* Xs = all ? nullptr : t.scratch({n, F});
  if (!all)
    for (int64_t i = 0; i < n; ++i) {
      const float* src = X.data() + (*rows)[static_cast<size_t>(i)] * F;
      std::copy(src, src + F, Xs->data() + i * F);
    }
  const float* xd = all ? X.data() : Xs->data();
  Tensor* P = t.scratch(
      {std::max<int64_t>(n, 1), V});  // logits, then softmax, then (backward) the gradient
  float beta = 0.0f;
  if (b.valid()) {
    const float* pb = b.value().data();
    for (int64_t i = 0; i < n; ++i) std::copy(pb, pb + V, P->data() + i * V);
    beta = 1.0f;
  }
  if (n > 0)
    gemm(Trans::No, Trans::Yes, 1.0f, detail::view(xd, n, F), detail::view(Wt.data(), V, F), beta,
         detail::view(P->data(), n, V));
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t y = targets[static_cast<size_t>((*rows)[static_cast<size_t>(i)])];
    float* pp = P->data() + i * V;
    const float mx = fm::lane_max(pp, V);
    const double xy = pp[y];
    const double sx = eps > 0.0 ? fm::lane_sum(pp, V) : 0.0;
    for (int64_t j = 0; j < V; ++j) pp[j] = fm::fast_exp(pp[j] - mx);
    const double s = fm::lane_sum(pp, V);
    const double lse = static_cast<double>(mx) + std::log(s);
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < V; ++j) pp[j] *= inv;
    // -Σ q log p = (1 - ε)(lse - x_y) + ε (lse - mean x)
    total += (1.0 - eps) * (lse - xy) + eps * (lse - sx / static_cast<double>(V));
  }
  Tensor out = Tensor::scalar(n ? static_cast<float>(total / static_cast<double>(n)) : 0.0f);
  auto tg = std::make_shared<std::vector<int32_t>>(targets);
  return t.push(std::move(out), {x, w, b},
                [x, w, b, P, Xs, rows, tg, eps, n, N, F, V](Tape& t, Var o) {
                  if (n == 0) return;
                  const float g = t.grad(o)[0] / static_cast<float>(n);
                  const float u = static_cast<float>(eps / static_cast<double>(V));
                  const float hit = static_cast<float>(1.0 - eps);
                  for (int64_t i = 0; i < n; ++i) {  // P becomes d loss / d logits
                    float* pp = P->data() + i * V;
                    for (int64_t j = 0; j < V; ++j) pp[j] = g * (pp[j] - u);
                    pp[(*tg)[static_cast<size_t>((*rows)[static_cast<size_t>(i)])]] -= g * hit;
                  }
                  const ConstMat G = detail::view(P->data(), n, V);
                  const bool all = Xs == nullptr;
                  if (t.requires_grad(x)) {
                    Tensor& gx = t.grad(x);
                    if (all) {
                      gemm(Trans::No, Trans::No, 1.0f, G, detail::view(t.value(w).data(), V, F),
                           1.0f, detail::view(gx.data(), N, F));
                    } else {
                      Tensor* tmp = t.scratch({n, F});
                      gemm(Trans::No, Trans::No, 1.0f, G, detail::view(t.value(w).data(), V, F),
                           0.0f, detail::view(tmp->data(), n, F));
                      for (int64_t i = 0; i < n; ++i) {
                        float* dst = gx.data() + (*rows)[static_cast<size_t>(i)] * F;
                        const float* src = tmp->data() + i * F;
                        for (int64_t j = 0; j < F; ++j) dst[j] += src[j];
                      }
                    }
                  }
                  if (t.requires_grad(w)) {
                    const float* xd = all ? t.value(x).data() : Xs->data();
                    gemm(Trans::Yes, Trans::No, 1.0f, G, detail::view(xd, n, F), 1.0f,
                         detail::view(t.grad(w).data(), V, F));
                  }
                  if (b.valid() && t.requires_grad(b)) {
                    float* gb = t.grad(b).data();
                    for (int64_t i = 0; i < n; ++i) {
                      const float* pp = P->data() + i * V;
                      for (int64_t j = 0; j < V; ++j) gb[j] += pp[j];
                    }
                  }
                });
}

}  // namespace attnkit::ad
