// Multi-head scaled dot-product attention as one tape node (ops_fused.h): the heads are
// strided column blocks of Q, K, V [B, n, heads·dh], so no reshape/permute copies are made.
#include <cmath>
#include <limits>
#include <vector>

#include "attnkit/attention/softmax.h"
#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops_fused.h"

namespace attnkit::ad {

Var multi_head_attention(Var q, Var k, Var v, int64_t heads, float scale, const Tensor* mask,
                         bool causal, Tensor* weights, float dropout) {
  Tape& t = detail::tape_of(q, k);
  detail::tape_of(q, v);
  const Tensor& Q = q.value();
  const Tensor& K = k.value();
  const Tensor& V = v.value();
  if (Q.rank() != 3 || K.rank() != 3 || V.rank() != 3 || K.dim(0) != Q.dim(0) ||
      V.dim(0) != Q.dim(0) || K.dim(2) != Q.dim(2) || V.dim(1) != K.dim(1) || heads < 1 ||
      Q.dim(2) % heads != 0 || V.dim(2) % heads != 0)
    throw ShapeError("multi_head_attention: queries " + shape_str(Q.shape()) + ", keys " +
                     shape_str(K.shape()) + " and values " + shape_str(V.shape()) +
                     " are not [B, n_q, d], [B, n_k, d], [B, n_k, d_v] with " +
                     std::to_string(heads) + " heads dividing d and d_v");
  const int64_t B = Q.dim(0), nq = Q.dim(1), nk = K.dim(1), d = Q.dim(2), dv = V.dim(2);
  const int64_t H = heads, dh = d / H, dvh = dv / H;
  bool shared = false;
  if (mask) {
    shared = mask->shape() == Shape{nq, nk};
    if (!shared && mask->shape() != Shape{B, nq, nk})
      throw ShapeError("multi_head_attention: mask " + shape_str(mask->shape()) + " is not [" +
                       std::to_string(nq) + ", " + std::to_string(nk) + "] or [" +
                       std::to_string(B) + ", " + std::to_string(nq) + ", " + std::to_string(nk) +
                       "]");
  }
  if (!(dropout >= 0.0f && dropout < 1.0f))
    throw Error("multi_head_attention: dropout " + std::to_string(dropout) + " is not in [0, 1)");
  // The dropout mask over the weights, drawn in [B, H, n_q, n_k] order (ad::dropout's draws).
  Tensor* drop = nullptr;
  if (dropout > 0.0f && t.training()) {
    drop = t.scratch({B, H, nq, nk});
    detail::dropout_mask(t.rng(), dropout, drop->data(), drop->size());
  }
  std::vector<float> dropped(drop ? static_cast<size_t>(nq * nk) : 0);  // A ⊙ M of one head
  // Head h of item b of X [B, n, w]: the n x (w / H) block at column h·(w / H), stride w.
  auto block = [](const float* p, int64_t b, int64_t h, int64_t n, int64_t w, int64_t wh) {
    return ConstMat{p + b * n * w + h * wh, n, wh, w};
  };
  Tensor* A = t.scratch({B, H, nq, nk});  // the weights, kept for backward
  Tensor y = t.alloc({B, nq, dv});
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < B; ++b) {
    const float* mb = mask ? mask->data() + (shared ? 0 : b * nq * nk) : nullptr;
    for (int64_t h = 0; h < H; ++h) {
      const Mat S = detail::view(A->data() + (b * H + h) * nq * nk, nq, nk);
      gemm(Trans::No, Trans::Yes, scale, block(Q.data(), b, h, nq, d, dh),
           block(K.data(), b, h, nk, d, dh), 0.0f, S);
      if (mb || causal)
        for (int64_t i = 0; i < nq; ++i) {
          float* row = S.data + i * nk;
          if (mb)
            for (int64_t j = 0; j < nk; ++j) row[j] = mb[i * nk + j] == 0.0f ? ninf : row[j];
          if (causal)
            for (int64_t j = i + 1; j < nk; ++j) row[j] = ninf;
        }
      attention::softmax_rows(S);
      ConstMat W = S;
      if (drop) {
        const float* m = drop->data() + (b * H + h) * nq * nk;
        for (int64_t i = 0; i < nq * nk; ++i) dropped[static_cast<size_t>(i)] = S.data[i] * m[i];
        W = detail::view(dropped.data(), nq, nk);
      }
      const ConstMat Vb = block(V.data(), b, h, nk, dv, dvh);
      gemm(Trans::No, Trans::No, 1.0f, W, Vb, 0.0f,
           Mat{y.data() + b * nq * dv + h * dvh, nq, dvh, dv});
    }
  }
  if (weights) *weights = A->clone();
  return t.push(
      std::move(y), {q, k, v},
      [q, k, v, A, drop, B, H, nq, nk, d, dv, dh, dvh, scale, block](Tape& t, Var out) {
        const float* G = t.grad(out).data();
        const float* pq = t.value(q).data();
        const float* pk = t.value(k).data();
        const float* pv = t.value(v).data();
        // Each head's block of each gradient is written by one product: new buffers of
        // three distinct inputs are written (beta 0), not zeroed and added to.
        const bool distinct = q.id() != k.id() && k.id() != v.id() && q.id() != v.id();
        bool aq = false, ak = false, av = false;
        auto fetch = [&](Var x, bool& a) -> float* {
          if (!t.requires_grad(x)) return nullptr;
          return (distinct ? t.grad(x, a) : t.grad(x)).data();
        };
        float* gq = fetch(q, aq);
        float* gk = fetch(k, ak);
        float* gv = fetch(v, av);
        const float bq = aq ? 0.0f : 1.0f, bk = ak ? 0.0f : 1.0f, bv = av ? 0.0f : 1.0f;
        std::vector<float> dS(static_cast<size_t>(nq * nk)), dropped(drop ? dS.size() : 0);
        const Mat D = detail::view(dS.data(), nq, nk);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h) {
            const float* pa = A->data() + (b * H + h) * nq * nk;
            const float* m = drop ? drop->data() + (b * H + h) * nq * nk : nullptr;
            ConstMat W = detail::view(pa, nq, nk);  // the weights the values were mixed with
            if (m) {
              for (int64_t i = 0; i < nq * nk; ++i) dropped[static_cast<size_t>(i)] = pa[i] * m[i];
              W = detail::view(dropped.data(), nq, nk);
            }
            const ConstMat Gb = block(G, b, h, nq, dv, dvh);
            if (gv)  // dV = (A ⊙ M)ᵀ dC
              gemm(Trans::Yes, Trans::No, 1.0f, W, Gb, bv,
                   Mat{gv + b * nk * dv + h * dvh, nk, dvh, dv});
            if (!gq && !gk) continue;
            // dA = (dC Vᵀ) ⊙ M, then the softmax: dS = A ⊙ (dA - Σ_j A dA) per row
            gemm(Trans::No, Trans::Yes, 1.0f, Gb, block(pv, b, h, nk, dv, dvh), 0.0f, D);
            if (m)
              for (int64_t i = 0; i < nq * nk; ++i) dS[static_cast<size_t>(i)] *= m[i];
            for (int64_t i = 0; i < nq; ++i) {
              const float* ar = pa + i * nk;
              float* dr = dS.data() + i * nk;
              double s = 0.0;
              for (int64_t j = 0; j < nk; ++j) s += static_cast<double>(ar[j]) * dr[j];
              const float fs = static_cast<float>(s);
              for (int64_t j = 0; j < nk; ++j) dr[j] = ar[j] * (dr[j] - fs);
            }
            if (gq)  // dQ = scale dS K
              gemm(Trans::No, Trans::No, scale, D, block(pk, b, h, nk, d, dh), bq,
                   Mat{gq + b * nq * d + h * dh, nq, dh, d});
            if (gk)  // dK = scale dSᵀ Q
              gemm(Trans::Yes, Trans::No, scale, D, block(pq, b, h, nq, d, dh), bk,
                   Mat{gk + b * nk * d + h * dh, nk, dh, d});
          }
      });
}

}  // namespace attnkit::ad
