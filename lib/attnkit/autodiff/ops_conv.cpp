// Convolutions and pooling over images [N, C, H, W] (PyTorch's layout and semantics).
//
// conv2d is im2col + one gemm per image through the BLAS boundary: the columns of image n
// are [C·kh·kw, Ho·Wo] (zero where the window leaves the padded image), y_n = W cols + b.
// Backward: dW += dY_n colsᵀ (the columns are built again rather than kept: a batch of
// them is kh·kw times the input), dcols = Wᵀ dY_n, scattered back by col2im. A 1×1
// convolution with stride 1 and no padding needs no columns: x_n [C, H·W] is already them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/parallel.h"

namespace attnkit::ad {

namespace {

using detail::view;

// conv2d splits a batch into this many chunks of images (fewer for a smaller batch), spread
// over the threads; the weight gradient is summed per chunk, then over the chunks in order.
constexpr int64_t kChunks = 8;

// The output size along one axis; ShapeError when the kernel does not fit.
int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, const char* op,
                 const Shape& xs) {
  const int64_t span = dil * (k - 1) + 1;
  const int64_t o = (in + 2 * pad - span) / stride + 1;
  if (in + 2 * pad < span || o < 1)
    throw ShapeError(std::string(op) + ": a kernel spanning " + std::to_string(span) +
                     " does not fit an input of " + std::to_string(in) + " (padding " +
                     std::to_string(pad) + "), input " + shape_str(xs));
  return o;
}

struct Geometry {
  int64_t n, c, h, w, kh, kw, ho, wo;
  Conv2dOptions o;
  int64_t k() const { return c * kh * kw; }  // rows of the columns
  int64_t l() const { return ho * wo; }      // columns of the columns
  bool direct() const {
    return kh == 1 && kw == 1 && o.stride_h == 1 && o.stride_w == 1 && o.pad_h == 0 && o.pad_w == 0;
  }
};

// The output columns q whose input column q·stride - pad + j·dil lies inside [0, w):
// [q0, q1).
void valid_cols(const Geometry& g, int64_t j, int64_t* q0, int64_t* q1) {
  const int64_t off = j * g.o.dil_w - g.o.pad_w;  // input column of output column 0
  const int64_t s = g.o.stride_w;
  *q0 = off >= 0 ? 0 : (-off + s - 1) / s;
  *q1 = off > g.w - 1 ? 0 : std::min<int64_t>(g.wo, (g.w - 1 - off) / s + 1);
  if (*q1 < *q0) *q1 = *q0;
}

// cols [C·kh·kw, Ho·Wo] of one image x [C, H, W].
void im2col(const float* x, const Geometry& g, float* cols) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        float* row = cols + ((c * g.kh + i) * g.kw + j) * g.l();
        const float* xc = x + c * g.h * g.w;
        int64_t q0, q1;
        valid_cols(g, j, &q0, &q1);
        const int64_t off = j * g.o.dil_w - g.o.pad_w, s = g.o.stride_w;
        for (int64_t p = 0; p < g.ho; ++p) {
          const int64_t y = p * g.o.stride_h - g.o.pad_h + i * g.o.dil_h;
          float* r = row + p * g.wo;
          if (y < 0 || y >= g.h) {
            std::fill(r, r + g.wo, 0.0f);
            continue;
          }
          const float* xr = xc + y * g.w + off;
          std::fill(r, r + q0, 0.0f);
          if (s == 1)
            std::memcpy(r + q0, xr + q0, static_cast<size_t>(q1 - q0) * sizeof(float));
          else
            for (int64_t q = q0; q < q1; ++q) r[q] = xr[q * s];
          std::fill(r + q1, r + g.wo, 0.0f);
        }
      }
}

