#include "attnkit/nn/attn2d.h"

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
  // A 1×1 convolution `name` from `in` channels (its output channels: out, or -1 for any),
  // with or without its bias.
  ad::Var conv(const std::string& name, ad::Var x, int64_t in, int64_t out, bool bias) {
    ad::Var w = get(name + ".weight", {out, in, 1, 1});
    ad::Var b = bias ? get(name + ".bias", {w.dim(0)}) : ad::Var();
    return ad::conv2d(x, w, b);
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
      r.y = ad::add(ad::mul(o, ps.get("gamma", {1})), x);
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
      r.y = ad::add(ad::mul(ps.conv("o", og, g.dim(1), c, false), ps.get("gamma", {1})), x);
      break;
    }
    case Attn2dKind::NonLocalGaussian:
    case Attn2dKind::NonLocalDot:
    case Attn2dKind::NonLocalConcat: {
      ad::Var g = flat(ps.conv("g", x, c, -1, true));  // [N, Ci, L]
      const int64_t ci = g.dim(1), l = h * w;
      ad::Var th = flat(ps.conv("theta", x, c, ci, true));
      ad::Var ph = flat(ps.conv("phi", x, c, ci, true));
      if (kind == Attn2dKind::NonLocalGaussian) {
        r.attention = ad::softmax(ad::matmul(th, ph, true, false));
      } else if (kind == Attn2dKind::NonLocalDot) {
        r.attention = ad::mul(ad::matmul(th, ph, true, false), 1.0f / static_cast<float>(l));
      } else {
        // w · [θ_i; φ_j] = w_θ · θ_i + w_φ · φ_j: two projections broadcast over (i, j).
        ad::Var wc = ps.get("concat_project.0.weight", {1, 2 * ci, 1, 1});
        ad::Var wv = ad::reshape(wc, {2 * ci});
        ad::Var a = ad::matmul(th, ad::reshape(ad::slice(wv, 0, 0, ci), {ci, 1}), true, false);
        ad::Var b = ad::matmul(ad::reshape(ad::slice(wv, 0, ci, 2 * ci), {1, ci}), ph);
        r.attention = ad::mul(ad::relu(ad::add(a, b)), 1.0f / static_cast<float>(l));
      }
      ad::Var y = ad::reshape(ad::matmul(g, r.attention, false, true), {n, ci, h, w});
      r.y = ad::add(ps.conv("W", y, ci, c, true), x);
      break;
    }
  }
  return r;
}

}  // namespace attnkit::nn
