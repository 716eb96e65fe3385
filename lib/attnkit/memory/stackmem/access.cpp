#include "attnkit/memory/stackmem/access.h"

#include <algorithm>
#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::memory {

namespace {

std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// Lane-wise (vectorised) products and tanh: core/fastmath.h.
float dotf(const float* a, const float* b, int64_t n) { return fastmath::lane_dot(a, b, n); }

// out[i] = tanh(bias[i] + W_i · x) for the rows W_i of W [rows, cols].
void affine_tanh(const float* W, const float* bias, const float* x, int64_t rows, int64_t cols,
                 float* out) {
  for (int64_t i = 0; i < rows; ++i) out[i] = bias[i] + dotf(W + i * cols, x, cols);
  for (int64_t i = 0; i < rows; ++i) out[i] = fastmath::fast_tanh(out[i]);
}

}  // namespace

TreeMemory::TreeMemory(const TreeWeights& w, int64_t batch, const std::vector<float>& leaves)
    : B_(batch),
      m_(w.m),
      c_(w.c),
      join_w_(as_floats(w.join_w)),
      join_b_(as_floats(w.join_b)),
      search_w_(as_floats(w.search_w)),
      write_w_(as_floats(w.write_w)),
      write_b_(as_floats(w.write_b)),
      search_b_(static_cast<float>(w.search_b)) {
  if (B_ < 1 || m_ < 1 || c_ < 0 || leaves.size() % static_cast<size_t>(B_ * m_))
    throw ShapeError("TreeMemory: " + std::to_string(leaves.size()) + " leaf numbers for " +
                     std::to_string(B_) + " rows of width " + std::to_string(m_));
  n_ = static_cast<int64_t>(leaves.size()) / (B_ * m_);
  if (n_ < 2 || (n_ & (n_ - 1)))
    throw ShapeError("TreeMemory: a power of 2 (at least 2) leaves, not " + std::to_string(n_));
  if (join_w_.size() != static_cast<size_t>(2 * m_ * m_) ||
      search_w_.size() != static_cast<size_t>(m_ + c_) ||
      write_w_.size() != static_cast<size_t>(m_ * (m_ + c_)))
    throw ShapeError("TreeMemory: the weights do not fit the widths");
  while ((int64_t{1} << d_) < n_) ++d_;
  x_.assign(static_cast<size_t>(B_ * 2 * n_ * m_), 0.0f);
  buf_.resize(static_cast<size_t>(m_ + c_));
  for (int64_t b = 0; b < B_; ++b) {
    float* nodes = x_.data() + b * 2 * n_ * m_;
    std::copy(leaves.begin() + b * n_ * m_, leaves.begin() + (b + 1) * n_ * m_, nodes + n_ * m_);
    for (int64_t k = n_ - 1; k >= 1; --k) join(nodes, k);
  }
}

void TreeMemory::join(float* nodes, int64_t k) {
  // The two children are adjacent: [x_2k; x_2k+1].
  affine_tanh(join_w_.data(), join_b_.data(), nodes + 2 * k * m_, m_, 2 * m_, nodes + k * m_);
}

int64_t TreeMemory::access(const float* h, float* read, int64_t* leaf) {
  int64_t ops = 0;
  for (int64_t b = 0; b < B_; ++b) {
    const float* hb = h + b * c_;
    float* nodes = x_.data() + b * 2 * n_ * m_;
    const float hs = search_b_ + dotf(search_w_.data() + m_, hb, c_);
    int64_t k = 1;
    for (int64_t l = 0; l < d_; ++l)
      k = 2 * k + (dotf(search_w_.data(), nodes + k * m_, m_) + hs >= 0 ? 1 : 0);
    if (leaf) leaf[b] = k - n_;
    float* x = nodes + k * m_;
    std::copy(x, x + m_, read + b * m_);
    std::copy(x, x + m_, buf_.begin());
    std::copy(hb, hb + c_, buf_.begin() + m_);
    affine_tanh(write_w_.data(), write_b_.data(), buf_.data(), m_, m_ + c_, x);
    for (k /= 2; k >= 1; k /= 2) join(nodes, k);
    ops += (c_ + 1) + d_ * m_ + m_ * (m_ + c_) + d_ * 2 * m_ * m_;
  }
  return ops;
}

