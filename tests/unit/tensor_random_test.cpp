#include "attnkit/core/tensor_random.h"

#include <cmath>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/tensor_stats.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_tensor_random_test {

using namespace attnkit;

TEST_CASE("fill_random: same seed, same values; distributions in range") {
  Tensor a({50, 40}), b({50, 40});
  Rng r1(5), r2(5);
  fill_random(a, r1, {});
  fill_random(b, r2, {});
  CHECK(a.values() == b.values());
  const TensorStats s = tensor_stats(a);
  CHECK(std::fabs(s.mean) < 0.05);
  CHECK(std::fabs(s.std - 1) < 0.05);

  RandomSpec u;
  u.dist = Distribution::Uniform;
  u.low = -3;
  u.high = -2;
  Rng r3(1);
  fill_random(a, r3, u);
  for (float x : a.values()) {
    CHECK(x >= -3.0f);
    CHECK(x < -2.0f);
  }
  // A range so narrow that rounding would reach `high`: still below it.
  u.low = 1.0;
  u.high = std::nextafter(1.0f, 2.0f);
  fill_random(a, r3, u);
  for (float x : a.values()) CHECK(x == 1.0f);

  RandomSpec sg;
  sg.dist = Distribution::Sign;
  Rng r4(2);
  fill_random(a, r4, sg);
  int plus = 0;
  for (float x : a.values()) {
    CHECK((x == 1.0f || x == -1.0f));
    plus += x > 0;
  }
  CHECK(plus > 900);
  CHECK(plus < 1100);

  CHECK(parse_distribution("uniform") == Distribution::Uniform);
  CHECK_THROWS_AS(parse_distribution("gauss"), ChoiceError);
  RandomSpec bad;
  bad.std = -1;
  CHECK_THROWS_AS(fill_random(a, r4, bad), DataError);
  bad = {};
  bad.dist = Distribution::Uniform;
  bad.low = bad.high = 1;
  CHECK_THROWS_AS(fill_random(a, r4, bad), DataError);
}

TEST_CASE("tensor_stats: finite values only, NaN and Inf counted") {
  const Tensor t({2, 3}, std::vector<float>{1, NAN, INFINITY, -INFINITY, 3, NAN});
  const TensorStats s = tensor_stats(t);
  CHECK(s.count == 6);
  CHECK(s.finite == 2);
  CHECK(s.nan == 2);
  CHECK(s.inf == 2);
  CHECK(s.min == 1);
  CHECK(s.max == 3);
  CHECK(s.mean == 2);
  CHECK(s.std == 1);
  const TensorStats e = tensor_stats(Tensor({1}, std::vector<float>{NAN}));
  CHECK(std::isnan(e.min));
  CHECK(std::isnan(e.mean));
  // double accumulation: 1e8 + many small values keeps the small ones
  Tensor big({1001});
  big[0] = 1e8f;
  for (int i = 1; i <= 1000; ++i) big[i] = 1.0f;
  CHECK(tensor_stats(big).mean == doctest::Approx((1e8 + 1000) / 1001.0).epsilon(1e-12));
}

}  // namespace attnkit_unit_tensor_random_test
