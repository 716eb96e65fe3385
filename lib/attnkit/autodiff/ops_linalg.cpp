// Matrix products: matmul, addmm, linear. Forward and backward are gemm calls.
#include <algorithm>
#include <vector>

#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"

namespace attnkit::ad {

using detail::view;

namespace {

Trans tr(bool t) { return t ? Trans::Yes : Trans::No; }

// The product's geometry: batch count and whether each operand is batched (rank 3).
struct MM {
  int64_t batch = 1;
  bool a3 = false, b3 = false, flat = false;  // flat: a rank 3, b rank 2, no ta: one gemm
  int64_t ar, ac, br, bc, m, n, k;            // per-matrix dims of a and b; result m x n
  Shape out;
};

MM plan(const Tensor& a, const Tensor& b, bool ta, bool tb, const char* op) {
  MM p;
  auto bad = [&]() {
    return ShapeError(std::string(op) + ": cannot multiply " + (ta ? "transposed " : "") +
                      shape_str(a.shape()) + " by " + (tb ? "transposed " : "") +
                      shape_str(b.shape()));
  };
  if (a.rank() < 2 || a.rank() > 3 || b.rank() < 2 || b.rank() > 3) throw bad();
  p.a3 = a.rank() == 3;
  p.b3 = b.rank() == 3;
  if (p.a3 && p.b3 && a.dim(0) != b.dim(0)) throw bad();
  p.batch = p.a3 ? a.dim(0) : (p.b3 ? b.dim(0) : 1);
  p.ar = a.dim(-2), p.ac = a.dim(-1), p.br = b.dim(-2), p.bc = b.dim(-1);
  p.m = ta ? p.ac : p.ar;
  p.k = ta ? p.ar : p.ac;
  const int64_t kb = tb ? p.bc : p.br;
  p.n = tb ? p.br : p.bc;
  if (p.k != kb) throw bad();
  p.flat = p.a3 && !p.b3 && !ta;
  if (p.a3 || p.b3)
    p.out = {p.batch, p.m, p.n};
  else
    p.out = {p.m, p.n};
  return p;
}

void forward(const MM& p, const Tensor& a, const Tensor& b, bool ta, bool tb, float beta,
             Tensor& c) {
  if (p.flat) {
    gemm(Trans::No, tr(tb), 1.0f, view(a.data(), p.batch * p.ar, p.ac), view(b.data(), p.br, p.bc),
         beta, view(c.data(), p.batch * p.m, p.n));
    return;
  }
  for (int64_t i = 0; i < p.batch; ++i) {
    const float* pa = a.data() + (p.a3 ? i * p.ar * p.ac : 0);
    const float* pb = b.data() + (p.b3 ? i * p.br * p.bc : 0);
    gemm(tr(ta), tr(tb), 1.0f, view(pa, p.ar, p.ac), view(pb, p.br, p.bc), beta,
         view(c.data() + i * p.m * p.n, p.m, p.n));
  }
}

// Adds d/da and d/db of C = op(A) op(B) given gC.
void backward(const MM& p, Tape& t, Var va, Var vb, bool ta, bool tb, const Tensor& gc) {
  const Tensor& a = t.value(va);
  const Tensor& b = t.value(vb);
  const bool need_a = t.requires_grad(va), need_b = t.requires_grad(vb);
  if (p.flat) {
    const ConstMat G = view(gc.data(), p.batch * p.m, p.n);
    bool assign = false;
    if (need_a) {  // gA = gC op(B)ᵀ
      Tensor& ga = t.grad(va, assign);
      gemm(Trans::No, tb ? Trans::No : Trans::Yes, 1.0f, G, view(b.data(), p.br, p.bc),
           assign ? 0.0f : 1.0f, view(ga.data(), p.batch * p.ar, p.ac));
    }
    if (need_b) {
      Tensor& gb = t.grad(vb, assign);
      const float beta = assign ? 0.0f : 1.0f;
      const ConstMat A = view(a.data(), p.batch * p.ar, p.ac);
      if (!tb)  // gB = Aᵀ gC
        gemm(Trans::Yes, Trans::No, 1.0f, A, G, beta, view(gb.data(), p.br, p.bc));
      else  // gB = gCᵀ A
        gemm(Trans::Yes, Trans::No, 1.0f, G, A, beta, view(gb.data(), p.br, p.bc));
    }
    return;
  }
  // A new gradient buffer is written by its first product (every block of a batched
  // operand, the first only of one shared by the batch) and added to after that. a and b
  // may be one Var: a's gradient is then fetched first and b's adds to it.
  bool assign_a = false, assign_b = false;
  Tensor* ga = need_a ? &t.grad(va, assign_a) : nullptr;
  Tensor* gb = need_b ? &t.grad(vb, assign_b) : nullptr;
  if (p.batch == 0) {  // nothing to write: a new buffer must still be zeros
    if (assign_a) std::fill(ga->values().begin(), ga->values().end(), 0.0f);
    if (assign_b) std::fill(gb->values().begin(), gb->values().end(), 0.0f);
    return;
  }
  for (int64_t i = 0; i < p.batch; ++i) {
    const int64_t oa = p.a3 ? i * p.ar * p.ac : 0, ob = p.b3 ? i * p.br * p.bc : 0;
    const ConstMat A = view(a.data() + oa, p.ar, p.ac);
    const ConstMat B = view(b.data() + ob, p.br, p.bc);
    const ConstMat G = view(gc.data() + i * p.m * p.n, p.m, p.n);
    if (ga) {
      const Mat GA = view(ga->data() + oa, p.ar, p.ac);
      const float beta = assign_a && (p.a3 || i == 0) ? 0.0f : 1.0f;
      if (!ta)
        gemm(Trans::No, tb ? Trans::No : Trans::Yes, 1.0f, G, B, beta, GA);  // gC op(B)ᵀ
      else
        gemm(tb ? Trans::Yes : Trans::No, Trans::Yes, 1.0f, B, G, beta, GA);  // op(B) gCᵀ
    }
    if (gb) {
      const Mat GB = view(gb->data() + ob, p.br, p.bc);
      const float beta = assign_b && (p.b3 || i == 0) ? 0.0f : 1.0f;
      if (!tb)
        gemm(ta ? Trans::No : Trans::Yes, Trans::No, 1.0f, A, G, beta, GB);  // op(A)ᵀ gC
      else
        gemm(Trans::Yes, ta ? Trans::Yes : Trans::No, 1.0f, G, A, beta, GB);  // gCᵀ op(A)
    }
  }
}

// The node of c + op(a) op(b) whose value y is computed: the gradient of c is g, those of a
// and b the product's (addmm, and addmm_t, whose forward differs but whose backward does not).
Var push_addmm(Tape& t, Tensor y, Var c, Var a, Var b, bool ta, bool tb, const MM& p) {
  return t.push(std::move(y), {c, a, b}, [c, a, b, ta, tb, p](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    if (t.requires_grad(c)) {
      bool assign = false;
      Tensor& gc = t.grad(c, assign);
      if (assign)
        std::copy(g.values().begin(), g.values().end(), gc.values().begin());
      else
        detail::acc(gc, g);
    }
    backward(p, t, a, b, ta, tb, g);
  });
}

}  // namespace

Var matmul(Var a, Var b, bool ta, bool tb) {
  Tape& t = detail::tape_of(a, b);
  const MM p = plan(a.value(), b.value(), ta, tb, "matmul");
  Tensor c = t.alloc(p.out);
  forward(p, a.value(), b.value(), ta, tb, 0.0f, c);
  return t.push(std::move(c), {a, b},
                [a, b, ta, tb, p](Tape& t, Var out) { backward(p, t, a, b, ta, tb, t.grad(out)); });
}

Var addmm(Var c, Var a, Var b, bool ta, bool tb) {
  Tape& t = detail::tape_of(a, b);
  detail::tape_of(a, c);
  const MM p = plan(a.value(), b.value(), ta, tb, "addmm");
  if (c.value().shape() != p.out)
    throw ShapeError("addmm: the summand has shape " + shape_str(c.value().shape()) +
                     " but the product " + shape_str(p.out));
  Tensor y = t.alloc(p.out);
  std::copy(c.value().values().begin(), c.value().values().end(), y.values().begin());
  forward(p, a.value(), b.value(), ta, tb, 1.0f, y);
  return push_addmm(t, std::move(y), c, a, b, ta, tb, p);
}

Var addmm_t(Var c, Var a, Var w, Var wt) {
  Tape& t = detail::tape_of(a, w);
  detail::tape_of(a, c);
  detail::tape_of(a, wt);
  const MM p = plan(a.value(), w.value(), false, true, "addmm_t");
  const Tensor& Wt = wt.value();
  if (p.batch != 1 || p.a3 || p.b3 || Wt.shape() != Shape{p.k, p.n})
    throw ShapeError("addmm_t: a must be [m, k], w [n, k] and wt [k, n]; got " +
                     shape_str(a.value().shape()) + ", " + shape_str(w.value().shape()) + ", " +
                     shape_str(Wt.shape()));
  if (c.value().shape() != p.out)
    throw ShapeError("addmm_t: the summand has shape " + shape_str(c.value().shape()) +
                     " but the product " + shape_str(p.out));
  Tensor y = t.alloc(p.out);
  std::copy(c.value().values().begin(), c.value().values().end(), y.values().begin());
  gemm(Trans::No, Trans::No, 1.0f, view(a.value().data(), p.m, p.k), view(Wt.data(), p.k, p.n),
       1.0f, view(y.data(), p.m, p.n));
  // The backward of addmm(c, a, w, false, true).
  return push_addmm(t, std::move(y), c, a, w, false, true, p);
}

Var linear(Var x, Var w, Var b, Var wt) {
  Tape& t = detail::tape_of(x, w);
  if (b.valid()) detail::tape_of(x, b);
  const Tensor& X = x.value();
  const Tensor& W = w.value();
  if (W.rank() != 2 || X.rank() < 1 || X.shape().back() != W.dim(1))
    throw ShapeError("linear: input " + shape_str(X.shape()) + " does not fit weight " +
                     shape_str(W.shape()) + " [out, in]");
  const int64_t in = W.dim(1), outd = W.dim(0), rows = detail::lead_rows(X);
  if (b.valid() && b.value().size() != outd)
    throw ShapeError("linear: bias " + shape_str(b.value().shape()) + " does not fit weight " +
                     shape_str(W.shape()));
  Shape os = X.shape();
  os.back() = outd;
  Tensor y = t.alloc(os);
  float beta = 0.0f;
  if (b.valid()) {
    const float* pb = b.value().data();
    for (int64_t r = 0; r < rows; ++r) std::copy(pb, pb + outd, y.data() + r * outd);
    beta = 1.0f;
  }
  if (wt.valid()) {
    detail::tape_of(x, wt);
    if (wt.value().shape() != Shape{in, outd})
      throw ShapeError("linear: the transposed weight " + shape_str(wt.value().shape()) +
                       " is not the transpose of " + shape_str(W.shape()));
    gemm(Trans::No, Trans::No, 1.0f, view(X.data(), rows, in), view(wt.value().data(), in, outd),
         beta, view(y.data(), rows, outd));
  } else {
    gemm(Trans::No, Trans::Yes, 1.0f, view(X.data(), rows, in), view(W.data(), outd, in), beta,
         view(y.data(), rows, outd));
  }
  return t.push(std::move(y), {x, w, b}, [x, w, b, rows, in, outd](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    const ConstMat G = view(g.data(), rows, outd);
    bool assign = false;
    if (t.requires_grad(x)) {
      float* gx = t.grad(x, assign).data();
      gemm(Trans::No, Trans::No, 1.0f, G, view(t.value(w).data(), outd, in), assign ? 0.0f : 1.0f,
           view(gx, rows, in));
    }
    if (t.requires_grad(w)) {
      float* gw = t.grad(w, assign).data();
      gemm(Trans::Yes, Trans::No, 1.0f, G, view(t.value(x).data(), rows, in), assign ? 0.0f : 1.0f,
           view(gw, outd, in));
    }
    if (b.valid() && t.requires_grad(b)) {
      std::vector<double> s(static_cast<size_t>(outd), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const float* pg = g.data() + r * outd;
        for (int64_t j = 0; j < outd; ++j) s[static_cast<size_t>(j)] += pg[j];
      }
      float* gb = t.grad(b, assign).data();
      if (assign)
        for (int64_t j = 0; j < outd; ++j) gb[j] = static_cast<float>(s[static_cast<size_t>(j)]);
      else
        for (int64_t j = 0; j < outd; ++j) gb[j] += static_cast<float>(s[static_cast<size_t>(j)]);
    }
  });
}

}  // namespace attnkit::ad
