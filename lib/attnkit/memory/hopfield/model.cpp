#include "attnkit/memory/hopfield/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "attnkit/core/blas.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/memory/hopfield/detail.h"

namespace attnkit::memory {

using detail::as_matrix;
using detail::energy_from_fields;
using detail::rows_cols;

namespace {

void zero_diagonal(Tensor& w) {
  const int64_t n = w.dim(0);
  for (int64_t i = 0; i < n; ++i) w.at(i, i) = 0.0f;
}

}  // namespace

// ---------------------------------------------------------------- patterns

void check_bipolar(const Tensor& x) {
  auto [rows, cols] = rows_cols(x, "patterns");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[r * cols + c];
      if (v != 1.0f && v != -1.0f) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
        throw DataError("row " + std::to_string(r + 1) + ", column " + std::to_string(c + 1) +
                        ": value " + buf + " is not -1 or +1");
      }
    }
}

int64_t flip_count(double fraction, int64_t n) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw DataError("the fraction of bits to flip must be between 0 and 1");
  return static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
}

Tensor flip_bits(const Tensor& x, int64_t count, uint64_t seed) {
  check_bipolar(x);
  auto [rows, n] = rows_cols(x, "patterns");
  if (count < 0 || count > n)
    throw DataError("cannot flip " + std::to_string(count) + " bits of patterns of " +
                    std::to_string(n) + " (0 to " + std::to_string(n) + ")");
  Tensor out = x.clone();
  Rng rng(seed);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(idx.begin(), idx.end(), int64_t{0});
    for (int64_t k = 0; k < count; ++k) {
      const int64_t j = k + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - k)));
      std::swap(idx[k], idx[j]);
      out[r * n + idx[k]] = -out[r * n + idx[k]];
    }
  }
  return out;
}

// ---------------------------------------------------------------- storing

Rule parse_rule(const std::string& name) {
  return parse_choice<Rule>("rule", name,
                            {
                                {"hebb", Rule::Hebb},
                                {"storkey", Rule::Storkey},
                                {"pseudo-inverse", Rule::PseudoInverse},
                            });
}

std::string rule_name(Rule rule) {
  switch (rule) {
    case Rule::Hebb:
      return "hebb";
    case Rule::Storkey:
      return "storkey";
    case Rule::PseudoInverse:
      return "pseudo-inverse";
  }
  return "?";
}

void check_net(const Net& net) {
  if (net.W.rank() != 2 || net.W.dim(0) != net.W.dim(1))
    throw ShapeError("W must be square (N x N), not " + shape_str(net.W.shape()));
  if (net.b.size() != net.W.dim(0))
    throw ShapeError("b has shape " + shape_str(net.b.shape()) + " but W is " +
                     shape_str(net.W.shape()) + " (b needs N values)");
}

