// lib/attnkit/attention/attention.h: location score, local attention and key padding against
// the PyTorch goldens of testdata/local (testdata/make_local_golden.py); the streaming and
// block paths of attend() agree, whatever the thread count.
#include <cmath>
#include <limits>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_local_test {

using namespace attnkit;
using namespace attnkit::attention;

namespace {

Tensor g(const std::string& name) { return io::read_tensor(test::testdata("local/" + name)); }

void check_inf_close(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  Tensor fa = a.clone(), fb = b.clone();
  for (int64_t i = 0; i < a.size(); ++i)
    if (std::isinf(b[i])) {
      CHECK(a[i] == b[i]);
      fa[i] = fb[i] = 0.0f;
    }
  test::check_close(fa, fb, 1e-5, 1e-5);
}

void load(Scorer& s, LocalSpec& l, const std::string& npz) {
  for (auto& [name, t] : io::read_npz(test::testdata("local/" + npz))) {
    if (name == "Wa") s.Wa = t.clone();
    if (name == "W") s.W = t.clone();
    if (name == "Wp") l.Wp = t.clone();
    if (name == "vp") l.vp = t.clone();
  }
}

void check_all(const std::string& prefix, const Scorer& s, const Tensor& q, const Tensor& k,
               const Tensor& v, Options o) {
  CAPTURE(prefix);
  o.output = Output::Scores;
  check_inf_close(attend(s, q, k, nullptr, o), g(prefix + "_scores.txt"));
  o.output = Output::Weights;
  check_inf_close(attend(s, q, k, nullptr, o), g(prefix + "_weights.txt"));
  o.output = Output::Context;
  check_inf_close(attend(s, q, k, &v, o), g(prefix + "_context.txt"));
}

}  // namespace

TEST_CASE("location, local-m, local-p (scaled-dot and general), key padding = PyTorch") {
  const Tensor Q = g("Q.txt"), K = g("K.txt"), V = g("V.txt");
  Scorer loc;
  loc.kind = ScoreKind::Location;
  LocalSpec lp;
  load(loc, lp, "params.npz");
  check_all("location", loc, Q, K, V, {});
  Scorer sd;
  LocalSpec lm;
  lm.kind = Local::Monotonic;
  lm.window = 2;
  Options o;
  o.local = &lm;
  check_all("local_m", sd, Q, K, V, o);
  lp.kind = Local::Predictive;
  lp.window = 2;
  o.local = &lp;
  check_all("local_p", sd, Q, K, V, o);
  const std::vector<float> pos = local_positions(lp, mat(Q), K.dim(0));
  const Tensor gp = g("local_p_positions.txt");
  for (size_t i = 0; i < pos.size(); ++i)
    CHECK(pos[i] == doctest::Approx(gp[int64_t(i)]).epsilon(1e-5));
  Scorer gen;
  gen.kind = parse_score_kind("general");
  LocalSpec lg;
  load(gen, lg, "general.npz");
  lg.kind = Local::Predictive;
  lg.window = 2;
  o.local = &lg;
  check_all("local_p_general", gen, Q, K, V, o);
  const std::vector<int64_t> lengths = {9, 4, 0};
  Options op;
  op.key_lengths = &lengths;
  check_all("padding", sd, g("Qb.npy"), g("Kb.npy"), g("Vb.npy"), op);
}

TEST_CASE("attend: streaming contexts = block contexts; same bits for 1 and 2 threads") {
  Rng rng(5);
  auto randn = [&](Shape s) {
    Tensor t(std::move(s));
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(2 * rng.normal());
    return t;
  };
  const Tensor q = randn({3, 70, 6}), k = randn({3, 90, 6}), v = randn({90, 5});
  Scorer sd;
  Options o;
  o.causal = true;
  o.threads = 1;
  const Tensor a = attend(sd, q, k, &v, o);  // streaming
  o.threads = 2;
  const Tensor b = attend(sd, q, k, &v, o);
  CHECK(a.values() == b.values());
  // the block path: weights, then W V by hand
  o.output = Output::Weights;
  const Tensor w = attend(sd, q, k, nullptr, o);
  Tensor c({3, 70, 5});
  for (int64_t bb = 0; bb < 3; ++bb)
    gemm(Trans::No, Trans::No, 1.0f, mat(w, bb), mat(v), 0.0f, mat(c, bb));
  test::check_close(a, c, 1e-5, 1e-5);
}

TEST_CASE("local and location errors") {
  Scorer loc;
  loc.kind = ScoreKind::Location;
  loc.Wa = Tensor({4, 3});
  const Tensor q({2, 3}), k({5, 3});
  Options ow;
  ow.output = Output::Weights;
  CHECK_THROWS_WITH_AS(attend(loc, q, k, nullptr, ow),
                       "location Wa has shape [4, 3] but needs [n_k, d_q] = [5, 3]",
                       InputShapeError);
  LocalSpec lp;
  lp.kind = Local::Predictive;
  lp.window = 1;
  lp.Wp = Tensor({2, 3});
  lp.vp = Tensor({3});
  Options o;
  o.local = &lp;
  o.output = Output::Weights;
  CHECK_THROWS_WITH_AS(attend(Scorer{}, q, k, nullptr, o),
                       "local vp has shape [3] but needs [d_p] = [2]", InputShapeError);
  CHECK_THROWS_AS(parse_local("x"), UsageError);
  CHECK(parse_score_kind("concat") == ScoreKind::Additive);
}

}  // namespace attnkit_unit_local_test
