#include "attnkit/nn/attn2d.h"

#include <cmath>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::nn {

namespace {

constexpr std::initializer_list<Choice<Attn2dKind>> kKinds = {
    {"sagan", Attn2dKind::Sagan},
    {"biggan", Attn2dKind::BigGan},
    {"nonlocal-gaussian", Attn2dKind::NonLocalGaussian},
    {"nonlocal-dot", Attn2dKind::NonLocalDot},
    {"nonlocal-concat", Attn2dKind::NonLocalConcat}};

class Params {
 public:
  Params(const std::map<std::string, Tensor>& p, ad::Tape& t) : p_(p), t_(t) {}
  // The parameter `name` with shape `want` (-1: any size there).
  ad::Var get(const std::string& name, const Shape& want) {
    auto it = p_.find(name);
    if (it == p_.end()) throw DataError("missing parameter '" + name + "'");
    const Shape& s = it->second.shape();
    bool ok = s.size() == want.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = want[i] < 0 || want[i] == s[i];
    if (!ok)
      throw DataError("parameter '" + name + "' has shape " + shape_str(s) + ", expected " +
                      shape_str(want) + " (-1: any)");
    return t_.constant(it->second.clone());
  }
  // The parameter's values, checked as get() does.
  const Tensor& value(const std::string& name, const Shape& want) {
    get(name, want);
    return p_.at(name);
  }
  bool has(const std::string& name) const { return p_.count(name) > 0; }
  // A scalar saved as a 0-d tensor (BigGAN-PyTorch's torch.tensor(0.)) or as [1] (SAGAN's).
  ad::Var scalar(const std::string& name) {
    auto it = p_.find(name);
    if (it == p_.end()) throw DataError("missing parameter '" + name + "'");
    if (it->second.size() != 1 || it->second.rank() > 1)
      throw DataError("parameter '" + name + "' has shape " + shape_str(it->second.shape()) +
                      ", expected a scalar ([] or [1])");
    return t_.constant(Tensor({1}, std::vector<float>{it->second[0]}));
  }
  // A 1×1 convolution `name` from `in` channels (its output channels: out, or -1 for any),
  // with or without its bias.
  ad::Var conv(const std::string& name, ad::Var x, int64_t in, int64_t out, bool bias) {
    ad::Var w = get(name + ".weight", {out, in, 1, 1});
    ad::Var b = bias ? get(name + ".bias", {w.dim(0)}) : ad::Var();
    return ad::conv2d(x, w, b);
  }
  // The 1×1 convolution `conv` (in → out channels, with bias) followed by the BatchNorm2d
  // `bn` in eval mode (its running statistics, PyTorch's eps 1e-5), folded into one
  // convolution: weight · s and (bias − mean) · s + beta, s = gamma / sqrt(var + eps).
  ad::Var conv_bn(const std::string& conv, const std::string& bn, ad::Var x, int64_t in,
                  int64_t out) {
    const Tensor& w = value(conv + ".weight", {out, in, 1, 1});
    const Tensor& b = value(conv + ".bias", {out});
    const Tensor& g = value(bn + ".weight", {out});
    const Tensor& beta = value(bn + ".bias", {out});
    const Tensor& mean = value(bn + ".running_mean", {out});
    const Tensor& var = value(bn + ".running_var", {out});
    Tensor fw = w.clone(), fb({out});
    for (int64_t o = 0; o < out; ++o) {
      if (!(var[o] >= 0.0f))
        throw DataError("parameter '" + bn + ".running_var' has a negative value");
      const double sc = static_cast<double>(g[o]) / std::sqrt(static_cast<double>(var[o]) + 1e-5);
      for (int64_t i = 0; i < in; ++i) fw[o * in + i] = static_cast<float>(w[o * in + i] * sc);
      fb[o] = static_cast<float>((static_cast<double>(b[o]) - mean[o]) * sc + beta[o]);
    }
    return ad::conv2d(x, t_.constant(std::move(fw)), t_.constant(std::move(fb)));
  }

 private:
  const std::map<std::string, Tensor>& p_;
  ad::Tape& t_;
};

// [N, C, H, W] → [N, C, H·W]
ad::Var flat(ad::Var x) { return ad::reshape(x, {x.dim(0), x.dim(1), x.dim(2) * x.dim(3)}); }

}  // namespace

Attn2dKind parse_attn2d_kind(const std::string& name) {
  return parse_choice("attention block", name, kKinds);
}
std::string attn2d_kinds() { return choice_list(kKinds); }

