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

// One row of gru_cell's forward: y = h' from xp, hp [3H] and h [H]. gru_cell and
// gru_layer_forward share it, so that both give the same bits.
inline void gru_row(const float* px, const float* ph, const float* pp, float* y, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    const float r = sigm(px[j] + ph[j]);
    const float z = sigm(px[H + j] + ph[H + j]);
    const float n = fm::fast_tanh(px[2 * H + j] + r * ph[2 * H + j]);
    y[j] = (1.0f - z) * n + z * pp[j];
  }
}

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
  for (int64_t b = 0; b < B; ++b)
    gru_row(px + b * 3 * H, ph + b * 3 * H, pp + b * H, y.data() + b * H, H);
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

namespace attnkit::ad {

namespace {
// lstm_sequence's pointwise work on one row, on distinct arrays (restrict: vectorised).
// Forward: activates the gates a [4h] in place, then c ← f c + i g and h ← o tanh(c) (also
// into out), keeping tanh(c) in tc.
void lstm_row_forward(float* __restrict a, float* __restrict c, float* __restrict hs,
                      float* __restrict tc, float* __restrict out, int64_t h) {
  for (int64_t j = 0; j < 2 * h; ++j) a[j] = sigm(a[j]);
  for (int64_t j = 2 * h; j < 3 * h; ++j) a[j] = fm::fast_tanh(a[j]);
  for (int64_t j = 3 * h; j < 4 * h; ++j) a[j] = sigm(a[j]);
  for (int64_t j = 0; j < h; ++j) {
    const float cn = a[h + j] * c[j] + a[j] * a[2 * h + j];
    c[j] = cn;
    tc[j] = fm::fast_tanh(cn);
    const float hn = a[3 * h + j] * tc[j];
    hs[j] = hn;
    out[j] = hn;
  }
}
// Backward: from the gradients at the state after the step (dh + the output's go, dc), the
// gates' pre-activation gradient d [4h], and dc ← the gradient at the cell before the step.
void lstm_row_backward(const float* __restrict a, const float* __restrict ci,
                       const float* __restrict tc, const float* __restrict go,
                       const float* __restrict dh, float* __restrict dc, float* __restrict di,
                       float* __restrict df, float* __restrict dgg, float* __restrict dout,
                       int64_t h) {
  for (int64_t j = 0; j < h; ++j) {
    const float i = a[j], f = a[h + j], g = a[2 * h + j], o = a[3 * h + j];
    const float th = tc[j];
    const float dhj = dh[j] + go[j];
    const float dcj = dc[j] + dhj * o * (1.0f - th * th);
    di[j] = dcj * g * i * (1.0f - i);
    df[j] = dcj * ci[j] * f * (1.0f - f);
    dgg[j] = dcj * i * (1.0f - g * g);
    dout[j] = dhj * th * o * (1.0f - o);
    dc[j] = dcj * f;
  }
}
}  // namespace

Var lstm_sequence(Var p, Var h0, Var c0, Var whh, const std::vector<uint8_t>& keep, bool reverse) {
  Tape& t = detail::tape_of(p, h0);
  detail::tape_of(p, c0);
  detail::tape_of(p, whh);
  const Tensor& P = p.value();
  const Tensor& W = whh.value();
  const Tensor& H0 = h0.value();
  const Tensor& C0 = c0.value();
  const bool ok = P.rank() == 3 && P.dim(2) % 4 == 0 && H0.rank() == 2 && H0.dim(0) == P.dim(1) &&
                  H0.dim(1) * 4 == P.dim(2) && C0.shape() == H0.shape() && W.rank() == 2 &&
                  W.dim(0) == P.dim(2) && W.dim(1) == H0.dim(1);
  if (!ok)
    throw ShapeError("lstm_sequence: projections " + shape_str(P.shape()) + ", states " +
                     shape_str(H0.shape()) + " and " + shape_str(C0.shape()) + ", W_hh " +
                     shape_str(W.shape()) + " do not fit [T, B, 4h], [B, h], [4h, h]");
  const int64_t T = P.dim(0), B = P.dim(1), h = H0.dim(1), G = 4 * h;
  if (!keep.empty() && static_cast<int64_t>(keep.size()) != T * B)
    throw ShapeError("lstm_sequence: " + std::to_string(keep.size()) + " keep flags for " +
                     std::to_string(T) + " steps of " + std::to_string(B) + " rows");
  // Saved for backward, indexed by step s: the activated gates, the state before the step
  // (h, c) and tanh of the cell after it. Without a backward pass (decoding, or no input
  // needing a gradient) one step's gates and cell only, reused by every step: an encoding
  // then touches a fifth of the memory.
  const bool save = t.recording() && (t.requires_grad(p) || t.requires_grad(h0) ||
                                      t.requires_grad(c0) || t.requires_grad(whh));
  const int64_t Ts = save ? T : 1;
  Tensor* A = t.scratch({Ts, B, G});
  Tensor* Hin = save ? t.scratch({T, B, h}) : nullptr;
  Tensor* Cin = save ? t.scratch({T, B, h}) : nullptr;
  Tensor* Cout = t.scratch({Ts, B, h});
  Tensor y = t.alloc({T + 2, B, h});
  const int64_t bh = B * h;
  std::copy(H0.data(), H0.data() + bh, y.data() + T * bh);        // the running state lives in
  std::copy(C0.data(), C0.data() + bh, y.data() + (T + 1) * bh);  // the final rows
  float* hs = y.data() + T * bh;
  float* cs = y.data() + (T + 1) * bh;
  auto kept = [&](int64_t s, int64_t b) {
    return keep.empty() || keep[static_cast<size_t>(s * B + b)] != 0;
  };
  for (int64_t k = 0; k < T; ++k) {
    const int64_t s = reverse ? T - 1 - k : k;
    const int64_t at = save ? s : 0;  // the step's row of the saved tensors
    float* a = A->data() + at * B * G;
    if (save) {
      std::copy(hs, hs + bh, Hin->data() + s * bh);
      std::copy(cs, cs + bh, Cin->data() + s * bh);
    }
    std::copy(P.data() + s * B * G, P.data() + (s + 1) * B * G, a);
    gemm(Trans::No, Trans::Yes, 1.0f, detail::view(hs, B, h), detail::view(W.data(), G, h), 1.0f,
         detail::view(a, B, G));
    float* out = y.data() + s * bh;
    float* co = Cout->data() + at * bh;
    for (int64_t b = 0; b < B; ++b) {
      if (!kept(s, b)) {
        std::fill(out + b * h, out + (b + 1) * h, 0.0f);
        continue;
      }
      lstm_row_forward(a + b * G, cs + b * h, hs + b * h, co + b * h, out + b * h, h);
    }
  }
  return t.push(
      std::move(y), {p, h0, c0, whh},
      [p, h0, c0, whh, keep, reverse, A, Hin, Cin, Cout, T, B, h](Tape& t, Var out) {
        const int64_t G = 4 * h, bh = B * h;
        const Tensor& gy = t.grad(out);
        // dh, dc: the gradient at the running state, from the final rows on.
        Tensor& dh = *t.scratch({B, h});
        Tensor& dc = *t.scratch({B, h});
        Tensor& dprev = *t.scratch({B, h});
        std::copy(gy.data() + T * bh, gy.data() + (T + 1) * bh, dh.data());
        std::copy(gy.data() + (T + 1) * bh, gy.data() + (T + 2) * bh, dc.data());
        // The gates' pre-activation gradients, step by step: straight into p's
        // gradient when that is a new buffer.
        const bool need_p = t.requires_grad(p);
        bool assign_p = false;
        Tensor* gp = need_p ? &t.grad(p, assign_p) : nullptr;
        Tensor* own = assign_p ? nullptr : t.scratch({T, B, G});
        float* dg = assign_p ? gp->data() : own->data();
        const float* W = t.value(whh).data();
        auto kept = [&](int64_t s, int64_t b) {
          return keep.empty() || keep[static_cast<size_t>(s * B + b)] != 0;
        };
        for (int64_t k = T - 1; k >= 0; --k) {
          const int64_t s = reverse ? T - 1 - k : k;
          const float* a = A->data() + s * B * G;
          const float* ci = Cin->data() + s * bh;
          const float* co = Cout->data() + s * bh;
          const float* go = gy.data() + s * bh;
          float* d = dg + s * B * G;
          bool all = true;
          for (int64_t b = 0; b < B; ++b) {
            float* db = d + b * G;
            if (!kept(s, b)) {
              std::fill(db, db + G, 0.0f);
              all = false;
              continue;
            }
            lstm_row_backward(a + b * G, ci + b * h, co + b * h, go + b * h, dh.data() + b * h,
                              dc.data() + b * h, db, db + h, db + 2 * h, db + 3 * h, h);
          }
          // dh before the step: dg W_hh for the rows that stepped, unchanged for
          // the others.
          float* dst = all ? dh.data() : dprev.data();
          gemm(Trans::No, Trans::No, 1.0f, detail::view(d, B, G), detail::view(W, G, h), 0.0f,
               detail::view(dst, B, h));
          if (!all)
            for (int64_t b = 0; b < B; ++b)
              if (kept(s, b))
                std::copy(dprev.data() + b * h, dprev.data() + (b + 1) * h, dh.data() + b * h);
        }
        if (need_p && !assign_p) detail::acc(*gp, *own);
        if (t.requires_grad(whh)) {  // Σ_s dg_sᵀ h_{s-1}: one product, k = T·B
          bool assign = false;
          Tensor& gw = t.grad(whh, assign);
          gemm(Trans::Yes, Trans::No, 1.0f, detail::view(dg, T * B, G),
               detail::view(Hin->data(), T * B, h), assign ? 0.0f : 1.0f,
               detail::view(gw.data(), G, h));
        }
        auto put = [&](Var v, const Tensor& g) {
          if (!t.requires_grad(v)) return;
          bool assign = false;
          Tensor& gv = t.grad(v, assign);
          if (assign)
            std::copy(g.values().begin(), g.values().end(), gv.values().begin());
          else
            detail::acc(gv, g);
        };
        put(h0, dh);
        put(c0, dc);
      });
}

void gru_layer_forward(Tape& t, const Tensor& p, int64_t p_col, const Tensor& whh,
                       const Tensor& bhh, const std::vector<uint8_t>& keep, bool reverse, Tensor& h,
                       float* out, int64_t out_stride) {
  if (t.recording()) throw Error("gru_layer_forward: forward only, on a tape not recording");
  if (p.rank() != 3 || h.rank() != 2 || p.dim(0) != h.dim(0) || p_col < 0 ||
      p_col + 3 * h.dim(1) > p.dim(2) || whh.shape() != Shape{3 * h.dim(1), h.dim(1)} ||
      bhh.size() != 3 * h.dim(1))
    throw ShapeError("gru_layer_forward: projections " + shape_str(p.shape()) + ", state " +
                     shape_str(h.shape()) + ", W_hh " + shape_str(whh.shape()) + " do not fit");
  const int64_t B = p.dim(0), T = p.dim(1), H = h.dim(1), G = 3 * H, K = p.dim(2);
  if (!keep.empty() && static_cast<int64_t>(keep.size()) != T * B)
    throw ShapeError("gru_layer_forward: " + std::to_string(keep.size()) + " flags for " +
                     std::to_string(T) + " steps of " + std::to_string(B));
  Tensor& hp = *t.scratch({B, G});
  Tensor& hn = *t.scratch({B, H});
  const float* pb = bhh.data();
  for (int64_t k = 0; k < T; ++k) {
    const int64_t s = reverse ? T - 1 - k : k;
    // hp = h W_hhᵀ + b_hh, as ad::linear computes it (the bias rows, then the product added)
    for (int64_t b = 0; b < B; ++b) std::copy(pb, pb + G, hp.data() + b * G);
    gemm(Trans::No, Trans::Yes, 1.0f, detail::view(h.data(), B, H), detail::view(whh.data(), G, H),
         1.0f, detail::view(hp.data(), B, G));
    const uint8_t* kp = keep.empty() ? nullptr : keep.data() + s * B;
    for (int64_t b = 0; b < B; ++b) {
      float* o = out + (b * T + s) * out_stride;
      if (kp && !kp[b]) {  // a padded step: the state stays, the output is 0
        std::fill(o, o + H, 0.0f);
        continue;
      }
      float* y = hn.data() + b * H;
      gru_row(p.data() + (b * T + s) * K + p_col, hp.data() + b * G, h.data() + b * H, y, H);
      std::copy(y, y + H, o);
    }
    if (kp) {
      for (int64_t b = 0; b < B; ++b)
        if (kp[b]) std::copy(hn.data() + b * H, hn.data() + (b + 1) * H, h.data() + b * H);
    } else {
      std::swap(h, hn);
    }
  }
}

}  // namespace attnkit::ad
