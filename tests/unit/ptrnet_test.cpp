// Pointer networks: the problems' exact solvers against independent ones (brute force, a naive
// hull), parsing and its errors, the mask, beam search against greedy decoding, gradients.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/models/ptrnet/model.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ptrnet_test {

using namespace attnkit;
using data::PtrProblem;
using data::PtrTask;

namespace {

PtrProblem points(const std::vector<std::pair<int64_t, int64_t>>& xy) {
  PtrProblem p;
  p.dim = 2;
  for (const auto& [x, y] : xy) p.q.push_back(x), p.q.push_back(y);
  return p;
}

double brute_force_tour(const PtrProblem& p) {
  std::vector<int32_t> rest(static_cast<size_t>(p.n() - 1));
  std::iota(rest.begin(), rest.end(), 2);
  double best = 1e300;
  do {
    std::vector<int32_t> t = {1};
    t.insert(t.end(), rest.begin(), rest.end());
    t.push_back(1);
    best = std::min(best, data::path_length(p, t));
  } while (std::next_permutation(rest.begin(), rest.end()));
  return best;
}

// A hull written independently of the library's: directed edge (a, b) is a counter-clockwise
// hull edge when every other distinct point is strictly left of it or on the segment between
// them; the edges are chained from the lowest index. O(n³).
std::vector<int32_t> naive_hull(const PtrProblem& p) {
  const int64_t n = p.n();
  auto X = [&](int64_t i) { return p.q[static_cast<size_t>(2 * i)]; };
  auto Y = [&](int64_t i) { return p.q[static_cast<size_t>(2 * i + 1)]; };
  std::vector<int64_t> keep;  // the lowest index of each distinct point
  for (int64_t i = 0; i < n; ++i) {
    bool dup = false;
    for (int64_t j : keep) dup = dup || (X(i) == X(j) && Y(i) == Y(j));
    if (!dup) keep.push_back(i);
  }
  if (keep.size() == 1)
    return {static_cast<int32_t>(keep[0] + 1), static_cast<int32_t>(keep[0] + 1)};
  std::vector<int64_t> next(static_cast<size_t>(n), -1);
  for (int64_t a : keep)
    for (int64_t b : keep) {
      if (a == b) continue;
      bool edge = true;
      for (int64_t k : keep) {
        if (k == a || k == b) continue;
        const __int128 cr = static_cast<__int128>(X(b) - X(a)) * (Y(k) - Y(a)) -
                            static_cast<__int128>(Y(b) - Y(a)) * (X(k) - X(a));
        const bool between = std::min(X(a), X(b)) <= X(k) && X(k) <= std::max(X(a), X(b)) &&
                             std::min(Y(a), Y(b)) <= Y(k) && Y(k) <= std::max(Y(a), Y(b));
        if (cr < 0 || (cr == 0 && !between)) edge = false;
      }
      if (edge) next[static_cast<size_t>(a)] = b;
    }
  int64_t start = -1;
  for (int64_t a : keep)
    if (next[static_cast<size_t>(a)] >= 0 && (start < 0 || a < start)) start = a;
  std::vector<int32_t> h = {static_cast<int32_t>(start + 1)};
  for (int64_t at = next[static_cast<size_t>(start)]; at != start;
       at = next[static_cast<size_t>(at)]) {
    h.push_back(static_cast<int32_t>(at + 1));
    REQUIRE(h.size() <= keep.size());
  }
  h.push_back(static_cast<int32_t>(start + 1));
  return h;
}

models::PtrNetConfig small(const std::string& task, bool mask = true) {
  models::PtrNetConfig c;
  c.task = task, c.embed = 6, c.hidden = 8, c.mask = mask;
  return c;
}

}  // namespace

TEST_CASE("ptrtask: Held-Karp's tour is as short as the shortest of every tour (n <= 8)") {
  Rng rng(5);
  data::PtrGenOptions o;
  o.task = PtrTask::Tsp;
  o.n_min = 2, o.n_max = 8;
  for (int trial = 0; trial < 60; ++trial) {
    const PtrProblem p = data::make_ptr_problem(o, rng);
    const auto t = data::tsp_exact(p);
    REQUIRE(data::valid_output(PtrTask::Tsp, p, t));
    CHECK(t.front() == 1);
    if (p.n() > 2) CHECK(t[1] < t[t.size() - 2]);  // the canonical direction
    CHECK(data::path_length(p, t) == doctest::Approx(brute_force_tour(p)).epsilon(1e-12));
    // The heuristics give tours, never shorter.
    for (const auto& h : {data::tsp_nearest_neighbour(p), data::tsp_two_opt(p)}) {
      CHECK(data::valid_output(PtrTask::Tsp, p, h));
      CHECK(data::path_length(p, h) >= data::path_length(p, t) - 1e-12);
    }
    CHECK(data::path_length(p, data::tsp_two_opt(p)) <=
          data::path_length(p, data::tsp_nearest_neighbour(p)) + 1e-12);
  }
}

