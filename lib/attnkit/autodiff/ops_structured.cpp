// Structured attention's tape ops (ops_structured.h) over attention/structured.h.
#include "attnkit/autodiff/ops_structured.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnkit/attention/structured.h"
#include "attnkit/autodiff/detail.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"
#include "attnkit/core/parallel.h"

namespace attnkit::ad {

namespace {

namespace at = attention;
using at::StructKind;

at::StructInput input_of(StructKind kind, Var a, Var p, const std::vector<int64_t>& lengths) {
  at::StructInput in;
  in.kind = kind;
  in.unary = &a.value();
  in.pairwise = p.valid() ? &p.value() : nullptr;
  in.lengths = lengths;
  in.check();
  return in;
}

// Item b's potentials over its length L: chain [u (L), P (4 (L-1))], tree the L x L block.
std::vector<double> item_theta(const at::StructInput& in, int64_t b, int64_t L) {
  const std::vector<double> u = in.item_unary(b);
  if (in.kind == StructKind::Tree) {
    const int64_t n = in.size();
    std::vector<double> a(static_cast<size_t>(L * L));
    for (int64_t i = 0; i < L; ++i)
      std::copy(u.begin() + i * n, u.begin() + i * n + L, a.begin() + i * L);
    return a;
  }
  const std::vector<double> p = in.item_pairwise(b);
  std::vector<double> th(u.begin(), u.begin() + L);
  th.insert(th.end(), p.begin(), p.begin() + 4 * std::max<int64_t>(L - 1, 0));
  return th;
}

// Adds scale · d (item b's gradient over item_theta's layout) into the potentials' gradients.
void scatter(const at::StructInput& in, int64_t b, int64_t L, const std::vector<double>& d,
             double scale, Tensor* gu, Tensor* gp) {
  const int64_t n = in.size();
  if (in.kind == StructKind::Tree) {
    if (!gu) return;
    float* g = gu->data() + b * n * n;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j)
        g[i * n + j] += static_cast<float>(scale * d[static_cast<size_t>(i * L + j)]);
    return;
  }
  if (gu)
    for (int64_t i = 0; i < L; ++i)
      gu->data()[b * n + i] += static_cast<float>(scale * d[static_cast<size_t>(i)]);
  if (!gp) return;
  const int rank = gp->rank();
  float* g = gp->data() + (rank == 4 ? b * (n - 1) * 4 : 0);
  for (int64_t i = 0; i + 1 < L; ++i)
    for (int64_t k = 0; k < 4; ++k)
      g[(rank == 2 ? 0 : i * 4) + k] +=
          static_cast<float>(scale * d[static_cast<size_t>(L + i * 4 + k)]);
}

struct Item {
  double log_z = 0.0;
  std::vector<double> marg;  // over item_theta's layout
};

// Every item's log Z and marginals, in parallel.
std::vector<Item> solve(const at::StructInput& in) {
  std::vector<Item> items(static_cast<size_t>(in.batch()));
  parallel_for(in.batch(), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t L = in.length(b);
      const std::vector<double> th = item_theta(in, b, L);
      Item& it = items[static_cast<size_t>(b)];
      if (in.kind == StructKind::Tree) {
        at::TreeMarginals m = at::tree_marginals(th.data(), L);
        it.log_z = m.log_z;
        it.marg = std::move(m.arcs);
      } else {
        at::ChainMarginals m = at::chain_marginals(th.data(), th.data() + L, L);
        it.log_z = m.log_z;
        it.marg = std::move(m.unary);
        it.marg.insert(it.marg.end(), m.pairwise.begin(), m.pairwise.end());
      }
    }
  });
  return items;
}

