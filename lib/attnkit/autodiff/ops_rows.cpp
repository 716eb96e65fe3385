// Row ops (over the last dimension): softmaxes, cosine, layer norm, normalisation, circular
// convolution, reductions, dropout.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "attnkit/attention/softmax.h"
#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::ad {

using detail::last_dim;
using detail::lead_rows;
namespace fm = fastmath;

namespace {

// gx += y ⊙ (g - Σ g⊙y) per row: the softmax backward.
void softmax_backward(Tape& t, Var x, Var out) {
  const Tensor& y = t.value(out);
  const Tensor& g = t.grad(out);
  bool assign = false;  // every element written: a new buffer is not zeroed first
  Tensor& gx = t.grad(x, assign);
  const int64_t n = last_dim(y), rows = lead_rows(y);
  for (int64_t r = 0; r < rows; ++r) {
    const float* py = y.data() + r * n;
    const float* pg = g.data() + r * n;
    float* px = gx.data() + r * n;
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += static_cast<double>(pg[j]) * py[j];
    const float sf = static_cast<float>(s);
    if (assign)
      for (int64_t j = 0; j < n; ++j) px[j] = py[j] * (pg[j] - sf);
    else
      for (int64_t j = 0; j < n; ++j) px[j] += py[j] * (pg[j] - sf);
  }
}

}  // namespace

Var softmax(Var x) {
  Tape& t = x.tape();
  Tensor y = t.alloc(x.value().shape());
  std::copy(x.value().values().begin(), x.value().values().end(), y.values().begin());
  if (y.size() > 0) attention::softmax_rows(detail::rows_view(y));
  return t.push(std::move(y), {x}, [x](Tape& t, Var out) { softmax_backward(t, x, out); });
}

Var masked_softmax(Var x, const Tensor& mask) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  if (mask.size() == 0 || X.size() % mask.size() != 0 || last_dim(mask) != last_dim(X))
    throw ShapeError("masked_softmax: mask " + shape_str(mask.shape()) + " does not fit scores " +
                     shape_str(X.shape()));
  Tensor y = t.alloc(X.shape());
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t m = mask.size();
  for (int64_t i = 0; i < X.size(); ++i) y[i] = mask[i % m] != 0.0f ? X[i] : ninf;
  if (y.size() > 0) attention::softmax_rows(detail::rows_view(y));
  return t.push(std::move(y), {x}, [x](Tape& t, Var out) { softmax_backward(t, x, out); });
}

Var log_softmax(Var x) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  Tensor y = t.alloc(X.shape());
  const int64_t n = last_dim(X), rows = lead_rows(X);
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = X.data() + r * n;
    float* py = y.data() + r * n;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, px[j]);
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(px[j]) - mx);
    const double lse = mx + std::log(s);
    for (int64_t j = 0; j < n; ++j) py[j] = static_cast<float>(px[j] - lse);
  }
  return t.push(std::move(y), {x}, [x, n, rows](Tape& t, Var out) {
    // gx = g - softmax · Σ g
    const Tensor& y = t.value(out);
    const Tensor& g = t.grad(out);
    Tensor& gx = t.grad(x);
    for (int64_t r = 0; r < rows; ++r) {
      const float* py = y.data() + r * n;
      const float* pg = g.data() + r * n;
      float* px = gx.data() + r * n;
      double s = 0.0;
      for (int64_t j = 0; j < n; ++j) s += pg[j];
      for (int64_t j = 0; j < n; ++j)
        px[j] += pg[j] - static_cast<float>(std::exp(static_cast<double>(py[j])) * s);
    }
  });
}

