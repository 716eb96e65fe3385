#include "attnkit/memory/stackmem/ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "attnkit/core/error.h"

namespace attnkit::memory {

using ad::Tape;
using ad::Var;

namespace {

// Column i of a row, k-th nearest the end (k = 0 the end itself).
inline int64_t col(int64_t k, int64_t n, bool from_top) { return from_top ? n - 1 - k : k; }

// above[i] = Σ of the strengths nearer the end than i, for one row.
void sums_above(const float* s, int64_t n, bool from_top, float* above) {
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = col(k, n, from_top);
    above[i] = acc;
    acc += s[i];
  }
}

// s[j] += Σ over i farther from the end than j of g_above[i]: the backward of sums_above.
void add_sums_above_grad(const float* g_above, int64_t n, bool from_top, float* gs) {
  float acc = 0.0f;
  for (int64_t k = n - 1; k >= 0; --k) {
    const int64_t i = col(k, n, from_top);
    gs[i] += acc;
    acc += g_above[i];
  }
}

}  // namespace

Var stack_pop(Var s, Var u, bool from_top) {
  Tape& t = s.tape();
  if (&u.tape() != &t) throw Error("stack_pop: operands from two different tapes");
  const Tensor& S = s.value();
  const Tensor& U = u.value();
  if (S.rank() != 2 || U.shape() != Shape{S.dim(0), 1})
    throw ShapeError("stack_pop: strengths must be [B, n] and the pop [B, 1]; got " +
                     shape_str(S.shape()) + ", " + shape_str(U.shape()));
  const int64_t B = S.dim(0), n = S.dim(1);
  Tensor y = t.alloc({B, n});
  std::vector<float> above(static_cast<size_t>(n));
  for (int64_t b = 0; b < B; ++b) {
    const float* ps = S.data() + b * n;
    float* py = y.data() + b * n;
    sums_above(ps, n, from_top, above.data());
    for (int64_t i = 0; i < n; ++i)
      py[i] = std::max(0.0f, ps[i] - std::max(0.0f, U[b] - above[static_cast<size_t>(i)]));
  }
  return t.push(std::move(y), {s, u}, [s, u, B, n, from_top](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const Tensor& S = t.value(s);
    const Tensor& U = t.value(u);
    float* gs = t.requires_grad(s) ? t.grad(s).data() : nullptr;
    float* gu = t.requires_grad(u) ? t.grad(u).data() : nullptr;
    std::vector<float> above(static_cast<size_t>(n)), g_above(static_cast<size_t>(n));
    for (int64_t b = 0; b < B; ++b) {
      const float* ps = S.data() + b * n;
      const float* gb = g + b * n;
      sums_above(ps, n, from_top, above.data());
      float g_u = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const float z = U[b] - above[static_cast<size_t>(i)];
        const float p = std::max(0.0f, z);
        // out = relu(s − relu(z)): d/ds = [s − p > 0], d/dz = −[s − p > 0]·[z > 0]
        const float gi = ps[i] - p > 0.0f ? gb[i] : 0.0f;
        if (gs) gs[b * n + i] += gi;
        const float gz = z > 0.0f ? -gi : 0.0f;
        g_u += gz;
        g_above[static_cast<size_t>(i)] = -gz;  // z = u − above
      }
      if (gu) gu[b] += g_u;
      if (gs) add_sums_above_grad(g_above.data(), n, from_top, gs + b * n);
    }
  });
}

Var stack_read(Var s, Var values, bool from_top) {
  Tape& t = s.tape();
  if (&values.tape() != &t) throw Error("stack_read: operands from two different tapes");
  const Tensor& S = s.value();
  const Tensor& V = values.value();
  if (S.rank() != 2 || V.rank() != 3 || V.dim(0) != S.dim(0) || V.dim(1) != S.dim(1))
    throw ShapeError("stack_read: strengths must be [B, n] and the values [B, n, m]; got " +
                     shape_str(S.shape()) + ", " + shape_str(V.shape()));
  const int64_t B = S.dim(0), n = S.dim(1), m = V.dim(2);
  Tensor y = t.alloc({B, m});
  std::fill(y.data(), y.data() + y.size(), 0.0f);
  std::vector<float> above(static_cast<size_t>(n));
  for (int64_t b = 0; b < B; ++b) {
    const float* ps = S.data() + b * n;
    float* py = y.data() + b * m;
    sums_above(ps, n, from_top, above.data());
    for (int64_t i = 0; i < n; ++i) {
      const float room = std::max(0.0f, 1.0f - above[static_cast<size_t>(i)]);
      const float w = ps[i] - std::max(0.0f, ps[i] - room);
      if (w == 0.0f) continue;
      const float* pv = V.data() + (b * n + i) * m;
      for (int64_t j = 0; j < m; ++j) py[j] += w * pv[j];
    }
  }
  return t.push(std::move(y), {s, values}, [s, values, B, n, m, from_top](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const Tensor& S = t.value(s);
    const Tensor& V = t.value(values);
    float* gs = t.requires_grad(s) ? t.grad(s).data() : nullptr;
    float* gv = t.requires_grad(values) ? t.grad(values).data() : nullptr;
    std::vector<float> above(static_cast<size_t>(n)), g_above(static_cast<size_t>(n));
    for (int64_t b = 0; b < B; ++b) {
      const float* ps = S.data() + b * n;
      const float* gb = g + b * m;
      sums_above(ps, n, from_top, above.data());
      for (int64_t i = 0; i < n; ++i) {
        const float x = 1.0f - above[static_cast<size_t>(i)];
        const float room = std::max(0.0f, x);
        const bool capped = ps[i] - room > 0.0f;  // w = min(s, room) = room
        const float w = capped ? room : ps[i];
        const float* pv = V.data() + (b * n + i) * m;
        if (gv && w != 0.0f) {
          float* pg = gv + (b * n + i) * m;
          for (int64_t j = 0; j < m; ++j) pg[j] += w * gb[j];
        }
        float gw = 0.0f;
        for (int64_t j = 0; j < m; ++j) gw += gb[j] * pv[j];
        if (gs && !capped) gs[b * n + i] += gw;
        // room = relu(1 − above): d room / d above = −[1 − above > 0]
        g_above[static_cast<size_t>(i)] = capped && x > 0.0f ? -gw : 0.0f;
      }
      if (gs) add_sums_above_grad(g_above.data(), n, from_top, gs + b * n);
    }
  });
}

}  // namespace attnkit::memory