Var marginals_op(StructKind kind, Var a, Var p, const std::vector<int64_t>& lengths) {
  Tape& t = detail::tape_of(a, p);
  const at::StructInput in = input_of(kind, a, p, lengths);
  const std::vector<Item> items = solve(in);
  const int64_t n = in.size(), per = kind == StructKind::Tree ? n * n : n;
  Tensor y = t.zeros(a.value().shape());
  for (int64_t b = 0; b < in.batch(); ++b) {
    const int64_t L = in.length(b);
    const std::vector<double>& m = items[static_cast<size_t>(b)].marg;
    float* o = y.data() + b * per;
    for (int64_t i = 0; i < (kind == StructKind::Tree ? L : 1); ++i)
      for (int64_t j = 0; j < L; ++j)
        o[kind == StructKind::Tree ? i * n + j : j] =
            static_cast<float>(m[static_cast<size_t>(kind == StructKind::Tree ? i * L + j : j)]);
  }
  return t.push(std::move(y), {a, p}, [kind, a, p, lengths](Tape& t, Var out) {
    const at::StructInput in = input_of(kind, a, p, lengths);
    const Tensor& g = t.grad(out);
    const int64_t n = in.size(), per = kind == StructKind::Tree ? n * n : n;
    std::vector<std::vector<double>> d(static_cast<size_t>(in.batch()));
    parallel_for(in.batch(), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t L = in.length(b);
        const std::vector<double> th = item_theta(in, b, L);
        std::vector<double>& out_b = d[static_cast<size_t>(b)];
        out_b.assign(th.size(), 0.0);
        const float* gb = g.data() + b * per;
        if (kind == StructKind::Tree) {
          std::vector<double> dir(static_cast<size_t>(L * L));
          for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < L; ++j) dir[static_cast<size_t>(i * L + j)] = gb[i * n + j];
          at::tree_marginals_backward(th.data(), L, dir.data(), out_b.data());
        } else {
          const std::vector<double> dir(gb, gb + L);
          at::chain_marginals_backward(th.data(), th.data() + L, L, dir.data(), nullptr,
                                       out_b.data(), out_b.data() + L);
        }
      }
    });
    Tensor* gu = t.requires_grad(a) ? &t.grad(a) : nullptr;
    Tensor* gp = p.valid() && t.requires_grad(p) ? &t.grad(p) : nullptr;
    for (int64_t b = 0; b < in.batch(); ++b)
      scatter(in, b, in.length(b), d[static_cast<size_t>(b)], 1.0, gu, gp);
  });
}

Var log_partition_op(StructKind kind, Var a, Var p, const std::vector<int64_t>& lengths) {
  Tape& t = detail::tape_of(a, p);
  const at::StructInput in = input_of(kind, a, p, lengths);
  auto items = std::make_shared<std::vector<Item>>(solve(in));
  Tensor y = t.alloc(in.batched() ? Shape{in.batch()} : Shape{});
  for (int64_t b = 0; b < in.batch(); ++b)
    y[b] = static_cast<float>((*items)[static_cast<size_t>(b)].log_z);
  return t.push(std::move(y), {a, p}, [kind, a, p, lengths, items](Tape& t, Var out) {
    const at::StructInput in = input_of(kind, a, p, lengths);
    const Tensor& g = t.grad(out);
    Tensor* gu = t.requires_grad(a) ? &t.grad(a) : nullptr;
    Tensor* gp = p.valid() && t.requires_grad(p) ? &t.grad(p) : nullptr;
    for (int64_t b = 0; b < in.batch(); ++b)
      scatter(in, b, in.length(b), (*items)[static_cast<size_t>(b)].marg, g[b], gu, gp);
  });
}

// ---- the hop chain
struct HopShape {
  int64_t B, K, S;
  bool batched;
  int pair_rank;  // 0 (none), 2, 3 or 4
};