TEST_CASE("ptrtask: the hull equals a naive one, with collinear and identical points") {
  Rng rng(9);
  for (int trial = 0; trial < 300; ++trial) {
    // A 5 x 5 grid: many collinear triples and repeated points.
    const int64_t n = 1 + static_cast<int64_t>(rng.below(12));
    std::vector<std::pair<int64_t, int64_t>> xy;
    for (int64_t i = 0; i < n; ++i)
      xy.push_back({static_cast<int64_t>(rng.below(5)) * 100000000,
                    static_cast<int64_t>(rng.below(5)) * 100000000});
    const PtrProblem p = points(xy);
    const auto h = data::hull_answer(p);
    CHECK_MESSAGE(h == naive_hull(p), "trial " << trial);
    CHECK(data::valid_output(PtrTask::Hull, p, h));
  }
  // Documented degenerate answers.
  CHECK(data::hull_answer(points({{5, 5}, {5, 5}, {5, 5}})) == std::vector<int32_t>{1, 1});
  CHECK(data::hull_answer(points({{2, 2}, {0, 0}, {1, 1}, {3, 3}})) ==
        std::vector<int32_t>{2, 4, 2});
  // A square with a point on an edge and a repeated corner: the corner's lowest index.
  const PtrProblem sq = points({{10, 0}, {0, 0}, {10, 10}, {0, 10}, {5, 0}, {0, 0}});
  CHECK(data::hull_answer(sq) == std::vector<int32_t>{1, 3, 4, 2, 1});
  CHECK(data::polygon_area(sq, data::hull_answer(sq)) == doctest::Approx(100e-18));
}

TEST_CASE("ptrtask: orientation is exact where doubles are not") {
  // Three points on the line y = x, 1e-9 apart at scale 1e9: doubles would round the products.
  const int64_t big = 999999999999999999 / 2;
  const PtrProblem p = points({{big, big}, {big - 1, big - 1}, {1, 1}});
  CHECK(data::orientation(p, 0, 1, 2) == 0);
  const PtrProblem q = points({{big, big}, {big - 1, big - 1}, {1, 2}});
  CHECK(data::orientation(q, 0, 1, 2) == -1);
}

TEST_CASE("ptrtask: text round-trips, and its errors name the line") {
  const std::string text = "0.1 0.2 0.30000000049 -1.5 output 1 2 1\n\n0.25 0.5 output\n";
  const auto ps = data::parse_ptr_problems(text, 2, "f");
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].n() == 2);
  CHECK(ps[0].q[2] == 300000000);  // rounded at the 9th decimal
  CHECK(ps[0].q[3] == -1500000000);
  CHECK(ps[0].answer == std::vector<int32_t>{1, 2, 1});
  CHECK(ps[1].answer.empty());
  CHECK(data::format_ptr_problem(ps[0]) ==
        "0.100000000 0.200000000 0.300000000 -1.500000000 output 1 2 1\n");
  CHECK(data::parse_ptr_problems(data::format_ptr_problem(ps[0]), 2)[0].q == ps[0].q);
  CHECK(data::parse_ptr_problems("1e-3\n", 1)[0].q[0] == 1000000);
  auto line_of = [](const std::string& t, int dim) {
    try {
      data::parse_ptr_problems(t, dim, "f");
    } catch (const DataError& e) {
      return e.line();
    }
    return 0L;
  };
  CHECK(line_of("0.1 0.2\n0.1 0.2 0.3 output 1\n", 2) == 2);  // 3 coordinates, points of 2
  CHECK(line_of("0.1 0.2 output 2\n", 2) == 1);               // index outside 1..1
  CHECK(line_of("0.1 0.2 output 0\n", 2) == 1);
  CHECK(line_of("0.1 x output 1\n", 2) == 1);
  CHECK(line_of("output 1\n", 2) == 1);
  CHECK(line_of("1e10 0\n", 2) == 1);  // too large
  CHECK(line_of("0.1 0.2 output 1.5\n", 2) == 1);
  CHECK_THROWS_AS(data::parse_ptr_task("tps"), ChoiceError);
}

