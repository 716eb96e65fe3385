// lib/attnkit/memory/hopfield*: storage rules against their formulas computed naively here,
// the dynamics against naive implementations, and the theory: energy descent, capacity
// statistics at N = 1000 (Amit-Gutfreund-Sompolinsky), the checkerboard's one-step recovery
// and 2-cycle, the modern update as softmax attention.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor_random.h"
#include "attnkit/memory/hopfield/model.h"
#include "attnkit/memory/hopfield/modern.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_hopfield_test {

using namespace attnkit;
using namespace attnkit::memory;

namespace {

Tensor signs(int64_t rows, int64_t cols, uint64_t seed) {
  Tensor t({rows, cols});
  Rng rng(seed);
  fill_random(t, rng, RandomSpec{Distribution::Sign});
  return t;
}

Tensor normals(int64_t rows, int64_t cols, uint64_t seed, double scale = 1.0) {
  Tensor t({rows, cols});
  Rng rng(seed);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

// Fraction of entries where a and b differ.
double error_rate(const Tensor& a, const Tensor& b) {
  int64_t bad = 0;
  for (int64_t i = 0; i < a.size(); ++i) bad += a[i] != b[i];
  return static_cast<double>(bad) / static_cast<double>(a.size());
}

// A random symmetric net with zero diagonal and random thresholds.
Net random_net(int64_t n, uint64_t seed) {
  Net net{normals(n, n, seed), normals(1, n, seed + 1, 0.3)};
  net.b.reshape({n});
  for (int64_t i = 0; i < n; ++i) {
    net.W.at(i, i) = 0.0f;
    for (int64_t j = 0; j < i; ++j) net.W.at(i, j) = net.W.at(j, i);
  }
  return net;
}

double naive_field(const Net& net, const std::vector<double>& s, int64_t i) {
  double h = net.b[i];
  for (size_t j = 0; j < s.size(); ++j) h += double(net.W.at(i, static_cast<int64_t>(j))) * s[j];
  return h;
}

Tensor checkerboard() {
  Tensor c({1, 16});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) c[y * 4 + x] = (x + y) % 2 ? -1.0f : 1.0f;
  return c;
}

}  // namespace

TEST_CASE("patterns: bipolar check names row and column; flips are exact and seeded") {
  Tensor x({2, 3}, {1, -1, 1, -1, 0.5f, 1});
  try {
    check_bipolar(x);
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) == "row 2, column 2: value 0.5 is not -1 or +1");
  }
  const Tensor p = signs(20, 100, 3);
  for (int64_t k : {0, 1, 10, 100}) {
    const Tensor f = flip_bits(p, k, 9);
    for (int64_t r = 0; r < 20; ++r) {
      int64_t d = 0;
      for (int64_t j = 0; j < 100; ++j) d += f.at(r, j) != p.at(r, j);
      CHECK(d == k);
    }
    check_bipolar(f);
    test::check_close(flip_bits(p, k, 9), f, 0, 0);
  }
  CHECK(error_rate(flip_bits(p, 10, 1), flip_bits(p, 10, 2)) > 0);
  CHECK_THROWS_AS(flip_bits(p, 101, 1), DataError);
  CHECK(flip_count(0.1, 64) == 6);
  CHECK(flip_count(0.5, 5) == 3);
  CHECK_THROWS_AS(flip_count(1.5, 10), DataError);
}

TEST_CASE("hebb: symmetric, zero diagonal, (1/N) sum p_i p_j") {
  const Tensor p = signs(7, 30, 11);
  const Net net = store(p, Rule::Hebb);
  REQUIRE(net.W.shape() == Shape({30, 30}));
  REQUIRE(net.b.shape() == Shape({30}));
  for (int64_t i = 0; i < 30; ++i) {
    CHECK(net.W.at(i, i) == 0.0f);
    CHECK(net.b[i] == 0.0f);
    for (int64_t j = 0; j < 30; ++j) {
      CHECK(net.W.at(i, j) == net.W.at(j, i));
      if (i == j) continue;
      double w = 0;
      for (int64_t mu = 0; mu < 7; ++mu) w += p.at(mu, i) * p.at(mu, j);
      CHECK(net.W.at(i, j) == doctest::Approx(w / 30).epsilon(1e-6));
    }
  }
  CHECK_THROWS_AS(store(Tensor({2, 2}, {1, 0, 1, 1}), Rule::Hebb), DataError);
}

