// 2-D self-attention blocks over feature maps x [N, C, H, W], with PyTorch's parameter names
// (so a state_dict saved as .npz applies as it is):
//
// - sagan (Zhang et al. 2019, SAGAN's released Self_Attn): f, g, h are 1×1 convolutions
//   query_conv, key_conv (C → C/8) and value_conv (C → C); the attention of position i over
//   positions j is softmax_j(f(x_i) · g(x_j)); o_i = Σ_j a_ij h(x_j); y = γ o + x (γ starts
//   at 0, so the block starts as the identity).
//   Parameters: query_conv.weight/bias, key_conv.weight/bias, value_conv.weight/bias, gamma
//   (here and in biggan a scalar saved as [1] or 0-d).
// - biggan (Brock et al. 2019, BigGAN-PyTorch's Attention): theta, phi (C → C/8) and g
//   (C → C/2) 1×1 convolutions without bias, phi and g max-pooled 2×2 (a quarter of the keys
//   and values); o (C/2 → C) maps the attended values back; y = γ o + x.
//   Parameters: theta.weight, phi.weight, g.weight, o.weight, gamma.
// - nonlocal-gaussian, nonlocal-dot, nonlocal-concat (Wang et al. 2018; the layout of the
//   widely used NONLocalBlock2D): θ, φ, g are 1×1 convolutions C → C_i; f_ij = θ_i · φ_j
//   with a softmax over j (embedded Gaussian), or divided by the number of keys (dot
//   product), or f_ij = ReLU(w · [θ_i; φ_j]) divided by it (concatenation);
//   y_i = Σ_j f_ij g_j; z = W y + x with W (C_i → C) a 1×1 convolution (zero-initialised in
//   the paper: the block starts as the identity).
//   Parameters: g.weight/bias, theta.weight/bias, phi.weight/bias, W.weight/bias, and for
//   concatenation concat_project.0.weight [1, 2 C_i, 1, 1]. NONLocalBlock2D's defaults are
//   read as saved: sub_sample (g.0.*, phi.0.*: g and φ max-pooled 2×2, the keys a quarter of
//   the positions; H and W even) and bn_layer (W.0.* the convolution, W.1.* a BatchNorm2d
//   applied in eval mode: its running_mean and running_var, eps 1e-5).
//
// Missing or misshapen parameters are DataErrors naming the parameter.
#pragma once

#include <map>
#include <string>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/tensor.h"

namespace attnkit::nn {

enum class Attn2dKind { Sagan, BigGan, NonLocalGaussian, NonLocalDot, NonLocalConcat };
Attn2dKind parse_attn2d_kind(const std::string& name);  // ChoiceError listing the kinds
std::string attn2d_kinds();                             // "sagan, biggan, ..." for --help

struct Attn2dOutput {
  ad::Var y;          // [N, C, H, W]
  ad::Var attention;  // [N, H·W, keys]: row i is query position i's weights over the keys
                      // (keys = H·W, or (H/2)·(W/2) for biggan), positions row-major
};

// The block applied to x with the parameters `p` (entered on x's tape as constants).
Attn2dOutput attn2d(Attn2dKind kind, const std::map<std::string, Tensor>& p, ad::Var x);

}  // namespace attnkit::nn
