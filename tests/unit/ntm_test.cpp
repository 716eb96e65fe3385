// lib/attnkit/memory/ntm*: the addressing equations in double precision against their
// defining properties, the tape model's addressing against that reference, finite-difference
// gradients through controller → heads → addressing → memory over 3 steps, the paper's tasks,
// and a short copy training run that must reduce the cost.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm/address.h"
#include "attnkit/memory/ntm/model.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ntm_test {

using namespace attnkit;
using namespace attnkit::memory;
using ad::Tape;
using ad::Var;

namespace {

constexpr int64_t N = 10, M = 4;

std::vector<double> randv(int64_t n, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = scale * rng.normal();
  return v;
}

std::vector<double> simplex(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  double s = 0;
  for (double& x : v) s += (x = 0.05 + rng.uniform_double());
  for (double& x : v) x /= s;
  return v;
}

void check_distribution(const std::vector<double>& w) {
  double s = 0;
  for (double x : w) {
    CHECK(std::isfinite(x));
    CHECK(x >= 0.0);
    s += x;
  }
  CHECK(s == doctest::Approx(1.0).epsilon(1e-12));
}

struct Fixture {
  std::vector<double> mem = randv(N * M, 1), key = randv(M, 2), prev = simplex(N, 3);
  std::vector<double> shift{0.2, 0.5, 0.3};
  double beta = 3.0, gate = 0.7, gamma = 2.0;
  AddressStages run() const { return ntm_address(mem, N, M, key, beta, gate, shift, gamma, prev); }
};

}  // namespace

TEST_CASE("ntm: addressing stages are distributions (double precision)") {
  Fixture f;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    f.mem = randv(N * M, seed);
    f.key = randv(M, seed + 100);
    f.prev = simplex(N, seed + 200);
    f.beta = 0.1 * static_cast<double>(seed);
    f.gamma = 1.0 + 0.3 * static_cast<double>(seed);
    const AddressStages s = f.run();
    check_distribution(s.wc);
    check_distribution(s.wg);
    check_distribution(s.wshift);
    check_distribution(s.w);
  }
}

TEST_CASE("ntm: shift (0,1,0) is the identity, (0,0,1) rotates by one with wrap-around") {
  Fixture f;
  f.shift = {0, 1, 0};
  AddressStages s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wshift[i] == s.wg[i]);
  f.shift = {0, 0, 1};
  s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wshift[i] == s.wg[(i + N - 1) % N]);
  CHECK(s.wshift[0] == s.wg[N - 1]);  // the last row wraps to the first
  f.shift = {1, 0, 0};
  s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wshift[i] == s.wg[(i + 1) % N]);
  // A wider range: shifts −2..+2, all weight on +2.
  f.shift = {0, 0, 0, 0, 1};
  s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wshift[i] == s.wg[(i + N - 2) % N]);
}

TEST_CASE("ntm: gamma 1 is the identity, gate 0 returns the previous weighting") {
  Fixture f;
  f.gamma = 1.0;
  AddressStages s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.w[i] == doctest::Approx(s.wshift[i]).epsilon(1e-9));
  f.gate = 0.0;
  s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wg[i] == f.prev[i]);
  f.gate = 1.0;
  s = f.run();
  for (int64_t i = 0; i < N; ++i) CHECK(s.wg[i] == s.wc[i]);
  // Sharpening concentrates: γ > 1 raises the largest weight.
  f.gamma = 3.0;
  s = f.run();
  CHECK(*std::max_element(s.w.begin(), s.w.end()) >
        *std::max_element(s.wshift.begin(), s.wshift.end()));
}