TEST_CASE("storkey: the incremental rule with h_ij = sum_{k != i,j} w_ik p_k, computed naively") {
  const int64_t n = 12, pc = 4;
  const Tensor p = signs(pc, n, 5);
  std::vector<double> w(n * n, 0.0);
  for (int64_t mu = 0; mu < pc; ++mu) {
    std::vector<double> nw = w;
    auto h = [&](int64_t i, int64_t j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k)
        if (k != i && k != j) s += w[i * n + k] * p.at(mu, k);
      return s;
    };
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (i != j)
          nw[i * n + j] =
              w[i * n + j] +
              (p.at(mu, i) * p.at(mu, j) - p.at(mu, i) * h(j, i) - h(i, j) * p.at(mu, j)) / n;
    w = nw;
  }
  const Net net = store(p, Rule::Storkey);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      CHECK(net.W.at(i, j) == doctest::Approx(w[i * n + j]).epsilon(1e-5));
}

TEST_CASE("pseudo-inverse: projection onto the patterns' span, diagonal zeroed") {
  // Correlated patterns: a common core with a few private bits each.
  const int64_t n = 64, pc = 6;
  Tensor p = signs(1, n, 21);
  Tensor x({pc, n});
  Rng rng(4);
  for (int64_t mu = 0; mu < pc; ++mu)
    for (int64_t j = 0; j < n; ++j) x.at(mu, j) = rng.uniform() < 0.15 ? -p[j] : p[j];
  const Net pinv = store(x, Rule::PseudoInverse);
  // W + D is the projection P (D its diagonal, restored): P x_mu = x_mu, P symmetric, P^2 = P.
  std::vector<double> proj(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) proj[i * n + j] = pinv.W.at(i, j);
  // The diagonal of a projection: d_i = sum_j P_ij^2 / d_i ... solve from P x = x instead:
  // (W x)_i + d_i x_i = x_i for every pattern; all must agree on d_i.
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> d;
    for (int64_t mu = 0; mu < pc; ++mu) {
      double f = 0;
      for (int64_t j = 0; j < n; ++j) f += proj[i * n + j] * x.at(mu, j);
      d.push_back(1.0 - f / x.at(mu, i));
    }
    for (double v : d) CHECK(v == doctest::Approx(d[0]).epsilon(1e-4));
    CHECK(d[0] > 0.0);
    CHECK(d[0] < 1.0);
    CHECK(pinv.W.at(i, i) == 0.0f);
  }
  // Every pattern is a fixed point of the projection net; the Hebb net loses some.
  RecallOptions one;
  one.mode = Mode::Sync;
  one.max_steps = 0;
  const auto rp = recall(pinv, x, one);
  for (const auto& r : rp.probes) CHECK(r.outcome == Outcome::Converged);
  const auto rh = recall(store(x, Rule::Hebb), x, one);
  int64_t fixed = 0;
  for (const auto& r : rh.probes) fixed += r.outcome == Outcome::Converged;
  CHECK(fixed < pc);
  // A pattern repeated (linearly dependent) adds nothing.
  Tensor x2({pc + 1, n});
  std::copy(x.data(), x.data() + pc * n, x2.data());
  std::copy(x.data(), x.data() + n, x2.data() + pc * n);
  test::check_close(store(x2, Rule::PseudoInverse).W, pinv.W, 1e-5, 0);
}

