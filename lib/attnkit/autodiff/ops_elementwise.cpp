// Elementwise ops: broadcasting binary ops, scalar ops and unary functions.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::ad {

namespace fm = fastmath;

namespace {

// ---- broadcasting: both shapes padded on the left to rank 4; a stride of 0 repeats.
struct Bcast {
  int64_t d[4];
  int64_t sa[4], sb[4];
  Shape out;
  bool same = false;  // a, b and out all the same shape
};

Bcast broadcast(const Shape& a, const Shape& b, const char* op) {
  Bcast p;
  const size_t r = std::max(a.size(), b.size());
  int64_t da[4], db[4];
  for (int i = 0; i < 4; ++i) {
    const int k = i - (4 - static_cast<int>(r));
    const int ka = k - static_cast<int>(r - a.size()), kb = k - static_cast<int>(r - b.size());
    da[i] = (k >= 0 && ka >= 0) ? a[static_cast<size_t>(ka)] : 1;
    db[i] = (k >= 0 && kb >= 0) ? b[static_cast<size_t>(kb)] : 1;
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " do not broadcast");
    p.d[i] = std::max(da[i], db[i]);
    if (da[i] == 0 || db[i] == 0) p.d[i] = 0;
  }
  int64_t ssa = 1, ssb = 1;
  for (int i = 3; i >= 0; --i) {
    p.sa[i] = da[i] == 1 ? 0 : ssa;
    p.sb[i] = db[i] == 1 ? 0 : ssb;
    ssa *= da[i];
    ssb *= db[i];
  }
  for (size_t i = 4 - r; i < 4; ++i) p.out.push_back(p.d[i]);
  p.same = a == b;
  return p;
}

// f(o, ia, ib) for every output element o with its operand offsets.
template <class F>
void each(const Bcast& p, F f) {
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < p.d[0]; ++i0)
    for (int64_t i1 = 0; i1 < p.d[1]; ++i1)
      for (int64_t i2 = 0; i2 < p.d[2]; ++i2) {
        const int64_t ba = i0 * p.sa[0] + i1 * p.sa[1] + i2 * p.sa[2];
        const int64_t bb = i0 * p.sb[0] + i1 * p.sb[1] + i2 * p.sb[2];
        const int64_t s3a = p.sa[3], s3b = p.sb[3];
        for (int64_t i3 = 0; i3 < p.d[3]; ++i3, ++o) f(o, ba + i3 * s3a, bb + i3 * s3b);
      }
}

// A broadcasting binary op: y = F(a, b); backward ga += g · DA(a, b, y), gb += g · DB(a, b, y).
template <class F, class DA, class DB>
Var binary(Var a, Var b, const char* name, F f, DA da, DB db) {
  Tape& t = detail::tape_of(a, b);
  const Tensor& A = a.value();
  const Tensor& B = b.value();
  const Bcast p = broadcast(A.shape(), B.shape(), name);
  Tensor y = t.alloc(p.out);
  float* py = y.data();
  const float* pa = A.data();
  const float* pb = B.data();
  if (p.same) {
    const int64_t n = y.size();
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb[i]);
  } else {
    each(p, [&](int64_t o, int64_t ia, int64_t ib) { py[o] = f(pa[ia], pb[ib]); });
  }
  return t.push(std::move(y), {a, b}, [a, b, p, da, db](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const float* y = t.value(out).data();
    const float* pa = t.value(a).data();
    const float* pb = t.value(b).data();
    // Every element of an operand's gradient gets one contribution here (a broadcast
    // operand: one sum), so a new gradient buffer is written, not zeroed and added to (the
    // same bits: Tape::grad(v, assign)). a and b may be one Var: b's then adds to a's.
    auto side = [&](Var v, float* gv, bool assign, auto dv, auto at) {
      const int64_t nv = t.value(v).size(), n = t.value(out).size();
      auto run = [&](auto put) {
        if (p.same) {
          for (int64_t i = 0; i < n; ++i) put(gv[i], g[i] * dv(pa[i], pb[i], y[i]));
        } else if (nv < n) {  // broadcast: a sum over repeats, accumulated in double
          std::vector<double> s(static_cast<size_t>(nv), 0.0);
          each(p, [&](int64_t o, int64_t ia, int64_t ib) {
            s[static_cast<size_t>(at(ia, ib))] +=
                static_cast<double>(g[o]) * dv(pa[ia], pb[ib], y[o]);
          });
          for (size_t i = 0; i < s.size(); ++i) put(gv[i], static_cast<float>(s[i]));
        } else {
          each(p, [&](int64_t o, int64_t ia, int64_t ib) {
            put(gv[at(ia, ib)], g[o] * dv(pa[ia], pb[ib], y[o]));
          });
        }
      };
      if (assign)
        run([](float& d, float x) { d = x; });
      else
        run([](float& d, float x) { d += x; });
    };
    bool assign = false;
    if (t.requires_grad(a)) {
      float* ga = t.grad(a, assign).data();
      side(a, ga, assign, da, [](int64_t ia, int64_t) { return ia; });
    }
    if (t.requires_grad(b)) {
      float* gb = t.grad(b, assign).data();
      side(b, gb, assign, db, [](int64_t, int64_t ib) { return ib; });
    }
  });
}