HopShape hop_shape(Var u, Var p, const std::vector<int64_t>& states) {
  const Tensor& U = u.value();
  if (U.rank() != 2 && U.rank() != 3)
    throw ShapeError("hop chain: unary potentials " + shape_str(U.shape()) +
                     " are not [K, S] or [B, K, S]");
  HopShape h{U.rank() == 3 ? U.dim(0) : 1, U.dim(-2), U.dim(-1), U.rank() == 3, 0};
  if (p.valid()) {
    const Shape& ps = p.value().shape();
    const int64_t l = std::max<int64_t>(h.K - 1, 0);
    h.pair_rank = static_cast<int>(ps.size());
    const bool ok = ps == Shape{h.S, h.S} || ps == Shape{l, h.S, h.S} ||
                    (h.batched && ps == Shape{h.B, l, h.S, h.S});
    if (!ok)
      throw ShapeError("hop chain: pairwise potentials " + shape_str(ps) + " do not fit unary " +
                       shape_str(U.shape()));
  }
  if (!states.empty() && static_cast<int64_t>(states.size()) != h.B)
    throw ShapeError("hop chain: " + std::to_string(states.size()) + " state counts for " +
                     std::to_string(h.B) + " items");
  for (int64_t c : states)
    if (c < 0 || c > h.S)
      throw DataError("hop chain: a state count of " + std::to_string(c) + " is outside [0, " +
                      std::to_string(h.S) + "]");
  return h;
}

// Item b's unary (padded states -inf) and pairwise potentials.
void hop_item(const HopShape& h, Var u, Var p, const std::vector<int64_t>& states, int64_t b,
              std::vector<double>& U, std::vector<double>& W) {
  const int64_t K = h.K, S = h.S, l = std::max<int64_t>(K - 1, 0);
  const float* pu = u.value().data() + b * K * S;
  U.assign(pu, pu + K * S);
  const int64_t valid = states.empty() ? S : states[static_cast<size_t>(b)];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t s = valid; s < S; ++s)
      U[static_cast<size_t>(k * S + s)] = -std::numeric_limits<double>::infinity();
  W.assign(static_cast<size_t>(l * S * S), 0.0);
  if (h.pair_rank == 0) return;
  const float* pp = p.value().data() + (h.pair_rank == 4 ? b * l * S * S : 0);
  for (int64_t k = 0; k < l; ++k)
    for (int64_t i = 0; i < S * S; ++i)
      W[static_cast<size_t>(k * S * S + i)] = pp[(h.pair_rank == 2 ? 0 : k * S * S) + i];
}

// Adds scale · (du, dw) of item b into the gradients.
void hop_scatter(const HopShape& h, int64_t b, const std::vector<double>& du,
                 const std::vector<double>& dw, double scale, Tensor* gu, Tensor* gp) {
  const int64_t K = h.K, S = h.S, l = std::max<int64_t>(K - 1, 0);
  if (gu)
    for (int64_t i = 0; i < K * S; ++i)
      gu->data()[b * K * S + i] += static_cast<float>(scale * du[static_cast<size_t>(i)]);
  if (!gp) return;
  float* g = gp->data() + (h.pair_rank == 4 ? b * l * S * S : 0);
  for (int64_t k = 0; k < l; ++k)
    for (int64_t i = 0; i < S * S; ++i)
      g[(h.pair_rank == 2 ? 0 : k * S * S) + i] +=
          static_cast<float>(scale * dw[static_cast<size_t>(k * S * S + i)]);
}

// Every item solved (structured.h's HopChainSolution), in parallel; kept for the backward pass.
using HopSolutions = std::vector<std::optional<at::HopChainSolution>>;
std::shared_ptr<const HopSolutions> hop_solve(const HopShape& h, Var u, Var p,
                                              const std::vector<int64_t>& states) {
  auto out = std::make_shared<HopSolutions>(static_cast<size_t>(h.B));
  parallel_for(h.B, [&](int64_t b0, int64_t b1) {
    std::vector<double> U, W;
    for (int64_t b = b0; b < b1; ++b) {
      hop_item(h, u, p, states, b, U, W);
      (*out)[static_cast<size_t>(b)].emplace(U.data(), W.data(), h.K, h.S);
    }
  });
  return out;
}

