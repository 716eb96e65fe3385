// lib/attnkit/vision/glimpse.h: against the NumPy crop-and-resize of
// testdata/make_glimpse_golden.py, and against what a retina must do.
#include "attnkit/vision/glimpse.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_glimpse_test {

using namespace attnkit;

TEST_CASE("glimpse equals NumPy's crop and average-pool on random images and locations") {
  for (const char* name : {"g4_k3_s2", "g3_k2_s3", "g12_k3_s2", "g5_k1_s1", "g2_k4_s2"}) {
    CAPTURE(name);
    const std::string f = test::testdata(std::string("glimpse/") + name + ".npz");
    const Tensor images = io::read_tensor(f + ":images");
    const Tensor locs = io::read_tensor(f + ":locations");
    const Tensor cfg = io::read_tensor(f + ":config");
    vision::GlimpseConfig c;
    c.size = static_cast<int64_t>(cfg[0]);
    c.scales = static_cast<int64_t>(cfg[1]);
    c.factor = static_cast<int64_t>(cfg[2]);
    test::check_close(vision::glimpse(images, locs, c), io::read_tensor(f + ":glimpses"), 1e-6,
                      1e-5);
  }
}

TEST_CASE("glimpse: a bright image seen whole at the centre, nothing far outside") {
  vision::GlimpseConfig c;
  c.size = 4, c.scales = 3, c.factor = 2;  // 4, 8, 16 on a 16 x 16 image
  Tensor img({2, 16, 16}, 1.0f);
  Tensor locs({2, 2}, std::vector<float>{0, 0, 3.0f, -3.0f});
  const Tensor g = vision::glimpse(img, locs, c);
  REQUIRE(g.shape() == Shape{2, 3, 4, 4});
  for (int64_t i = 0; i < 48; ++i) CHECK(g[i] == doctest::Approx(1.0));
  for (int64_t i = 48; i < 96; ++i) CHECK(g[i] == 0.0f);
  // At the top-left corner half of each patch (by side) is outside: a quarter of the area.
  Tensor corner({1, 2}, std::vector<float>{-1, -1});
  const Tensor h = vision::glimpse(Tensor({1, 16, 16}, 1.0f), corner, c);
  for (int64_t j = 0; j < 3; ++j) {
    double s = 0;
    for (int64_t p = 0; p < 16; ++p) s += h[j * 16 + p];
    CHECK(s / 16 == doctest::Approx(0.25));
  }
  const vision::PatchBox b = vision::glimpse_box(-1, -1, 16, 16, c, 2);
  CHECK(b.top == -8);
  CHECK(b.left == -8);
  CHECK(b.side == 16);
}

TEST_CASE("glimpse: a one-pixel dot moves with the location") {
  vision::GlimpseConfig c;
  c.size = 1, c.scales = 1, c.factor = 2;
  Tensor img({1, 10, 10}, 0.0f);
  img.data()[3 * 10 + 7] = 1.0f;  // row 3, column 7: centre (7.5, 3.5) → x = 0.5, y = -0.3
  Tensor on({1, 2}, std::vector<float>{0.5f, -0.3f});
  CHECK(vision::glimpse(img, on, c)[0] == 1.0f);
  Tensor off({1, 2}, std::vector<float>{0.7f, -0.3f});
  CHECK(vision::glimpse(img, off, c)[0] == 0.0f);
}

TEST_CASE("glimpse: errors") {
  vision::GlimpseConfig c;
  Tensor img({2, 8, 8}), locs({2, 2});
  CHECK_THROWS_AS(vision::glimpse(Tensor({8, 8}), locs, c), ShapeError);
  CHECK_THROWS_AS(vision::glimpse(img, Tensor({3, 2}), c), ShapeError);
  CHECK_THROWS_AS(vision::glimpse(img, Tensor({2, 3}), c), ShapeError);
  Tensor bad({2, 2}, std::vector<float>{0, 0, std::nanf(""), 0});
  CHECK_THROWS_AS(vision::glimpse(img, bad, c), DataError);
  vision::GlimpseConfig z = c;
  z.size = 0;
  CHECK_THROWS_AS(z.validate(), UsageError);
  z = c, z.scales = 9;
  CHECK_THROWS_AS(z.validate(), UsageError);
  z = c, z.factor = 0;
  CHECK_THROWS_AS(z.validate(), UsageError);
  z = c, z.size = 256, z.scales = 8, z.factor = 8;
  CHECK_THROWS_WITH_AS(z.validate(), doctest::Contains("4096"), UsageError);
}

}  // namespace attnkit_unit_glimpse_test
