#include "attnkit/nn/layers.h"

#include <cmath>

namespace attnkit::nn {

Linear::Linear(ParamStore& ps, const std::string& name, int64_t in, int64_t out, Rng& rng,
               bool bias) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  Tensor w({out, in});
  init_uniform(w, rng, bound);
  W = &ps.add(name + ".W", std::move(w));
  if (bias) {
    Tensor bb({out});
    init_uniform(bb, rng, bound);
    b = &ps.add(name + ".b", std::move(bb));
  }
}

Var Linear::operator()(Tape& t, Var x) const {
  return ad::linear(x, t.param(*W), b ? t.param(*b) : Var(),
                    transposed && t.recording() ? t.param_t(*W) : Var());
}

Embedding::Embedding(ParamStore& ps, const std::string& name, int64_t vocab, int64_t dim,
                     Rng& rng) {
  Tensor e({vocab, dim});
  init_normal(e, rng, 1.0f);
  table = &ps.add(name + ".table", std::move(e));
}

Var Embedding::operator()(Tape& t, const std::vector<int32_t>& ids, Shape lead) const {
  return ad::embedding(t.param(*table), ids, std::move(lead));
}

LayerNorm::LayerNorm(ParamStore& ps, const std::string& name, int64_t dim, float eps_) : eps(eps_) {
  gain = &ps.add(name + ".gain", Tensor({dim}, 1.0f));
  bias = &ps.add(name + ".bias", Tensor({dim}, 0.0f));
}

Var LayerNorm::operator()(Tape& t, Var x) const {
  return ad::layer_norm(x, t.param(*gain), t.param(*bias), eps);
}

FeedForward::FeedForward(ParamStore& ps, const std::string& name, int64_t dim, int64_t hidden,
                         Rng& rng, float dropout_, bool gelu_)
    : l1(ps, name + ".l1", dim, hidden, rng),
      l2(ps, name + ".l2", hidden, dim, rng),
      dropout(dropout_),
      gelu(gelu_) {}

Var FeedForward::operator()(Tape& t, Var x) const {
  Var h = l1(t, x);
  return l2(t, ad::dropout(gelu ? ad::gelu(h) : ad::relu(h), dropout));
}

}  // namespace attnkit::nn