// dx [C, H, W] += the columns' gradient scattered back (the adjoint of im2col).
void col2im(const float* cols, const Geometry& g, float* dx) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float* row = cols + ((c * g.kh + i) * g.kw + j) * g.l();
        float* dc = dx + c * g.h * g.w;
        int64_t q0, q1;
        valid_cols(g, j, &q0, &q1);
        const int64_t off = j * g.o.dil_w - g.o.pad_w, s = g.o.stride_w;
        for (int64_t p = 0; p < g.ho; ++p) {
          const int64_t y = p * g.o.stride_h - g.o.pad_h + i * g.o.dil_h;
          if (y < 0 || y >= g.h) continue;
          const float* r = row + p * g.wo;
          float* dr = dc + y * g.w + off;
          for (int64_t q = q0; q < q1; ++q) dr[q * s] += r[q];
        }
      }
}

void need_image(const Tensor& x, const char* op) {
  if (x.rank() != 4)
    throw ShapeError(std::string(op) + ": the input must be images [N, C, H, W], got " +
                     shape_str(x.shape()));
}

}  // namespace

void Conv2dOptions::validate() const {
  if (stride_h < 1 || stride_w < 1) throw ShapeError("conv2d: stride must be >= 1");
  if (pad_h < 0 || pad_w < 0) throw ShapeError("conv2d: padding must be >= 0");
  if (dil_h < 1 || dil_w < 1) throw ShapeError("conv2d: dilation must be >= 1");
}

Var conv2d(Var x, Var w, Var b, const Conv2dOptions& o) {
  Tape& t = detail::tape_of(x, w);
  if (b.valid()) detail::tape_of(x, b);
  o.validate();
  const Tensor& X = x.value();
  const Tensor& Wt = w.value();
  need_image(X, "conv2d");
  if (Wt.rank() != 4 || Wt.dim(1) != X.dim(1))
    throw ShapeError("conv2d: weight " + shape_str(Wt.shape()) +
                     " [out, in, kh, kw] does not fit input " + shape_str(X.shape()));
  const int64_t outc = Wt.dim(0);
  if (b.valid() && (b.value().rank() != 1 || b.value().dim(0) != outc))
    throw ShapeError("conv2d: bias " + shape_str(b.value().shape()) + " does not fit weight " +
                     shape_str(Wt.shape()));
  Geometry g{X.dim(0), X.dim(1), X.dim(2), X.dim(3), Wt.dim(2), Wt.dim(3), 0, 0, o};
  g.ho = out_size(g.h, g.kh, o.stride_h, o.pad_h, o.dil_h, "conv2d", X.shape());
  g.wo = out_size(g.w, g.kw, o.stride_w, o.pad_w, o.dil_w, "conv2d", X.shape());
  Tensor y = t.alloc({g.n, outc, g.ho, g.wo});
  const int64_t K = g.k(), L = g.l();
  // Images in kChunks fixed chunks over the threads, each with its own columns.
  const int64_t chunks = std::min(kChunks, g.n);
  float* cols = g.direct() ? nullptr : t.scratch({chunks * K * L})->data();  // pooled
  const float* bias = b.valid() ? b.value().data() : nullptr;
  parallel_for(chunks, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch)
      for (int64_t n = ch * g.n / chunks; n < (ch + 1) * g.n / chunks; ++n) {
        const float* xn = X.data() + n * g.c * g.h * g.w;
        float* yn = y.data() + n * outc * L;
        float beta = 0.0f;
        if (bias) {
          for (int64_t oc = 0; oc < outc; ++oc) std::fill(yn + oc * L, yn + (oc + 1) * L, bias[oc]);
          beta = 1.0f;
        }
        const float* cn = xn;
        if (!g.direct()) {
          cn = cols + ch * K * L;
          im2col(xn, g, cols + ch * K * L);
        }
        gemm(Trans::No, Trans::No, 1.0f, view(Wt.data(), outc, K), view(cn, K, L), beta,
             view(yn, outc, L));
      }
  });
  return t.push(std::move(y), {x, w, b}, [x, w, b, g, outc](Tape& t, Var out) {
    const Tensor& G = t.grad(out);
    const int64_t K = g.k(), L = g.l();
    const bool gx = t.requires_grad(x), gw = t.requires_grad(w);
    const float* W = t.value(w).data();
    const Tensor& X = t.value(x);
    // Gradients allocated before the threads start; the weight's gradient summed per chunk,
    // then over the chunks in order: the same sums for any thread count.
    float* dx = gx ? t.grad(x).data() : nullptr;
    const int64_t chunks = std::min(kChunks, g.n);
    float* cols = g.direct() ? nullptr : t.scratch({chunks * K * L})->data();
    Tensor* dws = gw ? t.scratch({chunks * outc * K}) : nullptr;
    parallel_for(chunks, [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        float* cl = g.direct() ? nullptr : cols + ch * K * L;
        float* dw = gw ? dws->data() + ch * outc * K : nullptr;
        if (dw) std::fill(dw, dw + outc * K, 0.0f);
        for (int64_t n = ch * g.n / chunks; n < (ch + 1) * g.n / chunks; ++n) {
          const float* gn = G.data() + n * outc * L;
          const float* xn = X.data() + n * g.c * g.h * g.w;
          if (dw) {
            const float* cn = xn;
            if (cl) {
              im2col(xn, g, cl);
              cn = cl;
            }
            gemm(Trans::No, Trans::Yes, 1.0f, view(gn, outc, L), view(cn, K, L), 1.0f,
                 view(dw, outc, K));
          }
          if (dx) {
            float* dxn = dx + n * g.c * g.h * g.w;
            if (!cl) {
              gemm(Trans::Yes, Trans::No, 1.0f, view(W, outc, K), view(gn, outc, L), 1.0f,
                   view(dxn, K, L));
            } else {
              gemm(Trans::Yes, Trans::No, 1.0f, view(W, outc, K), view(gn, outc, L), 0.0f,
                   view(cl, K, L));
              col2im(cl, g, dxn);
            }
          }
        }
      }
    });
    if (gw) {
      float* gwp = t.grad(w).data();
      for (int64_t ch = 0; ch < chunks; ++ch) {
        const float* dw = dws->data() + ch * outc * K;
        for (int64_t i = 0; i < outc * K; ++i) gwp[i] += dw[i];
      }
    }
    if (b.valid() && t.requires_grad(b)) {
      float* gb = t.grad(b).data();
      for (int64_t oc = 0; oc < outc; ++oc) {
        double s = 0.0;
        for (int64_t n = 0; n < g.n; ++n) {
          const float* p = G.data() + (n * outc + oc) * L;
          for (int64_t i = 0; i < L; ++i) s += p[i];
        }
        gb[oc] += static_cast<float>(s);
      }
    }
  });
}

