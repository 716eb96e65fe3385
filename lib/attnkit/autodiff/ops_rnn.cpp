// Fused pointwise steps of the LSTM and GRU cells: one node (and one pass over memory) where
// separate ops would take eight or more.
#include <algorithm>

#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::ad {

namespace fm = fastmath;

namespace {
inline float sigm(float x) { return 1.0f / (1.0f + fm::fast_exp(-x)); }

void need_gates(const char* op, const Tensor& g, int64_t parts, const Tensor* c) {
  const bool ok =
      g.rank() == 2 && g.dim(1) % parts == 0 &&
      (!c || (c->rank() == 2 && c->dim(0) == g.dim(0) && c->dim(1) * parts == g.dim(1)));
  if (!ok)
    throw ShapeError(std::string(op) + ": gates " + shape_str(g.shape()) +
                     (c ? " and state " + shape_str(c->shape()) : std::string()) +
                     " do not fit [B, " + std::to_string(parts) + "h]" + (c ? " and [B, h]" : ""));
}
}  // namespace

Var lstm_gates(Var g) {
  Tape& t = g.tape();
  const Tensor& G = g.value();
  need_gates("lstm_gates", G, 4, nullptr);
  const int64_t B = G.dim(0), h = G.dim(1) / 4;
  Tensor y = t.alloc(G.shape());
  for (int64_t b = 0; b < B; ++b) {
    const float* pg = G.data() + b * 4 * h;
    float* py = y.data() + b * 4 * h;
    for (int64_t j = 0; j < 2 * h; ++j) py[j] = sigm(pg[j]);
    for (int64_t j = 2 * h; j < 3 * h; ++j) py[j] = fm::fast_tanh(pg[j]);
    for (int64_t j = 3 * h; j < 4 * h; ++j) py[j] = sigm(pg[j]);
  }
  return t.push(std::move(y), {g}, [g, B, h](Tape& t, Var out) {
    const float* y = t.value(out).data();
    const float* go = t.grad(out).data();
    bool assign = false;
    float* gg = t.grad(g, assign).data();
    // The gradient at the gates' inputs; assigned (a new buffer) or added.
    auto pass = [&](auto put) {
      for (int64_t b = 0; b < B; ++b) {
        const int64_t o = b * 4 * h;
        for (int64_t j = 0; j < 2 * h; ++j)
          put(gg[o + j], go[o + j] * y[o + j] * (1.0f - y[o + j]));
        for (int64_t j = 2 * h; j < 3 * h; ++j)
          put(gg[o + j], go[o + j] * (1.0f - y[o + j] * y[o + j]));
        for (int64_t j = 3 * h; j < 4 * h; ++j)
          put(gg[o + j], go[o + j] * y[o + j] * (1.0f - y[o + j]));
      }
    };
    if (assign)
      pass([](float& d, float v) { d = v; });
    else
      pass([](float& d, float v) { d += v; });
  });
}

Var lstm_cell_c(Var a, Var c) {
  Tape& t = detail::tape_of(a, c);
  need_gates("lstm_cell_c", a.value(), 4, &c.value());
  const int64_t B = c.value().dim(0), h = c.value().dim(1);
  Tensor y = t.alloc(c.value().shape());
  const float* pa = a.value().data();
  const float* pc = c.value().data();
  for (int64_t b = 0; b < B; ++b) {
    const float* ab = pa + b * 4 * h;
    for (int64_t j = 0; j < h; ++j)
      y[b * h + j] = ab[h + j] * pc[b * h + j] + ab[j] * ab[2 * h + j];
  }
  return t.push(std::move(y), {a, c}, [a, c, B, h](Tape& t, Var out) {
    const float* go = t.grad(out).data();
    const float* pa = t.value(a).data();
    const float* pc = t.value(c).data();
    if (t.requires_grad(a)) {
      float* ga = t.grad(a).data();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < h; ++j) {
          const float g = go[b * h + j];
          const int64_t o = b * 4 * h;
          ga[o + j] += g * pa[o + 2 * h + j];  // d/di = g
          ga[o + h + j] += g * pc[b * h + j];  // d/df = c
          ga[o + 2 * h + j] += g * pa[o + j];  // d/dg = i
        }
    }
    if (t.requires_grad(c)) {
      bool assign = false;
      float* gc = t.grad(c, assign).data();
      if (assign)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < h; ++j) gc[b * h + j] = go[b * h + j] * pa[b * 4 * h + h + j];
      else
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < h; ++j) gc[b * h + j] += go[b * h + j] * pa[b * 4 * h + h + j];
    }
  });
}