TEST_CASE("energy: -1/2 s'Ws - b's; fields W s + b") {
  const Net net = random_net(9, 40);
  const Tensor s = signs(5, 9, 41);
  const Tensor e = energy(net, s);
  const Tensor h = memory::fields(net, s);
  for (int64_t r = 0; r < 5; ++r) {
    std::vector<double> sv(s.data() + r * 9, s.data() + (r + 1) * 9);
    double want = 0;
    for (int64_t i = 0; i < 9; ++i) {
      const double f = naive_field(net, sv, i) - net.b[i];
      want += -0.5 * sv[i] * f - net.b[i] * sv[i];
      CHECK(h.at(r, i) == doctest::Approx(naive_field(net, sv, i)).epsilon(1e-5));
    }
    CHECK(e[r] == doctest::Approx(want).epsilon(1e-5));
  }
  CHECK_THROWS_AS(energy(net, signs(2, 8, 1)), ShapeError);
}

TEST_CASE("async energy never increases, at every flip, over random nets and probes") {
  int64_t flips = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const int64_t n = 20 + static_cast<int64_t>(seed % 5) * 9;
    Net net;
    switch (seed % 4) {
      case 0:
        net = random_net(n, seed);
        break;
      case 1:
        net = store(signs(n / 5, n, seed), Rule::Hebb);
        break;
      case 2:
        net = store(signs(n / 4, n, seed), Rule::Storkey);
        break;
      default:
        net = store(signs(n / 3, n, seed), Rule::PseudoInverse);
        break;
    }
    RecallOptions opt;
    opt.seed = seed;
    opt.trace_flips = true;
    opt.order = seed % 2 ? Order::Random : Order::Sequential;
    const auto r = recall(net, signs(6, n, seed + 100), opt);
    for (size_t k = 1; k < r.flip_trace.size(); ++k) {
      const auto& a = r.flip_trace[k - 1];
      const auto& b = r.flip_trace[k];
      if (a.probe != b.probe) continue;
      ++flips;
      CHECK_MESSAGE(b.energy < a.energy + 1e-9 * (1 + std::fabs(a.energy)),
                    "seed " << seed << " probe " << b.probe << " flip " << b.flip);
    }
    for (const auto& p : r.probes) CHECK(p.outcome == Outcome::Converged);
    // Each final state is a fixed point: no field disagrees with its neuron.
    const Tensor h = memory::fields(net, r.states);
    for (int64_t i = 0; i < r.states.size(); ++i) CHECK(h[i] * r.states[i] >= -1e-5f);
  }
  CHECK(flips > 500);
}

TEST_CASE("async sequential and sync dynamics match naive implementations") {
  const int64_t n = 62;  // P (N - 1) odd: no zero fields with Hebb
  const Tensor p = signs(9, n, 77);
  const Net net = store(p, Rule::Hebb);
  const Tensor probes = flip_bits(p, 15, 3);
  RecallOptions opt;
  opt.order = Order::Sequential;
  const auto r = recall(net, probes, opt);
  RecallOptions sopt;
  sopt.mode = Mode::Sync;
  sopt.max_steps = 3;
  const auto rs = recall(net, probes, sopt);
  for (int64_t k = 0; k < 9; ++k) {
    std::vector<double> s(probes.data() + k * n, probes.data() + (k + 1) * n);
    for (int sweep = 0; sweep < 100; ++sweep)
      for (int64_t i = 0; i < n; ++i) {
        const double h = naive_field(net, s, i);
        if (h != 0) s[i] = h > 0 ? 1 : -1;
      }
    for (int64_t i = 0; i < n; ++i) CHECK(r.states.at(k, i) == s[i]);
    std::vector<double> t(probes.data() + k * n, probes.data() + (k + 1) * n);
    for (int step = 0; step < 3; ++step) {
      std::vector<double> u = t;
      for (int64_t i = 0; i < n; ++i) {
        const double h = naive_field(net, t, i);
        if (h != 0) u[i] = h > 0 ? 1 : -1;
      }
      t = u;
    }
    for (int64_t i = 0; i < n; ++i) CHECK(rs.states.at(k, i) == t[i]);
  }
}