namespace {

// The pooling windows of one axis: out size, with PyTorch's floor mode.
Geometry pool_geometry(const Tensor& X, int64_t k, int64_t stride, int64_t pad, const char* op) {
  need_image(X, op);
  if (k < 1) throw ShapeError(std::string(op) + ": the kernel must be >= 1");
  if (stride < 1) throw ShapeError(std::string(op) + ": the stride must be >= 1");
  if (pad < 0 || 2 * pad > k)
    throw ShapeError(std::string(op) + ": padding must be in [0, kernel / 2]");
  Conv2dOptions o;
  o.stride_h = o.stride_w = stride;
  o.pad_h = o.pad_w = pad;
  Geometry g{X.dim(0), X.dim(1), X.dim(2), X.dim(3), k, k, 0, 0, o};
  g.ho = out_size(g.h, k, stride, pad, 1, op, X.shape());
  g.wo = out_size(g.w, k, stride, pad, 1, op, X.shape());
  return g;
}

}  // namespace

Var max_pool2d(Var x, int64_t kernel, int64_t stride, int64_t padding) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  const Geometry g = pool_geometry(X, kernel, stride > 0 ? stride : kernel, padding, "max_pool2d");
  Tensor y = t.alloc({g.n, g.c, g.ho, g.wo});
  // Where each maximum came from (the first of equal ones, in row-major window order).
  std::vector<int64_t> arg(static_cast<size_t>(y.size()));
  const int64_t planes = g.n * g.c;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = X.data() + pl * g.h * g.w;
    for (int64_t p = 0; p < g.ho; ++p)
      for (int64_t q = 0; q < g.wo; ++q) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t yy = p * g.o.stride_h - g.o.pad_h + i;
          if (yy < 0 || yy >= g.h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t xx = q * g.o.stride_w - g.o.pad_w + j;
            if (xx < 0 || xx >= g.w) continue;
            const float v = xp[yy * g.w + xx];
            if (at < 0 || v > best || (v != v && best == best)) {  // NaN wins, as in PyTorch
              best = v;
              at = yy * g.w + xx;
            }
          }
        }
        const int64_t o = (pl * g.ho + p) * g.wo + q;
        y[o] = best;
        arg[static_cast<size_t>(o)] = pl * g.h * g.w + at;
      }
  }
  return t.push(std::move(y), {x}, [x, arg = std::move(arg)](Tape& t, Var out) {
    const Tensor& G = t.grad(out);
    float* gx = t.grad(x).data();
    for (size_t o = 0; o < arg.size(); ++o) gx[arg[o]] += G[static_cast<int64_t>(o)];
  });
}

