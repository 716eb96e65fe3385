#include "attnkit/memory/hopfield.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "attnkit/core/blas.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"

namespace attnkit::memory {

namespace {

// [rows, cols] of a rank-1 or rank-2 tensor; ShapeError otherwise.
std::pair<int64_t, int64_t> rows_cols(const Tensor& x, const char* what) {
  if (x.rank() == 1) return {1, x.dim(0)};
  if (x.rank() == 2) return {x.dim(0), x.dim(1)};
  throw ShapeError(std::string(what) + " must be a matrix (one per row), not shape " +
                   shape_str(x.shape()));
}

Tensor as_matrix(const Tensor& x, const char* what) {
  auto [r, c] = rows_cols(x, what);
  Tensor t = x.clone();
  t.reshape({r, c});
  return t;
}

void zero_diagonal(Tensor& w) {
  const int64_t n = w.dim(0);
  for (int64_t i = 0; i < n; ++i) w.at(i, i) = 0.0f;
}

// Per-neuron tolerance below which a field counts as zero.
std::vector<float> zero_tolerance(const Net& net) {
  const int64_t n = net.n();
  std::vector<float> tol(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = std::fabs(net.b[i]);
    const float* row = net.W.data() + i * n;
    for (int64_t j = 0; j < n; ++j) s += std::fabs(row[j]);
    tol[i] = static_cast<float>(1e-6 * s);
  }
  return tol;
}

// The new state of a neuron from its field: +1, -1, or (a zero field) the old one.
inline float decide(float h, float tol, float old) {
  return h > tol ? 1.0f : (h < -tol ? -1.0f : old);
}

bool is_fixed(const float* s, const float* h, const float* tol, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (decide(h[i], tol[i], s[i]) != s[i]) return false;
  return true;
}

// E from the fields: -1/2 s'(h - b) - b's.
double energy_from_fields(const float* s, const float* h, const float* b, int64_t n) {
  double e = 0.0;
  for (int64_t i = 0; i < n; ++i) e += -0.5 * s[i] * (double(h[i]) - b[i]) - double(b[i]) * s[i];
  return e;
}

// E from the definition, in double: O(N^2).
double energy_exact(const Net& net, const float* s) {
  const int64_t n = net.n();
  double e = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = net.W.data() + i * n;
    double f = 0.0;
    for (int64_t j = 0; j < n; ++j) f += double(row[j]) * s[j];
    e += -0.5 * s[i] * f - double(net.b[i]) * s[i];
  }
  return e;
}

// Best overlap (largest |m|) of m[0..p).
void best_of(const float* m, int64_t p, int64_t* best, float* overlap) {
  int64_t k = 0;
  for (int64_t j = 1; j < p; ++j)
    if (std::fabs(m[j]) > std::fabs(m[k])) k = j;
  *best = p > 0 ? k + 1 : 0;
  *overlap = p > 0 ? m[k] : 0.0f;
}

uint64_t probe_seed(uint64_t seed, int64_t probe) {
  return seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(probe + 1);
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
  return parse_choice<Rule>("rule", name, {
      {"hebb", Rule::Hebb},
      {"storkey", Rule::Storkey},
      {"pseudo-inverse", Rule::PseudoInverse},
  });
}

std::string rule_name(Rule rule) {
  switch (rule) {
    case Rule::Hebb: return "hebb";
    case Rule::Storkey: return "storkey";
    case Rule::PseudoInverse: return "pseudo-inverse";
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
    throw ShapeError("states have " + std::to_string(n) + " columns but the net has N = " +
                     std::to_string(net.n()) + " neurons");
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
    e[r] = static_cast<float>(energy_from_fields(states.data() + r * n, h.data() + r * n,
                                                 net.b.data(), n));
  return e;
}

// ---------------------------------------------------------------- recall

Mode parse_mode(const std::string& name) {
  return parse_choice<Mode>("mode", name, {
      {"async", Mode::Async},
      {"sync", Mode::Sync},
  });
}

Order parse_order(const std::string& name) {
  return parse_choice<Order>("order", name, {
      {"random", Order::Random},
      {"sequential", Order::Sequential},
  });
}

std::string outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Converged: return "converged";
    case Outcome::Cycled: return "cycled";
    case Outcome::Limit: return "limit";
  }
  return "?";
}

namespace {

struct Recaller {
  Recaller(const Net& n_, const RecallOptions& o_) : net(n_), opt(o_) {}
  const Net& net;
  const RecallOptions& opt;
  int64_t n = 0, pcount = 0;
  std::vector<float> tol;
  const float* wcols = nullptr;  // row i = column i of W (W itself when symmetric)
  Tensor wt;

  // A trace row for probe k (0-based) in state s with fields h.
  TraceRow trace_row(int64_t k, int step, const float* s, const float* h, int64_t flips,
                     const float* m_given = nullptr) const {
    TraceRow t{opt.probe0 + k + 1, step, energy_from_fields(s, h, net.b.data(), n), flips, 0, 0.0f, {}};
    if (opt.patterns) {
      t.m.resize(static_cast<size_t>(pcount));
      if (m_given) {
        std::copy(m_given, m_given + pcount, t.m.begin());
      } else if (pcount > 0) {
        gemv(Trans::No, 1.0f / static_cast<float>(n), mat(*opt.patterns), s, n, 0.0f, t.m.data(),
             pcount);
      }
      best_of(t.m.data(), pcount, &t.best, &t.overlap);
    }
    return t;
  }

