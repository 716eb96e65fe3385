// The set memory (memory/stackmem/set.h): both implementations against the independent NumPy golden
// cases (testdata/make_setmem_golden.py), invariance under permutations of the slots (double
// and tape, to an ulp), the sentinel (membership off the read's total), gradient checks of
// the fused ops against their composition of ops.h and by finite differences through steps,
// and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/memory/stackmem/model.h"
#include "attnkit/memory/stackmem/set.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_setmem_test {

using namespace attnkit;

namespace {

struct Golden {
  memory::SetStepIn in;
  std::vector<double> strengths, erase_weights, read_weights, read;
};

std::vector<Golden> read_golden() {
  std::ifstream f(test::testdata("setmem/cases.txt"));
  REQUIRE(f);
  std::vector<Golden> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string word;
    int64_t m = 0, n = 0;
    is >> word >> m >> n;
    REQUIRE(word == "case");
    Golden g;
    g.in.m = m;
    auto next = [&](const char* name) {
      REQUIRE(std::getline(f, line));
      return test::golden_numbers(line, name);
    };
    g.in.strengths = next("strengths");
    g.in.keys = next("keys");
    g.in.values = next("values");
    const auto w = next("write");
    g.in.write = w[0], g.in.erase = w[1], g.in.threshold = w[2];
    g.in.key = next("key");
    g.in.value = next("value");
    g.in.read_key = next("read_key");
    g.in.erase_key = next("erase_key");
    g.strengths = next("out_strengths");
    g.erase_weights = next("out_erase_weights");
    g.read_weights = next("out_read_weights");
    g.read = next("out_read");
    REQUIRE(static_cast<int64_t>(g.in.strengths.size()) == n);
    out.push_back(std::move(g));
  }
  return out;
}

Tensor tensor_of(const std::vector<double>& v, Shape s) {
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(v[static_cast<size_t>(i)]);
  return t;
}

std::vector<double> values_of(const Tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

void check_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol * std::max(1.0, std::fabs(want[i])),
                  what << "[" << i << "]: " << got[i] << " vs " << want[i]);
}

memory::SetUpdate on_tape(ad::Tape& t, const memory::SetStepIn& in) {
  const int64_t n = static_cast<int64_t>(in.strengths.size()), m = in.m;
  memory::SetState prev;
  prev.size = n;
  if (n > 0) {
    prev.strengths = t.constant(tensor_of(in.strengths, {1, n}));
    prev.keys = t.constant(tensor_of(in.keys, {1, n, m}));
    prev.values = t.constant(tensor_of(in.values, {1, n, m}));
  }
  auto row = [&](const std::vector<double>& v) { return t.constant(tensor_of(v, {1, m})); };
  return memory::set_update(t, prev, t.constant(tensor_of({in.write}, {1, 1})), row(in.key),
                            row(in.value), row(in.read_key),
                            t.constant(tensor_of({in.erase}, {1, 1})), row(in.erase_key),
                            t.constant(tensor_of({in.threshold}, {1, 1})));
}

// The slots of `in` in the order `perm` (slot i of the result = slot perm[i]).
memory::SetStepIn permuted(const memory::SetStepIn& in, const std::vector<size_t>& perm) {
  memory::SetStepIn p = in;
  const size_t m = static_cast<size_t>(in.m);
  for (size_t i = 0; i < perm.size(); ++i) {
    p.strengths[i] = in.strengths[perm[i]];
    for (size_t c = 0; c < m; ++c) {
      p.keys[i * m + c] = in.keys[perm[i] * m + c];
      p.values[i * m + c] = in.values[perm[i] * m + c];
    }
  }
  return p;
}

// |a − b| in units in the last place of the larger.
double ulps(double a, double b) {
  if (a == b) return 0.0;
  const double big = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) / (std::nextafter(big, INFINITY) - big);
}
double ulps_f(float a, float b) {
  if (a == b) return 0.0;
  const float big = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(static_cast<double>(a) - b) / (std::nextafter(big, INFINITY) - big);
}

