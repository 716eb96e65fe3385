#include "attnkit/models/snail/blocks.h"

#include <cmath>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"

namespace attnkit::nn {

namespace {
void check_sequences(Var x, int64_t channels, const char* block) {
  if (x.rank() != 3 || x.dim(2) != channels)
    throw ShapeError(std::string(block) + " expects [B, T, " + std::to_string(channels) +
                     "] sequences, got " + shape_str(x.shape()));
}
}  // namespace

Var causal_shift(Var x, int64_t d) {
  if (x.rank() != 3)
    throw ShapeError("causal_shift expects [B, T, C], got " + shape_str(x.shape()));
  const int64_t b = x.dim(0), t = x.dim(1), c = x.dim(2);
  if (d <= 0) return x;
  Tape& tape = x.tape();
  if (d >= t) return tape.constant(Tensor({b, t, c}, 0.0f));
  return ad::concat({tape.constant(Tensor({b, d, c}, 0.0f)), ad::slice(x, 1, 0, t - d)}, 1);
}

DenseBlock::DenseBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t filters,
                       int64_t dilation, Rng& rng)
    : f_(ps, name + ".f", 2 * in, filters, rng),
      g_(ps, name + ".g", 2 * in, filters, rng),
      in_(in),
      filters_(filters),
      dilation_(dilation) {
  if (in < 1 || filters < 1 || dilation < 1)
    throw UsageError("a dense block needs channels, filters and dilation >= 1");
}

Var DenseBlock::operator()(Tape& t, Var x) const {
  check_sequences(x, in_, "DenseBlock");
  Var taps = ad::concat({causal_shift(x, dilation_), x}, 2);  // [x_{t−R}, x_t]
  Var act = ad::mul(ad::tanh(f_(t, taps)), ad::sigmoid(g_(t, taps)));
  return ad::concat({x, act}, 2);
}

TCBlock::TCBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t seq_len,
                 int64_t filters, Rng& rng)
    : out_(in) {
  if (seq_len < 1) throw UsageError("a TC block needs a sequence length >= 1");
  int64_t layers = 0;
  while ((int64_t{1} << layers) < seq_len) ++layers;
  layers = std::max<int64_t>(layers, 1);
  for (int64_t i = 0; i < layers; ++i) {
    blocks_.emplace_back(ps, name + ".dense" + std::to_string(i), out_, filters, int64_t{1} << i,
                         rng);
    out_ += filters;
  }
}

Var TCBlock::operator()(Tape& t, Var x) const {
  for (const DenseBlock& b : blocks_) x = b(t, x);
  return x;
}

int64_t TCBlock::receptive_field() const { return int64_t{1} << static_cast<int>(blocks_.size()); }

AttentionBlock::AttentionBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t key,
                               int64_t value, Rng& rng)
    : q_(ps, name + ".query", in, key, rng),
      k_(ps, name + ".key", in, key, rng),
      v_(ps, name + ".value", in, value, rng),
      in_(in),
      key_(key),
      value_(value) {
  if (in < 1 || key < 1 || value < 1)
    throw UsageError("an attention block needs channels, key and value sizes >= 1");
}

Var AttentionBlock::operator()(Tape& t, Var x) const {
  check_sequences(x, in_, "AttentionBlock");
  const int64_t n = x.dim(1);
  Var q = q_(t, x), k = k_(t, x), v = v_(t, x);
  Var logits = ad::mul(ad::matmul(q, k, false, true), 1.0f / std::sqrt(static_cast<float>(key_)));
  Tensor causal({n, n}, 0.0f);  // query i sees keys j <= i
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) causal.at(i, j) = 1.0f;
  Var read = ad::matmul(ad::masked_softmax(logits, causal), v);
  return ad::concat({x, read}, 2);
}

}  // namespace attnkit::nn
