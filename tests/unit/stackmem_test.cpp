// The neural stack, queue and deque (memory/stackmem/memory.h): both implementations against the
// independent NumPy golden cases (testdata/make_stackmem_golden.py), exact push-then-pop,
// over-strong pops, gradient checks through several steps, and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/stackmem/memory.h"
#include "attnkit/memory/stackmem/ops.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_stackmem_test {

using namespace attnkit;
using memory::StackKind;

namespace {

struct Golden {
  StackKind kind;
  memory::StackStepIn in;
  std::vector<double> strengths, values, read;
};

std::vector<Golden> read_golden() {
  std::ifstream f(test::testdata("stackmem/cases.txt"));
  REQUIRE(f);
  std::vector<Golden> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string word, kind;
    int64_t m = 0, n = 0;
    is >> word >> kind >> m >> n;
    REQUIRE(word == "case");
    Golden g;
    g.kind = memory::parse_stack_kind(kind);
    g.in.m = m;
    auto next = [&](const char* name) {
      REQUIRE(std::getline(f, line));
      return test::golden_numbers(line, name);
    };
    g.in.strengths = next("strengths");
    g.in.values = next("values");
    const auto p = next("push");
    g.in.push = p[0], g.in.pop = p[1];
    g.in.value = next("value");
    if (g.kind == StackKind::Deque) {
      g.in.push_bottom = p[2], g.in.pop_bottom = p[3];
      g.in.value_bottom = next("value_bottom");
    }
    g.strengths = next("out_strengths");
    g.values = next("out_values");
    g.read = next("out_read");
    out.push_back(std::move(g));
  }
  return out;
}

Tensor tensor_of(const std::vector<double>& v, Shape s) {
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(v[static_cast<size_t>(i)]);
  return t;
}

// The tape's update for one memory (B = 1) of the golden case's inputs.
memory::StackUpdate on_tape(ad::Tape& t, const Golden& g) {
  const int64_t n = static_cast<int64_t>(g.in.strengths.size()), m = g.in.m;
  const bool dq = g.kind == StackKind::Deque;
  memory::StackState prev;
  prev.size = n;
  if (n > 0) {
    prev.strengths = t.constant(tensor_of(g.in.strengths, {1, n}));
    prev.values = t.constant(tensor_of(g.in.values, {1, n, m}));
  }
  std::vector<double> push = {g.in.push}, pop = {g.in.pop}, value = g.in.value;
  if (dq) {
    push.push_back(g.in.push_bottom);
    pop.push_back(g.in.pop_bottom);
    value.insert(value.end(), g.in.value_bottom.begin(), g.in.value_bottom.end());
  }
  const int64_t e = dq ? 2 : 1;
  return memory::stack_update(t, g.kind, prev, t.constant(tensor_of(push, {1, e})),
                              t.constant(tensor_of(pop, {1, e})),
                              t.constant(tensor_of(value, {1, e * m})));
}

void check_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol,
                  what << "[" << i << "]: " << got[i] << " vs " << want[i]);
}

std::vector<double> values_of(const Tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

// The composition of ops.h that the fused stack_pop and stack_read replaced: the sums "nearer
// the end" as a product with a 0/1 triangular matrix, max(0, x) as relu, min(a, b) as
// a − relu(a − b).
Tensor nearer(int64_t n, bool from_top) {
  Tensor a({n, n}, 0.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      if (from_top ? j > i : j < i) a.at(j, i) = 1.0f;
  return a;
}
ad::Var composed_pop(ad::Tape& t, ad::Var s, ad::Var u, bool from_top) {
  ad::Var above = ad::matmul(s, t.constant(nearer(s.dim(1), from_top)));
  return ad::relu(ad::sub(s, ad::relu(ad::sub(u, above))));
}
ad::Var composed_read(ad::Tape& t, ad::Var s, ad::Var values, bool from_top) {
  const int64_t b = s.dim(0), n = s.dim(1), m = values.dim(2);
  ad::Var above = ad::matmul(s, t.constant(nearer(n, from_top)));
  ad::Var room = ad::relu(ad::add(ad::neg(above), 1.0f));
  ad::Var w = ad::sub(s, ad::relu(ad::sub(s, room)));
  return ad::reshape(ad::matmul(ad::reshape(w, {b, 1, n}), values), {b, m});
}

// How far a pop of u then a read, from one end, of the strengths s [B, n] are from their
// kinks: the smallest |argument| of every max(0, ·) and min over the rows.
double kink_margin(const Tensor& s, const Tensor& u, bool from_top) {
  const int64_t B = s.dim(0), n = s.dim(1);
  double margin = 1e9;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> p(static_cast<size_t>(n));
    double above = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = from_top ? n - 1 - k : k;
      const double x = s[b * n + i], z = u[b] - above;
      margin = std::min({margin, std::fabs(z), std::fabs(x - std::max(0.0, z))});
      p[static_cast<size_t>(i)] = std::max(0.0, x - std::max(0.0, z));
      above += x;
    }
    above = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = from_top ? n - 1 - k : k;
      const double x = p[static_cast<size_t>(i)];
      margin =
          std::min({margin, std::fabs(1.0 - above), std::fabs(x - std::max(0.0, 1.0 - above))});
      above += x;
    }
  }
  return margin;
}

}  // namespace