// A unary op: y = F(x); backward gx += g · D(x, y).
template <class F, class D>
Var unary(Var x, F f, D d) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  Tensor y = t.alloc(X.shape());
  const float* px = X.data();
  float* py = y.data();
  const int64_t n = X.size();
  for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
  return t.push(std::move(y), {x}, [x, d, n](Tape& t, Var out) {
    const float* g = t.grad(out).data();
    const float* y = t.value(out).data();
    const float* px = t.value(x).data();
    bool assign = false;  // every element written: a new buffer is not zeroed first
    float* gx = t.grad(x, assign).data();
    if (assign)
      for (int64_t i = 0; i < n; ++i) gx[i] = g[i] * d(px[i], y[i]);
    else
      for (int64_t i = 0; i < n; ++i) gx[i] += g[i] * d(px[i], y[i]);
  });
}

}  // namespace

Var add(Var a, Var b) {
  return binary(
      a, b, "add", [](float x, float y) { return x + y; }, [](float, float, float) { return 1.0f; },
      [](float, float, float) { return 1.0f; });
}
Var sub(Var a, Var b) {
  return binary(
      a, b, "sub", [](float x, float y) { return x - y; }, [](float, float, float) { return 1.0f; },
      [](float, float, float) { return -1.0f; });
}
Var mul(Var a, Var b) {
  return binary(
      a, b, "mul", [](float x, float y) { return x * y; }, [](float, float y, float) { return y; },
      [](float x, float, float) { return x; });
}
Var div(Var a, Var b) {
  return binary(
      a, b, "div", [](float x, float y) { return x / y; },
      [](float, float y, float) { return 1.0f / y; },
      [](float, float y, float r) { return -r / y; });
}
Var pow(Var a, Var b) {
  return binary(
      a, b, "pow", [](float x, float y) { return std::pow(x, y); },
      [](float x, float y, float) {
        return x > 0.0f ? y * std::pow(x, y - 1.0f) : (y == 1.0f ? 1.0f : 0.0f);
      },
      [](float x, float, float r) { return x > 0.0f ? r * std::log(x) : 0.0f; });
}

Var add(Var a, float s) {
  return unary(
      a, [s](float x) { return x + s; }, [](float, float) { return 1.0f; });
}
Var mul(Var a, float s) {
  return unary(
      a, [s](float x) { return x * s; }, [s](float, float) { return s; });
}
Var neg(Var a) { return mul(a, -1.0f); }

Var tanh(Var x) {
  return unary(
      x, [](float v) { return fm::fast_tanh(v); }, [](float, float y) { return 1.0f - y * y; });
}
Var sigmoid(Var x) {
  return unary(
      x, [](float v) { return 1.0f / (1.0f + fm::fast_exp(-v)); },
      [](float, float y) { return y * (1.0f - y); });
}
Var relu(Var x) {
  return unary(
      x, [](float v) { return v > 0.0f ? v : 0.0f; },
      [](float v, float) { return v > 0.0f ? 1.0f : 0.0f; });
}
Var gelu(Var x) {
  return unary(
      x,
      [](float v) {
        const double d = v;
        return static_cast<float>(0.5 * d * (1.0 + std::erf(d * 0.70710678118654752)));
      },
      [](float v, float) {
        const double d = v;
        const double cdf = 0.5 * (1.0 + std::erf(d * 0.70710678118654752));
        const double pdf = 0.39894228040143268 * std::exp(-0.5 * d * d);
        return static_cast<float>(cdf + d * pdf);
      });
}
Var softplus(Var x) {
  // ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|); derivative σ(x).
  return unary(
      x, [](float v) { return std::max(v, 0.0f) + std::log1p(std::exp(-std::fabs(v))); },
      [](float v, float) { return 1.0f / (1.0f + std::exp(-v)); });
}
Var exp(Var x) {
  return unary(
      x, [](float v) { return std::exp(v); }, [](float, float y) { return y; });
}
Var log(Var x) {
  return unary(
      x, [](float v) { return std::log(v); }, [](float v, float) { return 1.0f / v; });
}
Var sqrt(Var x) {
  return unary(
      x, [](float v) { return std::sqrt(v); }, [](float, float y) { return 0.5f / y; });
}
Var square(Var x) {
  return unary(
      x, [](float v) { return v * v; }, [](float v, float) { return 2.0f * v; });
}

}  // namespace attnkit::ad
