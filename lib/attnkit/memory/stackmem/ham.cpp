#include "attnkit/memory/stackmem/ham.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tsv_log.h"

namespace attnkit::memory {

// ---- double precision

namespace {

bool power_of_two(int64_t n) { return n >= 2 && (n & (n - 1)) == 0; }

void check_length(const std::vector<double>& v, size_t want, const std::string& what) {
  if (v.size() != want)
    throw ShapeError(what + " has " + std::to_string(v.size()) + " numbers, not " +
                     std::to_string(want));
}

void check_all_finite(const std::vector<double>& v, const char* what) {
  for (double x : v)
    if (!std::isfinite(x)) throw DataError(std::string(what) + " must be finite");
}

// The nodes in heap order, 1-based: node k's children are 2k and 2k + 1; the leaves are
// n .. 2n − 1. Each node a row of m.
struct Nodes {
  int64_t n = 0, m = 0;
  std::vector<double> x;  // 2n × m (row 0 unused)
  double* row(int64_t k) { return x.data() + k * m; }
  const double* row(int64_t k) const { return x.data() + k * m; }
};

// x_k = JOIN(x_2k, x_2k+1).
void join(const TreeWeights& w, Nodes& t, int64_t k, int64_t& ops) {
  const int64_t m = w.m;
  const double* l = t.row(2 * k);
  const double* r = t.row(2 * k + 1);
  double* out = t.row(k);
  for (int64_t i = 0; i < m; ++i) {
    const double* wi = w.join_w.data() + i * 2 * m;
    double s = w.join_b[static_cast<size_t>(i)];
    for (int64_t j = 0; j < m; ++j) s += wi[j] * l[j] + wi[m + j] * r[j];
    out[i] = std::tanh(s);
  }
  ops += 2 * m * m + m;
}

double search(const TreeWeights& w, const double* x, const std::vector<double>& h, int64_t& ops) {
  double s = w.search_b;
  for (int64_t j = 0; j < w.m; ++j) s += w.search_w[static_cast<size_t>(j)] * x[j];
  for (int64_t j = 0; j < w.c; ++j)
    s += w.search_w[static_cast<size_t>(w.m + j)] * h[static_cast<size_t>(j)];
  ops += w.m + w.c + 1;
  return 1.0 / (1.0 + std::exp(-s));
}

void write(const TreeWeights& w, const double* x, const std::vector<double>& h, double* out,
           int64_t& ops) {
  const int64_t m = w.m, c = w.c;
  for (int64_t i = 0; i < m; ++i) {
    const double* wi = w.write_w.data() + i * (m + c);
    double s = w.write_b[static_cast<size_t>(i)];
    for (int64_t j = 0; j < m; ++j) s += wi[j] * x[j];
    for (int64_t j = 0; j < c; ++j) s += wi[m + j] * h[static_cast<size_t>(j)];
    out[i] = std::tanh(s);
  }
  ops += m * (m + c) + m;
}

}  // namespace

TreeStepOut tree_step(const TreeWeights& w, const TreeStepIn& in) {
  const int64_t m = w.m, c = w.c;
  if (m < 1 || c < 0) throw ShapeError("the node width must be >= 1 and the state's >= 0");
  check_length(w.join_w, static_cast<size_t>(2 * m * m), "the JOIN weights");
  check_length(w.join_b, static_cast<size_t>(m), "the JOIN bias");
  check_length(w.search_w, static_cast<size_t>(m + c), "the SEARCH weights");
  check_length(w.write_w, static_cast<size_t>(m * (m + c)), "the WRITE weights");
  check_length(w.write_b, static_cast<size_t>(m), "the WRITE bias");
  check_length(in.h, static_cast<size_t>(c), "the controller's state");
  if (in.leaves.size() % static_cast<size_t>(m))
    throw ShapeError("the leaves have " + std::to_string(in.leaves.size()) +
                     " numbers, not a multiple of the width " + std::to_string(m));
  const int64_t n = static_cast<int64_t>(in.leaves.size()) / m;
  if (!power_of_two(n))
    throw ShapeError("a tree needs a power of 2 (at least 2) leaves, not " + std::to_string(n));
  if (!in.summaries.empty())
    check_length(in.summaries, static_cast<size_t>((n - 1) * m), "the summaries");
  for (const auto* v : {&w.join_w, &w.join_b, &w.search_w, &w.write_w, &w.write_b, &in.leaves,
                        &in.summaries, &in.h})
    check_all_finite(*v, "the tree's inputs");
  if (!std::isfinite(w.search_b)) throw DataError("the tree's inputs must be finite");
  TreeStepOut out;
  Nodes t;
  t.n = n, t.m = m;
  t.x.assign(static_cast<size_t>(2 * n * m), 0.0);
  std::copy(in.leaves.begin(), in.leaves.end(), t.x.begin() + n * m);
  if (in.summaries.empty()) {
    for (int64_t k = n - 1; k >= 1; --k) join(w, t, k, out.build_ops);
  } else {
    std::copy(in.summaries.begin(), in.summaries.end(), t.x.begin() + m);
  }
  out.read.assign(static_cast<size_t>(m), 0.0);
  out.branch.assign(static_cast<size_t>(n - 1), std::numeric_limits<double>::quiet_NaN());
  out.weights.assign(static_cast<size_t>(n), 0.0);
  std::vector<double> buf(static_cast<size_t>(m));
  if (in.hard) {
    int64_t k = 1;
    while (k < n) {
      const double p = search(w, t.row(k), in.h, out.ops);
      out.branch[static_cast<size_t>(k - 1)] = p;
      k = 2 * k + (p >= 0.5 ? 1 : 0);
    }
    out.leaf = k - n;
    out.weights[static_cast<size_t>(out.leaf)] = 1.0;
    std::copy(t.row(k), t.row(k) + m, out.read.begin());
    write(w, t.row(k), in.h, buf.data(), out.ops);
    std::copy(buf.begin(), buf.end(), t.row(k));
    for (k /= 2; k >= 1; k /= 2) join(w, t, k, out.ops);
  } else {
    // The weight reaching each node, top down: a_1 = 1, a_2k = a_k (1 − p_k), a_2k+1 = a_k p_k.
    std::vector<double> a(static_cast<size_t>(2 * n), 0.0);
    a[1] = 1.0;
    for (int64_t k = 1; k < n; ++k) {
      const double p = search(w, t.row(k), in.h, out.ops);
      out.branch[static_cast<size_t>(k - 1)] = p;
      a[static_cast<size_t>(2 * k)] = a[static_cast<size_t>(k)] * (1.0 - p);
      a[static_cast<size_t>(2 * k + 1)] = a[static_cast<size_t>(k)] * p;
      out.ops += 2;
    }
    for (int64_t i = 0; i < n; ++i) {
      const double ai = a[static_cast<size_t>(n + i)];
      out.weights[static_cast<size_t>(i)] = ai;
      double* x = t.row(n + i);
      for (int64_t j = 0; j < m; ++j) out.read[static_cast<size_t>(j)] += ai * x[j];
      write(w, x, in.h, buf.data(), out.ops);
      for (int64_t j = 0; j < m; ++j) x[j] = (1.0 - ai) * x[j] + ai * buf[static_cast<size_t>(j)];
      out.ops += 3 * m;
    }
    for (int64_t k = n - 1; k >= 1; --k) join(w, t, k, out.ops);
  }
  out.summaries.assign(t.x.begin() + m, t.x.begin() + n * m);
  out.leaves.assign(t.x.begin() + n * m, t.x.end());
  return out;
}

std::string format_tree_step(const TreeStepOut& o, bool hard) {
  auto line = [](const char* head, const std::vector<double>& v) {
    std::string s = head;
    for (double x : v) s += " " + io::format_double(x);
    return s + "\n";
  };
  std::string s = line("summaries", o.summaries) + line("leaves", o.leaves) +
                  line("weights", o.weights) + line("branch", o.branch);
  if (hard) s += "leaf " + std::to_string(o.leaf) + "\n";
  return s + line("read", o.read) + "build_ops " + std::to_string(o.build_ops) + "\nops " +
         std::to_string(o.ops) + "\n";
}

// ---- on the tape

using ad::Var;

namespace {

// JOIN of pairs [..., 2m] → [..., m] (with its hidden layer when given).
Var join_pairs(Var pairs, const HamWeights& w) {
  Var u = w.join_hw.valid() ? ad::relu(ad::linear(pairs, w.join_hw, w.join_hb)) : pairs;
  return ad::tanh(ad::linear(u, w.join_w, w.join_b));
}

// JOIN over the level below: children [B, 2k, m] → parents [B, k, m].
Var join_level(Var children, const HamWeights& w) {
  const int64_t b = children.dim(0), k = children.dim(1) / 2, m = children.dim(2);
  return join_pairs(ad::reshape(children, {b, k, 2 * m}), w);  // [x_2j; x_2j+1] side by side
}

// SEARCH's weights checked against nodes of m and states of c.
void check_search(const HamWeights& w, int64_t m, int64_t c, const char* who) {
  const bool mlp = w.search_hw.valid();
  const int64_t hid = mlp ? w.search_hw.dim(0) : 0;
  if ((mlp ? w.search_hw.shape() : w.search_w.shape()) != Shape{mlp ? hid : 1, m + c} ||
      (mlp && w.search_w.shape() != Shape{1, hid}))
    throw ShapeError(std::string(who) + ": SEARCH's weights must be [1, " + std::to_string(m + c) +
                     "] (or a hidden layer [H, " + std::to_string(m + c) +
                     "] and [1, H]) for nodes of " + std::to_string(m) + " and a state of " +
                     std::to_string(c) + "; got " +
                     (mlp ? shape_str(w.search_hw.shape()) + " and " : std::string()) +
                     shape_str(w.search_w.shape()));
}

// SEARCH's logits, the state's part computed once an access and shared by every node:
// search_state gives [B, 1] (affine: w_h · h + b_s) or [B, H] (U_h h + c_s), and
// search_logits the logits [B, k] of nodes x [B, k, m] (k nodes a row).
Var search_state(Var h, const HamWeights& w, int64_t m) {
  const int64_t c = h.dim(1);
  if (!w.search_hw.valid())
    return ad::reshape(ad::linear(h, ad::slice(w.search_w, 1, m, m + c), w.search_b),
                       {h.dim(0), 1});
  return ad::linear(h, ad::slice(w.search_hw, 1, m, m + c), w.search_hb);
}
Var search_logits(Var x, Var hs, const HamWeights& w) {
  const int64_t b = x.dim(0), k = x.dim(1), m = x.dim(2);
  if (!w.search_hw.valid())
    return ad::add(ad::reshape(ad::linear(x, ad::slice(w.search_w, 1, 0, m)), {b, k}), hs);
  Var u = ad::relu(
      ad::add(ad::linear(x, ad::slice(w.search_hw, 1, 0, m)), ad::reshape(hs, {b, 1, hs.dim(1)})));
  return ad::reshape(ad::linear(u, w.search_w, w.search_b), {b, k});
}

}  // namespace

HamTree ham_build(Var leaves, const HamWeights& w) {
  if (leaves.rank() != 3 || !power_of_two(leaves.dim(1)))
    throw ShapeError("ham_build: the leaves must be [B, n, m] with n a power of 2 (>= 2); got " +
                     shape_str(leaves.shape()));
  std::vector<Var> up{leaves};
  while (up.back().dim(1) > 1) up.push_back(join_level(up.back(), w));
  return HamTree(up.rbegin(), up.rend());
}

HamAccess ham_access(const HamTree& tree, Var h, const HamWeights& w) {
  if (tree.size() < 2) throw ShapeError("ham_access: a tree of at least two leaves");
  const int64_t b = h.dim(0), m = tree[0].dim(2), c = h.dim(1),
                d = static_cast<int64_t>(tree.size()) - 1;
  check_search(w, m, c, "ham_access");
  ad::Tape& t = h.tape();
  // SEARCH's logits: the node's part + the state's, shared by the level.
  Var hs = search_state(h, w, m);
  Var a = Var();  // the weights reaching the level [B, 2^l]
  for (int64_t l = 0; l < d; ++l) {
    const int64_t k = int64_t{1} << l;
    Var p = ad::sigmoid(search_logits(tree[static_cast<size_t>(l)], hs, w));
    Var left = ad::sub(t.constant(Tensor({1}, 1.0f)), p);
    Var kids = a.valid() ? ad::concat({ad::reshape(ad::mul(a, left), {b, k, 1}),
                                       ad::reshape(ad::mul(a, p), {b, k, 1})},
                                      2)
                         : ad::concat({ad::reshape(left, {b, 1, 1}), ad::reshape(p, {b, 1, 1})}, 2);
    a = ad::reshape(kids, {b, 2 * k});
  }
  const int64_t n = int64_t{1} << d;
  Var leaves = tree.back();
  HamAccess out;
  out.weights = a;
  Var a3 = ad::reshape(a, {b, n, 1});
  out.read = ad::reshape(ad::matmul(ad::reshape(a, {b, 1, n}), leaves), {b, m});
  // WRITE(x_i, h) = tanh(W_x x_i + (W_h h + b_w)), blended in by a_i.
  Var wwx = ad::slice(w.write_w, 1, 0, m), wwh = ad::slice(w.write_w, 1, m, m + c);
  Var hw = ad::reshape(ad::linear(h, wwh, w.write_b), {b, 1, m});
  Var written = ad::tanh(ad::add(ad::linear(leaves, wwx), hw));
  Var blended = ad::add(leaves, ad::mul(a3, ad::sub(written, leaves)));
  out.tree = ham_build(blended, w);
  return out;
}

// ---- the hard form on the tape

namespace {

// A copy of table [R, m] with rows ids[i] replaced by values' row i where keep[i] (the kept
// ids distinct). The gradient of a replaced row goes to its value, every other row's to the
// table; neither backward reads a value, so nothing else is kept.
Var replace_rows(Var table, Var values, const std::vector<int64_t>& ids,
                 const std::vector<uint8_t>& keep) {
  ad::Tape& t = table.tape();
  const int64_t m = table.dim(1);
  Tensor y = t.alloc(table.shape());
  std::copy(table.value().data(), table.value().data() + table.size(), y.data());
  const float* v = values.value().data();
  for (size_t i = 0; i < ids.size(); ++i)
    if (keep[i]) std::copy(v + static_cast<int64_t>(i) * m, v + (i + 1) * m, y.data() + ids[i] * m);
  auto idp = std::make_shared<std::vector<int64_t>>(ids);
  auto kp = std::make_shared<std::vector<uint8_t>>(keep);
  return t.push(std::move(y), {table, values}, [table, values, idp, kp, m](ad::Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    if (t.requires_grad(values)) {
      float* gv = t.grad(values).data();
      for (size_t i = 0; i < idp->size(); ++i)
        if ((*kp)[i])
          for (int64_t j = 0; j < m; ++j)
            gv[static_cast<int64_t>(i) * m + j] += g[(*idp)[i] * m + j];
    }
    if (t.requires_grad(table)) {
      Tensor& gt = t.grad(table);
      std::vector<uint8_t> replaced(static_cast<size_t>(gt.dim(0)), 0);
      for (size_t i = 0; i < idp->size(); ++i)
        if ((*kp)[i]) replaced[static_cast<size_t>((*idp)[i])] = 1;
      for (int64_t r = 0; r < gt.dim(0); ++r)
        if (!replaced[static_cast<size_t>(r)])
          for (int64_t j = 0; j < m; ++j) gt[r * m + j] += g[r * m + j];
    }
  });
}

std::vector<int32_t> rows_at(const std::vector<int64_t>& k, int64_t n) {
  std::vector<int32_t> ids(k.size());
  for (size_t b = 0; b < k.size(); ++b)
    ids[b] = static_cast<int32_t>(static_cast<int64_t>(b) * 2 * n + k[b]);
  return ids;
}

}  // namespace

HamTable ham_table(const HamTree& levels) {
  if (levels.size() < 2) throw ShapeError("ham_table: a tree of at least two leaves");
  const Var& leaves = levels.back();
  HamTable out;
  out.batch = leaves.dim(0), out.n = leaves.dim(1), out.m = leaves.dim(2);
  std::vector<Var> parts{leaves.tape().constant(Tensor({out.batch, 1, out.m}, 0.0f))};
  parts.insert(parts.end(), levels.begin(), levels.end());
  out.nodes = ad::reshape(ad::concat(parts, 1), {out.batch * 2 * out.n, out.m});
  return out;
}

HamHardAccess ham_hard_access(const HamTable& tree, Var h, const HamWeights& w,
                              const std::vector<uint8_t>& active, const HamDescent& how) {
  const int64_t B = tree.batch, n = tree.n, m = tree.m, c = h.dim(1);
  if (!power_of_two(n) || h.dim(0) != B || static_cast<int64_t>(active.size()) != B)
    throw ShapeError("ham_hard_access: " + std::to_string(B) + " trees of " + std::to_string(n) +
                     " leaves, states " + shape_str(h.shape()) + " and " +
                     std::to_string(active.size()) + " flags do not fit");
  check_search(w, m, c, "ham_hard_access");
  int64_t d = 0;
  while ((int64_t{1} << d) < n) ++d;
  if (how.forced)
    for (int64_t b = 0; b < B; ++b)
      if (how.forced->size() != static_cast<size_t>(B) ||
          (*how.forced)[static_cast<size_t>(b)].size() != static_cast<size_t>(d))
        throw ShapeError("ham_hard_access: forced decisions must be " + std::to_string(B) +
                         " rows of " + std::to_string(d));
  ad::Tape& t = h.tape();
  HamHardAccess out;
  out.p.assign(static_cast<size_t>(B), {});
  const int64_t sh = w.search_hw.valid() ? w.search_hw.dim(0) : 0;  // SEARCH's hidden units
  const int64_t jh = w.join_hw.valid() ? w.join_hw.dim(0) : 0;      // JOIN's
  Var hs = search_state(h, w, m);
  out.multiply_adds += sh ? B * (c + 1) * sh : B * (c + 1);
  std::vector<int64_t> k(static_cast<size_t>(B), 1);
  for (int64_t l = 0; l < d; ++l) {
    // SEARCH on the node each row has reached, and that row's decision.
    Var x = ad::embedding(tree.nodes, rows_at(k, n));
    Var z = ad::reshape(search_logits(ad::reshape(x, {B, 1, m}), hs, w), {B, 1});
    out.multiply_adds += sh ? B * (m * sh + sh + 1) : B * m;
    Tensor sign({B, 1}, 0.0f);
    for (int64_t b = 0; b < B; ++b) {
      const double zb = z.value()[b], p = 1.0 / (1.0 + std::exp(-zb));
      bool right = zb >= 0;  // greedy: the likelier child (p >= 1/2)
      if (how.forced)
        right = (*how.forced)[static_cast<size_t>(b)][static_cast<size_t>(l)] != 0;
      else if (how.rng)
        right = how.rng->uniform_double() < p;
      out.p[static_cast<size_t>(b)].push_back(static_cast<float>(p));
      // log σ(z) = −softplus(−z) (right), log(1 − σ(z)) = −softplus(z) (left)
      sign[b] = right ? -1.0f : 1.0f;
      k[static_cast<size_t>(b)] = 2 * k[static_cast<size_t>(b)] + (right ? 1 : 0);
    }
    Var lp = ad::neg(ad::softplus(ad::mul(z, t.constant(std::move(sign)))));
    out.log_prob = out.log_prob.valid() ? ad::add(out.log_prob, lp) : lp;
    if (how.entropy) {  // H(σ(z)) = p softplus(−z) + (1 − p) softplus(z) = softplus(z) − z σ(z)
      Var ent = ad::sub(ad::softplus(z), ad::mul(z, ad::sigmoid(z)));
      out.entropy = out.entropy.valid() ? ad::add(out.entropy, ent) : ent;
    }
  }
  for (int64_t b = 0; b < B; ++b) out.leaf.push_back(k[static_cast<size_t>(b)] - n);
  // Read the leaf, WRITE it, and JOIN the path back up (each sibling read as it stands).
  out.read = ad::embedding(tree.nodes, rows_at(k, n));
  Var wwx = ad::slice(w.write_w, 1, 0, m), wwh = ad::slice(w.write_w, 1, m, m + c);
  Var cur = ad::tanh(ad::add(ad::linear(out.read, wwx), ad::linear(h, wwh, w.write_b)));
  out.multiply_adds += B * m * (m + c);
  std::vector<Var> written{cur};
  std::vector<int64_t> ids;
  for (int64_t b = 0; b < B; ++b) ids.push_back(b * 2 * n + k[static_cast<size_t>(b)]);
  for (int64_t l = d; l >= 1; --l) {
    std::vector<int64_t> sib(k.size());
    std::vector<uint8_t> is_right(k.size());
    for (size_t b = 0; b < k.size(); ++b) {
      sib[b] = k[b] ^ 1;
      is_right[b] = static_cast<uint8_t>(k[b] & 1);
      k[b] /= 2;
    }
    Var s = ad::embedding(tree.nodes, rows_at(sib, n));
    Var pair =
        ad::concat({ad::select_rows(is_right, s, cur), ad::select_rows(is_right, cur, s)}, 1);
    cur = join_pairs(pair, w);
    out.multiply_adds += jh ? B * (2 * m * jh + jh * m) : B * 2 * m * m;
    written.push_back(cur);
    for (int64_t b = 0; b < B; ++b) ids.push_back(b * 2 * n + k[static_cast<size_t>(b)]);
  }
  std::vector<uint8_t> keep;
  for (int64_t l = 0; l <= d; ++l) keep.insert(keep.end(), active.begin(), active.end());
  for (uint8_t a : keep) out.rows_replaced += a != 0;
  out.tree = tree;
  out.tree.nodes = replace_rows(tree.nodes, ad::concat(written, 0), ids, keep);
  return out;
}

}  // namespace attnkit::memory