TEST_CASE("sync: dense (sgemm) and column-update steps agree; async does not depend on threads") {
  const int64_t n = 301;
  const Tensor p = signs(30, n, 8);
  const Net net = store(p, Rule::Hebb);
  // 40% flipped: the first steps flip many neurons (sgemm), the later ones few (columns).
  const Tensor many = flip_bits(p, 120, 5);
  RecallOptions opt;
  opt.mode = Mode::Sync;
  const auto r = recall(net, many, opt);
  for (int64_t k = 0; k < 30; ++k) {
    Tensor one({1, n});
    std::copy(many.data() + k * n, many.data() + (k + 1) * n, one.data());
    const auto rk = recall(net, one, opt);  // one probe alone: its own step mix
    for (int64_t i = 0; i < n; ++i) CHECK(rk.states[i] == r.states.at(k, i));
  }
  RecallOptions a1, a2;
  a1.seed = a2.seed = 17;
  a1.threads = 1;
  a2.threads = 2;
  test::check_close(recall(net, many, a1).states, recall(net, many, a2).states, 0, 0);
  a2.seed = 18;
  CHECK(error_rate(recall(net, many, a1).states, recall(net, many, a2).states) > 0);
}

TEST_CASE("capacity at N = 1000 (Amit-Gutfreund-Sompolinsky), fixed seed") {
  const int64_t n = 1000;
  RecallOptions fixed_only;
  fixed_only.mode = Mode::Sync;
  fixed_only.max_steps = 0;
  SUBCASE("alpha = 0.05: every stored pattern is a fixed point") {
    const Tensor p = signs(50, n, 1005);
    const auto r = recall(store(p, Rule::Hebb), p, fixed_only);
    for (const auto& pr : r.probes) CHECK(pr.outcome == Outcome::Converged);
  }
  SUBCASE("alpha = 0.138: one-step error within 3 binomial sigma of Phi(-sqrt((N-1)/(P-1)))") {
    const int64_t pc = 138;
    const Tensor p = signs(pc, n, 1138);
    RecallOptions one;
    one.mode = Mode::Sync;
    one.max_steps = 1;
    const auto r = recall(store(p, Rule::Hebb), p, one);
    const double theory = 0.5 * std::erfc(std::sqrt((n - 1.0) / (pc - 1.0)) / std::sqrt(2.0));
    CHECK(theory == doctest::Approx(0.00346).epsilon(0.01));
    const double sigma = std::sqrt(theory * (1 - theory) / (pc * n));
    const double err = error_rate(r.states, p);
    CHECK_MESSAGE(std::fabs(err - theory) < 3 * sigma, "error " << err << " theory " << theory);
  }
  SUBCASE("alpha = 0.2: the final error after async convergence exceeds 20%") {
    const Tensor p = signs(200, n, 1200);
    RecallOptions opt;
    opt.seed = 3;
    const auto r = recall(store(p, Rule::Hebb), p, opt);
    CHECK(error_rate(r.states, p) > 0.20);
  }
}

TEST_CASE(
    "4x4 checkerboard: 5 flipped bits recovered in one sync step; 8 give the 2-cycle s -> -s") {
  const Tensor c = checkerboard();
  const Net net = store(c, Rule::Hebb);
  RecallOptions one;
  one.mode = Mode::Sync;
  one.max_steps = 1;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto r = recall(net, flip_bits(c, 5, seed), one);
    test::check_close(r.states, c, 0, 0);
    CHECK(r.probes[0].outcome == Outcome::Converged);
    CHECK(r.probes[0].steps == 1);
    const Tensor s8 = flip_bits(c, 8, seed);
    const auto r1 = recall(net, s8, one);
    for (int64_t i = 0; i < 16; ++i) CHECK(r1.states[i] == -s8[i]);
    RecallOptions full;
    full.mode = Mode::Sync;
    full.trace = true;
    const auto r2 = recall(net, s8, full);
    CHECK(r2.probes[0].outcome == Outcome::Cycled);
    CHECK(r2.probes[0].steps == 2);
    test::check_close(r2.states, s8, 0, 0);
    REQUIRE(r2.trace.size() == 3);
    CHECK(r2.trace[1].flips == 16);
    CHECK(r2.trace[2].flips == 16);
  }
}

