// Structured attention's tape ops (ops_structured.h) over attention/structured.h.
#include "attnkit/autodiff/ops_structured.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "attnkit/attention/structured.h"
#include "attnkit/autodiff/detail.h"
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

}  // namespace

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

}  // namespace attnkit::ad