TEST_CASE("ntm: large beta gives the one-hot argmax of the cosine") {
  Fixture f;
  f.beta = 1000.0;
  const AddressStages s = f.run();
  int64_t best = 0;
  for (int64_t i = 1; i < N; ++i)
    if (ntm_cosine(f.key.data(), f.mem.data() + i * M, M) >
        ntm_cosine(f.key.data(), f.mem.data() + best * M, M))
      best = i;
  for (int64_t i = 0; i < N; ++i) CHECK(s.wc[i] == doctest::Approx(i == best ? 1.0 : 0.0));
  // Content addressing finds a stored row from a noisy copy of it.
  f.key.assign(f.mem.begin() + 6 * M, f.mem.begin() + 7 * M);
  f.key[0] += 0.05;
  f.beta = 200.0;
  const AddressStages t = f.run();
  CHECK(std::max_element(t.wc.begin(), t.wc.end()) - t.wc.begin() == 6);
}

TEST_CASE("ntm: degenerate inputs stay finite (zero memory, beta 100, gamma 50)") {
  Fixture f;
  f.mem.assign(N * M, 0.0);
  f.key.assign(M, 0.0);
  AddressStages s = f.run();
  for (double x : s.wc) CHECK(x == doctest::Approx(1.0 / N));  // no content preference
  check_distribution(s.w);
  f.mem = randv(N * M, 5);
  f.key = randv(M, 6);
  f.beta = 100.0;
  f.gamma = 50.0;
  f.prev.assign(N, 0.0);
  f.prev[3] = 1.0;
  f.shift = {0, 0, 1};
  f.gate = 0.0;
  s = f.run();
  check_distribution(s.w);
  CHECK(s.w[4] == doctest::Approx(1.0));
  // The same in the float32 tape model, with its gradients.
  Tape t;
  Var mem = t.input(Tensor({N, M}, 0.0f));
  Var key = t.input(Tensor({1, M}, 0.0f));
  Var beta = t.input(Tensor({1, 1}, 100.0f));
  Var gate = t.input(Tensor({1, 1}, 0.5f));
  Var shift = t.input(Tensor({1, 3}, std::vector<float>{0, 0, 1}));
  Var gamma = t.input(Tensor({1, 1}, 50.0f));
  Tensor p({1, N}, 0.0f);
  p[2] = 1.0f;
  Var prev = t.input(std::move(p));
  Var w = Ntm::address(mem, key, beta, gate, shift, gamma, prev);
  t.backward(ad::sum(ad::mul(w, t.constant(Tensor({1, N}, 0.3f)))));
  for (Var v : {w, mem, key, beta, gate, shift, gamma, prev}) {
    const Tensor& x = v.id() == w.id() ? w.value() : v.grad();
    for (int64_t i = 0; i < x.size(); ++i) CHECK(std::isfinite(x[i]));
  }
}

TEST_CASE("ntm: erase and add with a one-hot weighting rewrite one row, reads return it") {
  std::vector<double> mem = randv(N * M, 7), before = mem;
  std::vector<double> w(N, 0.0);
  w[5] = 1.0;
  const std::vector<double> e(M, 1.0), a = randv(M, 8);
  ntm_write(mem, N, M, w, e, a);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < M; ++j) CHECK(mem[i * M + j] == (i == 5 ? a[j] : before[i * M + j]));
  const std::vector<double> r = ntm_read(mem, N, M, w);
  for (int64_t j = 0; j < M; ++j) CHECK(r[j] == a[j]);
  // Partial erase scales the row, add accumulates.
  const std::vector<double> half(M, 0.5);
  ntm_write(mem, N, M, w, half, a);
  for (int64_t j = 0; j < M; ++j) CHECK(mem[5 * M + j] == doctest::Approx(1.5 * a[j]));
}

TEST_CASE("ntm: reference rejects bad sizes and values") {
  Fixture f;
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, randv(M + 1, 1), 1, 0.5, f.shift, 1, f.prev),
                  ShapeError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, 1, 0.5, {0.5, 0.5}, 1, f.prev), ShapeError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, 1, 0.5, f.shift, 1, randv(N - 1, 1)), ShapeError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, 1, 1.5, f.shift, 1, f.prev), DataError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, 1, 0.5, f.shift, 0.5, f.prev), DataError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, -1, 0.5, f.shift, 1, f.prev), DataError);
  CHECK_THROWS_AS(ntm_address(f.mem, N, M, f.key, NAN, 0.5, f.shift, 1, f.prev), DataError);
}