TEST_CASE("stackmem: the double and tape updates agree with NumPy's on 21 golden cases") {
  const auto cases = read_golden();
  REQUIRE(cases.size() == 21);
  for (const Golden& g : cases) {
    const auto out = memory::stack_step(g.kind, g.in);
    check_near(out.strengths, g.strengths, 1e-12, "strengths");
    check_near(out.values, g.values, 0.0, "values");
    check_near(out.read, g.read, 1e-12, "read");
    ad::Tape t;
    const auto u = on_tape(t, g);
    check_near(values_of(u.state.strengths.value()), g.strengths, 1e-6, "tape strengths");
    check_near(values_of(u.state.values.value()), g.values, 1e-6, "tape values");
    check_near(values_of(u.read.value()), g.read, 1e-5, "tape read");
  }
}

TEST_CASE("stackmem: push then pop returns the pushed value exactly; over-strong pops") {
  // Stack: push a (1), push b (1), then pop 1 and push nothing: the read is a, exactly.
  memory::StackStepIn in;
  in.m = 3;
  in.value = {0.25, -1.5, 3.0};
  in.push = 1.0;
  auto s1 = memory::stack_step(StackKind::Stack, in);
  CHECK(s1.read == in.value);
  memory::StackStepIn in2;
  in2.m = 3, in2.values = s1.values, in2.strengths = s1.strengths;
  in2.value = {7.0, 8.0, 9.0};
  in2.push = 1.0;
  auto s2 = memory::stack_step(StackKind::Stack, in2);
  CHECK(s2.read == in2.value);
  memory::StackStepIn in3;
  in3.m = 3, in3.values = s2.values, in3.strengths = s2.strengths;
  in3.value = {100.0, 100.0, 100.0};
  in3.push = 0.0, in3.pop = 1.0;
  auto s3 = memory::stack_step(StackKind::Stack, in3);
  CHECK(s3.read == in.value);  // a again
  CHECK(s3.strengths == std::vector<double>{1.0, 0.0, 0.0});
  // The queue reads the oldest: after a, b and a pop of 1, b.
  auto q3 = memory::stack_step(StackKind::Queue, [&] {
    memory::StackStepIn q = in3;
    q.values = s2.values, q.strengths = s2.strengths;
    return q;
  }());
  CHECK(q3.read == in2.value);
  CHECK(q3.strengths == std::vector<double>{0.0, 1.0, 0.0});
  // A pop stronger than everything stored leaves zero strength, never negative.
  memory::StackStepIn big;
  big.m = 1, big.strengths = {0.3, 0.2, 0.4}, big.values = {1, 2, 3}, big.value = {4};
  big.pop = 1.0, big.push = 0.0;
  for (StackKind k : {StackKind::Stack, StackKind::Queue}) {
    const auto o = memory::stack_step(k, big);
    for (double s : o.strengths) CHECK(s == 0.0);
    CHECK(o.read == std::vector<double>{0.0});
  }
  ad::Tape t;
  memory::StackState prev;
  prev.size = 3;
  prev.strengths = t.constant(tensor_of({0.3, 0.2, 0.4}, {1, 3}));
  prev.values = t.constant(tensor_of({1, 2, 3}, {1, 3, 1}));
  const auto u =
      memory::stack_update(t, StackKind::Stack, prev, t.constant(Tensor({1, 1}, 0.0f)),
                           t.constant(Tensor({1, 1}, 1.0f)), t.constant(Tensor({1, 1}, 4.0f)));
  for (int64_t i = 0; i < 4; ++i) CHECK(u.state.strengths.value()[i] == 0.0f);
}