TEST_CASE("ptrtask: generation checks its options; the exact tour has a size limit") {
  data::PtrGenOptions o;
  o.task = PtrTask::Tsp;
  o.n_min = 5, o.n_max = data::kHeldKarpMax + 1;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o.solver = "2opt";
  CHECK_NOTHROW(o.validate());
  o.task = PtrTask::Sort;
  CHECK_THROWS_AS(o.validate(), UsageError);  // a solver for sorting
  o.solver = "exact", o.n_min = 0;
  CHECK_THROWS_AS(o.validate(), UsageError);
  PtrProblem big;
  big.q.assign(2 * (data::kHeldKarpMax + 1), 0);
  CHECK_THROWS_AS(data::tsp_exact(big), UsageError);
  // Seeded: the same problems again.
  o = {};
  o.task = PtrTask::Hull, o.n_min = 3, o.n_max = 9;
  Rng a(3), b(3);
  for (int i = 0; i < 5; ++i)
    CHECK(data::make_ptr_problem(o, a).q == data::make_ptr_problem(o, b).q);
}

TEST_CASE("ptrtask: validity of outputs") {
  const PtrProblem sq = points({{0, 0}, {10, 0}, {10, 10}, {0, 10}, {5, 5}});
  CHECK(data::valid_output(PtrTask::Hull, sq, {1, 2, 3, 4, 1}));
  CHECK(data::valid_output(PtrTask::Hull, sq, {1, 2, 3, 5, 4, 1}));     // simple, not convex
  CHECK_FALSE(data::valid_output(PtrTask::Hull, sq, {1, 3, 2, 4, 1}));  // crossing edges
  CHECK_FALSE(data::valid_output(PtrTask::Hull, sq, {1, 2, 3, 4}));     // not closed
  CHECK_FALSE(data::valid_output(PtrTask::Hull, sq, {1, 2, 1, 4, 1}));  // a repeat
  CHECK(data::valid_output(PtrTask::Tsp, sq, {1, 3, 2, 4, 5, 1}));
  CHECK_FALSE(data::valid_output(PtrTask::Tsp, sq, {1, 3, 2, 4, 1}));
  PtrProblem s;
  s.dim = 1;
  s.q = {3, 1, 2};
  CHECK(data::sort_answer(s) == std::vector<int32_t>{2, 3, 1});
  CHECK(data::valid_output(PtrTask::Sort, s, {1, 2, 3}));
  CHECK_FALSE(data::valid_output(PtrTask::Sort, s, {1, 2, 2}));
  CHECK(data::polygon_area(sq, {1, 2, 3, 5, 4, 1}) == doctest::Approx(75e-18));
}