Var cosine(Var a, Var b, float eps) {
  Tape& t = detail::tape_of(a, b);
  const Tensor& A = a.value();
  const Tensor& B = b.value();
  const bool ok = A.rank() >= 2 && A.rank() <= 3 && A.rank() == B.rank() &&
                  A.dim(-1) == B.dim(-1) && (A.rank() == 2 || A.dim(0) == B.dim(0));
  if (!ok)
    throw ShapeError("cosine: rows of " + shape_str(A.shape()) + " and " + shape_str(B.shape()) +
                     " cannot be compared");
  const int64_t batch = A.rank() == 3 ? A.dim(0) : 1;
  const int64_t n = A.dim(-2), m = B.dim(-2), d = A.dim(-1);
  auto norms = [eps](const Tensor& X) {
    const int64_t dd = X.shape().back(), rows = lead_rows(X);
    auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (int64_t j = 0; j < dd; ++j)
        s += static_cast<double>(X.data()[r * dd + j]) * X.data()[r * dd + j];
      (*v)[static_cast<size_t>(r)] = static_cast<float>(std::sqrt(s + eps));
    }
    return v;
  };
  auto na = norms(A), nb = norms(B);
  Shape os = A.rank() == 3 ? Shape{batch, n, m} : Shape{n, m};
  Tensor y = t.alloc(os);
  for (int64_t i = 0; i < batch; ++i) {
    float* py = y.data() + i * n * m;
    gemm(Trans::No, Trans::Yes, 1.0f, detail::view(A.data() + i * n * d, n, d),
         detail::view(B.data() + i * m * d, m, d), 0.0f, detail::view(py, n, m));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c)
        py[r * m + c] /=
            (*na)[static_cast<size_t>(i * n + r)] * (*nb)[static_cast<size_t>(i * m + c)];
  }
  return t.push(std::move(y), {a, b}, [a, b, na, nb, batch, n, m, d](Tape& t, Var out) {
    // With G' = g / (na_i nb_j): ga = G' B - diag(Σ_j g_ij cos_ij / na_i²) A, and
    // gb = G'ᵀ A - diag(Σ_i g_ij cos_ij / nb_j²) B.
    const Tensor& y = t.value(out);
    const Tensor& g = t.grad(out);
    const Tensor& A = t.value(a);
    const Tensor& B = t.value(b);
    const bool need_a = t.requires_grad(a), need_b = t.requires_grad(b);
    Tensor gs(Shape{n, m});
    std::vector<double> ra(static_cast<size_t>(n)), rb(static_cast<size_t>(m));
    for (int64_t i = 0; i < batch; ++i) {
      const float* py = y.data() + i * n * m;
      const float* pg = g.data() + i * n * m;
      std::fill(ra.begin(), ra.end(), 0.0);
      std::fill(rb.begin(), rb.end(), 0.0);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < m; ++c) {
          const float nar = (*na)[static_cast<size_t>(i * n + r)];
          const float nbc = (*nb)[static_cast<size_t>(i * m + c)];
          gs[r * m + c] = pg[r * m + c] / (nar * nbc);
          const double gc = static_cast<double>(pg[r * m + c]) * py[r * m + c];
          ra[static_cast<size_t>(r)] += gc;
          rb[static_cast<size_t>(c)] += gc;
        }
      const float* pa = A.data() + i * n * d;
      const float* pb = B.data() + i * m * d;
      if (need_a) {
        float* ga = t.grad(a).data() + i * n * d;
        gemm(Trans::No, Trans::No, 1.0f, detail::view(gs.data(), n, m), detail::view(pb, m, d),
             1.0f, detail::view(ga, n, d));
        for (int64_t r = 0; r < n; ++r) {
          const float nar = (*na)[static_cast<size_t>(i * n + r)];
          const float s =
              static_cast<float>(ra[static_cast<size_t>(r)] / (static_cast<double>(nar) * nar));
          for (int64_t j = 0; j < d; ++j) ga[r * d + j] -= s * pa[r * d + j];
        }
      }
      if (need_b) {
        float* gb = t.grad(b).data() + i * m * d;
        gemm(Trans::Yes, Trans::No, 1.0f, detail::view(gs.data(), n, m), detail::view(pa, n, d),
             1.0f, detail::view(gb, m, d));
        for (int64_t c = 0; c < m; ++c) {
          const float nbc = (*nb)[static_cast<size_t>(i * m + c)];
          const float s =
              static_cast<float>(rb[static_cast<size_t>(c)] / (static_cast<double>(nbc) * nbc));
          for (int64_t j = 0; j < d; ++j) gb[c * d + j] -= s * pb[c * d + j];
        }
      }
    }
  });
}

namespace {
// Σ (x_j - mu)² over n floats in double, in the lanes and order of fm::lane_sum (so the
// loop vectorises).
double lane_sq_dev(const float* x, int64_t n, double mu) {
  double acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += (x[i + l] - mu) * (x[i + l] - mu);
  for (int l = 0; i < n; ++i, ++l) acc[l] += (x[i] - mu) * (x[i] - mu);
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}
}  // namespace