Var lstm_cell_h(Var a, Var c) {
  Tape& t = detail::tape_of(a, c);
  need_gates("lstm_cell_h", a.value(), 4, &c.value());
  const int64_t B = c.value().dim(0), h = c.value().dim(1);
  Tensor y = t.alloc(c.value().shape());
  const float* pa = a.value().data();
  const float* pc = c.value().data();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < h; ++j)
      y[b * h + j] = pa[b * 4 * h + 3 * h + j] * fm::fast_tanh(pc[b * h + j]);
  return t.push(std::move(y), {a, c}, [a, c, B, h](Tape& t, Var out) {
    const float* go = t.grad(out).data();
    const float* pa = t.value(a).data();
    const float* pc = t.value(c).data();
    // a's gradient: this op writes its o quarter only (lstm_cell_c the others); a new
    // buffer gets zeros in the other three quarters, not everywhere.
    bool new_a = false, assign = false;
    float* ga = t.requires_grad(a) ? t.grad(a, new_a).data() : nullptr;
    if (new_a)
      for (int64_t b = 0; b < B; ++b) std::fill(ga + b * 4 * h, ga + b * 4 * h + 3 * h, 0.0f);
    float* gc = t.requires_grad(c) ? t.grad(c, assign).data() : nullptr;
    auto pass = [&](auto put_a, auto put_c) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < h; ++j) {
          const float th = fm::fast_tanh(pc[b * h + j]), g = go[b * h + j];
          const float o = pa[b * 4 * h + 3 * h + j];
          if (ga) put_a(ga[b * 4 * h + 3 * h + j], g * th);
          if (gc) put_c(gc[b * h + j], g * o * (1.0f - th * th));
        }
    };
    auto set = [](float& d, float v) { d = v; };
    auto add = [](float& d, float v) { d += v; };
    if (new_a && assign)
      pass(set, set);
    else if (new_a)
      pass(set, add);
    else if (assign)
      pass(add, set);
    else
      pass(add, add);
  });
}

Var gru_cell(Var xp, Var hp, Var h) {
  Tape& t = detail::tape_of(xp, hp);
  detail::tape_of(xp, h);
  need_gates("gru_cell", xp.value(), 3, &h.value());
  detail::need_same_shape("gru_cell", xp.value(), hp.value());
  const int64_t B = h.value().dim(0), H = h.value().dim(1);
  Tensor y = t.alloc(h.value().shape());
  const float* px = xp.value().data();
  const float* ph = hp.value().data();
  const float* pp = h.value().data();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t o = b * 3 * H;
    for (int64_t j = 0; j < H; ++j) {
      const float r = sigm(px[o + j] + ph[o + j]);
      const float z = sigm(px[o + H + j] + ph[o + H + j]);
      const float n = fm::fast_tanh(px[o + 2 * H + j] + r * ph[o + 2 * H + j]);
      y[b * H + j] = (1.0f - z) * n + z * pp[b * H + j];
    }
  }
  return t.push(std::move(y), {xp, hp, h}, [xp, hp, h, B, H](Tape& t, Var out) {
    const float* go = t.grad(out).data();
    const float* px = t.value(xp).data();
    const float* ph = t.value(hp).data();
    const float* pp = t.value(h).data();
    float* gx = t.requires_grad(xp) ? t.grad(xp).data() : nullptr;
    float* gh = t.requires_grad(hp) ? t.grad(hp).data() : nullptr;
    float* gp = t.requires_grad(h) ? t.grad(h).data() : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t o = b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        const float r = sigm(px[o + j] + ph[o + j]);
        const float z = sigm(px[o + H + j] + ph[o + H + j]);
        const float n = fm::fast_tanh(px[o + 2 * H + j] + r * ph[o + 2 * H + j]);
        const float g = go[b * H + j];
        const float dn = g * (1.0f - z) * (1.0f - n * n);           // d/d(pre-tanh of n)
        const float dz = g * (pp[b * H + j] - n) * z * (1.0f - z);  // d/d(pre-σ of z)
        const float dr = dn * ph[o + 2 * H + j] * r * (1.0f - r);   // d/d(pre-σ of r)
        if (gx) {
          gx[o + j] += dr;
          gx[o + H + j] += dz;
          gx[o + 2 * H + j] += dn;
        }
        if (gh) {
          gh[o + j] += dr;
          gh[o + H + j] += dz;
          gh[o + 2 * H + j] += dn * r;
        }
        if (gp) gp[b * H + j] += g * z;
      }
    }
  });
}

}  // namespace attnkit::ad