TEST_CASE("ntm: the tape's addressing equals the double-precision reference") {
  Fixture f;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    f.mem = randv(N * M, seed);
    f.key = randv(M, seed + 10);
    f.prev = simplex(N, seed + 20);
    f.beta = 2.0 * static_cast<double>(seed);
    f.gate = 0.15 * static_cast<double>(seed);
    f.gamma = 1.0 + static_cast<double>(seed);
    const AddressStages ref = f.run();
    auto tens = [](const std::vector<double>& v, Shape s) {
      return Tensor(std::move(s), std::vector<float>(v.begin(), v.end()));
    };
    Tape t;
    std::vector<Var> stages;
    Var w = Ntm::address(t.constant(tens(f.mem, {N, M})), t.constant(tens(f.key, {1, M})),
                         t.constant(Tensor({1, 1}, static_cast<float>(f.beta))),
                         t.constant(Tensor({1, 1}, static_cast<float>(f.gate))),
                         t.constant(tens(f.shift, {1, 3})),
                         t.constant(Tensor({1, 1}, static_cast<float>(f.gamma))),
                         t.constant(tens(f.prev, {1, N})), &stages);
    test::check_close(stages[0].value(), tens(ref.wc, {1, N}), 1e-5, 1e-4);
    test::check_close(stages[1].value(), tens(ref.wg, {1, N}), 1e-5, 1e-4);
    test::check_close(stages[2].value(), tens(ref.wshift, {1, N}), 1e-5, 1e-4);
    test::check_close(w.value(), tens(ref.w, {1, N}), 1e-5, 1e-4);
  }
}

TEST_CASE("ntm: finite-difference gradients through controller, heads, addressing, memory") {
  for (const char* ctrl : {"lstm", "feedforward"}) {
    for (const char* mem_init : {"learned", "constant"}) {
      CAPTURE(ctrl);
      CAPTURE(mem_init);
      NtmConfig cfg;
      cfg.input = 3;
      cfg.output = 2;
      cfg.controller = ctrl;
      cfg.controller_size = 6;
      cfg.memory_rows = 6;
      cfg.memory_cols = 3;
      cfg.read_heads = 2;
      cfg.write_heads = 1;
      cfg.memory_init = mem_init;
      nn::ParamStore ps;
      Rng rng(11);
      Ntm ntm(ps, cfg, rng);
      Tensor x({3, 3});
      Rng xr(5);
      for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(xr.next() >> 63);
      ad::GradCheckOptions opt;
      opt.eps = 3e-3;
      opt.rtol = 5e-2;
      opt.atol = 2e-3;
      opt.max_per_tensor = 12;
      const ad::GradCheckResult r =
          ad::check_gradients([&](Tape& t) { return ntm.forward(t, x); }, ntm.trainable(), opt);
      CHECK_MESSAGE(r.ok, r.where << " (worst " << r.worst << ")");
      CHECK(r.checked > 50);
    }
  }
}