  void async_probe(int64_t k, float* s, float* h, ProbeResult& res, std::vector<TraceRow>& trace,
                   std::vector<FlipRow>& flips_out) const {
    Rng rng(probe_seed(opt.seed, opt.probe0 + k));
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    int64_t total_flips = 0;
    if (opt.trace) trace.push_back(trace_row(k, 0, s, h, 0));
    if (opt.trace_flips) flips_out.push_back({opt.probe0 + k + 1, 0, 0, 0, energy_exact(net, s)});
    if (is_fixed(s, h, tol.data(), n)) {
      res.outcome = Outcome::Converged;
      res.steps = 0;
      return;
    }
    res.outcome = Outcome::Limit;
    res.steps = opt.max_steps;
    for (int step = 1; step <= opt.max_steps; ++step) {
      if (opt.order == Order::Random)
        for (int64_t i = n - 1; i > 0; --i)
          std::swap(perm[i], perm[static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)))]);
      int64_t flips = 0;
      for (int64_t i : perm) {
        const float v = decide(h[i], tol[i], s[i]);
        if (v == s[i]) continue;
        s[i] = v;
        axpy(n, 2.0f * v, wcols + i * n, h);
        ++flips;
        ++total_flips;
        if (opt.trace_flips) flips_out.push_back({opt.probe0 + k + 1, step, total_flips, i + 1, energy_exact(net, s)});
      }
      if (opt.trace) trace.push_back(trace_row(k, step, s, h, flips));
      if (is_fixed(s, h, tol.data(), n)) {
        res.outcome = Outcome::Converged;
        res.steps = step;
        return;
      }
    }
  }
};

}  // namespace

