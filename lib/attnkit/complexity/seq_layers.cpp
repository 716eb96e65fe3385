#include "attnkit/complexity/seq_layers.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attnkit/attention/fused.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"
#include "attnkit/core/rng.h"

namespace attnkit::complexity {

SeqLayer parse_seq_layer(const std::string& name) {
  return parse_choice<SeqLayer>("layer", name,
                                {
                                    {"attention", SeqLayer::Attention},
                                    {"conv", SeqLayer::Conv},
                                    {"rnn", SeqLayer::Rnn},
                                });
}

std::string seq_layer_name(SeqLayer layer) {
  switch (layer) {
    case SeqLayer::Attention:
      return "attention";
    case SeqLayer::Conv:
      return "conv";
    case SeqLayer::Rnn:
      return "rnn";
  }
  return "?";
}

Tensor self_attention(const Tensor& x) {
  if (x.rank() != 2) throw ShapeError("X must be a matrix [N, d], got " + shape_str(x.shape()));
  Tensor y(x.shape());
  const float scale =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, x.dim(1)))));
  attention::fused_context({{mat(x), mat(x), mat(x), mat(y), {}}}, scale);
  return y;
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, int64_t dilation) {
  if (x.rank() != 2) throw ShapeError("X must be a matrix [N, d], got " + shape_str(x.shape()));
  if (w.rank() != 3 || w.dim(1) != x.dim(1))
    throw ShapeError("kernel " + shape_str(w.shape()) + " does not fit X " + shape_str(x.shape()) +
                     " (needs [k, d, d_out] with d = " + std::to_string(x.dim(1)) + ")");
  if (b.size() != w.dim(2))
    throw ShapeError("bias " + shape_str(b.shape()) + " does not fit the kernel " +
                     shape_str(w.shape()));
  if (dilation < 1) throw UsageError("dilation must be at least 1");
  const int64_t n = x.dim(0), k = w.dim(0), d_out = w.dim(2);
  Tensor y({n, d_out});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < d_out; ++c) y.at(i, c) = b[c];
  for (int64_t t = 0; t < k; ++t) {
    // Output rows i read input rows i + off; only those inside [0, n) contribute.
    const int64_t off = (t - k / 2) * dilation;
    const int64_t i0 = std::max<int64_t>(0, -off), i1 = std::min<int64_t>(n, n - off);
    if (i1 <= i0) continue;
    const ConstMat xs{x.data() + (i0 + off) * x.dim(1), i1 - i0, x.dim(1), x.dim(1)};
    const Mat ys{y.data() + i0 * d_out, i1 - i0, d_out, d_out};
    gemm(Trans::No, Trans::No, 1.0f, xs, mat(w, t), 1.0f, ys);
  }
  return y;
}

Tensor rnn(const Tensor& x, const Tensor& w_x, const Tensor& w_h, const Tensor& b) {
  if (x.rank() != 2) throw ShapeError("X must be a matrix [N, d], got " + shape_str(x.shape()));
  if (w_x.rank() != 2 || w_x.dim(0) != x.dim(1) || w_h.rank() != 2 || w_h.dim(0) != w_x.dim(1) ||
      w_h.dim(1) != w_x.dim(1) || b.size() != w_x.dim(1))
    throw ShapeError("RNN weights W_x " + shape_str(w_x.shape()) + ", W_h " +
                     shape_str(w_h.shape()) + ", b " + shape_str(b.shape()) + " do not fit X " +
                     shape_str(x.shape()));
  const int64_t n = x.dim(0), dh = w_x.dim(1);
  Tensor h({n, dh});
  // Inputs of every step at once, then the sequential part: H_i += H_{i-1} W_h, tanh.
  gemm(Trans::No, Trans::No, 1.0f, mat(x), mat(w_x), 0.0f, mat(h));
  for (int64_t i = 0; i < n; ++i) {
    float* hi = h.data() + i * dh;
    if (i > 0) gemv(Trans::Yes, 1.0f, mat(w_h), hi - dh, dh, 1.0f, hi, dh);
    for (int64_t c = 0; c < dh; ++c) hi[c] = fastmath::fast_tanh(hi[c] + b[c]);
  }
  return h;
}

int64_t max_path_length(SeqLayer layer, int64_t n, int64_t kernel, bool dilated) {
  if (n < 1) throw UsageError("the sequence needs at least one position");
  if (n == 1) return 0;
  switch (layer) {
    case SeqLayer::Attention:
      return 1;
    case SeqLayer::Rnn:
      return n - 1;
    case SeqLayer::Conv:
      break;
  }
  if (kernel < 2) throw UsageError("a convolution stack needs a kernel of at least 2 to reach far");
  if (!dilated) return (n - 1 + kernel - 2) / (kernel - 1);
  int64_t layers = 0;
  for (int64_t reach = 1; reach < n; reach *= kernel) ++layers;
  return layers;
}

double time_layer(SeqLayer layer, int64_t n, int64_t d, int64_t kernel, int repeat, uint64_t seed,
                  Tensor* out, uint64_t* flops) {
  if (n < 1 || d < 1) throw UsageError("the length and the dimension must be at least 1");
  if (repeat < 1) throw UsageError("the repeat count must be at least 1");
  if (layer == SeqLayer::Conv && kernel < 1) throw UsageError("the kernel size must be at least 1");
  Rng rng(seed);
  auto randn = [&](Shape s, double std) {
    Tensor t(std::move(s));
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(std * rng.normal());
    return t;
  };
  const double ws = 1.0 / std::sqrt(static_cast<double>(d));
  const Tensor x = randn({n, d}, 1.0);
  Tensor w, w2, b;
  if (layer == SeqLayer::Conv) {
    w = randn({kernel, d, d}, ws / std::sqrt(static_cast<double>(kernel)));
    b = randn({d}, ws);
  } else if (layer == SeqLayer::Rnn) {
    w = randn({d, d}, ws);
    w2 = randn({d, d}, ws);
    b = randn({d}, ws);
  }
  double best = 1e300;
  Tensor y;
  auto pass = [&] {
    switch (layer) {
      case SeqLayer::Attention:
        y = self_attention(x);
        break;
      case SeqLayer::Conv:
        y = conv1d(x, w, b);
        break;
      case SeqLayer::Rnn:
        y = rnn(x, w, w2, b);
        break;
    }
  };
  if (flops) {  // counted apart from the timed passes, which run without the counter
    blas_count_flops(true);
    pass();
    *flops = blas_flops();
    blas_count_flops(false);
  }
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  if (out) *out = std::move(y);
  return best;
}

}  // namespace attnkit::complexity