SetMemory::SetMemory(int64_t m, int64_t c, std::vector<float> control_w,
                     std::vector<float> control_b, int64_t batch,
                     const std::vector<float>& strengths, const std::vector<float>& keys,
                     const std::vector<float>& values)
    : m_(m), c_(c), B_(batch), cw_(std::move(control_w)), cb_(std::move(control_b)) {
  if (m_ < 1 || c_ < 1 || B_ < 1 || cw_.size() != static_cast<size_t>((3 + 4 * m_) * c_) ||
      cb_.size() != static_cast<size_t>(3 + 4 * m_) || strengths.size() % static_cast<size_t>(B_))
    throw ShapeError("SetMemory: the control layer or the slots do not fit the widths");
  n_ = static_cast<int64_t>(strengths.size()) / B_;
  if (keys.size() != static_cast<size_t>(B_ * n_ * m_) || values.size() != keys.size())
    throw ShapeError("SetMemory: keys and values must be [B, n, m]");
  cap_ = n_ + 1;
  s_.assign(static_cast<size_t>(B_ * cap_), 0.0f);
  k_.assign(static_cast<size_t>(B_ * cap_ * m_), 0.0f);
  v_ = k_;
  for (int64_t b = 0; b < B_; ++b) {
    std::copy(strengths.begin() + b * n_, strengths.begin() + (b + 1) * n_, s_.begin() + b * cap_);
    std::copy(keys.begin() + b * n_ * m_, keys.begin() + (b + 1) * n_ * m_,
              k_.begin() + b * cap_ * m_);
    std::copy(values.begin() + b * n_ * m_, values.begin() + (b + 1) * n_ * m_,
              v_.begin() + b * cap_ * m_);
  }
  ctrl_.resize(static_cast<size_t>(3 + 4 * m_));
  a_.resize(static_cast<size_t>(n_));
  r_.resize(static_cast<size_t>(m_ + 1));
}

int64_t SetMemory::access(const float* h, float* read) {
  const int64_t m = m_, n = n_, C = 3 + 4 * m;
  int64_t ops = 0;
  for (int64_t b = 0; b < B_; ++b) {
    for (int64_t i = 0; i < C; ++i)
      ctrl_[static_cast<size_t>(i)] =
          cb_[static_cast<size_t>(i)] + dotf(cw_.data() + i * c_, h + b * c_, c_);
    const float w = 1.0f / (1.0f + std::exp(-ctrl_[0])), er = 1.0f / (1.0f + std::exp(-ctrl_[1]));
    for (int64_t i = 2; i < 2 + 4 * m; ++i)
      ctrl_[static_cast<size_t>(i)] = fastmath::fast_tanh(ctrl_[static_cast<size_t>(i)]);
    const float *key = ctrl_.data() + 2, *value = key + m, *q = value + m, *e = q + m;
    const double tau = ctrl_[static_cast<size_t>(2 + 4 * m)];
    float* s = s_.data() + b * cap_;
    const float* K = k_.data() + b * cap_ * m;
    const float* V = v_.data() + b * cap_ * m;
    // (1) the erase, by content
    double z = 1.0;
    for (int64_t i = 0; i < n; ++i) {
      a_[static_cast<size_t>(i)] = s[i] * std::exp(static_cast<double>(dotf(e, K + i * m, m)));
      z += a_[static_cast<size_t>(i)];
    }
    for (int64_t i = 0; i < n; ++i)
      s[i] = static_cast<float>(s[i] * (1.0 - er * a_[static_cast<size_t>(i)] / z));
    // (2) the read, by content
    z = std::exp(tau);
    for (int64_t i = 0; i < n; ++i) {
      a_[static_cast<size_t>(i)] = s[i] * std::exp(static_cast<double>(dotf(q, K + i * m, m)));
      z += a_[static_cast<size_t>(i)];
    }
    std::vector<double>& r = r_;
    std::fill(r.begin(), r.end(), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const double rho = a_[static_cast<size_t>(i)] / z;
      for (int64_t j = 0; j < m; ++j) r[static_cast<size_t>(j)] += rho * V[i * m + j];
      r[static_cast<size_t>(m)] += rho;
    }
    for (int64_t j = 0; j <= m; ++j)
      read[b * (m + 1) + j] = static_cast<float>(r[static_cast<size_t>(j)]);
    // (3) the new slot, at position n
    s[n] = w;
    std::copy(key, key + m, k_.begin() + (b * cap_ + n) * m);
    std::copy(value, value + m, v_.begin() + (b * cap_ + n) * m);
    ops += C * c_ + 4 * m + 2 * n * (m + 1) + n * (m + 1) + 2 * n;
  }
  return ops;
}

}  // namespace attnkit::memory
