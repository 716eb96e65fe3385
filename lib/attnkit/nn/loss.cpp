#include "attnkit/nn/loss.h"

#include <cmath>
#include <memory>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::nn {

using ad::Tape;
using ad::Var;

Var cross_entropy(Var logits, const std::vector<int32_t>& targets, const CrossEntropyOptions& opt) {
  Tape& t = logits.tape();
  const Tensor& X = logits.value();
  if (X.rank() < 1) throw ShapeError("cross_entropy: logits must have a class dimension");
  const int64_t V = X.shape().back(), N = V ? X.size() / V : 0;
  if (static_cast<int64_t>(targets.size()) != N)
    throw ShapeError("cross_entropy: " + std::to_string(targets.size()) + " targets for logits " +
                     shape_str(X.shape()));
  const double eps = opt.label_smoothing;
  if (!(eps >= 0.0 && eps < 1.0)) throw Error("cross_entropy: label smoothing must be in [0, 1)");
  // Softmax rows (kept for backward) and the loss, in double.
  Tensor* P = t.scratch(X.shape());
  double total = 0.0;
  int64_t count = 0;
  for (int64_t r = 0; r < N; ++r) {
    const int32_t y = targets[static_cast<size_t>(r)];
    if (y == opt.ignore_index) continue;
    if (y < 0 || y >= V)
      throw DataError("cross_entropy: target " + std::to_string(y) + " at position " +
                      std::to_string(r) + " is outside [0, " + std::to_string(V) + ")");
    const float* px = X.data() + r * V;
    float* pp = P->data() + r * V;
    double mx = px[0];
    for (int64_t j = 1; j < V; ++j) mx = std::max(mx, static_cast<double>(px[j]));
    const float mxf = static_cast<float>(mx);
    for (int64_t j = 0; j < V; ++j) pp[j] = fastmath::fast_exp(px[j] - mxf);
    double s = 0.0, sx = 0.0;
    for (int64_t j = 0; j < V; ++j) {
      s += pp[j];
      sx += px[j];
    }
    const double lse = mx + std::log(s);
    for (int64_t j = 0; j < V; ++j) pp[j] = static_cast<float>(pp[j] / s);
    // -Σ q log p = (1 - ε)(lse - x_y) + ε (lse - mean x)
    total += (1.0 - eps) * (lse - px[y]) + eps * (lse - sx / static_cast<double>(V));
    ++count;
  }
  Tensor out = Tensor::scalar(count ? static_cast<float>(total / count) : 0.0f);
  auto tg = std::make_shared<std::vector<int32_t>>(targets);
  const int32_t ignore = opt.ignore_index;
  return t.push(std::move(out), {logits},
                [logits, P, tg, ignore, eps, N, V, count](Tape& t, Var o) {
                  if (count == 0) return;
                  const float g = t.grad(o)[0] / static_cast<float>(count);
                  float* gx = t.grad(logits).data();
                  const float u = static_cast<float>(eps / static_cast<double>(V));
                  const float hit = static_cast<float>(1.0 - eps);
                  for (int64_t r = 0; r < N; ++r) {
                    const int32_t y = (*tg)[static_cast<size_t>(r)];
                    if (y == ignore) continue;
                    const float* pp = P->data() + r * V;
                    float* pg = gx + r * V;
                    for (int64_t j = 0; j < V; ++j) pg[j] += g * (pp[j] - u);
                    pg[y] -= g * hit;
                  }
                });
}

Var bce_with_logits(Var logits, const Tensor& targets, const Tensor* mask) {
  Tape& t = logits.tape();
  const Tensor& X = logits.value();
  if (targets.shape() != X.shape() || (mask && mask->shape() != X.shape()))
    throw ShapeError("bce_with_logits: logits " + shape_str(X.shape()) + " and targets " +
                     shape_str(targets.shape()) +
                     (mask ? " / mask " + shape_str(mask->shape()) : "") + " differ");
  double total = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < X.size(); ++i) {
    if (mask && (*mask)[i] == 0.0f) continue;
    const double x = X[i], y = targets[i];
    total += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::fabs(x)));
    ++count;
  }
  Tensor out = Tensor::scalar(count ? static_cast<float>(total / count) : 0.0f);
  auto y = std::make_shared<Tensor>(targets.clone());
  auto m = mask ? std::make_shared<Tensor>(mask->clone()) : nullptr;
  return t.push(std::move(out), {logits}, [logits, y, m, count](Tape& t, Var o) {
    if (count == 0) return;
    const float g = t.grad(o)[0] / static_cast<float>(count);
    const Tensor& X = t.value(logits);
    float* gx = t.grad(logits).data();
    for (int64_t i = 0; i < X.size(); ++i) {
      if (m && (*m)[i] == 0.0f) continue;
      const float s = 1.0f / (1.0f + std::exp(-X[i]));
      gx[i] += g * (s - (*y)[i]);
    }
  });
}

}  // namespace attnkit::nn