Attn2dOutput attn2d(Attn2dKind kind, const std::map<std::string, Tensor>& p, ad::Var x) {
  if (x.rank() != 4)
    throw ShapeError("attn2d: feature maps must be [N, C, H, W], got " + shape_str(x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  Params ps(p, x.tape());
  Attn2dOutput r;
  switch (kind) {
    case Attn2dKind::Sagan: {
      ad::Var q = flat(ps.conv("query_conv", x, c, -1, true));  // [N, C', L]
      ad::Var k = flat(ps.conv("key_conv", x, c, q.dim(1), true));
      ad::Var v = flat(ps.conv("value_conv", x, c, c, true));    // [N, C, L]
      r.attention = ad::softmax(ad::matmul(q, k, true, false));  // [N, L, L]
      ad::Var o = ad::reshape(ad::matmul(v, r.attention, false, true), {n, c, h, w});
      r.y = ad::add(ad::mul(o, ps.scalar("gamma")), x);
      break;
    }
    case Attn2dKind::BigGan: {
      if (h % 2 || w % 2)
        throw ShapeError("attn2d biggan: height and width must be even (2x2 pooling), got " +
                         shape_str(x.shape()));
      ad::Var th = flat(ps.conv("theta", x, c, -1, false));  // [N, C/8, L]
      ad::Var ph = flat(ad::max_pool2d(ps.conv("phi", x, c, th.dim(1), false), 2));
      ad::Var g = flat(ad::max_pool2d(ps.conv("g", x, c, -1, false), 2));  // [N, C/2, L/4]
      r.attention = ad::softmax(ad::matmul(th, ph, true, false));          // [N, L, L/4]
      ad::Var og = ad::reshape(ad::matmul(g, r.attention, false, true), {n, g.dim(1), h, w});
      r.y = ad::add(ad::mul(ps.conv("o", og, g.dim(1), c, false), ps.scalar("gamma")), x);
      break;
    }
    case Attn2dKind::NonLocalGaussian:
    case Attn2dKind::NonLocalDot:
    case Attn2dKind::NonLocalConcat: {
      // NONLocalBlock2D's sub_sample (its default): g and phi are Sequential(conv, 2x2 max
      // pool), saved as g.0.* and phi.0.*; the keys are then a quarter of the positions.
      const bool sub = ps.has("g.0.weight") || ps.has("phi.0.weight");
      if (sub && (h % 2 || w % 2))
        throw ShapeError(
            "attn2d non-local with sub-sampling (g.0, phi.0): height and width "
            "must be even (2x2 pooling), got " +
            shape_str(x.shape()));
      auto keys = [&](const std::string& name, int64_t out) {
        if (!sub) return ps.conv(name, x, c, out, true);
        return ad::max_pool2d(ps.conv(name + ".0", x, c, out, true), 2);
      };
      ad::Var g = flat(keys("g", -1));  // [N, Ci, K]
      const int64_t ci = g.dim(1);
      ad::Var th = flat(ps.conv("theta", x, c, ci, true));         // [N, Ci, L]
      ad::Var ph = flat(keys("phi", ci));                          // [N, Ci, K]
      const float per_key = 1.0f / static_cast<float>(ph.dim(2));  // f / N, N the keys
      if (kind == Attn2dKind::NonLocalGaussian) {
        r.attention = ad::softmax(ad::matmul(th, ph, true, false));
      } else if (kind == Attn2dKind::NonLocalDot) {
        r.attention = ad::mul(ad::matmul(th, ph, true, false), per_key);
      } else {
        // w · [θ_i; φ_j] = w_θ · θ_i + w_φ · φ_j: two projections broadcast over (i, j).
        ad::Var wc = ps.get("concat_project.0.weight", {1, 2 * ci, 1, 1});
        ad::Var wv = ad::reshape(wc, {2 * ci});
        ad::Var a = ad::matmul(th, ad::reshape(ad::slice(wv, 0, 0, ci), {ci, 1}), true, false);
        ad::Var b = ad::matmul(ad::reshape(ad::slice(wv, 0, ci, 2 * ci), {1, ci}), ph);
        r.attention = ad::mul(ad::relu(ad::add(a, b)), per_key);
      }
      ad::Var y = ad::reshape(ad::matmul(g, r.attention, false, true), {n, ci, h, w});
      // bn_layer (its default): W is Sequential(conv, BatchNorm2d), saved as W.0.*, W.1.*.
      ad::Var wy =
          ps.has("W.0.weight") ? ps.conv_bn("W.0", "W.1", y, ci, c) : ps.conv("W", y, ci, c, true);
      r.y = ad::add(wy, x);
      break;
    }
  }
  return r;
}

}  // namespace attnkit::nn