Var layer_norm(Var x, Var gain, Var bias, float eps) {
  Tape& t = x.tape();
  if (gain.valid()) detail::tape_of(x, gain);
  if (bias.valid()) detail::tape_of(x, bias);
  const Tensor& X = x.value();
  const int64_t n = last_dim(X), rows = lead_rows(X);
  if ((gain.valid() && gain.value().size() != n) || (bias.valid() && bias.value().size() != n))
    throw ShapeError("layer_norm: gain/bias " +
                     shape_str(gain.valid() ? gain.value().shape() : bias.value().shape()) +
                     " do not fit rows of " + shape_str(X.shape()));
  // Saved for backward: x̂ and 1/σ per row.
  Tensor* xhat = t.scratch(X.shape());
  auto rstd = std::make_shared<std::vector<float>>(static_cast<size_t>(rows));
  Tensor y = t.alloc(X.shape());
  const float* pgn = gain.valid() ? gain.value().data() : nullptr;
  const float* pbs = bias.valid() ? bias.value().data() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = X.data() + r * n;
    const double mu = fm::lane_sum(px, n) / static_cast<double>(n);
    const double s2 = lane_sq_dev(px, n, mu);
    const float rs = static_cast<float>(1.0 / std::sqrt(s2 / static_cast<double>(n) + eps));
    (*rstd)[static_cast<size_t>(r)] = rs;
    float* __restrict ph = xhat->data() + r * n;
    float* __restrict py = y.data() + r * n;
    for (int64_t j = 0; j < n; ++j) ph[j] = static_cast<float>((px[j] - mu) * rs);
    if (pgn && pbs)
      for (int64_t j = 0; j < n; ++j) py[j] = ph[j] * pgn[j] + pbs[j];
    else
      for (int64_t j = 0; j < n; ++j) py[j] = ph[j] * (pgn ? pgn[j] : 1.0f) + (pbs ? pbs[j] : 0.0f);
  }
  return t.push(
      std::move(y), {x, gain, bias}, [x, gain, bias, xhat, rstd, n, rows](Tape& t, Var out) {
        const Tensor& g = t.grad(out);
        const float* pgn = gain.valid() ? t.value(gain).data() : nullptr;
        if (gain.valid() && t.requires_grad(gain)) {
          std::vector<double> s(static_cast<size_t>(n), 0.0);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < n; ++j)
              s[static_cast<size_t>(j)] += static_cast<double>(g[r * n + j]) * (*xhat)[r * n + j];
          bool assign = false;
          float* gg = t.grad(gain, assign).data();
          for (int64_t j = 0; j < n; ++j)
            gg[j] = (assign ? 0.0f : gg[j]) + static_cast<float>(s[static_cast<size_t>(j)]);
        }
        if (bias.valid() && t.requires_grad(bias)) {
          std::vector<double> s(static_cast<size_t>(n), 0.0);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < n; ++j) s[static_cast<size_t>(j)] += g[r * n + j];
          bool assign = false;
          float* gb = t.grad(bias, assign).data();
          for (int64_t j = 0; j < n; ++j)
            gb[j] = (assign ? 0.0f : gb[j]) + static_cast<float>(s[static_cast<size_t>(j)]);
        }
        if (t.requires_grad(x)) {
          // gx = rstd (ĝ - mean(ĝ) - x̂ mean(ĝ x̂)), ĝ = g ⊙ gain
          bool assign = false;  // every element written: a new buffer is not zeroed first
          float* gx = t.grad(x, assign).data();
          std::vector<float> gh(static_cast<size_t>(n));
          for (int64_t r = 0; r < rows; ++r) {
            const float* __restrict ph = xhat->data() + r * n;
            const float* __restrict gr = g.data() + r * n;
            float* __restrict pgh = gh.data();
            if (pgn)
              for (int64_t j = 0; j < n; ++j) pgh[j] = gr[j] * pgn[j];
            else
              for (int64_t j = 0; j < n; ++j) pgh[j] = gr[j];
            const double m1 = fm::lane_sum(pgh, n), m2 = fm::lane_dot_double(pgh, ph, n);
            const float a1 = static_cast<float>(m1 / n), a2 = static_cast<float>(m2 / n);
            const float rs = (*rstd)[static_cast<size_t>(r)];
            float* __restrict gxr = gx + r * n;
            if (assign)
              for (int64_t j = 0; j < n; ++j) gxr[j] = rs * (pgh[j] - a1 - ph[j] * a2);
            else
              for (int64_t j = 0; j < n; ++j) gxr[j] += rs * (pgh[j] - a1 - ph[j] * a2);
          }
        }
      });
}

