#include "attnkit/memory/ntm/ops.h"

#include <cmath>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/memory/ntm/address.h"

namespace attnkit::memory {

using ad::Tape;
using ad::Var;

namespace {
constexpr int64_t kMaxRows = 4096, kMaxCols = 1024;  // NtmConfig::validate() keeps within them
inline double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
Tape& tape_of(Var a, Var b) {
  if (&a.tape() != &b.tape()) throw Error("NTM op: inputs from different tapes");
  return a.tape();
}
}  // namespace

Var ntm_address_fused(Var memory, Var p, int64_t off, int shift_range, Var prev) {
  Tape& t = tape_of(memory, p);
  tape_of(memory, prev);
  const Tensor& Mm = memory.value();
  const Tensor& P = p.value();
  const Tensor& Wp = prev.value();
  const int64_t K = 2 * shift_range + 1;
  if (Mm.rank() != 2 || P.rank() != 2 || P.dim(0) != 1 || Wp.size() != Mm.dim(0) ||
      P.dim(1) < off + Mm.dim(1) + 3 + K || K > Mm.dim(0))
    throw ShapeError("ntm_address_fused: memory " + shape_str(Mm.shape()) + ", head " +
                     shape_str(P.shape()) + " and previous weighting " + shape_str(Wp.shape()) +
                     " do not fit");
  const int64_t N = Mm.dim(0), M = Mm.dim(1);
  const float* k = P.data() + off;
  const double beta = softplus(P[off + M]), g = sigmoid(P[off + M + 1]);
  const double gamma = 1.0 + softplus(P[off + M + 2 + K]);
  double s[64];
  if (K > 64 || N > kMaxRows || M > kMaxCols)
    throw ShapeError("ntm_address_fused: at most 64 shifts, " + std::to_string(kMaxRows) +
                     " memory rows and " + std::to_string(kMaxCols) + " columns");
  {
    double mx = -1e300, sum = 0;
    for (int64_t d = 0; d < K; ++d) mx = std::max(mx, static_cast<double>(P[off + M + 2 + d]));
    for (int64_t d = 0; d < K; ++d) sum += (s[d] = std::exp(P[off + M + 2 + d] - mx));
    for (int64_t d = 0; d < K; ++d) s[d] /= sum;
  }
  // Saved for backward: rows cos, 1/‖M_i‖ε, wc, wg, w̃, ln(w̃ + floor) (the output holds w).
  Tensor* sv = t.scratch({6, N});
  float *cos = sv->data(), *inm = cos + N, *wc = inm + N, *wg = wc + N, *ws = wg + N, *lw = ws + N;
  double kk = 0;
  for (int64_t j = 0; j < M; ++j) kk += static_cast<double>(k[j]) * k[j];
  const double nk = std::sqrt(kk + kNtmCosineEps);
  double mx = -1e300;
  for (int64_t i = 0; i < N; ++i) {
    const float* row = Mm.data() + i * M;
    float dotf = 0, mmf = 0;  // M is small: float sums, which the compiler can vectorise
    for (int64_t j = 0; j < M; ++j) {
      dotf += row[j] * k[j];
      mmf += row[j] * row[j];
    }
    const double dot = dotf, mm = mmf;
    const double in = 1.0 / std::sqrt(mm + kNtmCosineEps);
    inm[i] = static_cast<float>(in);
    cos[i] = static_cast<float>(dot * in / nk);
    mx = std::max(mx, beta * cos[i]);
  }
  double sum = 0;
  Tensor* tmps = t.scratch({N});
  float* tmp = tmps->data();
  for (int64_t i = 0; i < N; ++i)
    sum += (tmp[i] = std::exp(static_cast<float>(beta * cos[i] - mx)));
  for (int64_t i = 0; i < N; ++i) {
    wc[i] = static_cast<float>(tmp[i] / sum);
    wg[i] = static_cast<float>(g * wc[i] + (1 - g) * Wp[i]);
  }
  const int64_t R = shift_range;
  for (int64_t i = 0; i < N; ++i) {
    double acc = 0;
    for (int64_t d = -R; d <= R; ++d) acc += s[d + R] * wg[((i - d) % N + N) % N];
    ws[i] = static_cast<float>(acc);
  }
  mx = -1e300;
  for (int64_t i = 0; i < N; ++i) {
    lw[i] = static_cast<float>(std::log(static_cast<double>(ws[i]) + kNtmSharpenFloor));
    mx = std::max(mx, gamma * lw[i]);
  }
  sum = 0;
  for (int64_t i = 0; i < N; ++i)
    sum += (tmp[i] = std::exp(static_cast<float>(gamma * lw[i] - mx)));
  Tensor w = t.alloc({1, N});
  for (int64_t i = 0; i < N; ++i) w[i] = static_cast<float>(tmp[i] / sum);

  return t.push(std::move(w), {memory, p, prev}, [=](Tape& t, Var out) {
    const Tensor& gw = t.grad(out);
    const Tensor& W = t.value(out);
    const Tensor& Mm = t.value(memory);
    const Tensor& P = t.value(p);
    const Tensor& Wp = t.value(prev);
    const float* k = P.data() + off;
    const float *cos = sv->data(), *inm = cos + N, *wc = inm + N, *wg = wc + N, *ws = wg + N,
                *lw = ws + N;
    double a[kMaxRows], b[kMaxRows];
    // Sharpening: du = w (gw − Σ w gw); dγ = Σ du ln(w̃ + floor); dw̃ = γ du / (w̃ + floor).
    double wgw = 0;
    for (int64_t i = 0; i < N; ++i) wgw += static_cast<double>(W[i]) * gw[i];
    double dgamma = 0;
    for (int64_t i = 0; i < N; ++i) {
      const double du = W[i] * (gw[i] - wgw);
      const double x = static_cast<double>(ws[i]) + kNtmSharpenFloor;
      dgamma += du * lw[i];
      a[i] = gamma * du / x;  // dw̃
    }
    // Shift: dwg_j = Σ_d s_d dw̃_{j+d}; ds_d = Σ_i dw̃_i wg_{i−d}.
    double ds[64];
    for (int64_t d = -R; d <= R; ++d) ds[d + R] = 0;
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t d = -R; d <= R; ++d) {
        const int64_t i = ((j + d) % N + N) % N;
        acc += s[d + R] * a[i];
        ds[d + R] += a[i] * wg[j];
      }
      b[j] = acc;  // dwg
    }
    // Interpolation and content softmax.
    double dg = 0, wcd = 0;
    for (int64_t i = 0; i < N; ++i) {
      dg += b[i] * (static_cast<double>(wc[i]) - Wp[i]);
      wcd += wc[i] * g * b[i];
    }
    if (t.requires_grad(prev)) {
      float* gp = t.grad(prev).data();
      for (int64_t i = 0; i < N; ++i) gp[i] += static_cast<float>((1 - g) * b[i]);
    }
    double dbeta = 0;
    for (int64_t i = 0; i < N; ++i) {
      const double dz = wc[i] * (g * b[i] - wcd);
      dbeta += dz * cos[i];
      a[i] = beta * dz;  // dcos
    }
    const bool need_p = t.requires_grad(p), need_m = t.requires_grad(memory);
    const double nk = std::sqrt([&] {
      double kk = 0;
      for (int64_t j = 0; j < M; ++j) kk += static_cast<double>(k[j]) * k[j];
      return kk;
    }() + kNtmCosineEps);
    if (need_p) {
      float* gp = t.grad(p).data() + off;
      double cc = 0;
      for (int64_t i = 0; i < N; ++i) cc += a[i] * cos[i];
      float acc[kMaxCols] = {};
      for (int64_t i = 0; i < N; ++i) {
        const float c = static_cast<float>(a[i] * inm[i]);
        const float* row = Mm.data() + i * M;
        for (int64_t j = 0; j < M; ++j) acc[j] += c * row[j];
      }
      for (int64_t j = 0; j < M; ++j)
        gp[j] += static_cast<float>(acc[j] / nk - cc * k[j] / (nk * nk));
      const double bh = P[off + M], gh = P[off + M + 1], yh = P[off + M + 2 + K];
      gp[M] += static_cast<float>(dbeta * sigmoid(bh));
      gp[M + 1] += static_cast<float>(dg * g * (1 - g));
      (void)gh;
      double sds = 0;
      for (int64_t d = 0; d < K; ++d) sds += s[d] * ds[d];
      for (int64_t d = 0; d < K; ++d) gp[M + 2 + d] += static_cast<float>(s[d] * (ds[d] - sds));
      gp[M + 2 + K] += static_cast<float>(dgamma * sigmoid(yh));
    }
    if (need_m) {
      float* gm = t.grad(memory).data();
      for (int64_t i = 0; i < N; ++i) {
        const float c1 = static_cast<float>(a[i] * inm[i] / nk);
        const float c2 = static_cast<float>(a[i] * cos[i] * inm[i] * inm[i]);
        const float* row = Mm.data() + i * M;
        float* g = gm + i * M;
        for (int64_t j = 0; j < M; ++j) g[j] += c1 * k[j] - c2 * row[j];
      }
    }
  });
}