Var avg_pool2d(Var x, int64_t kernel, int64_t stride, int64_t padding) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  const Geometry g = pool_geometry(X, kernel, stride > 0 ? stride : kernel, padding, "avg_pool2d");
  Tensor y = t.alloc({g.n, g.c, g.ho, g.wo});
  // PyTorch's default count_include_pad: the padding counts in the divisor (kernel²), as
  // long as the window stays within the padded image (it always does in floor mode).
  const float inv = 1.0f / static_cast<float>(g.kh * g.kw);
  const int64_t planes = g.n * g.c;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = X.data() + pl * g.h * g.w;
    for (int64_t p = 0; p < g.ho; ++p)
      for (int64_t q = 0; q < g.wo; ++q) {
        double s = 0.0;
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t yy = p * g.o.stride_h - g.o.pad_h + i;
          if (yy < 0 || yy >= g.h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t xx = q * g.o.stride_w - g.o.pad_w + j;
            if (xx >= 0 && xx < g.w) s += xp[yy * g.w + xx];
          }
        }
        y[(pl * g.ho + p) * g.wo + q] = static_cast<float>(s) * inv;
      }
  }
  return t.push(std::move(y), {x}, [x, g, inv](Tape& t, Var out) {
    const Tensor& G = t.grad(out);
    float* gx = t.grad(x).data();
    const int64_t planes = g.n * g.c;
    for (int64_t pl = 0; pl < planes; ++pl) {
      float* gp = gx + pl * g.h * g.w;
      for (int64_t p = 0; p < g.ho; ++p)
        for (int64_t q = 0; q < g.wo; ++q) {
          const float v = G[(pl * g.ho + p) * g.wo + q] * inv;
          for (int64_t i = 0; i < g.kh; ++i) {
            const int64_t yy = p * g.o.stride_h - g.o.pad_h + i;
            if (yy < 0 || yy >= g.h) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t xx = q * g.o.stride_w - g.o.pad_w + j;
              if (xx >= 0 && xx < g.w) gp[yy * g.w + xx] += v;
            }
          }
        }
    }
  });
}

}  // namespace attnkit::ad