TEST_CASE("ntm: the paper's tasks") {
  Rng rng(3);
  auto copy = data::SeqTaskOptions::defaults(data::SeqTask::Copy);
  data::Episode e = data::make_episode(copy, rng, 5);
  CHECK(e.input.shape() == Shape{11, 9});
  CHECK(e.target.shape() == Shape{11, 8});
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 8; ++j) CHECK(e.target.at(6 + i, j) == e.input.at(i, j));
  CHECK(e.input.at(5, 8) == 1.0f);
  CHECK(std::accumulate(e.mask.values().begin(), e.mask.values().end(), 0.0f) == 5.0f);
  auto rep = data::SeqTaskOptions::defaults(data::SeqTask::RepeatCopy);
  e = data::make_episode(rep, rng, 3, 4);
  CHECK(e.input.shape() == Shape{3 + 2 + 12 + 1, 10});
  CHECK(e.input.at(4, 9) == doctest::Approx(0.4));
  CHECK(e.target.at(17, 8) == 1.0f);
  for (int64_t k = 0; k < 12; ++k) CHECK(e.target.at(5 + k, 2) == e.input.at(k % 3, 2));
  auto ar = data::SeqTaskOptions::defaults(data::SeqTask::AssociativeRecall);
  for (int rep_i = 0; rep_i < 20; ++rep_i) {
    e = data::make_episode(ar, rng);
    CHECK(e.len >= 2);
    CHECK(e.len <= 6);
    const int64_t qa = e.len * 4;
    // The query equals some item q; the target is item q + 1.
    int found = 0;
    for (int64_t q = 0; q + 1 < e.len; ++q) {
      bool same = true, next = true;
      for (int64_t v = 0; v < 3; ++v)
        for (int64_t j = 0; j < 6; ++j) {
          same &= e.input.at(qa + 1 + v, j) == e.input.at(q * 4 + 1 + v, j);
          next &= e.target.at(qa + 5 + v, j) == e.input.at((q + 1) * 4 + 1 + v, j);
        }
      found += same && next;
    }
    CHECK(found >= 1);
  }
  CHECK_THROWS_AS(data::parse_seq_task("sort"), UsageError);
}

TEST_CASE("ntm: a short copy training run reduces the cost") {
  NtmConfig cfg;
  cfg.input = 5;
  cfg.output = 4;
  cfg.controller_size = 32;
  cfg.memory_rows = 16;
  cfg.memory_cols = 8;
  nn::ParamStore ps;
  Rng rng(1);
  Ntm ntm(ps, cfg, rng);
  data::SeqTaskOptions task = data::SeqTaskOptions::defaults(data::SeqTask::Copy);
  task.width = 4;
  task.max_len = 4;
  auto eval = [&]() {
    Rng er(99);
    Tape t;
    t.set_recording(false);
    int64_t wrong = 0;
    for (int i = 0; i < 100; ++i) {
      data::Episode e = data::make_episode(task, er);
      wrong += wrong_bits(ntm.forward(t, e.input).value(), e.target, &e.mask);
      t.clear();
    }
    return static_cast<double>(wrong) / 100.0;
  };
  const double before = eval();
  nn::Adam opt(ntm.trainable(), 3e-3);
  Tape t;
  Rng dr(7);
  for (int step = 0; step < 1200; ++step) {
    data::Episode e = data::make_episode(task, dr);
    Tensor mask({e.target.dim(0), e.target.dim(1)});
    for (int64_t i = 0; i < mask.size(); ++i) mask[i] = e.mask[i / e.target.dim(1)];
    Var loss = nn::bce_with_logits(ntm.forward(t, e.input), e.target, &mask);
    t.backward(loss);
    nn::clip_grad_norm(ntm.trainable(), 10.0);
    opt.step();
    opt.zero_grad();
    t.clear();
  }
  const double after = eval();
  MESSAGE("copy bits per sequence: " << before << " before, " << after << " after");
  CHECK(before > 3.0);
  CHECK(after < 0.5 * before);
}

