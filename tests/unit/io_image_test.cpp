// lib/attnkit/io/image.cpp: PGM and PNG read against files written byte by byte by
// testdata/make_image_golden.py, round trips through the writers, and every error.
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_io_image_test {

using namespace attnkit;
using namespace attnkit::io;

TEST_CASE("image: PGM and PNG golden files read as the script's values") {
  for (const char* f : {"grey8.pgm", "grey4_ascii.pgm", "grey16.pgm", "grey1000.pgm", "grey8.png",
                        "grey16.png", "rgb.png"}) {
    CAPTURE(f);
    SourceInfo info;
    const Tensor t = read_tensor(test::testdata(std::string("image/") + f), &info);
    const Tensor want = read_tensor(test::testdata(std::string("image/") + f + ".npy"));
    CHECK(info.format ==
          (std::string(f).find(".png") != std::string::npos ? Format::Png : Format::Pgm));
    test::check_close(t, want, 1e-7, 1e-6);
  }
}

TEST_CASE("image: PGM and PNG round trips of 8-bit values; 16-bit PGM") {
  Tensor t({3, 7});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>((i * 37) % 256) / 255.0f;
  t[0] = 0.0f;
  t[20] = 1.0f;
  test::check_close(parse_pgm(format_pgm(t), "x"), t, 1e-7, 0);
  test::check_close(parse_png(format_png(t), "x"), t, 1e-7, 0);
  Tensor u({2, 2}, std::vector<float>{0.1f, 0.5f, 0.25f, 0.9999f});
  test::check_close(parse_pgm(format_pgm(u, true), "x"), u, 0.51 / 65535, 0);
  test::check_close(parse_pgm(format_pgm(u), "x"), u, 0.51 / 255, 0);
  // A batch of one picture is a picture; values are rounded to the nearest level.
  Tensor b({1, 1, 2}, std::vector<float>{0.3f, 0.7f});
  const Tensor back = parse_png(format_png(b), "x");
  CHECK(back.shape() == Shape{1, 2});
  CHECK(back[0] == 77.0f / 255.0f);
  CHECK(detect_format(format_png(t)) == Format::Png);
  CHECK(detect_format(format_pgm(t)) == Format::Pgm);
  CHECK(detect_format("P2\n1 1 1\n1\n") == Format::Pgm);
  CHECK(detect_format("Px 1 2") == Format::Text);
}

TEST_CASE("image: damaged and hostile pictures are DataErrors before any allocation") {
  auto bytes = [](const char* f) { return read_all(test::testdata(std::string("image/") + f)); };
  auto throws = [](const std::string& b, const std::string& text) {
    CAPTURE(text);
    bool thrown = false;
    try {
      (void)parse_tensor(b, "f", "");
    } catch (const DataError& e) {
      thrown = true;
      CHECK(std::string(e.what()).find(text) != std::string::npos);
      CHECK(e.file() == "f");
    }
    CHECK(thrown);
  };
  throws(bytes("cut.pgm"), "15 samples need 15 bytes, the file holds 10");
  throws(bytes("huge.pgm"), "exceed the limit of 2^28");
  throws(bytes("above.pgm"), "exceeds 10");
  throws(bytes("cut.png"), "PNG: ");
  throws(bytes("huge.png"), "more than the file could hold");
  throws("P5\n2 2\n255\n\x01\x02\x03\x04\x05", "1 bytes after the image");
  throws("P5\n0 2\n255\n", "zero width or height");
  throws("P5\n2 2\n0\n", "maxval 0");
  throws("P5\n2 2\n65536\n", "maxval exceeds 65535");
  throws("P2\n2 2\n", "ends before the maxval");
  throws("P2\n2 x 255\n", "expected the height");
  throws("P2\n3 3 255\n1 2 3\n", "cannot fit");
  throws("P5 1 1 255", "no white space after the maxval");
  throws("P5\n1 1\n255\n\x01\x02", "1 bytes after the image");
  throws(std::string("P5\n2 1\n300\n\x01\x2d\x00\x01", 15), "above maxval 300");
  CHECK_THROWS_AS(parse_pgm("P3\n1 1 1\n1\n", "f"), DataError);
  CHECK_THROWS_AS(parse_png("\x89PNG\r\n\x1a\nxxxxxxxxxxxx", "f"), DataError);
  // Writers: a picture is a matrix of values in [0,1].
  CHECK_THROWS_AS(format_png(Tensor({2, 2}, 1.5f)), DataError);
  CHECK_THROWS_AS(format_pgm(Tensor({2, 2}, -0.1f)), DataError);
  CHECK_THROWS_AS(format_pgm(Tensor({2, 2, 2})), ShapeError);
  CHECK_THROWS_AS(format_png(Tensor({4})), ShapeError);
}

}  // namespace attnkit_unit_io_image_test