memory::SetStepIn random_set(Rng& rng, int64_t n, int64_t m, double scale) {
  memory::SetStepIn in;
  in.m = m;
  auto u = [&](double lo, double hi) { return lo + (hi - lo) * rng.uniform(); };
  for (int64_t i = 0; i < n; ++i) in.strengths.push_back(u(0, 1));
  for (int64_t i = 0; i < n * m; ++i) in.keys.push_back(u(-scale, scale));
  for (int64_t i = 0; i < n * m; ++i) in.values.push_back(rng.normal());
  for (auto* v : {&in.key, &in.read_key, &in.erase_key})
    for (int64_t i = 0; i < m; ++i) v->push_back(u(-scale, scale));
  for (int64_t i = 0; i < m; ++i) in.value.push_back(rng.normal());
  in.write = u(0, 1), in.erase = u(0, 1), in.threshold = u(-1, 3);
  return in;
}

}  // namespace

TEST_CASE("setmem: the double and tape updates agree with NumPy's on 9 golden cases") {
  const auto cases = read_golden();
  REQUIRE(cases.size() == 9);
  for (const Golden& g : cases) {
    const auto out = memory::set_step(g.in);
    check_near(out.strengths, g.strengths, 1e-13, "strengths");
    check_near(out.erase_weights, g.erase_weights, 1e-13, "erase weights");
    check_near(out.read_weights, g.read_weights, 1e-13, "read weights");
    check_near(out.read, g.read, 1e-13, "read");
    ad::Tape t;
    const auto u = on_tape(t, g.in);
    check_near(values_of(u.state.strengths.value()), g.strengths, 1e-6, "tape strengths");
    if (g.in.strengths.empty())
      CHECK(!u.weights.valid());  // an empty set: nothing to weigh, a read of zeros
    else
      check_near(values_of(u.weights.value()), g.read_weights, 1e-5, "tape read weights");
    check_near(values_of(u.read.value()), g.read, 1e-5, "tape read");
  }
}

TEST_CASE("setmem: a permutation of the slots changes no read (to an ulp), double and tape") {
  Rng rng(35);
  int trials = 0;
  double worst = 0.0, worst_f = 0.0;
  for (int64_t n : {2, 5, 17, 64})
    for (int rep = 0; rep < 10; ++rep) {
      const auto in = random_set(rng, n, 4, 2.0);
      std::vector<size_t> perm(static_cast<size_t>(n));
      std::iota(perm.begin(), perm.end(), 0);
      for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
      const auto a = memory::set_step(in), b = memory::set_step(permuted(in, perm));
      REQUIRE(a.read.size() == b.read.size());
      for (size_t c = 0; c < a.read.size(); ++c)
        worst = std::max(worst, ulps(a.read[c], b.read[c]));
      // The slots' weights move with them; the new slot stays last.
      for (size_t i = 0; i < perm.size(); ++i) {
        CHECK(ulps(b.read_weights[i], a.read_weights[perm[i]]) <= 1.0);
        CHECK(ulps(b.strengths[i], a.strengths[perm[i]]) <= 1.0);
      }
      ad::Tape t;
      const auto ta = on_tape(t, in), tb = on_tape(t, permuted(in, perm));
      for (int64_t c = 0; c < ta.read.size(); ++c)
        worst_f = std::max(worst_f, ulps_f(ta.read.value()[c], tb.read.value()[c]));
      ++trials;
    }
  CHECK(trials == 40);
  CHECK_MESSAGE(worst <= 1.0, "double read differs by " << worst << " ulp");
  CHECK_MESSAGE(worst_f <= 1.0, "float read differs by " << worst_f << " ulp");
}