TEST_CASE("overlaps and traces name the retrieved pattern") {
  const Tensor p = signs(5, 200, 12);
  const Net net = store(p, Rule::Hebb);
  RecallOptions opt;
  opt.patterns = &p;
  opt.trace = true;
  const auto r = recall(net, flip_bits(p, 20, 4), opt);
  for (int64_t k = 0; k < 5; ++k) {
    CHECK(r.probes[k].best == k + 1);
    CHECK(r.probes[k].overlap == 1.0f);
  }
  REQUIRE(!r.trace.empty());
  CHECK(r.trace[0].step == 0);
  CHECK(r.trace[0].m.size() == 5);
  CHECK(r.trace[0].overlap == doctest::Approx(0.8));
  const std::string tsv = format_trace(r.trace, 5);
  CHECK(tsv.rfind("probe\tstep\tenergy\tflips\tbest\toverlap\tm1\tm2\tm3\tm4\tm5\n", 0) == 0);
  for (size_t k = 1; k < r.trace.size(); ++k)
    if (r.trace[k].probe == r.trace[k - 1].probe) CHECK(r.trace[k].energy <= r.trace[k - 1].energy);
}

TEST_CASE("modern update equals softmax attention (dot score, beta-scaled queries)") {
  const Tensor x = signs(300, 32, 2);
  const Tensor q = normals(7, 32, 3);
  for (float beta : {0.125f, 0.5f, 1.0f}) {
    Tensor w;
    const Tensor upd = modern_update(x, q, beta, 1, &w);
    Tensor bq = q.clone();
    for (int64_t i = 0; i < bq.size(); ++i) bq[i] *= beta;
    attention::Scorer dot;
    dot.kind = attention::ScoreKind::Dot;
    attention::Options o;
    o.output = attention::Output::Context;
    // Float sums of 300 terms in two orders (and OpenBLAS kernels differ by CPU): 1e-5.
    test::check_close(upd, attention::attend(dot, bq, x, &x, o), 1e-5, 1e-5);
    o.output = attention::Output::Weights;
    test::check_close(w, attention::attend(dot, bq, x, nullptr, o), 1e-5, 1e-5);
  }
  CHECK_THROWS_AS(modern_update(x, normals(2, 31, 1), 1.0f, 1), ShapeError);
  CHECK_THROWS_AS(modern_update(x, q, 0.0f, 1), DataError);
}

TEST_CASE("modern: one update retrieves a stored pattern at beta = 1; energy bounded and falling") {
  const int64_t d = 64, pc = 2048;
  const Tensor x = signs(pc, d, 6);
  Tensor probes({10, d});
  std::copy(x.data(), x.data() + 10 * d, probes.data());
  probes = flip_bits(probes, 6, 1);
  const Tensor upd = modern_update(x, probes, 1.0f, 1);
  for (int64_t k = 0; k < 10; ++k)
    for (int64_t j = 0; j < d; ++j)
      CHECK(upd.at(k, j) == doctest::Approx(x.at(k, j)).epsilon(1e-4));
  // Energy: 0 <= E <= 2 M^2, and it does not increase along updates (Ramsauer et al. Thm 1).
  const Tensor q = normals(5, d, 9, 2.0);
  Tensor cur = q.clone();
  Tensor e0 = modern_energy(x, cur, 0.1f);
  for (int t = 0; t < 4; ++t) {
    cur = modern_update(x, cur, 0.1f, 1);
    Tensor e1 = modern_energy(x, cur, 0.1f);
    for (int64_t r = 0; r < 5; ++r) {
      CHECK(e1[r] <= e0[r] + 1e-3f * std::fabs(e0[r]));
      CHECK(e1[r] >= -1e-3f);
      CHECK(e1[r] <= 2.0f * d + 1e-3f);
    }
    e0 = std::move(e1);
  }
}

}  // namespace attnkit_unit_hopfield_test