RecallResult recall(const Net& net, const Tensor& probes, const RecallOptions& opt) {
  check_net(net);
  check_bipolar(probes);
  const std::pair<int64_t, int64_t> shape = rows_cols(probes, "probes");
  const int64_t count = shape.first, n = shape.second;  // (lambdas below capture them: not a structured binding)
  if (n != net.n())
    throw ShapeError("probes have " + std::to_string(n) + " columns but the net has N = " +
                     std::to_string(net.n()) + " neurons");
  if (opt.max_steps < 0) throw UsageError("max-steps must be 0 or more");
  Recaller rc(net, opt);
  rc.n = n;
  if (opt.patterns) {
    auto [pc, pn] = rows_cols(*opt.patterns, "patterns");
    if (pn != n)
      throw ShapeError("patterns have " + std::to_string(pn) + " columns but the net has N = " +
                       std::to_string(n) + " neurons");
    check_bipolar(*opt.patterns);
    rc.pcount = pc;
  }
  rc.tol = zero_tolerance(net);
  bool symmetric = true;
  for (int64_t i = 0; i < n && symmetric; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      if (net.W.at(i, j) != net.W.at(j, i)) {
        symmetric = false;
        break;
      }
  if (symmetric) {
    rc.wcols = net.W.data();
  } else {
    rc.wt = Tensor({n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) rc.wt.at(j, i) = net.W.at(i, j);
    rc.wcols = rc.wt.data();
  }

  RecallResult out;
  out.states = as_matrix(probes, "probes");
  out.probes.assign(static_cast<size_t>(count), ProbeResult{});
  Tensor h = fields(net, out.states);
  std::vector<std::vector<TraceRow>> traces(static_cast<size_t>(count));
  std::vector<std::vector<FlipRow>> flip_traces(static_cast<size_t>(count));

  if (opt.mode == Mode::Async) {
    parallel_for(count, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k)
        rc.async_probe(k, out.states.data() + k * n, h.data() + k * n, out.probes[k], traces[k],
                       flip_traces[k]);
    }, opt.threads);
  } else {
    // Sync: every neuron of a probe at once; `active` lists the probes still moving.
    std::vector<int64_t> active;
    std::vector<std::vector<int64_t>> last_flips(static_cast<size_t>(count)), now_flips(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) {
      float* s = out.states.data() + k * n;
      float* hk = h.data() + k * n;
      if (opt.trace) traces[k].push_back(rc.trace_row(k, 0, s, hk, 0));
      if (is_fixed(s, hk, rc.tol.data(), n)) {
        out.probes[k] = {Outcome::Converged, 0, 0, 0.0f};
      } else {
        out.probes[k] = {Outcome::Limit, opt.max_steps, 0, 0.0f};
        active.push_back(k);
      }
    }
    for (int step = 1; step <= opt.max_steps && !active.empty(); ++step) {
      const int64_t na = static_cast<int64_t>(active.size());
      int64_t total = 0;
      for (int64_t a = 0; a < na; ++a) {
        const int64_t k = active[a];
        float* s = out.states.data() + k * n;
        const float* hk = h.data() + k * n;
        auto& fl = now_flips[k];
        fl.clear();
        for (int64_t i = 0; i < n; ++i) {
          const float v = decide(hk[i], rc.tol[i], s[i]);
          if (v != s[i]) {
            s[i] = v;
            fl.push_back(i);
          }
        }
        total += static_cast<int64_t>(fl.size());
      }
      // New fields: column updates when few neurons flipped, else one sgemm.
      if (total * 16 < na * n) {
        parallel_for(na, [&](int64_t begin, int64_t end) {
          for (int64_t a = begin; a < end; ++a) {
            const int64_t k = active[a];
            const float* s = out.states.data() + k * n;
            for (int64_t i : now_flips[k]) axpy(n, 2.0f * s[i], rc.wcols + i * n, h.data() + k * n);
          }
        }, opt.threads);
      } else {
        Tensor sa({na, n}), ha({na, n});
        for (int64_t a = 0; a < na; ++a) {
          std::copy(out.states.data() + active[a] * n, out.states.data() + (active[a] + 1) * n,
                    sa.data() + a * n);
          std::copy(net.b.data(), net.b.data() + n, ha.data() + a * n);
        }
        gemm(Trans::No, Trans::Yes, 1.0f, mat(sa), mat(net.W), 1.0f, mat(ha));
        for (int64_t a = 0; a < na; ++a)
          std::copy(ha.data() + a * n, ha.data() + (a + 1) * n, h.data() + active[a] * n);
      }
      Tensor m;
      if (opt.trace && opt.patterns && rc.pcount > 0) {
        Tensor sa({na, n});
        for (int64_t a = 0; a < na; ++a)
          std::copy(out.states.data() + active[a] * n, out.states.data() + (active[a] + 1) * n,
                    sa.data() + a * n);
        m = Tensor({na, rc.pcount});
        gemm(Trans::No, Trans::Yes, 1.0f / static_cast<float>(n), mat(sa), mat(*opt.patterns),
             0.0f, mat(m));
      }
      std::vector<int64_t> still;
      for (int64_t a = 0; a < na; ++a) {
        const int64_t k = active[a];
        const float* s = out.states.data() + k * n;
        const float* hk = h.data() + k * n;
        if (opt.trace)
          traces[k].push_back(rc.trace_row(k, step, s, hk, static_cast<int64_t>(now_flips[k].size()),
                                           m.empty() ? nullptr : m.data() + a * rc.pcount));
        if (is_fixed(s, hk, rc.tol.data(), n)) {
          out.probes[k] = {Outcome::Converged, step, 0, 0.0f};
        } else if (step >= 2 && now_flips[k] == last_flips[k]) {
          out.probes[k] = {Outcome::Cycled, step, 0, 0.0f};
        } else {
          still.push_back(k);
        }
        std::swap(last_flips[k], now_flips[k]);
      }
      active.swap(still);
    }
  }

  // Retrieved patterns: overlaps of the final states, one sgemm.
  if (opt.patterns && rc.pcount > 0 && count > 0) {
    Tensor m({count, rc.pcount});
    gemm(Trans::No, Trans::Yes, 1.0f / static_cast<float>(n), mat(out.states), mat(*opt.patterns),
         0.0f, mat(m));
    for (int64_t k = 0; k < count; ++k)
      best_of(m.data() + k * rc.pcount, rc.pcount, &out.probes[k].best, &out.probes[k].overlap);
  }
  for (auto& t : traces)
    for (auto& row : t) out.trace.push_back(std::move(row));
  for (auto& t : flip_traces)
    for (auto& row : t) out.flip_trace.push_back(row);
  return out;
}

std::string format_trace(const std::vector<TraceRow>& trace, int64_t patterns) {
  std::string out = "probe\tstep\tenergy\tflips";
  if (patterns > 0) {
    out += "\tbest\toverlap";
    for (int64_t j = 1; j <= patterns; ++j) out += "\tm" + std::to_string(j);
  }
  out += '\n';
  char buf[64];
  for (const auto& t : trace) {
    std::snprintf(buf, sizeof buf, "%lld\t%d\t%.9g\t%lld", static_cast<long long>(t.probe), t.step,
                  t.energy, static_cast<long long>(t.flips));
    out += buf;
    if (patterns > 0) {
      std::snprintf(buf, sizeof buf, "\t%lld\t%.6g", static_cast<long long>(t.best),
                    static_cast<double>(t.overlap));
      out += buf;
      for (float v : t.m) {
        std::snprintf(buf, sizeof buf, "\t%.6g", static_cast<double>(v));
        out += buf;
      }
    }
    out += '\n';
  }
  return out;
}

std::string format_flip_trace(const std::vector<FlipRow>& trace) {
  std::string out = "probe\tstep\tflip\tneuron\tenergy\n";
  char buf[96];
  for (const auto& t : trace) {
    std::snprintf(buf, sizeof buf, "%lld\t%d\t%lld\t%lld\t%.12g\n", static_cast<long long>(t.probe),
                  t.step, static_cast<long long>(t.flip), static_cast<long long>(t.neuron), t.energy);
    out += buf;
  }
  return out;
}

}  // namespace attnkit::memory