namespace attnkit::ad {

Var batch_norm2d(Var x, Var gamma, Var beta, Tensor& running_mean, Tensor& running_var,
                 bool training, float momentum, float eps) {
  Tape& t = x.tape();
  const Tensor& X = x.value();
  need_image(X, "batch_norm2d");
  const int64_t n = X.dim(0), c = X.dim(1), hw = X.dim(2) * X.dim(3), count = n * hw;
  for (const Var* v : {&gamma, &beta})
    if (v->valid() && (v->value().rank() != 1 || v->value().dim(0) != c))
      throw ShapeError("batch_norm2d: gain or bias " + shape_str(v->value().shape()) + " for " +
                       std::to_string(c) + " channels");
  if (running_mean.shape() != Shape{c} || running_var.shape() != Shape{c})
    throw ShapeError("batch_norm2d: running statistics must be [" + std::to_string(c) + "]");
  if (training && count < 2)
    throw ShapeError("batch_norm2d: training needs more than one value a channel, got " +
                     shape_str(X.shape()));
  // Per channel: the mean and 1/sqrt(var + eps) used, in double for the sums.
  std::vector<float> mean(static_cast<size_t>(c)), inv(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    double m, v;
    if (training) {
      double s = 0.0, s2 = 0.0;
      for (int64_t b = 0; b < n; ++b) {
        const float* p = X.data() + (b * c + ch) * hw;
        for (int64_t i = 0; i < hw; ++i) s += p[i];
      }
      m = s / static_cast<double>(count);
      for (int64_t b = 0; b < n; ++b) {
        const float* p = X.data() + (b * c + ch) * hw;
        for (int64_t i = 0; i < hw; ++i) s2 += (p[i] - m) * (p[i] - m);
      }
      v = s2 / static_cast<double>(count);  // biased, for normalising
      // PyTorch's update: the unbiased variance, momentum the weight of the new value.
      running_mean[ch] = static_cast<float>((1.0 - momentum) * running_mean[ch] + momentum * m);
      running_var[ch] = static_cast<float>((1.0 - momentum) * running_var[ch] +
                                           momentum * s2 / static_cast<double>(count - 1));
    } else {
      m = running_mean[ch];
      v = running_var[ch];
    }
    mean[static_cast<size_t>(ch)] = static_cast<float>(m);
    inv[static_cast<size_t>(ch)] = static_cast<float>(1.0 / std::sqrt(v + eps));
  }
  Tensor y = t.alloc(X.shape());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float g = gamma.valid() ? gamma.value()[ch] : 1.0f;
      const float be = beta.valid() ? beta.value()[ch] : 0.0f;
      const float m = mean[static_cast<size_t>(ch)], s = inv[static_cast<size_t>(ch)];
      const float* p = X.data() + (b * c + ch) * hw;
      float* q = y.data() + (b * c + ch) * hw;
      for (int64_t i = 0; i < hw; ++i) q[i] = (p[i] - m) * s * g + be;
    }
  return t.push(std::move(y), {x, gamma, beta},
                [x, gamma, beta, mean, inv, training, n, c, hw, count](Tape& t, Var out) {
                  const Tensor& G = t.grad(out);
                  const Tensor& X = t.value(x);
                  for (int64_t ch = 0; ch < c; ++ch) {
                    const float m = mean[static_cast<size_t>(ch)], s = inv[static_cast<size_t>(ch)];
                    const float g = gamma.valid() ? t.value(gamma)[ch] : 1.0f;
                    double sg = 0.0, sgx = 0.0;  // Σ dy, Σ dy x̂
                    for (int64_t b = 0; b < n; ++b) {
                      const float* p = X.data() + (b * c + ch) * hw;
                      const float* d = G.data() + (b * c + ch) * hw;
                      for (int64_t i = 0; i < hw; ++i) {
                        sg += d[i];
                        sgx += d[i] * (p[i] - m) * s;
                      }
                    }
                    if (gamma.valid() && t.requires_grad(gamma))
                      t.grad(gamma)[ch] += static_cast<float>(sgx);
                    if (beta.valid() && t.requires_grad(beta))
                      t.grad(beta)[ch] += static_cast<float>(sg);
                    if (!t.requires_grad(x)) continue;
                    float* gx = t.grad(x).data();
                    // Training: dx = g s (dy - mean(dy) - x̂ mean(dy x̂)); eval: g s dy.
                    const double a = training ? sg / static_cast<double>(count) : 0.0;
                    const double bb = training ? sgx / static_cast<double>(count) : 0.0;
                    for (int64_t b = 0; b < n; ++b) {
                      const float* p = X.data() + (b * c + ch) * hw;
                      const float* d = G.data() + (b * c + ch) * hw;
                      float* o = gx + (b * c + ch) * hw;
                      for (int64_t i = 0; i < hw; ++i) {
                        const double xh = (p[i] - m) * s;
                        o[i] += static_cast<float>(g * s * (d[i] - a - xh * bb));
                      }
                    }
                  }
                });
}

}  // namespace attnkit::ad