// What syntactic_attention's backward pass keeps of an item (length L): the selection p [L]
// and the soft-parent weights q [L] in double; its potentials A and marginals P [L, L] as
// floats at `off` of two tape scratch buffers (pooled: reused from step to step).
struct SyntacticItem {
  size_t off = 0;
  std::vector<double> p, q;
};

}  // namespace

Var hop_chain_marginals(Var unary, Var pairwise, const std::vector<int64_t>& states) {
  Tape& t = detail::tape_of(unary, pairwise);
  const HopShape h = hop_shape(unary, pairwise, states);
  const std::shared_ptr<const HopSolutions> m = hop_solve(h, unary, pairwise, states);
  Tensor y = t.alloc(unary.value().shape());
  for (int64_t b = 0; b < h.B; ++b) {
    const std::vector<double>& mu = (*m)[static_cast<size_t>(b)]->marginals().unary;
    for (int64_t i = 0; i < h.K * h.S; ++i)
      y[b * h.K * h.S + i] = static_cast<float>(mu[static_cast<size_t>(i)]);
  }
  return t.push(std::move(y), {unary, pairwise}, [h, unary, pairwise, m](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    const size_t nu = static_cast<size_t>(h.K * h.S),
                 np = static_cast<size_t>(std::max<int64_t>(h.K - 1, 0) * h.S * h.S);
    std::vector<std::vector<double>> du(static_cast<size_t>(h.B)), dw(du.size());
    parallel_for(h.B, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const float* gb = g.data() + b * h.K * h.S;
        const std::vector<double> dir(gb, gb + h.K * h.S);
        du[static_cast<size_t>(b)].resize(nu);
        dw[static_cast<size_t>(b)].resize(np);
        (*m)[static_cast<size_t>(b)]->backward(dir.data(), nullptr,
                                               du[static_cast<size_t>(b)].data(),
                                               dw[static_cast<size_t>(b)].data());
      }
    });
    Tensor* gu = t.requires_grad(unary) ? &t.grad(unary) : nullptr;
    Tensor* gp = pairwise.valid() && t.requires_grad(pairwise) ? &t.grad(pairwise) : nullptr;
    for (int64_t b = 0; b < h.B; ++b)
      hop_scatter(h, b, du[static_cast<size_t>(b)], dw[static_cast<size_t>(b)], 1.0, gu, gp);
  });
}

Var hop_chain_log_partition(Var unary, Var pairwise, const std::vector<int64_t>& states) {
  Tape& t = detail::tape_of(unary, pairwise);
  const HopShape h = hop_shape(unary, pairwise, states);
  const std::shared_ptr<const HopSolutions> m = hop_solve(h, unary, pairwise, states);
  Tensor y = t.alloc(h.batched ? Shape{h.B} : Shape{});
  for (int64_t b = 0; b < h.B; ++b)
    y[b] = static_cast<float>((*m)[static_cast<size_t>(b)]->marginals().log_z);
  return t.push(std::move(y), {unary, pairwise}, [h, unary, pairwise, m](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    Tensor* gu = t.requires_grad(unary) ? &t.grad(unary) : nullptr;
    Tensor* gp = pairwise.valid() && t.requires_grad(pairwise) ? &t.grad(pairwise) : nullptr;
    for (int64_t b = 0; b < h.B; ++b)
      hop_scatter(h, b, (*m)[static_cast<size_t>(b)]->marginals().unary,
                  (*m)[static_cast<size_t>(b)]->marginals().pairwise, g[b], gu, gp);
  });
}