TEST_CASE("setmem: membership reads off the total weight; erase by content removes a slot") {
  // Three slots whose keys match their own axis (6) and oppose the others (-2): a key along
  // slot 1's axis scores 36 there and -12 elsewhere, against the sentinel's 0. (A slot whose
  // key is orthogonal to the read key scores 0, as the sentinel: it counts as half found.
  // Trained keys (tanh) learn to oppose what they do not match.)
  memory::SetStepIn in;
  in.m = 3;
  in.strengths = {1, 1, 1};
  in.keys = {6, -2, -2, -2, 6, -2, -2, -2, 6};
  in.values = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  in.key = {-6, 0, 0}, in.value = {0, 0, 0}, in.write = 0.0;
  in.read_key = {0, 6, 0};  // present: slot 1
  in.erase_key = {0, 0, 6}, in.erase = 0.0;
  auto o = memory::set_step(in);
  CHECK(o.read[3] == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(o.read[0] == doctest::Approx(4.0).epsilon(1e-9));
  in.read_key = {-6, -6, -6};  // absent: scores -12 at every slot
  o = memory::set_step(in);
  CHECK(o.read[3] < 3 * std::exp(-12.0) * 1.01);
  // Erase slot 2 fully, then read it with a key of half the norm: found before, gone after.
  // (The erase leaves s_2 ≈ 1 / e^36, the sentinel's share; a read as sharp as the erase,
  // e^36 · s_2 against 1, would find half of it again.)
  in.read_key = {0, 0, 3};
  o = memory::set_step(in);
  CHECK(o.read[3] > 0.99);
  in.erase = 1.0;
  o = memory::set_step(in);
  CHECK(o.strengths[2] < 1e-15);
  CHECK(o.read[3] < 0.01);  // the other two slots' e^-6 each
  CHECK(o.strengths[0] == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("setmem: the fused weights and read equal their composition, values and gradients") {
  Rng rng(4);
  const int64_t B = 3, n = 6, m = 4;
  Tensor s({B, n}), k({B, n, m}), q({B, m}), v({B, n, m}), g({B, m + 1}), tau({B, 1});
  for (int64_t i = 0; i < B; ++i) tau[i] = static_cast<float>(2 * rng.uniform() - 0.5);
  for (int64_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(rng.uniform());
  for (int64_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(2 * rng.uniform() - 1);
  for (int64_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(2 * rng.uniform() - 1);
  for (int64_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rng.normal());
  for (int64_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(rng.normal());
  auto run = [&](bool fused, std::vector<Tensor>& grads) {
    ad::Tape t;
    ad::Var S = t.input(s.clone()), K = t.input(k.clone()), Q = t.input(q.clone()),
            V = t.input(v.clone()), T = t.input(tau.clone());
    ad::Var out;
    if (fused) {
      out = memory::set_read(memory::set_weights(S, K, Q, T), V);
    } else {
      // logits [B, n] = K q; weights = s e^z / (e^τ + Σ s e^z); read = [w V, Σ w]
      ad::Var z = ad::reshape(ad::matmul(K, ad::reshape(Q, {B, m, 1})), {B, n});
      ad::Var e = ad::mul(S, ad::exp(z));
      ad::Var w = ad::div(e, ad::add(ad::sum_last(e), ad::exp(T)));
      out = ad::concat(
          {ad::reshape(ad::matmul(ad::reshape(w, {B, 1, n}), V), {B, m}), ad::sum_last(w)}, 1);
    }
    t.backward(ad::sum(ad::mul(out, t.constant(g.clone()))));
    grads.clear();
    for (ad::Var x : {S, K, Q, V, T}) grads.push_back(x.grad().clone());
    return out.value().clone();
  };
  std::vector<Tensor> ga, gb;
  const Tensor a = run(true, ga), b = run(false, gb);
  test::check_close(a, b, 1e-6, 1e-5);
  for (size_t i = 0; i < ga.size(); ++i) test::check_close(ga[i], gb[i], 1e-5, 1e-4);
}

TEST_CASE("setmem: gradients through three steps (finite differences)") {
  Rng rng(9);
  const int64_t B = 2, m = 3, steps = 3;
  std::vector<Tensor> in;
  for (int64_t s = 0; s < steps; ++s) {
    Tensor w({B, 1}), er({B, 1}), tau({B, 1});
    tau[0] = static_cast<float>(rng.uniform() * 2), tau[1] = static_cast<float>(rng.uniform() * 2);
    w[0] = 0.3f + 0.5f * static_cast<float>(rng.uniform());
    w[1] = 0.3f + 0.5f * static_cast<float>(rng.uniform());
    er[0] = 0.2f + 0.6f * static_cast<float>(rng.uniform());
    er[1] = 0.2f + 0.6f * static_cast<float>(rng.uniform());
    in.push_back(std::move(w));
    in.push_back(std::move(er));
    in.push_back(std::move(tau));
    for (int r = 0; r < 4; ++r) {  // key, value, read key, erase key
      Tensor x({B, m});
      for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.uniform() * 2 - 1);
      in.push_back(std::move(x));
    }
  }
  ad::GradCheckOptions opt;
  opt.eps = 1e-3;
  const auto r = ad::check_gradients(
      [&](ad::Tape& t, const std::vector<ad::Var>& x) {
        memory::SetState st;
        ad::Var reads;
        for (int64_t s = 0; s < steps; ++s) {
          const auto* p = &x[static_cast<size_t>(7 * s)];
          auto up = memory::set_update(t, st, p[0], p[3], p[4], p[5], p[1], p[6], p[2]);
          st = up.state;
          reads = reads.valid() ? ad::concat({reads, up.read}, 1) : up.read;
        }
        return ad::concat({reads, st.strengths}, 1);
      },
      in, opt);
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked == B * steps * (3 + 4 * m));
}

TEST_CASE("setmem: a set with tied keys reads with the key it writes (the read-key columns idle)") {
  // Every row of the memory control layer [w, e, k, v, q, e_k, tau] that reaches the loss gets a
  // gradient; with tied_keys the read key q is the written key k, so q's rows get none at all
  // (exactly 0), and the loss's gradients still agree with finite differences.
  std::vector<memory::TransduceExample> data = {{{5, 6, 5, 7}, {6}}, {{6, 7, 6}, {5, 7}}};
  std::vector<const memory::TransduceExample*> items = {&data[0], &data[1]};
  const int64_t m = 3;
  auto idle_rows = [&](bool tied, bool check) {
    memory::StackLstmConfig c;
    c.memory = "set", c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = m;
    c.two_controllers = c.input_control = c.read_out = true;
    c.tied_keys = tied;
    nn::ParamStore ps;
    Rng rng(4);
    memory::StackLstm model(ps, c, rng);
    if (check) {
      ad::GradCheckOptions opt;
      opt.eps = 1e-3;
      opt.max_per_tensor = 12;
      const auto r = ad::check_gradients([&](ad::Tape& t) { return model.loss(t, items, nullptr); },
                                         ps.params(), opt);
      CHECK_MESSAGE(r.ok, r.where);
    }
    for (ad::Parameter* p : ps.params()) p->grad = Tensor(p->value.shape(), 0.0f);
    ad::Tape t(0);
    t.backward(model.loss(t, items, nullptr));
    int64_t zero = 0, rows = 0;
    for (const char* layer : {"memory_control.b", "decoder_memory_control.b"}) {
      const Tensor& g = ps.get(layer).grad;
      for (int64_t j = 2 + 2 * m; j < 2 + 3 * m; ++j, ++rows) zero += g[j] == 0.0f;
    }
    return std::make_pair(zero, rows);
  };
  const auto tied = idle_rows(true, true), untied = idle_rows(false, false);
  CHECK(tied.first == tied.second);
  CHECK(untied.first == 0);
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "stack", c.tied_keys = true;  // a set's only
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("setmem: errors") {
  memory::SetStepIn in;
  in.m = 2;
  in.key = in.value = in.read_key = in.erase_key = {0, 0};
  in.write = 1.5;
  CHECK_THROWS_AS(memory::set_step(in), DataError);
  in.write = 0.5;
  in.strengths = {0.5};
  in.keys = {1, 2};
  in.values = {1};
  CHECK_THROWS_AS(memory::set_step(in), ShapeError);
  in.values = {1, 2};
  in.read_key = {1};
  CHECK_THROWS_AS(memory::set_step(in), ShapeError);
  in.read_key = {1, NAN};
  CHECK_THROWS_AS(memory::set_step(in), DataError);
}

}  // namespace attnkit_unit_setmem_test