TEST_CASE("stackmem: the step's operation count (its access cost) grows as n (m + 2)") {
  // Each pop touches every stored strength (2 operations), each read every value (m + 2):
  // a stack or queue of n, 2n + (n + 1)(m + 2); a deque, two pops and two reads over n + 2.
  for (int64_t m : {1, 5, 32})
    for (int64_t n : {0, 3, 16, 1024}) {
      memory::StackStepIn in;
      in.m = m;
      in.value.assign(static_cast<size_t>(m), 0.5);
      in.value_bottom = in.value;
      in.strengths.assign(static_cast<size_t>(n), 0.25);
      in.values.assign(static_cast<size_t>(n * m), -1.0);
      in.push = 0.5, in.pop = 0.3, in.push_bottom = 0.2, in.pop_bottom = 0.1;
      for (StackKind k : {StackKind::Stack, StackKind::Queue}) {
        memory::StackStepIn one = in;
        one.value_bottom.clear(), one.push_bottom = one.pop_bottom = 0;
        CHECK_MESSAGE(memory::stack_step(k, one).ops == 2 * n + (n + 1) * (m + 2),
                      "n " << n << " m " << m);
      }
      CHECK_MESSAGE(memory::stack_step(StackKind::Deque, in).ops == 4 * n + 2 * (n + 2) * (m + 2),
                    "deque n " << n << " m " << m);
    }
}

TEST_CASE("stackmem: gradients through three steps of each memory (away from ties)") {
  Rng rng(21);
  for (StackKind kind : {StackKind::Stack, StackKind::Queue, StackKind::Deque}) {
    const int64_t B = 2, m = 3, e = kind == StackKind::Deque ? 2 : 1, steps = 3;
    std::vector<Tensor> in;
    for (int64_t s = 0; s < steps; ++s) {
      Tensor d({B, e}), u({B, e}), v({B, e * m});
      for (int64_t i = 0; i < d.size(); ++i) d[i] = 0.2f + 0.6f * rng.uniform();
      for (int64_t i = 0; i < u.size(); ++i) u[i] = 0.1f + 0.5f * rng.uniform();
      for (int64_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rng.normal());
      in.push_back(std::move(d));
      in.push_back(std::move(u));
      in.push_back(std::move(v));
    }
    ad::GradCheckOptions opt;
    opt.eps = 1e-3;
    const auto r = ad::check_gradients(
        [&](ad::Tape& t, const std::vector<ad::Var>& x) {
          memory::StackState st;
          ad::Var reads;
          for (int64_t s = 0; s < steps; ++s) {
            auto up = memory::stack_update(t, kind, st, x[3 * s], x[3 * s + 1], x[3 * s + 2]);
            st = up.state;
            reads = reads.valid() ? ad::concat({reads, up.read}, 1) : up.read;
          }
          return ad::concat({reads, st.strengths}, 1);
        },
        in, opt);
    CHECK_MESSAGE(r.ok, memory::stack_kind_name(kind) << ": " << r.where);
  }
}