TEST_CASE("ptrnet: the mask") {
  using models::ptr_allowed;
  // sort: the end only after every point.
  CHECK(ptr_allowed(PtrTask::Sort, true, 3, {}) == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(ptr_allowed(PtrTask::Sort, true, 3, {2}) == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(ptr_allowed(PtrTask::Sort, true, 3, {2, 1, 3}) == std::vector<uint8_t>{1, 0, 0, 0});
  // tsp: the first point again after all of them, then only the end.
  CHECK(ptr_allowed(PtrTask::Tsp, true, 3, {1, 3}) == std::vector<uint8_t>{0, 0, 1, 0});
  CHECK(ptr_allowed(PtrTask::Tsp, true, 3, {1, 3, 2}) == std::vector<uint8_t>{0, 1, 0, 0});
  CHECK(ptr_allowed(PtrTask::Tsp, true, 3, {1, 3, 2, 1}) == std::vector<uint8_t>{1, 0, 0, 0});
  // hull: the first point closes any time.
  CHECK(ptr_allowed(PtrTask::Hull, true, 4, {2, 3}) == std::vector<uint8_t>{0, 1, 1, 0, 1});
  CHECK(ptr_allowed(PtrTask::Hull, true, 4, {2, 3, 2}) == std::vector<uint8_t>{1, 0, 0, 0, 0});
  CHECK(ptr_allowed(PtrTask::Hull, false, 4, {2, 3, 2}) == std::vector<uint8_t>{1, 1, 1, 1, 1});

  // In the model: a masked position's probability is exactly 0 at every step.
  nn::ParamStore ps;
  Rng rng(2);
  models::PtrNet net(ps, small("tsp"), rng);
  data::PtrGenOptions o;
  o.task = PtrTask::Tsp, o.n_min = o.n_max = 6;
  const PtrProblem p = data::make_ptr_problem(o, rng);
  std::vector<Tensor> att;
  const auto y = net.greedy({&p}, &att)[0];
  CHECK(data::valid_output(PtrTask::Tsp, p, y));  // untrained, yet a tour: the mask
  REQUIRE(att[0].dim(0) == static_cast<int64_t>(y.size()) + 1);
  std::vector<int32_t> prefix;
  for (int64_t m = 0; m < att[0].dim(0); ++m) {
    const auto ok = ptr_allowed(PtrTask::Tsp, true, 6, prefix);
    double sum = 0;
    for (int64_t j = 0; j <= 6; ++j) {
      const float pr = att[0][m * 7 + j];
      sum += pr;
      if (!ok[static_cast<size_t>(j)]) CHECK(pr == 0.0f);
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    if (m < static_cast<int64_t>(y.size())) prefix.push_back(y[static_cast<size_t>(m)]);
  }
}

TEST_CASE("ptrnet: beam search of width 1 is greedy decoding; wider beams score no worse") {
  Rng rng(4);
  for (const bool mask : {true, false}) {
    nn::ParamStore ps;
    models::PtrNet net(ps, small("sort", mask), rng);
    data::PtrGenOptions o;
    o.task = PtrTask::Sort, o.n_min = 3, o.n_max = 7;
    for (int i = 0; i < 10; ++i) {
      const PtrProblem p = data::make_ptr_problem(o, rng);
      const auto g = net.greedy({&p})[0];
      CHECK(net.beam(p, 1) == g);
      if (mask) CHECK(data::valid_output(PtrTask::Sort, p, net.beam(p, 3)));
    }
  }
}

TEST_CASE("ptrnet: batched greedy decoding equals one problem at a time") {
  nn::ParamStore ps;
  Rng rng(6);
  models::PtrNetConfig cfg = small("hull");
  cfg.bidirectional = true;  // the reverse direction reads each item from its own last point
  models::PtrNet net(ps, cfg, rng);
  data::PtrGenOptions o;
  o.task = PtrTask::Hull, o.n_min = 3, o.n_max = 9;
  std::vector<PtrProblem> probs;
  for (int i = 0; i < 6; ++i) probs.push_back(data::make_ptr_problem(o, rng));
  std::vector<const PtrProblem*> ptrs;
  for (const auto& p : probs) ptrs.push_back(&p);
  const auto all = net.greedy(ptrs);
  for (size_t i = 0; i < probs.size(); ++i) {
    const auto one = net.greedy({&probs[i]})[0];
    CHECK(all[i] == one);
  }
}

TEST_CASE("ptrnet: gradients of the loss through the pointer attention") {
  for (const std::string task : {"sort", "hull", "hull-bidirectional"}) {
    nn::ParamStore ps;
    Rng rng(8);
    const bool bi = task == "hull-bidirectional";
    models::PtrNetConfig cfg = small(bi ? "hull" : task);
    cfg.bidirectional = bi;
    models::PtrNet net(ps, cfg, rng);
    data::PtrGenOptions o;
    o.task = data::parse_ptr_task(cfg.task), o.n_min = 3, o.n_max = 5;
    std::vector<PtrProblem> probs;
    for (int i = 0; i < 3; ++i) {
      probs.push_back(data::make_ptr_problem(o, rng));
      probs.back().answer = data::ptr_answer(o, probs.back());
    }
    std::vector<const PtrProblem*> items;
    for (const auto& p : probs) items.push_back(&p);
    int64_t tokens = 0;
    ad::GradCheckOptions opt;
    opt.eps = 1e-2, opt.max_per_tensor = 12;
    const auto r = ad::check_gradients([&](ad::Tape& t) { return net.loss(t, items, &tokens); },
                                       ps.params(), opt);
    CHECK_MESSAGE(r.ok, task << ": " << r.where);
    CHECK(r.checked > 50);
    int64_t expect = 0;
    for (const auto& p : probs) expect += static_cast<int64_t>(p.answer.size()) + 1;
    CHECK(tokens == expect);
  }
}

TEST_CASE("ptrnet: the loss refuses answers the mask forbids") {
  nn::ParamStore ps;
  Rng rng(1);
  models::PtrNet net(ps, small("sort"), rng);
  PtrProblem p;
  p.dim = 1;
  p.q = {1, 2, 3};
  p.answer = {1, 1, 2};
  ad::Tape t(0);
  CHECK_THROWS_AS(net.loss(t, {&p}, nullptr), DataError);
  nn::ParamStore ps2;
  models::PtrNet open(ps2, small("sort", false), rng);
  ad::Tape t2(0);
  CHECK(std::isfinite(open.loss(t2, {&p}, nullptr).value()[0]));
}

}  // namespace attnkit_unit_ptrnet_test