Var normalize_rows(Var x, float eps) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  const int64_t n = last_dim(X), rows = lead_rows(X);
  auto sums = std::make_shared<std::vector<float>>(static_cast<size_t>(rows));
  Tensor y = t.alloc(X.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double s = eps;
    for (int64_t j = 0; j < n; ++j) s += X[r * n + j];
    (*sums)[static_cast<size_t>(r)] = static_cast<float>(s);
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = X[r * n + j] * inv;
  }
  return t.push(std::move(y), {x}, [x, sums, n, rows](Tape& t, Var out) {
    // gx_j = (g_j - Σ_i g_i y_i) / s
    const Tensor& y = t.value(out);
    const Tensor& g = t.grad(out);
    float* gx = t.grad(x).data();
    for (int64_t r = 0; r < rows; ++r) {
      double d = 0.0;
      for (int64_t j = 0; j < n; ++j) d += static_cast<double>(g[r * n + j]) * y[r * n + j];
      const float inv = 1.0f / (*sums)[static_cast<size_t>(r)], df = static_cast<float>(d);
      for (int64_t j = 0; j < n; ++j) gx[r * n + j] += (g[r * n + j] - df) * inv;
    }
  });
}

Var circular_conv(Var w, Var s) {
  Tape& t = detail::tape_of(w, s);
  const Tensor& W = w.value();
  const Tensor& S = s.value();
  const int64_t N = last_dim(W), rows = lead_rows(W), K = last_dim(S), srows = lead_rows(S);
  if (K > N || K == 0 || (srows != rows && srows != 1))
    throw ShapeError("circular_conv: shift kernel " + shape_str(S.shape()) +
                     " does not fit weightings " + shape_str(W.shape()));
  const int64_t half = K / 2;
  auto idx = [N](int64_t i) { return ((i % N) + N) % N; };
  Tensor y = t.zeros(W.shape());
  for (int64_t r = 0; r < rows; ++r) {
    const float* pw = W.data() + r * N;
    const float* ps = S.data() + (srows == 1 ? 0 : r * K);
    float* py = y.data() + r * N;
    for (int64_t i = 0; i < N; ++i) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(ps[k]) * pw[idx(i - k + half)];
      py[i] = static_cast<float>(acc);
    }
  }
  return t.push(std::move(y), {w, s}, [w, s, N, K, rows, srows, half, idx](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    const Tensor& W = t.value(w);
    const Tensor& S = t.value(s);
    float* gw = t.requires_grad(w) ? t.grad(w).data() : nullptr;
    float* gs = t.requires_grad(s) ? t.grad(s).data() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      const float* pw = W.data() + r * N;
      const float* ps = S.data() + (srows == 1 ? 0 : r * K);
      const float* pg = g.data() + r * N;
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t j = idx(i - k + half);
          if (gw) gw[r * N + j] += pg[i] * ps[k];
          if (gs) gs[(srows == 1 ? 0 : r * K) + k] += pg[i] * pw[j];
        }
    }
  });
}

