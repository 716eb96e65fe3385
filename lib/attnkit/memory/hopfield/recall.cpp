// Hopfield recall: the classic dynamics (asynchronous, in a seeded random or a fixed order,
// and synchronous over a batch of probes), their traces and the run's report.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/memory/hopfield/detail.h"
#include "attnkit/memory/hopfield/model.h"

namespace attnkit::memory {

using detail::as_matrix;
using detail::energy_from_fields;
using detail::rows_cols;

namespace {

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
    TraceRow t{
        opt.probe0 + k + 1, step, energy_from_fields(s, h, net.b.data(), n), flips, 0, 0.0f, {}};
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
        if (opt.trace_flips)
          flips_out.push_back({opt.probe0 + k + 1, step, total_flips, i + 1, energy_exact(net, s)});
      }
      if (opt.trace) trace.push_back(trace_row(k, step, s, h, flips));
      if (is_fixed(s, h, tol.data(), n)) {
        res.outcome = Outcome::Converged;
        res.steps = step;
        return;
      }
    }
  }

  // Synchronous dynamics: every neuron of a probe at once; `active` lists the probes still
  // moving. The fields are updated by columns when few neurons flipped, else by one sgemm.
  void sync_run(RecallResult& out, Tensor& h, std::vector<std::vector<TraceRow>>& traces,
                int64_t count) const {
    std::vector<int64_t> active;
    std::vector<std::vector<int64_t>> last_flips(static_cast<size_t>(count)),
        now_flips(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) {
      float* s = out.states.data() + k * n;
      float* hk = h.data() + k * n;
      if (opt.trace) traces[k].push_back(trace_row(k, 0, s, hk, 0));
      if (is_fixed(s, hk, tol.data(), n)) {
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
          const float v = decide(hk[i], tol[i], s[i]);
          if (v != s[i]) {
            s[i] = v;
            fl.push_back(i);
          }
        }
        total += static_cast<int64_t>(fl.size());
      }
      // New fields: column updates when few neurons flipped, else one sgemm.
      if (total * 16 < na * n) {
        parallel_for(
            na,
            [&](int64_t begin, int64_t end) {
              for (int64_t a = begin; a < end; ++a) {
                const int64_t k = active[a];
                const float* s = out.states.data() + k * n;
                for (int64_t i : now_flips[k])
                  axpy(n, 2.0f * s[i], wcols + i * n, h.data() + k * n);
              }
            },
            opt.threads);
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
      if (opt.trace && opt.patterns && pcount > 0) {
        Tensor sa({na, n});
        for (int64_t a = 0; a < na; ++a)
          std::copy(out.states.data() + active[a] * n, out.states.data() + (active[a] + 1) * n,
                    sa.data() + a * n);
        m = Tensor({na, pcount});
        gemm(Trans::No, Trans::Yes, 1.0f / static_cast<float>(n), mat(sa), mat(*opt.patterns), 0.0f,
             mat(m));
      }
      std::vector<int64_t> still;
      for (int64_t a = 0; a < na; ++a) {
        const int64_t k = active[a];
        const float* s = out.states.data() + k * n;
        const float* hk = h.data() + k * n;
        if (opt.trace)
          traces[k].push_back(trace_row(k, step, s, hk, static_cast<int64_t>(now_flips[k].size()),
                                        m.empty() ? nullptr : m.data() + a * pcount));
        if (is_fixed(s, hk, tol.data(), n)) {
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
};

}  // namespace

RecallResult recall(const Net& net, const Tensor& probes, const RecallOptions& opt) {
  check_net(net);
  check_bipolar(probes);
  const std::pair<int64_t, int64_t> shape = rows_cols(probes, "probes");
  const int64_t count = shape.first,
                n = shape.second;  // (lambdas below capture them: not a structured binding)
  if (n != net.n())
    throw ShapeError("probes have " + std::to_string(n) +
                     " columns but the net has N = " + std::to_string(net.n()) + " neurons");
  if (opt.max_steps < 0) throw UsageError("max-steps must be 0 or more");
  Recaller rc(net, opt);
  rc.n = n;
  if (opt.patterns) {
    auto [pc, pn] = rows_cols(*opt.patterns, "patterns");
    if (pn != n)
      throw ShapeError("patterns have " + std::to_string(pn) +
                       " columns but the net has N = " + std::to_string(n) + " neurons");
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
    parallel_for(
        count,
        [&](int64_t begin, int64_t end) {
          for (int64_t k = begin; k < end; ++k)
            rc.async_probe(k, out.states.data() + k * n, h.data() + k * n, out.probes[k], traces[k],
                           flip_traces[k]);
        },
        opt.threads);
  } else {
    rc.sync_run(out, h, traces, count);
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
                  t.step, static_cast<long long>(t.flip), static_cast<long long>(t.neuron),
                  t.energy);
    out += buf;
  }
  return out;
}

std::vector<std::string> recall_report(const RecallResult& r, const RecallOptions& opt,
                                       bool named) {
  std::vector<std::string> lines;
  int64_t conv = 0, cyc = 0, lim = 0, steps = 0, exact = 0, mirror = 0;
  char buf[320];
  for (size_t k = 0; k < r.probes.size(); ++k) {
    const auto& p = r.probes[k];
    (p.outcome == Outcome::Converged ? conv : p.outcome == Outcome::Cycled ? cyc : lim)++;
    steps += p.steps;
    if (!named) continue;
    if (p.overlap == 1.0f) ++exact;
    if (p.overlap == -1.0f) ++mirror;
    const char* what = p.outcome == Outcome::Converged ? "converged after"
                       : p.outcome == Outcome::Cycled  ? "entered a 2-cycle after"
                                                       : "still moving after";
    std::snprintf(buf, sizeof buf, "probe %lld: %s %d step%s: pattern %lld (overlap %.4g%s)",
                  static_cast<long long>(opt.probe0 + static_cast<int64_t>(k) + 1), what, p.steps,
                  p.steps == 1 ? "" : "s", static_cast<long long>(p.best),
                  static_cast<double>(p.overlap),
                  p.overlap == 1.0f    ? ", exact"
                  : p.overlap == -1.0f ? ", its mirror image"
                                       : "");
    lines.emplace_back(buf);
  }
  std::snprintf(buf, sizeof buf,
                "%zu probes (%s%s): %lld converged, %lld cycled, %lld hit the limit of %d steps; "
                "mean steps %.3g",
                r.probes.size(), opt.mode == Mode::Async ? "async" : "sync",
                opt.mode == Mode::Async
                    ? (opt.order == Order::Random ? ", random order" : ", sequential order")
                    : "",
                static_cast<long long>(conv), static_cast<long long>(cyc),
                static_cast<long long>(lim), opt.max_steps,
                r.probes.empty() ? 0.0 : static_cast<double>(steps) / r.probes.size());
  lines.emplace_back(buf);
  if (named)
    lines.push_back(std::to_string(exact) + " ended exactly on a stored pattern, " +
                    std::to_string(mirror) + " on a mirror image");
  return lines;
}

}  // namespace attnkit::memory
