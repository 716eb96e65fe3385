#include "attnkit/memory/stackmem/access.h"

#include <algorithm>
#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::memory {

namespace {

std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// W [rows, cols] row-major → Wᵀ [cols, rows]: a control layer's weights as axpy rows (control_row).
std::vector<float> transposed(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> t(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      t[static_cast<size_t>(j * rows + i)] = w[static_cast<size_t>(i * cols + j)];
  return t;
}

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

SetMemory::SetMemory(int64_t m, int64_t c, const std::vector<float>& control_w,
                     std::vector<float> control_b, int64_t batch,
                     const std::vector<float>& strengths, const std::vector<float>& keys,
                     const std::vector<float>& values)
    : m_(m), c_(c), B_(batch), cb_(std::move(control_b)) {
  const int64_t C = 3 + 4 * m_;
  if (m_ < 1 || c_ < 1 || B_ < 1 || control_w.size() != static_cast<size_t>(C * c_) ||
      cb_.size() != static_cast<size_t>(C) || strengths.size() % static_cast<size_t>(B_))
    throw ShapeError("SetMemory: the control layer or the slots do not fit the widths");
  n_ = static_cast<int64_t>(strengths.size()) / B_;
  if (keys.size() != static_cast<size_t>(B_ * n_ * m_) || values.size() != keys.size())
    throw ShapeError("SetMemory: keys and values must be [B, n, m]");
  cap_ = n_ + 1;
  cwt_ = transposed(control_w, C, c_);
  s_.assign(static_cast<size_t>(B_ * cap_), 0.0f);
  kt_.assign(static_cast<size_t>(B_ * m_ * cap_), 0.0f);
  v_.assign(static_cast<size_t>(B_ * cap_ * m_), 0.0f);
  for (int64_t b = 0; b < B_; ++b) {
    std::copy(strengths.begin() + b * n_, strengths.begin() + (b + 1) * n_, s_.begin() + b * cap_);
    for (int64_t i = 0; i < n_; ++i)
      for (int64_t j = 0; j < m_; ++j)
        kt_[static_cast<size_t>((b * m_ + j) * cap_ + i)] =
            keys[static_cast<size_t>((b * n_ + i) * m_ + j)];
    std::copy(values.begin() + b * n_ * m_, values.begin() + (b + 1) * n_ * m_,
              v_.begin() + b * cap_ * m_);
  }
  ctrl_.resize(static_cast<size_t>(B_ * C));
  de_.resize(static_cast<size_t>(n_));
  dq_.resize(static_cast<size_t>(n_));
  r_.resize(static_cast<size_t>(m_));
}

namespace {
// Σ x_i over n floats in 16 lanes (vectorised; a fixed order).
float lane_sum_float(const float* x, int64_t n) {
  float acc[fastmath::kLanes] = {};
  int64_t i = 0;
  for (; i + fastmath::kLanes <= n; i += fastmath::kLanes)
    for (int l = 0; l < fastmath::kLanes; ++l) acc[l] += x[i + l];
  for (int l = 0; i < n; ++i, ++l) acc[l] += x[i];
  for (int w = fastmath::kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// One row's control layer, o = bias + Σ_j h_j Wᵀ_j: axpys of the transposed weights Wᵀ [c, C]
// over the C = bias.size() outputs (the set's and the stack's).
void control_row(const float* wt, const std::vector<float>& bias, const float* h, int64_t c,
                 float* __restrict__ o) {
  const int64_t C = static_cast<int64_t>(bias.size());
  std::copy(bias.begin(), bias.end(), o);
  for (int64_t j = 0; j < c; ++j) {
    const float hj = h[j];
    const float* __restrict__ w = wt + j * C;
    for (int64_t i = 0; i < C; ++i) o[i] += hj * w[i];
  }
}
}  // namespace

int64_t SetMemory::access(const float* h, float* read) {
  const int64_t m = m_, n = n_, c = c_, C = 3 + 4 * m, cap = cap_;
  // (0) the control layer of every row: o_b = b_c + Σ_j h_bj W^T_j (axpys over the outputs)
  for (int64_t b = 0; b < B_; ++b) {
    float* o = ctrl_.data() + b * C;
    control_row(cwt_.data(), cb_, h + b * c, c, o);
    for (int64_t i = 2; i < 2 + 4 * m; ++i) o[i] = fastmath::fast_tanh(o[i]);
  }
  float* __restrict__ de = de_.data();
  float* __restrict__ dq = dq_.data();
  float* __restrict__ r = r_.data();
  for (int64_t b = 0; b < B_; ++b) {
    const float* o = ctrl_.data() + b * C;
    const float w = 1.0f / (1.0f + fastmath::fast_exp(-o[0]));
    const float er = 1.0f / (1.0f + fastmath::fast_exp(-o[1]));
    const float *key = o + 2, *value = key + m, *q = value + m, *e = q + m;
    float* __restrict__ s = s_.data() + b * cap;
    float* __restrict__ kt = kt_.data() + b * m * cap;
    float* __restrict__ V = v_.data() + b * cap * m;
    // The content scores e·k_i and q·k_i, one pass over the keys.
    std::fill(de, de + n, 0.0f);
    std::fill(dq, dq + n, 0.0f);
    for (int64_t j = 0; j < m; ++j) {
      const float ej = e[j], qj = q[j];
      const float* __restrict__ kj = kt + j * cap;
      for (int64_t i = 0; i < n; ++i) {
        de[i] += ej * kj[i];
        dq[i] += qj * kj[i];
      }
    }
    // (1) the erase: a_i = s_i e^{e·k_i} / (1 + Σ_j s_j e^{e·k_j}), s_i ← s_i (1 − ε a_i)
    for (int64_t i = 0; i < n; ++i) de[i] = s[i] * fastmath::fast_exp(de[i]);
    const float f = er / (1.0f + lane_sum_float(de, n));
    // (2) the read's unnormalised weights s_i e^{q·k_i}, on the erased strengths
    for (int64_t i = 0; i < n; ++i) {
      s[i] *= 1.0f - f * de[i];
      dq[i] = s[i] * fastmath::fast_exp(dq[i]);
    }
    const float found = lane_sum_float(dq, n);
    const float inv = 1.0f / (fastmath::fast_exp(o[2 + 4 * m]) + found);
    std::fill(r, r + m, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      const float a = dq[i];
      const float* __restrict__ v = V + i * m;
      for (int64_t j = 0; j < m; ++j) r[j] += a * v[j];
    }
    for (int64_t j = 0; j < m; ++j) read[b * (m + 1) + j] = r[j] * inv;
    read[b * (m + 1) + m] = found * inv;
    // (3) the new slot, at position n
    s[n] = w;
    for (int64_t j = 0; j < m; ++j) kt[j * cap + n] = key[j];
    std::copy(value, value + m, V + n * m);
  }
  return B_ * (C * c + 4 * m + 2 * n * (m + 1) + n * (m + 1) + 2 * n);
}

StackMemory::StackMemory(StackKind kind, int64_t m, int64_t c, const std::vector<float>& control_w,
                         std::vector<float> control_b, int64_t batch,
                         const std::vector<float>& strengths, const std::vector<float>& values)
    : top_(kind == StackKind::Stack), m_(m), c_(c), B_(batch), cb_(std::move(control_b)) {
  if (kind == StackKind::Deque) throw ShapeError("StackMemory: a stack or a queue, not a deque");
  const int64_t C = 2 + m_;
  if (m_ < 1 || c_ < 1 || B_ < 1 || control_w.size() != static_cast<size_t>(C * c_) ||
      cb_.size() != static_cast<size_t>(C) || strengths.size() % static_cast<size_t>(B_))
    throw ShapeError("StackMemory: the control layer or the memory does not fit the widths");
  n_ = static_cast<int64_t>(strengths.size()) / B_;
  if (values.size() != static_cast<size_t>(B_ * n_ * m_))
    throw ShapeError("StackMemory: the values must be [B, n, m]");
  cwt_ = transposed(control_w, C, c_);
  const int64_t cap = n_ + 1;
  s_.assign(static_cast<size_t>(B_ * cap), 0.0f);
  v_.assign(static_cast<size_t>(B_ * cap * m_), 0.0f);
  for (int64_t b = 0; b < B_; ++b) {
    std::copy(strengths.begin() + b * n_, strengths.begin() + (b + 1) * n_, s_.begin() + b * cap);
    std::copy(values.begin() + b * n_ * m_, values.begin() + (b + 1) * n_ * m_,
              v_.begin() + b * cap * m_);
  }
  ctrl_.resize(static_cast<size_t>(B_ * C));
}

int64_t StackMemory::access(const float* h, float* read) {
  const int64_t m = m_, n = n_, c = c_, C = 2 + m, cap = n + 1;
  // the control layer of every row, as the set's
  for (int64_t b = 0; b < B_; ++b) {
    float* o = ctrl_.data() + b * C;
    control_row(cwt_.data(), cb_, h + b * c, c, o);
    o[0] = 1.0f / (1.0f + fastmath::fast_exp(-o[0]));
    o[1] = 1.0f / (1.0f + fastmath::fast_exp(-o[1]));
    for (int64_t i = 2; i < C; ++i) o[i] = fastmath::fast_tanh(o[i]);
  }
  for (int64_t b = 0; b < B_; ++b) {
    const float* o = ctrl_.data() + b * C;
    float* __restrict__ s = s_.data() + b * cap;
    float* __restrict__ V = v_.data() + b * cap * m;
    // (2) the pop of u from the end: s_i ← max(0, s_i − max(0, u − Σ_{j nearer the end} s_j)),
    // the sum over the strengths before the pop
    float nearer = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = top_ ? n - 1 - k : k;
      const float old = s[i];
      s[i] = std::max(0.0f, old - std::max(0.0f, o[1] - nearer));
      nearer += old;
    }
    // the push: the new value at position n (the top; for the queue, the far end)
    s[n] = o[0];
    std::copy(o + 2, o + 2 + m, V + n * m);
    // (3) the read from the end, up to a strength of 1
    float* __restrict__ r = read + b * m;
    std::fill(r, r + m, 0.0f);
    nearer = 0;
    for (int64_t k = 0; k < cap; ++k) {
      const int64_t i = top_ ? n - k : k;
      const float a = std::min(s[i], std::max(0.0f, 1.0f - nearer));
      nearer += s[i];
      const float* __restrict__ v = V + i * m;
      for (int64_t j = 0; j < m; ++j) r[j] += a * v[j];
    }
  }
  return B_ * (C * c + C + 2 * n + cap * (m + 2));
}

}  // namespace attnkit::memory