TEST_CASE("stackmem: the fused pop and read equal their composition, values and gradients") {
  // Strengths in [0, 0.7] over 7 slots and pops in [0, 1.2]: partial pops, pops past the
  // bottom, reads capped by the room left and slots out of reach, in both directions.
  Rng rng(8);
  const int64_t B = 5, n = 7, m = 3;
  int checked = 0;
  for (int trial = 0; trial < 4; ++trial)
    for (bool top : {true, false}) {
      Tensor s({B, n}), u({B, 1}), v({B, n, m}), gp({B, n}), gr({B, m});
      do {  // draws at least 0.01 from every kink (finite differences of 0.001 stay on a side)
        for (int64_t i = 0; i < s.size(); ++i) s[i] = 0.7f * static_cast<float>(rng.uniform());
        for (int64_t i = 0; i < u.size(); ++i) u[i] = 1.2f * static_cast<float>(rng.uniform());
      } while (kink_margin(s, u, top) < 0.01);
      ++checked;
      for (int64_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rng.normal());
      for (int64_t i = 0; i < gp.size(); ++i) gp[i] = static_cast<float>(rng.normal());
      for (int64_t i = 0; i < gr.size(); ++i) gr[i] = static_cast<float>(rng.normal());
      std::vector<Tensor> got, want;
      for (bool fused : {true, false}) {
        ad::Tape t;
        ad::Var S = t.input(s.clone()), U = t.input(u.clone()), V = t.input(v.clone());
        ad::Var p = fused ? memory::stack_pop(S, U, top) : composed_pop(t, S, U, top);
        ad::Var r = fused ? memory::stack_read(p, V, top) : composed_read(t, p, V, top);
        // One seed through both outputs: loss = Σ gp ⊙ p + Σ gr ⊙ r.
        ad::Var loss = ad::add(ad::sum(ad::mul(p, t.constant(gp.clone()))),
                               ad::sum(ad::mul(r, t.constant(gr.clone()))));
        t.backward(loss);
        auto& out = fused ? got : want;
        for (ad::Var x : {p, r, S, U, V}) out.push_back(x.value().clone());
        for (ad::Var x : {S, U, V}) out.push_back(x.grad().clone());
      }
      const char* names[] = {"pop", "read", "s", "u", "v", "d s", "d u", "d values"};
      for (size_t k = 0; k < got.size(); ++k) {
        REQUIRE(got[k].shape() == want[k].shape());
        for (int64_t i = 0; i < got[k].size(); ++i)
          CHECK_MESSAGE(std::fabs(got[k][i] - want[k][i]) <= 1e-5f,
                        names[k] << "[" << i << "] " << (top ? "top" : "bottom") << ": "
                                 << got[k][i] << " vs " << want[k][i]);
      }
      // And by finite differences.
      ad::GradCheckOptions opt;
      opt.eps = 1e-3;
      const auto g = ad::check_gradients(
          [&](ad::Tape&, const std::vector<ad::Var>& x) {
            ad::Var p = memory::stack_pop(x[0], x[1], top);
            return ad::concat({p, memory::stack_read(p, x[2], top)}, 1);
          },
          [&] {
            std::vector<Tensor> in;
            in.push_back(s.clone());
            in.push_back(u.clone());
            in.push_back(v.clone());
            return in;
          }(),
          opt);
      CHECK_MESSAGE(g.ok, std::string(top ? "top: " : "bottom: ") << g.where);
    }
  CHECK(checked == 8);
  ad::Tape t;
  CHECK_THROWS_AS(
      memory::stack_pop(t.constant(Tensor({2, 3}, 0.5f)), t.constant(Tensor({2, 2}, 0.5f)), true),
      ShapeError);
  CHECK_THROWS_AS(memory::stack_read(t.constant(Tensor({2, 3}, 0.5f)),
                                     t.constant(Tensor({2, 4, 1}, 0.5f)), true),
                  ShapeError);
}

TEST_CASE("stackmem: errors") {
  memory::StackStepIn in;
  in.m = 2;
  in.value = {1.0};
  CHECK_THROWS_AS(memory::stack_step(StackKind::Stack, in), ShapeError);
  in.value = {1.0, 2.0};
  in.strengths = {0.5};
  CHECK_THROWS_AS(memory::stack_step(StackKind::Stack, in), ShapeError);  // no values for it
  in.values = {1.0, 2.0};
  in.push = 1.5;
  CHECK_THROWS_AS(memory::stack_step(StackKind::Stack, in), DataError);
  in.push = 0.5;
  CHECK_THROWS_AS(memory::stack_step(StackKind::Deque, in), ShapeError);  // no bottom value
  CHECK_THROWS_AS(memory::parse_stack_kind("tree"), UsageError);
}

}  // namespace attnkit_unit_stackmem_test