Var additive_scores(Var keys, Var q, Var v, const std::vector<uint8_t>& skip) {
  Tape& t = detail::tape_of(keys, q);
  detail::tape_of(keys, v);
  const Tensor& K = keys.value();
  const Tensor& Q = q.value();
  const Tensor& W = v.value();
  // q [B, a] is one query per item; q [M, B, a] is M queries per item (every decoder step).
  const bool steps = Q.rank() == 3;
  if (K.rank() != 3 || (Q.rank() != 2 && !steps) || Q.dim(steps ? 1 : 0) != K.dim(0) ||
      Q.shape().back() != K.dim(2) || W.size() != K.dim(2))
    throw ShapeError("additive_scores: keys " + shape_str(K.shape()) + ", query " +
                     shape_str(Q.shape()) + " and v " + shape_str(W.shape()) +
                     " are not [B, T, a], [B, a] or [M, B, a], and [a]");
  const int64_t M = steps ? Q.dim(0) : 1, B = K.dim(0), T = K.dim(1), A = K.dim(2);
  const int64_t R = M * B * T;
  if (!skip.empty() && static_cast<int64_t>(skip.size()) != R)
    throw ShapeError("additive_scores: " + std::to_string(skip.size()) + " skip flags for " +
                     std::to_string(R) + " scores");
  // The tanh values are kept for the backward pass only when there will be one: decoding
  // (no recording) would otherwise keep a [B, T, a] buffer a step for the tape's life.
  const bool keep =
      t.recording() && (t.requires_grad(keys) || t.requires_grad(q) || t.requires_grad(v));
  Tensor* th = keep ? t.scratch({M, B, T, A}) : nullptr;
  // The scores computed (all, or those not skipped: a skipped one is 0) go in blocks of
  // kRows: their tanh rows (kept, or in `rows`), their products w ⊙ tanh in `prod`, then
  // the kRows sums side by side. Each sum still runs in index order over a (the same bits as
  // one score at a time), but the blocks' independent sums no longer wait on each other's
  // additions.
  constexpr int64_t kRows = 16;
  std::vector<int64_t> live;
  if (!skip.empty())
    for (int64_t r = 0; r < R; ++r)
      if (!skip[static_cast<size_t>(r)]) live.push_back(r);
  const int64_t L = skip.empty() ? R : static_cast<int64_t>(live.size());
  std::vector<float> rows(keep ? 0 : static_cast<size_t>(kRows * A));
  std::vector<float> prod(static_cast<size_t>(kRows * A));
  Tensor y = t.alloc(steps ? Shape{M, B, T} : Shape{B, T});
  if (!skip.empty()) std::fill(y.values().begin(), y.values().end(), 0.0f);
  int64_t at[kRows];
  for (int64_t i0 = 0; i0 < L; i0 += kRows) {
    const int64_t nr = std::min(kRows, L - i0);
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t r = skip.empty() ? i0 + j : live[static_cast<size_t>(i0 + j)];
      const int64_t mb = r / T, s = r % T, b = mb % B;
      at[j] = r;
      const float* pq = Q.data() + mb * A;
      const float* pk = K.data() + (b * T + s) * A;
      float* ph = keep ? th->data() + r * A : rows.data() + j * A;
      float* pp = prod.data() + j * A;
      for (int64_t a = 0; a < A; ++a) ph[a] = fastmath::fast_tanh(pk[a] + pq[a]);
      for (int64_t a = 0; a < A; ++a) pp[a] = W[a] * ph[a];
    }
    float acc[kRows] = {};
    for (int64_t a = 0; a < A; ++a)
      for (int64_t j = 0; j < nr; ++j) acc[j] += prod[static_cast<size_t>(j * A + a)];
    for (int64_t j = 0; j < nr; ++j) y[at[j]] = acc[j];
  }
  return t.push(std::move(y), {keys, q, v}, [keys, q, v, th, M, B, T, A, skip](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    const float* W = t.value(v).data();
    // New gradient buffers are written by their first write and added to after it.
    bool new_k = false, new_q = false, new_v = false;
    float* gk = t.requires_grad(keys) ? t.grad(keys, new_k).data() : nullptr;
    float* gq = t.requires_grad(q) ? t.grad(q, new_q).data() : nullptr;
    float* gv = t.requires_grad(v) ? t.grad(v, new_v).data() : nullptr;
    if (M * B * T == 0) {  // nothing to write: new buffers must still be zeros
      if (new_k) std::fill(gk, gk + B * T * A, 0.0f);
      if (new_q) std::fill(gq, gq + M * B * A, 0.0f);
      if (new_v) std::fill(gv, gv + A, 0.0f);
    }
    std::vector<float> d(static_cast<size_t>(A));
    for (int64_t mb = 0; mb < M * B; ++mb) {
      const int64_t b = mb % B;
      for (int64_t s = 0; s < T; ++s) {
        const float* ph = th->data() + (mb * T + s) * A;
        const float gs = g[mb * T + s];
        if (gs == 0.0f || (!skip.empty() && skip[static_cast<size_t>(mb * T + s)])) {
          // Nothing to add (a skipped score, a constant; or e.g. a masked position, whose
          // probability is exactly 0): only the first writes of new buffers, as zeros.
          if (gk && new_k && mb < B)
            std::fill(gk + (b * T + s) * A, gk + (b * T + s + 1) * A, 0.0f);
          if (gq && new_q && s == 0) std::fill(gq + mb * A, gq + (mb + 1) * A, 0.0f);
          if (gv && new_v && mb == 0 && s == 0) std::fill(gv, gv + A, 0.0f);
          continue;
        }
        for (int64_t a = 0; a < A; ++a)
          d[static_cast<size_t>(a)] = gs * W[a] * (1.0f - ph[a] * ph[a]);
        if (gk) {
          float* pk = gk + (b * T + s) * A;
          if (new_k && mb < B)
            for (int64_t a = 0; a < A; ++a) pk[a] = d[static_cast<size_t>(a)];
          else
            for (int64_t a = 0; a < A; ++a) pk[a] += d[static_cast<size_t>(a)];
        }
        if (gq) {
          float* pq = gq + mb * A;
          if (new_q && s == 0)
            for (int64_t a = 0; a < A; ++a) pq[a] = d[static_cast<size_t>(a)];
          else
            for (int64_t a = 0; a < A; ++a) pq[a] += d[static_cast<size_t>(a)];
        }
        if (gv) {
          if (new_v && mb == 0 && s == 0)
            for (int64_t a = 0; a < A; ++a) gv[a] = gs * ph[a];
          else
            for (int64_t a = 0; a < A; ++a) gv[a] += gs * ph[a];
        }
      }
    }
  });
}

