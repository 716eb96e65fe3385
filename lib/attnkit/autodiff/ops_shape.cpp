// Indexing and shape ops: embedding, concat, stack, slice, index, reshape, transpose,
// permute, select_rows, mask_rows.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"

namespace attnkit::ad {

namespace {

// A tensor seen as [outer, dim(axis), inner].
struct Split3 {
  int64_t outer = 1, mid = 1, inner = 1;
};
Split3 split(const Shape& s, int axis) {
  Split3 p;
  for (int i = 0; i < axis; ++i) p.outer *= s[static_cast<size_t>(i)];
  p.mid = s[static_cast<size_t>(axis)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) p.inner *= s[i];
  return p;
}

}  // namespace

Var embedding(Var table, const std::vector<int32_t>& ids, Shape lead) {
  Tape& t = table.tape();
  const Tensor& T = table.value();
  if (T.rank() != 2)
    throw ShapeError("embedding: table must be [V, d], got " + shape_str(T.shape()));
  const int64_t V = T.dim(0), d = T.dim(1), n = static_cast<int64_t>(ids.size());
  if (lead.empty()) lead = {n};
  if (shape_numel(lead) != n)
    throw ShapeError("embedding: " + std::to_string(n) + " ids do not fill shape " +
                     shape_str(lead));
  for (int64_t i = 0; i < n; ++i)
    if (ids[static_cast<size_t>(i)] < 0 || ids[static_cast<size_t>(i)] >= V)
      throw DataError("embedding: id " + std::to_string(ids[static_cast<size_t>(i)]) +
                      " at position " + std::to_string(i) + " is outside [0, " + std::to_string(V) +
                      ")");
  Shape os = lead;
  os.push_back(d);
  Tensor y = t.alloc(os);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(y.data() + i * d, T.data() + ids[static_cast<size_t>(i)] * d,
                static_cast<size_t>(d) * sizeof(float));
  auto idp = std::make_shared<std::vector<int32_t>>(ids);
  return t.push(std::move(y), {table}, [table, idp, d](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* gt = t.grad(table).data();
    for (size_t i = 0; i < idp->size(); ++i) {
      float* row = gt + (*idp)[i] * d;
      const float* pg = g.data() + static_cast<int64_t>(i) * d;
      for (int64_t j = 0; j < d; ++j) row[j] += pg[j];
    }
  });
}

Var concat(const std::vector<Var>& xs, int axis) {
  if (xs.empty()) throw Error("concat of no tensors");
  Tape& t = xs[0].tape();
  const Shape& s0 = xs[0].value().shape();
  const int ax = detail::norm_axis(axis, static_cast<int>(s0.size()), s0);
  Shape os = s0;
  os[static_cast<size_t>(ax)] = 0;
  for (const Var& x : xs) {
    detail::tape_of(xs[0], x);
    const Shape& s = x.value().shape();
    bool ok = s.size() == s0.size();
    for (size_t i = 0; ok && i < s.size(); ++i)
      if (static_cast<int>(i) != ax && s[i] != s0[i]) ok = false;
    if (!ok)
      throw ShapeError("concat along axis " + std::to_string(axis) + ": shapes " + shape_str(s0) +
                       " and " + shape_str(s) + " do not fit");
    os[static_cast<size_t>(ax)] += s[static_cast<size_t>(ax)];
  }
  const Split3 po = split(os, ax);
  Tensor y = t.alloc(os);
  std::vector<int64_t> offs;
  int64_t off = 0;
  for (const Var& x : xs) {
    const Split3 p = split(x.value().shape(), ax);
    const int64_t blk = p.mid * p.inner;
    for (int64_t o = 0; o < p.outer; ++o)
      std::memcpy(y.data() + o * po.mid * po.inner + off * po.inner, x.value().data() + o * blk,
                  static_cast<size_t>(blk) * sizeof(float));
    offs.push_back(off);
    off += p.mid;
  }
  return t.push(std::move(y), xs, [xs, offs, ax, po](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    for (size_t k = 0; k < xs.size(); ++k) {
      if (!t.requires_grad(xs[k])) continue;
      Tensor& gx = t.grad(xs[k]);
      const Split3 p = split(gx.shape(), ax);
      const int64_t blk = p.mid * p.inner;
      for (int64_t o = 0; o < p.outer; ++o) {
        const float* src = g.data() + o * po.mid * po.inner + offs[k] * po.inner;
        float* dst = gx.data() + o * blk;
        for (int64_t j = 0; j < blk; ++j) dst[j] += src[j];
      }
    }
  });
}

Var stack(const std::vector<Var>& xs, int axis) {
  if (xs.empty()) throw Error("stack of no tensors");
  const Shape& s0 = xs[0].value().shape();
  const int r = static_cast<int>(s0.size()) + 1;
  const int ax = detail::norm_axis(axis, r, s0);
  std::vector<Var> ys;
  ys.reserve(xs.size());
  for (const Var& x : xs) {
    if (x.value().shape() != s0)
      throw ShapeError("stack: shapes " + shape_str(s0) + " and " + shape_str(x.value().shape()) +
                       " differ");
    Shape s = s0;
    s.insert(s.begin() + ax, 1);
    ys.push_back(reshape(x, s));
  }
  return concat(ys, ax);
}

Var slice(Var x, int axis, int64_t begin, int64_t end) {
  Tape& t = x.tape();
  const Shape& s = x.value().shape();
  const int ax = detail::norm_axis(axis, static_cast<int>(s.size()), s);
  const Split3 p = split(s, ax);
  if (begin < 0 || end < begin || end > p.mid)
    throw ShapeError("slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of axis " +
                     std::to_string(axis) + " of shape " + shape_str(s));
  Shape os = s;
  os[static_cast<size_t>(ax)] = end - begin;
  const int64_t len = (end - begin) * p.inner;
  Tensor y = t.alloc(os);
  for (int64_t o = 0; o < p.outer; ++o)
    std::memcpy(y.data() + o * len, x.value().data() + (o * p.mid + begin) * p.inner,
                static_cast<size_t>(len) * sizeof(float));
  return t.push(std::move(y), {x}, [x, p, begin, len](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* gx = t.grad(x).data();
    for (int64_t o = 0; o < p.outer; ++o) {
      float* dst = gx + (o * p.mid + begin) * p.inner;
      const float* src = g.data() + o * len;
      for (int64_t j = 0; j < len; ++j) dst[j] += src[j];
    }
  });
}

Var index(Var x, int64_t i) {
  const Shape& s = x.value().shape();
  if (s.empty() || i < 0 || i >= s[0])
    throw ShapeError("index " + std::to_string(i) + " out of range for shape " + shape_str(s));
  Tape& t = x.tape();
  Shape os(s.begin() + 1, s.end());
  const int64_t len = shape_numel(os);
  Tensor y = t.alloc(os);
  std::memcpy(y.data(), x.value().data() + i * len, static_cast<size_t>(len) * sizeof(float));
  return t.push(std::move(y), {x}, [x, i, len](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* gx = t.grad(x).data() + i * len;
    for (int64_t j = 0; j < len; ++j) gx[j] += g[j];
  });
}

Var reshape(Var x, Shape shape) {
  Tape& t = x.tape();
  if (shape_numel(shape) != x.value().size())
    throw ShapeError("cannot reshape " + shape_str(x.value().shape()) + " to " + shape_str(shape));
  Tensor y = t.alloc(shape);
  std::copy(x.value().values().begin(), x.value().values().end(), y.values().begin());
  return t.push(std::move(y), {x}, [x](Tape& t, Var out) { detail::acc(t.grad(x), t.grad(out)); });
}

Var permute(Var x, const std::vector<int>& perm) {
  Tape& t = x.tape();
  const Shape& s = x.value().shape();
  const int r = static_cast<int>(s.size());
  std::vector<int> seen(static_cast<size_t>(r), 0);
  bool ok = static_cast<int>(perm.size()) == r;
  for (int p : perm) {
    if (!ok || p < 0 || p >= r || seen[static_cast<size_t>(p)]++) ok = false;
  }
  if (!ok) throw ShapeError("permute: not a permutation of the axes of " + shape_str(s));
  // Input strides, then the output's dims and the matching input strides, padded to rank 4.
  std::vector<int64_t> st(static_cast<size_t>(r), 1);
  for (int i = r - 2; i >= 0; --i)
    st[static_cast<size_t>(i)] = st[static_cast<size_t>(i) + 1] * s[static_cast<size_t>(i) + 1];
  int64_t d[4] = {1, 1, 1, 1}, is[4] = {0, 0, 0, 0};
  Shape os;
  for (int i = 0; i < r; ++i) {
    const int k = 4 - r + i;
    d[k] = s[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    is[k] = st[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    os.push_back(d[k]);
  }
  struct Geo {
    int64_t d[4], is[4];
  } geo{{d[0], d[1], d[2], d[3]}, {is[0], is[1], is[2], is[3]}};
  auto walk = [](const Geo& q, auto f) {
    int64_t o = 0;
    for (int64_t a = 0; a < q.d[0]; ++a)
      for (int64_t b = 0; b < q.d[1]; ++b)
        for (int64_t c = 0; c < q.d[2]; ++c) {
          const int64_t base = a * q.is[0] + b * q.is[1] + c * q.is[2];
          for (int64_t e = 0; e < q.d[3]; ++e, ++o) f(o, base + e * q.is[3]);
        }
  };
  Tensor y = t.alloc(os);
  const float* px = x.value().data();
  float* py = y.data();
  walk(geo, [&](int64_t o, int64_t i) { py[o] = px[i]; });
  return t.push(std::move(y), {x}, [x, geo, walk](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    float* gx = t.grad(x).data();
    walk(geo, [&](int64_t o, int64_t i) { gx[i] += g[o]; });
  });
}

Var transpose(Var x) {
  const int r = x.value().rank();
  if (r < 2)
    throw ShapeError("transpose needs rank 2 or more, got " + shape_str(x.value().shape()));
  std::vector<int> perm(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[static_cast<size_t>(r - 1)], perm[static_cast<size_t>(r - 2)]);
  return permute(x, perm);
}

Var select_rows(const std::vector<uint8_t>& keep, Var a, Var b) {
  Tape& t = detail::tape_of(a, b);
  detail::need_same_shape("select_rows", a.value(), b.value());
  const int64_t n = detail::last_dim(a.value()), rows = detail::lead_rows(a.value());
  if (static_cast<int64_t>(keep.size()) != rows)
    throw ShapeError("select_rows: " + std::to_string(keep.size()) + " flags for rows of " +
                     shape_str(a.value().shape()));
  Tensor y = t.alloc(a.value().shape());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(y.data() + r * n, (keep[static_cast<size_t>(r)] ? a : b).value().data() + r * n,
                static_cast<size_t>(n) * sizeof(float));
  auto kp = std::make_shared<std::vector<uint8_t>>(keep);
  return t.push(std::move(y), {a, b}, [kp, a, b, n](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* ga = t.requires_grad(a) ? t.grad(a).data() : nullptr;
    float* gb = t.requires_grad(b) ? t.grad(b).data() : nullptr;
    for (size_t r = 0; r < kp->size(); ++r) {
      float* dst = (*kp)[r] ? ga : gb;
      if (!dst) continue;
      const int64_t o = static_cast<int64_t>(r) * n;
      for (int64_t j = 0; j < n; ++j) dst[o + j] += g[o + j];
    }
  });
}

Var mask_rows(Var x, const std::vector<uint8_t>& keep) {
  Tape& t = x.tape();
  const int64_t n = detail::last_dim(x.value()), rows = detail::lead_rows(x.value());
  if (static_cast<int64_t>(keep.size()) != rows)
    throw ShapeError("mask_rows: " + std::to_string(keep.size()) + " flags for rows of " +
                     shape_str(x.value().shape()));
  Tensor y = t.alloc(x.value().shape());
  for (int64_t r = 0; r < rows; ++r) {
    if (keep[static_cast<size_t>(r)])
      std::memcpy(y.data() + r * n, x.value().data() + r * n,
                  static_cast<size_t>(n) * sizeof(float));
    else
      std::fill(y.data() + r * n, y.data() + (r + 1) * n, 0.0f);
  }
  auto kp = std::make_shared<std::vector<uint8_t>>(keep);
  return t.push(std::move(y), {x}, [kp, x, n](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    float* gx = t.grad(x).data();
    for (size_t r = 0; r < kp->size(); ++r) {
      if (!(*kp)[r]) continue;
      const int64_t o = static_cast<int64_t>(r) * n;
      for (int64_t j = 0; j < n; ++j) gx[o + j] += g[o + j];
    }
  });
}

}  // namespace attnkit::ad