Var ntm_write_fused(Var memory, Var w, Var p, int64_t off, bool tanh_add) {
  Tape& t = tape_of(memory, p);
  tape_of(memory, w);
  const Tensor& Mm = memory.value();
  const Tensor& P = p.value();
  const Tensor& Wt = w.value();
  if (Mm.rank() != 2 || Wt.size() != Mm.dim(0) || P.dim(0) != 1 || P.dim(1) < off + 2 * Mm.dim(1))
    throw ShapeError("ntm_write_fused: memory " + shape_str(Mm.shape()) + ", weighting " +
                     shape_str(Wt.shape()) + " and head " + shape_str(P.shape()) + " do not fit");
  const int64_t N = Mm.dim(0), M = Mm.dim(1);
  Tensor* ea = t.scratch({2, M});
  float *e = ea->data(), *a = e + M;
  for (int64_t j = 0; j < M; ++j) {
    e[j] = static_cast<float>(sigmoid(P[off + j]));
    a[j] = tanh_add ? std::tanh(P[off + M + j]) : P[off + M + j];
  }
  Tensor y = t.alloc({N, M});
  for (int64_t i = 0; i < N; ++i) {
    const float wi = Wt[i];
    const float* row = Mm.data() + i * M;
    float* yr = y.data() + i * M;
    for (int64_t j = 0; j < M; ++j) yr[j] = row[j] * (1.0f - wi * e[j]) + wi * a[j];
  }
  return t.push(std::move(y), {memory, w, p}, [=](Tape& t, Var out) {
    const Tensor& G = t.grad(out);
    const Tensor& Mm = t.value(memory);
    const Tensor& Wt = t.value(w);
    const float *e = ea->data(), *a = e + M;
    float* gm = t.requires_grad(memory) ? t.grad(memory).data() : nullptr;
    float* gw = t.requires_grad(w) ? t.grad(w).data() : nullptr;
    float de[kMaxCols] = {}, da[kMaxCols] = {};  // float sums: M is small, N rows of them
    for (int64_t i = 0; i < N; ++i) {
      const float wi = Wt[i];
      const float* row = Mm.data() + i * M;
      const float* gr = G.data() + i * M;
      if (gm) {
        float* g = gm + i * M;
        for (int64_t j = 0; j < M; ++j) g[j] += gr[j] * (1.0f - wi * e[j]);
      }
      float acc = 0;
      for (int64_t j = 0; j < M; ++j) {
        acc += gr[j] * (a[j] - row[j] * e[j]);
        de[j] -= gr[j] * row[j] * wi;
        da[j] += gr[j] * wi;
      }
      if (gw) gw[i] += acc;
    }
    if (t.requires_grad(p)) {
      float* gp = t.grad(p).data() + off;
      for (int64_t j = 0; j < M; ++j) {
        gp[j] += static_cast<float>(de[j] * e[j] * (1 - e[j]));
        gp[M + j] +=
            static_cast<float>(tanh_add ? da[j] * (1.0 - static_cast<double>(a[j]) * a[j]) : da[j]);
      }
    }
  });
}

}  // namespace attnkit::memory