TEST_CASE("ntm: fused addressing and write ops equal the composed ops (values, gradients)") {
  for (const char* add_act : {"tanh", "linear"}) {
    NtmConfig cfg;
    cfg.input = 4;
    cfg.output = 3;
    cfg.controller_size = 10;
    cfg.memory_rows = 12;
    cfg.memory_cols = 5;
    cfg.read_heads = 2;
    cfg.write_heads = 2;
    cfg.shift_range = 2;
    cfg.memory_init = "learned";
    cfg.add_activation = add_act;
    nn::ParamStore ps;
    Rng rng(4);
    Ntm ntm(ps, cfg, rng);
    Tensor x({6, 4});
    Rng xr(8);
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(xr.normal());
    Tensor seed({6, 3});
    for (int64_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<float>(xr.normal());
    std::vector<Tensor> grads[2];
    Tensor ys[2];
    for (int fused = 0; fused < 2; ++fused) {
      ntm.set_fused(fused == 1);
      ps.zero_grad();
      Tape t;
      Var y = ntm.forward(t, x);
      t.backward(y, seed);
      ys[fused] = y.value().clone();
      for (ad::Parameter* p : ntm.trainable()) grads[fused].push_back(p->grad.clone());
    }
    test::check_close(ys[1], ys[0], 1e-5, 1e-4);
    for (size_t i = 0; i < grads[0].size(); ++i) {
      CAPTURE(ntm.trainable()[i]->name);
      test::check_close(grads[1][i], grads[0][i], 1e-5, 1e-3);
    }
  }
}

TEST_CASE(
    "ntm: the writes' change of stored values (--write-penalty): value and finite-difference "
    "gradients") {
  NtmConfig cfg;
  cfg.input = 3;
  cfg.output = 2;
  cfg.controller_size = 6;
  cfg.memory_rows = 6;
  cfg.memory_cols = 3;
  cfg.read_heads = 1;
  cfg.write_heads = 2;
  cfg.memory_init = "learned";
  nn::ParamStore ps;
  Rng rng(11);
  Ntm ntm(ps, cfg, rng);
  Tensor x({4, 3});
  Rng xr(5);
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(xr.next() >> 63);
  const double eps = kNtmWriteChangeEps;
  for (int fused = 0; fused < 2; ++fused) {
    CAPTURE(fused);
    ntm.set_fused(fused == 1);
    // The value: Σ over steps and write heads of Σ_ij |M_ij| |ΔM_ij| (|x| as √(x² + ε²) − ε),
    // recomputed in double from the memory before and after each write.
    {
      Tape t;
      Var change;
      Var y = ntm.forward(t, x, nullptr, &change);
      NtmTrace tr;
      Tape t2;
      Var y2 = ntm.forward(t2, x, &tr);
      test::check_close(y.value(), y2.value(), 0, 0);  // write_change leaves the outputs alone
      const int64_t n = cfg.memory_rows, m = cfg.memory_cols;
      std::vector<double> mem(static_cast<size_t>(n * m));
      const Tensor& m0 = ps.get("ntm.init.memory").value;
      for (int64_t i = 0; i < n * m; ++i) mem[static_cast<size_t>(i)] = m0[i];
      double want = 0;
      for (size_t s = 0; s < tr.write_w.size(); ++s)
        for (int h = 0; h < cfg.write_heads; ++h)
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m; ++j) {
              const double w = tr.write_w[s].at(h, i), e = tr.erase[s].at(h, j),
                           a = tr.add[s].at(h, j);
              double& v = mem[static_cast<size_t>(i * m + j)];
              const double nv = v * (1 - w * e) + w * a;
              want += (std::sqrt(v * v + eps * eps) - eps) *
                      (std::sqrt((nv - v) * (nv - v) + eps * eps) - eps);
              v = nv;
            }
      CHECK(want > 0.01);
      CHECK(change.value()[0] == doctest::Approx(want).epsilon(1e-4));
    }
    ad::GradCheckOptions opt;
    opt.eps = 3e-3;
    opt.rtol = 5e-2;
    opt.atol = 2e-3;
    opt.max_per_tensor = 12;
    const ad::GradCheckResult r = ad::check_gradients(
        [&](Tape& t) {
          Var change;
          Var y = ntm.forward(t, x, nullptr, &change);
          return ad::add(ad::mul(ad::sum(y), 0.1f), change);
        },
        ntm.trainable(), opt);
    CHECK_MESSAGE(r.ok, r.where << " (worst " << r.worst << ")");
    CHECK(r.checked > 50);
  }
}

}  // namespace attnkit_unit_ntm_test