Net store(const Tensor& patterns, Rule rule) {
  check_bipolar(patterns);
  const Tensor x = as_matrix(patterns, "patterns");
  const int64_t p = x.dim(0), n = x.dim(1);
  Net net{Tensor({n, n}), Tensor({n})};
  if (n == 0) return net;
  const float inv_n = 1.0f / static_cast<float>(n);
  switch (rule) {
    case Rule::Hebb:
      if (p > 0) gemm(Trans::Yes, Trans::No, inv_n, mat(x), mat(x), 0.0f, mat(net.W));
      zero_diagonal(net.W);
      break;
    case Rule::Storkey: {
      // Rank-2 update per pattern as one gemm: A = [p, -f] (N x 2), B = [(p - f)'; p'] (2 x N),
      // so A B = p(p - f)' - f p' = p p' - p f' - f p'.
      Tensor a({n, 2}), bm({2, n}), f({n});
      for (int64_t mu = 0; mu < p; ++mu) {
        const float* pat = x.data() + mu * n;
        gemv(Trans::No, 1.0f, mat(net.W), pat, n, 0.0f, f.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          a.at(i, 0) = pat[i];
          a.at(i, 1) = -f[i];
          bm.at(0, i) = pat[i] - f[i];
          bm.at(1, i) = pat[i];
        }
        gemm(Trans::No, Trans::No, inv_n, mat(a), mat(bm), 1.0f + 2.0f * inv_n, mat(net.W));
        zero_diagonal(net.W);
      }
      break;
    }
    case Rule::PseudoInverse: {
      // Gram matrix G = X X' (integers, exact in float for N < 2^24), Cholesky in double.
      Tensor g({p, p});
      if (p > 0) gemm(Trans::No, Trans::Yes, 1.0f, mat(x), mat(x), 0.0f, mat(g));
      std::vector<double> l(static_cast<size_t>(p * p), 0.0);
      std::vector<int64_t> kept;  // independent patterns, in order
      for (int64_t i = 0; i < p; ++i) {
        // Row of L for pattern i against the kept ones: L_ik = (G_ik - sum_j L_ij L_kj) / L_kk.
        std::vector<double> row(kept.size());
        double d = g.at(i, i);
        for (size_t a = 0; a < kept.size(); ++a) {
          const int64_t k = kept[a];
          double s = g.at(i, k);
          for (size_t c = 0; c < a; ++c) s -= row[c] * l[k * p + static_cast<int64_t>(c)];
          row[a] = s / l[k * p + static_cast<int64_t>(a)];
          d -= row[a] * row[a];
        }
        if (d <= 1e-6 * static_cast<double>(n)) continue;  // in the span of earlier patterns
        const size_t a = kept.size();
        for (size_t c = 0; c < a; ++c) l[i * p + static_cast<int64_t>(c)] = row[c];
        l[i * p + static_cast<int64_t>(a)] = std::sqrt(d);
        kept.push_back(i);
      }
      // Q = L^-1 X_kept (forward substitution in double): orthonormal rows.
      const int64_t r = static_cast<int64_t>(kept.size());
      std::vector<double> q(static_cast<size_t>(r * n));
      for (int64_t a = 0; a < r; ++a) {
        const int64_t i = kept[a];
        double* qa = q.data() + a * n;
        for (int64_t j = 0; j < n; ++j) qa[j] = x[i * n + j];
        for (int64_t c = 0; c < a; ++c) {
          const double lc = l[i * p + c];
          const double* qc = q.data() + c * n;
          for (int64_t j = 0; j < n; ++j) qa[j] -= lc * qc[j];
        }
        const double inv = 1.0 / l[i * p + a];
        for (int64_t j = 0; j < n; ++j) qa[j] *= inv;
      }
      Tensor qf({r, n});
      for (int64_t k = 0; k < r * n; ++k) qf[k] = static_cast<float>(q[k]);
      if (r > 0) gemm(Trans::Yes, Trans::No, 1.0f, mat(qf), mat(qf), 0.0f, mat(net.W));
      zero_diagonal(net.W);
      break;
    }
  }
  // Exact symmetry (the gemms are symmetric up to rounding).
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      const float v = 0.5f * (net.W.at(i, j) + net.W.at(j, i));
      net.W.at(i, j) = net.W.at(j, i) = v;
    }
  return net;
}

// ---------------------------------------------------------------- fields and energy

Tensor fields(const Net& net, const Tensor& states) {
  check_net(net);
  auto [rows, n] = rows_cols(states, "states");
  if (n != net.n())
    throw ShapeError("states have " + std::to_string(n) +
                     " columns but the net has N = " + std::to_string(net.n()) + " neurons");
  Tensor s = as_matrix(states, "states");
  Tensor h({rows, n});
  for (int64_t r = 0; r < rows; ++r) std::copy(net.b.data(), net.b.data() + n, h.data() + r * n);
  if (rows > 0 && n > 0) gemm(Trans::No, Trans::Yes, 1.0f, mat(s), mat(net.W), 1.0f, mat(h));
  return h;
}

Tensor energy(const Net& net, const Tensor& states) {
  const Tensor h = fields(net, states);
  const int64_t rows = h.dim(0), n = h.dim(1);
  Tensor e({rows});
  for (int64_t r = 0; r < rows; ++r)
    e[r] = static_cast<float>(
        energy_from_fields(states.data() + r * n, h.data() + r * n, net.b.data(), n));
  return e;
}

// ---------------------------------------------------------------- recall

Mode parse_mode(const std::string& name) {
  return parse_choice<Mode>("mode", name,
                            {
                                {"async", Mode::Async},
                                {"sync", Mode::Sync},
                            });
}

Order parse_order(const std::string& name) {
  return parse_choice<Order>("order", name,
                             {
                                 {"random", Order::Random},
                                 {"sequential", Order::Sequential},
                             });
}

std::string outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Converged:
      return "converged";
    case Outcome::Cycled:
      return "cycled";
    case Outcome::Limit:
      return "limit";
  }
  return "?";
}

}  // namespace attnkit::memory