Var chain_marginals(Var unary, Var pairwise, const std::vector<int64_t>& lengths) {
  return marginals_op(StructKind::Chain, unary, pairwise, lengths);
}
Var chain_log_partition(Var unary, Var pairwise, const std::vector<int64_t>& lengths) {
  return log_partition_op(StructKind::Chain, unary, pairwise, lengths);
}
Var tree_marginals(Var arcs, const std::vector<int64_t>& lengths) {
  return marginals_op(StructKind::Tree, arcs, Var(), lengths);
}
Var tree_log_partition(Var arcs, const std::vector<int64_t>& lengths) {
  return log_partition_op(StructKind::Tree, arcs, Var(), lengths);
}

Var syntactic_attention(Var g, Var r, Var X, Var Hd, Var Md, const std::vector<int64_t>& lengths,
                        Tensor* alpha, Tensor* arcs) {
  if (X.value().rank() != 3) throw ShapeError("syntactic attention: the states must be [B, S, H]");
  const int64_t B = X.dim(0), S = X.dim(1), H = X.dim(2);
  if (g.value().shape() != Shape{B, H} || r.value().shape() != Shape{B, S} ||
      Hd.value().shape() != X.value().shape() || Md.value().shape() != X.value().shape())
    throw ShapeError(
        "syntactic attention: the gate must be [B, H], the scores [B, S] and the "
        "projections the states' shape");
  if (!lengths.empty() && static_cast<int64_t>(lengths.size()) != B)
    throw ShapeError("syntactic attention: one length per source");
  for (int64_t L : lengths)
    if (L < 1 || L > S) throw ShapeError("syntactic attention: a length outside 1..S");
  if (S > at::kMaxTreeSize)
    throw DataError("syntactic attention: a source of " + std::to_string(S) + " words: at most " +
                    std::to_string(at::kMaxTreeSize));
  Tape& t = X.tape();
  auto items = std::make_shared<std::vector<SyntacticItem>>(static_cast<size_t>(B));
  int64_t cells = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t L = lengths.empty() ? S : lengths[static_cast<size_t>(b)];
    (*items)[static_cast<size_t>(b)].off = static_cast<size_t>(cells);
    cells += L * L;
  }
  float* const Abuf = t.scratch(Shape{cells})->data();
  float* const Pbuf = t.scratch(Shape{cells})->data();
  Tensor y = t.alloc({B, 2 * H});
  if (alpha) *alpha = Tensor(Shape{B, S});
  if (arcs) *arcs = Tensor(Shape{B, S, S});
  std::vector<char> bad(static_cast<size_t>(B), 0);
  parallel_for(B, [&](int64_t b0, int64_t b1) {
    std::vector<float> hg;
    std::vector<double> acc, Ad;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t L = lengths.empty() ? S : lengths[static_cast<size_t>(b)];
      SyntacticItem& it = (*items)[static_cast<size_t>(b)];
      const float* gb = g.value().data() + b * H;
      const float* rb = r.value().data() + b * S;
      const float* xb = X.value().data() + b * S * H;
      const float* hb = Hd.value().data() + b * S * H;
      const float* mb = Md.value().data() + b * S * H;
      // the gated heads Hd ⊙ g, then A off the diagonal, the root scores on it
      const int64_t rows = arcs ? S : L;
      hg.resize(static_cast<size_t>(rows * H));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t k = 0; k < H; ++k) hg[static_cast<size_t>(i * H + k)] = hb[i * H + k] * gb[k];
      if (arcs) {
        float* ab = arcs->data() + b * S * S;
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < S; ++j)
            ab[i * S + j] = i == j ? rb[j] : fastmath::lane_dot(hg.data() + i * H, mb + j * H, H);
      }
      // A in float (as the backward pass reads it back), solved in double
      float* Ab = Abuf + it.off;
      Ad.resize(static_cast<size_t>(L * L));
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j) {
          const float a =
              i == j
                  ? rb[j]
                  : static_cast<float>(fastmath::lane_dot_double(hg.data() + i * H, mb + j * H, H));
          if (std::isnan(a) || a == std::numeric_limits<float>::infinity())
            bad[static_cast<size_t>(b)] = 1;
          Ab[i * L + j] = a;
          Ad[static_cast<size_t>(i * L + j)] = a;
        }
      if (bad[static_cast<size_t>(b)]) continue;
      const std::vector<double> P = at::tree_marginals(Ad.data(), L).arcs;
      float* Pb = Pbuf + it.off;
      for (int64_t i = 0; i < L * L; ++i) Pb[i] = static_cast<float>(P[static_cast<size_t>(i)]);
      // the selection: softmax over the item's words
      double mx = -std::numeric_limits<double>::infinity(), z = 0.0;
      for (int64_t j = 0; j < L; ++j) mx = std::max(mx, static_cast<double>(rb[j]));
      it.p.resize(static_cast<size_t>(L));
      for (int64_t j = 0; j < L; ++j) z += it.p[static_cast<size_t>(j)] = std::exp(rb[j] - mx);
      for (double& x : it.p) x /= z;
      if (alpha)
        for (int64_t j = 0; j < S; ++j)
          alpha->data()[b * S + j] = j < L ? static_cast<float>(it.p[static_cast<size_t>(j)]) : 0;
      // q_i = Σ_{j != i} P[i, j] p_j: the weight of x_i as a soft parent
      it.q.assign(static_cast<size_t>(L), 0.0);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          if (i != j)
            it.q[static_cast<size_t>(i)] +=
                P[static_cast<size_t>(i * L + j)] * it.p[static_cast<size_t>(j)];
      // c = [Σ_j p_j x_j ; Σ_i q_i x_i]
      acc.assign(static_cast<size_t>(2 * H), 0.0);
      for (int64_t i = 0; i < L; ++i) {
        const double pi = it.p[static_cast<size_t>(i)], qi = it.q[static_cast<size_t>(i)];
        for (int64_t k = 0; k < H; ++k) {
          acc[static_cast<size_t>(k)] += pi * xb[i * H + k];
          acc[static_cast<size_t>(H + k)] += qi * xb[i * H + k];
        }
      }
      for (int64_t k = 0; k < 2 * H; ++k)
        y.data()[b * 2 * H + k] = static_cast<float>(acc[static_cast<size_t>(k)]);
    }
  });
  for (int64_t b = 0; b < B; ++b)
    if (bad[static_cast<size_t>(b)])
      throw DataError("syntactic attention: item " + std::to_string(b) +
                      " has a NaN or +inf arc potential");
  return t.push(std::move(y), {g, r, X, Hd, Md}, [=](Tape& t, Var out) {
    const Tensor& G = t.grad(out);
    Tensor* dg = t.requires_grad(g) ? &t.grad(g) : nullptr;
    Tensor* dr = t.requires_grad(r) ? &t.grad(r) : nullptr;
    Tensor* dX = t.requires_grad(X) ? &t.grad(X) : nullptr;
    Tensor* dHd = t.requires_grad(Hd) ? &t.grad(Hd) : nullptr;
    Tensor* dMd = t.requires_grad(Md) ? &t.grad(Md) : nullptr;
    const bool need_arcs = dg || dr || dHd || dMd;
    parallel_for(B, [&](int64_t b0, int64_t b1) {
      std::vector<double> dp, dq, dP, dA, tmp, Ad;
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t L = lengths.empty() ? S : lengths[static_cast<size_t>(b)];
        const SyntacticItem& it = (*items)[static_cast<size_t>(b)];
        const float* G1 = G.data() + b * 2 * H;
        const float* G2 = G1 + H;
        const float* gb = g.value().data() + b * H;
        const float* xb = X.value().data() + b * S * H;
        const float* hb = Hd.value().data() + b * S * H;
        const float* mb = Md.value().data() + b * S * H;
        dp.resize(static_cast<size_t>(L));
        dq.resize(static_cast<size_t>(L));
        for (int64_t i = 0; i < L; ++i) {
          dp[static_cast<size_t>(i)] = fastmath::lane_dot_double(xb + i * H, G1, H);
          dq[static_cast<size_t>(i)] = fastmath::lane_dot_double(xb + i * H, G2, H);
        }
        if (dX) {
          float* d = dX->data() + b * S * H;
          for (int64_t i = 0; i < L; ++i) {
            const double pi = it.p[static_cast<size_t>(i)], qi = it.q[static_cast<size_t>(i)];
            for (int64_t k = 0; k < H; ++k)
              d[i * H + k] += static_cast<float>(pi * G1[k] + qi * G2[k]);
          }
        }
        if (!need_arcs) continue;
        // through q: dp_j += Σ_{i != j} P[i, j] dq_i, dP[i, j] = dq_i p_j
        dP.assign(static_cast<size_t>(L * L), 0.0);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < L; ++j) {
            if (i == j) continue;
            const size_t ij = static_cast<size_t>(i * L + j);
            dp[static_cast<size_t>(j)] += Pbuf[it.off + ij] * dq[static_cast<size_t>(i)];
            dP[ij] = dq[static_cast<size_t>(i)] * it.p[static_cast<size_t>(j)];
          }
        dA.resize(static_cast<size_t>(L * L));
        Ad.assign(Abuf + it.off, Abuf + it.off + L * L);
        at::tree_marginals_backward(Ad.data(), L, dP.data(), dA.data());
        if (dr) {
          double pdp = 0.0;
          for (int64_t j = 0; j < L; ++j)
            pdp += it.p[static_cast<size_t>(j)] * dp[static_cast<size_t>(j)];
          float* d = dr->data() + b * S;
          for (int64_t j = 0; j < L; ++j)
            d[j] += static_cast<float>(it.p[static_cast<size_t>(j)] *
                                           (dp[static_cast<size_t>(j)] - pdp) +
                                       dA[static_cast<size_t>(j * L + j)]);
        }
        if (!dg && !dHd && !dMd) continue;
        tmp.resize(static_cast<size_t>(L * H));
        // tmp[i] = Σ_{j != i} dA[i, j] Md[j]: into dHd (⊙ g) and dg (· Hd[i])
        if (dg || dHd) {
          std::fill(tmp.begin(), tmp.end(), 0.0);
          for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < L; ++j) {
              if (i == j) continue;
              const double a = dA[static_cast<size_t>(i * L + j)];
              double* ti = tmp.data() + i * H;
              for (int64_t k = 0; k < H; ++k) ti[k] += a * mb[j * H + k];
            }
          if (dHd) {
            float* d = dHd->data() + b * S * H;
            for (int64_t i = 0; i < L; ++i)
              for (int64_t k = 0; k < H; ++k)
                d[i * H + k] += static_cast<float>(tmp[static_cast<size_t>(i * H + k)] * gb[k]);
          }
          if (dg) {
            float* d = dg->data() + b * H;
            for (int64_t k = 0; k < H; ++k) {
              double s = 0.0;
              for (int64_t i = 0; i < L; ++i)
                s += tmp[static_cast<size_t>(i * H + k)] * hb[i * H + k];
              d[k] += static_cast<float>(s);
            }
          }
        }
        // tmp[j] = Σ_{i != j} dA[i, j] Hd[i]: into dMd (⊙ g)
        if (dMd) {
          std::fill(tmp.begin(), tmp.end(), 0.0);
          for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < L; ++j) {
              if (i == j) continue;
              const double a = dA[static_cast<size_t>(i * L + j)];
              double* tj = tmp.data() + j * H;
              for (int64_t k = 0; k < H; ++k) tj[k] += a * hb[i * H + k];
            }
          float* d = dMd->data() + b * S * H;
          for (int64_t j = 0; j < L; ++j)
            for (int64_t k = 0; k < H; ++k)
              d[j * H + k] += static_cast<float>(tmp[static_cast<size_t>(j * H + k)] * gb[k]);
        }
      }
    });
  });
}

}  // namespace attnkit::ad
