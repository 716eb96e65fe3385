#include "attnkit/memory/ntm/address.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnkit/core/error.h"

namespace attnkit::memory {

namespace {

void check_size(const std::vector<double>& v, int64_t want, const char* what) {
  if (static_cast<int64_t>(v.size()) != want)
    throw ShapeError(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " +
                     std::to_string(want));
}

void check_finite(const std::vector<double>& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw DataError(std::string(what) + ": value " + std::to_string(i + 1) + " is not finite");
}

void check_nonneg(const std::vector<double>& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 0)
      throw DataError(std::string(what) + ": value " + std::to_string(i + 1) +
                      " is negative (weights must be >= 0)");
}

// Softmax of x in place (max subtracted).
void softmax(std::vector<double>& x) {
  const double mx = *std::max_element(x.begin(), x.end());
  double s = 0;
  for (double& v : x) s += (v = std::exp(v - mx));
  for (double& v : x) v /= s;
}

}  // namespace

double ntm_cosine(const double* u, const double* v, int64_t m) {
  double uv = 0, uu = 0, vv = 0;
  for (int64_t j = 0; j < m; ++j) {
    uv += u[j] * v[j];
    uu += u[j] * u[j];
    vv += v[j] * v[j];
  }
  return uv / (std::sqrt(uu + kNtmCosineEps) * std::sqrt(vv + kNtmCosineEps));
}

AddressStages ntm_address(const std::vector<double>& memory, int64_t n, int64_t m,
                          const std::vector<double>& key, double beta, double gate,
                          const std::vector<double>& shift, double gamma,
                          const std::vector<double>& prev) {
  if (n < 1 || m < 1)
    throw ShapeError("memory must be N x M with N, M >= 1, got " + std::to_string(n) + " x " +
                     std::to_string(m));
  check_size(memory, n * m, "memory");
  check_size(key, m, "key (one value per memory column)");
  check_size(prev, n, "previous weighting (one value per memory row)");
  const int64_t k = static_cast<int64_t>(shift.size());
  if (k % 2 == 0 || k > n)
    throw ShapeError(
        "shift weighting has " + std::to_string(k) +
        " values: expected an odd number 2R+1 (shifts -R..+R) of at most N = " + std::to_string(n));
  check_finite(memory, "memory");
  check_finite(key, "key");
  check_finite(shift, "shift");
  check_finite(prev, "previous weighting");
  if (!std::isfinite(beta) || beta < 0) throw DataError("beta must be a finite number >= 0");
  if (!std::isfinite(gate) || gate < 0 || gate > 1)
    throw DataError("gate must be a number in [0, 1]");
  if (!std::isfinite(gamma) || gamma < 1) throw DataError("gamma must be a finite number >= 1");
  check_nonneg(shift, "shift");
  check_nonneg(prev, "previous weighting");

  AddressStages s;
  s.wc.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    s.wc[static_cast<size_t>(i)] = beta * ntm_cosine(key.data(), memory.data() + i * m, m);
  softmax(s.wc);
  s.wg.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < s.wg.size(); ++i) s.wg[i] = gate * s.wc[i] + (1 - gate) * prev[i];
  const int64_t r = k / 2;
  s.wshift.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = -r; d <= r; ++d)  // s(d) moves weight from j = i − d to i
      s.wshift[static_cast<size_t>(i)] +=
          s.wg[static_cast<size_t>(((i - d) % n + n) % n)] * shift[static_cast<size_t>(d + r)];
  s.w.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < s.w.size(); ++i) s.w[i] = gamma * std::log(s.wshift[i] + kNtmSharpenFloor);
  softmax(s.w);
  return s;
}

std::vector<double> ntm_read(const std::vector<double>& memory, int64_t n, int64_t m,
                             const std::vector<double>& w) {
  check_size(memory, n * m, "memory");
  check_size(w, n, "weighting");
  std::vector<double> r(static_cast<size_t>(m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      r[static_cast<size_t>(j)] +=
          w[static_cast<size_t>(i)] * memory[static_cast<size_t>(i * m + j)];
  return r;
}

void ntm_write(std::vector<double>& memory, int64_t n, int64_t m, const std::vector<double>& w,
               const std::vector<double>& erase, const std::vector<double>& add) {
  check_size(memory, n * m, "memory");
  check_size(w, n, "weighting");
  check_size(erase, m, "erase vector");
  check_size(add, m, "add vector");
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double& x = memory[static_cast<size_t>(i * m + j)];
      x = x * (1 - w[static_cast<size_t>(i)] * erase[static_cast<size_t>(j)]) +
          w[static_cast<size_t>(i)] * add[static_cast<size_t>(j)];
    }
}

}  // namespace attnkit::memory
