// lib/attnkit/attention/mha.h against PyTorch's nn.MultiheadAttention (testdata/mha, made by
// testdata/make_mha_golden.py): context, averaged and per-head weights; parameter errors.
#include "attnkit/attention/mha.h"

#include <map>
#include <string>
#include <vector>

#include "attnkit/attention/score.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_mha_test {

using namespace attnkit;
using namespace attnkit::attention;

namespace {

Tensor g(const std::string& name) { return io::read_tensor(test::testdata("mha/" + name)); }

MhaParams params(const std::string& name) {
  auto arrays = io::read_npz(test::testdata("mha/" + name));
  return mha_params(arrays);
}

// Every output of one case against the goldens `prefix`_{context,weights,head_weights}.
void check_case(const std::string& prefix, const MhaParams& p, const Tensor& q, const Tensor& k,
                const Tensor& v, MhaOptions opt) {
  CAPTURE(prefix);
  opt.output = MhaOutput::Context;
  Tensor c = multi_head_attention(p, q, k, v, opt);
  Tensor gc = g(prefix + "_context.txt");
  gc.reshape(c.shape());
  test::check_close(c, gc, 1e-5, 1e-5);
  opt.output = MhaOutput::Weights;
  Tensor w = multi_head_attention(p, q, k, v, opt);
  Tensor gw = g(prefix + "_weights.txt");
  gw.reshape(w.shape());
  test::check_close(w, gw, 1e-6, 1e-5);
  opt.output = MhaOutput::HeadWeights;
  Tensor hw = multi_head_attention(p, q, k, v, opt);
  Tensor ghw = g(prefix + "_head_weights.npy");
  ghw.reshape(hw.shape());
  test::check_close(hw, ghw, 1e-6, 1e-5);
}

}  // namespace

TEST_CASE("mha = torch.nn.MultiheadAttention: self, causal, mask, padding, cross, no bias") {
  const Tensor X = g("X.npy"), X1 = g("X1.npy");
  MhaOptions o;
  o.heads = 2;
  check_case("self", params("self.npz"), X, X, X, o);
  o.heads = 4;
  o.causal = true;
  check_case("causal", params("self4.npz"), X1, X1, X1, o);
  o.causal = false;
  const Tensor mask = g("mask.txt");
  o.mask = &mask;
  check_case("maskfile", params("self4.npz"), X1, X1, X1, o);
  o.mask = nullptr;
  o.heads = 2;
  const std::vector<int64_t> lengths = key_lengths_from(g("lengths.txt"), 2, 5);
  o.key_lengths = &lengths;
  check_case("padding", params("self.npz"), X, X, X, o);
  o.key_lengths = nullptr;
  o.heads = 4;
  check_case("cross", params("cross.npz"), g("Qc.npy"), g("Kc.npy"), g("Vc.npy"), o);
  o.heads = 2;
  o.causal = true;
  const Tensor K8 = g("K8.npy");
  check_case("cross8", params("self.npz"), g("Qc.npy"), K8, K8, o);
  o.causal = false;
  check_case("nobias", params("nobias.npz"), X, X, X, o);
}

TEST_CASE("mha: head weights average to the weights, rows sum to 1, padded keys get 0") {
  const Tensor X = g("X.npy");
  const MhaParams p = params("self.npz");
  MhaOptions o;
  o.heads = 2;
  const std::vector<int64_t> lengths = {5, 3};
  o.key_lengths = &lengths;
  o.output = MhaOutput::HeadWeights;
  const Tensor hw = multi_head_attention(p, X, X, X, o);
  REQUIRE(hw.shape() == Shape{2, 2, 5, 5});
  for (int64_t bh = 0; bh < 4; ++bh)
    for (int64_t i = 0; i < 5; ++i) {
      double s = 0;
      for (int64_t j = 0; j < 5; ++j) s += hw[(bh * 5 + i) * 5 + j];
      CHECK(s == doctest::Approx(1.0).epsilon(1e-6));
      if (bh >= 2)
        for (int64_t j = 3; j < 5; ++j) CHECK(hw[(bh * 5 + i) * 5 + j] == 0.0f);
    }
}

TEST_CASE("mha: parameter and shape errors name the array and both shapes") {
  auto msg = [](const std::string& npz) {
    auto arrays = io::read_npz(test::testdata("mha/" + npz));
    try {
      mha_params(arrays);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg("no_out_weight.npz") == "no array 'out_proj.weight' (needs [E, E])");
  CHECK(msg("bad_in_weight.npz") ==
        "array 'in_proj_weight' has shape [12, 16] but needs [3E, E] = [24, 8]");
  CHECK(msg("bad_in_bias.npz") == "array 'in_proj_bias' has shape [23] but needs [3E] = [24]");
  CHECK(msg("no_out_bias.npz").find("no array 'out_proj.bias'") == 0);

  const MhaParams p = params("self.npz");
  MhaOptions o;
  o.heads = 3;
  const Tensor X = g("X.npy");
  CHECK_THROWS_AS(multi_head_attention(p, X, X, X, o), UsageError);
  o.heads = 2;
  const Tensor bad({2, 5, 7});
  CHECK_THROWS_WITH_AS(multi_head_attention(p, bad, X, X, o),
                       "Q has 7 columns but the parameters have E = 8", InputShapeError);
  CHECK_THROWS_AS(key_lengths_from(Tensor({3}), 2, 5), ShapeError);
  CHECK_THROWS_AS(key_lengths_from(Tensor({2}, std::vector<float>{1, 6}), 2, 5), DataError);
  CHECK_THROWS_AS(key_lengths_from(Tensor({2}, std::vector<float>{1, 2.5f}), 2, 5), DataError);
  CHECK_THROWS_AS(parse_mha_output("scores"), UsageError);
}

TEST_CASE("mha: self-attention's one stacked projection = three separate ones") {
  // X passed three times takes the one-gemm path (in_proj stacked [3E, E]); copies of X take
  // the path of cross-attention (three gemms); parameters without the stacked weights stack
  // them on the fly. All three agree, with a causal mask and without.
  const Tensor X = g("X.npy");
  const Tensor Xk = X.clone(), Xv = X.clone();
  for (const char* file : {"self.npz", "nobias.npz"}) {
    CAPTURE(file);
    MhaParams p = params(file);
    REQUIRE(p.w_in.shape() == Shape{3 * p.embed, p.embed});
    MhaOptions o;
    o.heads = 2;
    for (bool causal : {false, true}) {
      o.causal = causal;
      const Tensor one = multi_head_attention(p, X, X, X, o);
      const Tensor three = multi_head_attention(p, X, Xk, Xv, o);
      MhaParams bare = params(file);
      bare.w_in = Tensor();
      bare.b_in = Tensor();
      const Tensor stacked = multi_head_attention(bare, X, X, X, o);
      test::check_close(one, three, 1e-6, 1e-5);
      CHECK(one.values() == stacked.values());
    }
  }
}

}  // namespace attnkit_unit_mha_test
