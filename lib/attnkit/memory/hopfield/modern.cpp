#include "attnkit/memory/hopfield/modern.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"

namespace attnkit::memory {

namespace {

std::pair<int64_t, int64_t> dims(const Tensor& t, const char* what) {
  if (t.rank() == 1) return {1, t.dim(0)};
  if (t.rank() == 2) return {t.dim(0), t.dim(1)};
  throw ShapeError(std::string(what) + " must be a matrix (one per row), not shape " +
                   shape_str(t.shape()));
}

void check(const Tensor& x, const Tensor& xi, float beta) {
  if (!(beta > 0.0f) || !std::isfinite(beta))
    throw DataError("beta must be a finite number above 0");
  const auto [p, d] = dims(x, "stored patterns");
  const auto [n, dq] = dims(xi, "states");
  (void)n;
  if (p == 0) throw ShapeError("no stored patterns");
  if (d != dq)
    throw ShapeError("states have " + std::to_string(dq) + " columns but the stored patterns " +
                     shape_str(x.shape()) + " have " + std::to_string(d));
  for (int64_t k = 0; k < x.size(); ++k)
    if (!std::isfinite(x[k])) throw DataError("stored patterns hold a non-finite value");
  for (int64_t k = 0; k < xi.size(); ++k)
    if (!std::isfinite(xi[k])) throw DataError("states hold a non-finite value");
}

// Scores beta * Xi X' [n, P] into s.
void scores(const Tensor& x, const Tensor& xi, float beta, Tensor& s) {
  const auto [p, d] = dims(x, "");
  const auto [n, dq] = dims(xi, "");
  (void)dq;
  s = Tensor({n, p});
  ConstMat xm{x.data(), p, d, d}, qm{xi.data(), n, d, d};
  if (n > 0 && d > 0) gemm(Trans::No, Trans::Yes, beta, qm, xm, 0.0f, mat(s));
}

// Row softmax in place with the max subtracted, sums in double; returns nothing.
void softmax_rows_inplace(Tensor& s) {
  const int64_t n = s.dim(0), p = s.dim(1);
  parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = s.data() + r * p;
      const float m = *std::max_element(row, row + p);
      double z = 0.0;
      for (int64_t j = 0; j < p; ++j) z += std::exp(double(row[j]) - m);
      for (int64_t j = 0; j < p; ++j) row[j] = static_cast<float>(std::exp(double(row[j]) - m) / z);
    }
  });
}

}  // namespace

Tensor modern_weights(const Tensor& x, const Tensor& xi, float beta) {
  check(x, xi, beta);
  Tensor s;
  scores(x, xi, beta, s);
  softmax_rows_inplace(s);
  return s;
}

Tensor modern_update(const Tensor& x, const Tensor& xi, float beta, int steps,
                     Tensor* last_weights) {
  check(x, xi, beta);
  if (steps < 1) throw UsageError("steps must be 1 or more");
  const auto [p, d] = dims(x, "");
  const auto [n, dq] = dims(xi, "");
  (void)dq;
  Tensor cur = xi.clone();
  cur.reshape({n, d});
  ConstMat xm{x.data(), p, d, d};
  Tensor w;
  for (int t = 0; t < steps; ++t) {
    w = modern_weights(x, cur, beta);
    Tensor next({n, d});
    if (n > 0 && d > 0) gemm(Trans::No, Trans::No, 1.0f, mat(w), xm, 0.0f, mat(next));
    cur = std::move(next);
  }
  if (last_weights) *last_weights = std::move(w);
  return cur;
}

Tensor modern_energy(const Tensor& x, const Tensor& xi, float beta) {
  check(x, xi, beta);
  const auto [p, d] = dims(x, "");
  const auto [n, dq] = dims(xi, "");
  (void)dq;
  Tensor s;
  scores(x, xi, beta, s);  // beta x_mu . xi
  double m2 = 0.0;
  for (int64_t mu = 0; mu < p; ++mu) {
    double q = 0.0;
    for (int64_t j = 0; j < d; ++j) q += double(x[mu * d + j]) * x[mu * d + j];
    m2 = std::max(m2, q);
  }
  Tensor e({n});
  for (int64_t r = 0; r < n; ++r) {
    const float* row = s.data() + r * p;
    const double m = *std::max_element(row, row + p);
    double z = 0.0;
    for (int64_t j = 0; j < p; ++j) z += std::exp(double(row[j]) - m);
    const double lse = (m + std::log(z)) / beta;
    double half = 0.0;
    for (int64_t j = 0; j < d; ++j) half += 0.5 * double(xi[r * d + j]) * xi[r * d + j];
    e[r] = static_cast<float>(-lse + half + std::log(static_cast<double>(p)) / beta + 0.5 * m2);
  }
  return e;
}

}  // namespace attnkit::memory