// ---- reductions

Var sum(Var x) {
  Tape& t = x.tape();
  double s = 0.0;
  for (float v : x.value().values()) s += v;
  Tensor y = Tensor::scalar(static_cast<float>(s));
  return t.push(std::move(y), {x}, [x](Tape& t, Var out) {
    const float g = t.grad(out)[0];
    Tensor& gx = t.grad(x);
    for (int64_t i = 0; i < gx.size(); ++i) gx[i] += g;
  });
}

Var mean(Var x) {
  const int64_t n = x.value().size();
  if (n == 0) throw ShapeError("mean of an empty tensor " + shape_str(x.value().shape()));
  return mul(sum(x), 1.0f / static_cast<float>(n));
}

Var sum_last(Var x) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  const int64_t n = last_dim(X), rows = lead_rows(X);
  Shape os = X.shape();
  if (os.empty()) os = {1};
  os.back() = 1;
  Tensor y = t.alloc(os);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += X[r * n + j];
    y[r] = static_cast<float>(s);
  }
  return t.push(std::move(y), {x}, [x, n, rows](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* gx = t.grad(x).data();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) gx[r * n + j] += g[r];
  });
}

Var mean_last(Var x) {
  const int64_t n = last_dim(x.value());
  if (n == 0) throw ShapeError("mean_last of rows of length 0: " + shape_str(x.value().shape()));
  return mul(sum_last(x), 1.0f / static_cast<float>(n));
}

// ---- dropout

void detail::dropout_mask(Rng& rng, float p, float* mask, int64_t n) {
  const uint64_t threshold =
      static_cast<uint64_t>(std::llround(static_cast<double>(p) * 4294967296.0));
  const float scale = 1.0f / (1.0f - p);
  uint32_t bits[1024];  // in chunks, so that the comparison loop vectorises
  for (int64_t i = 0; i < n; i += 1024) {
    const int64_t m = std::min<int64_t>(1024, n - i);
    rng.fill_u32(bits, m);
    for (int64_t j = 0; j < m; ++j) mask[i + j] = bits[j] < threshold ? 0.0f : scale;
  }
}

Var dropout(Var x, float p) {
  Tape& t = x.tape();
  if (!(p >= 0.0f && p < 1.0f))
    throw Error("dropout: p = " + std::to_string(p) + " is not in [0, 1)");
  if (!t.training() || p == 0.0f) return x;
  const Tensor& X = x.value();
  Tensor* mask = t.scratch(X.shape());  // from the tape's pool, kept for backward
  detail::dropout_mask(t.rng(), p, mask->data(), X.size());
  Tensor y = t.alloc(X.shape());
  const float* m = mask->data();
  for (int64_t i = 0; i < X.size(); ++i) y[i] = X[i] * m[i];
  return t.push(std::move(y), {x}, [x, mask](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    const float* m = mask->data();
    float* gx = t.grad(x).data();
    for (int64_t i = 0; i < g.size(); ++i) gx[i] += g[i] * m[i];
  });
}

}  // namespace attnkit::ad
