// lib/attnkit/io/pbm: plain and raw PBM, several images per file, tiles <-> pattern rows.
#include "attnkit/io/pbm.h"

#include <string>

#include "attnkit/core/error.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_pbm_test {

using namespace attnkit;
using namespace attnkit::io;

TEST_CASE("pbm: P1 and P4 read the same pixels; round trips; several images") {
  const std::string p1 = "P1\n# a comment\n10 2\n1 0 0 0 0 0 0 0 0 1\n0100000010\n";
  const auto a = parse_pbm(p1, "a.pbm");
  REQUIRE(a.size() == 1);
  CHECK(a[0].width == 10);
  CHECK(a[0].height == 2);
  CHECK(a[0].bits[0] == 1);
  CHECK(a[0].bits[9] == 1);
  CHECK(a[0].bits[11] == 1);
  CHECK(a[0].bits[18] == 1);
  CHECK(a[0].bits[10] == 0);
  const std::string raw = format_pbm(a[0]);
  CHECK(raw.substr(0, 8) == "P4\n10 2\n");
  CHECK(raw.size() == 8 + 2 * 2);
  CHECK(static_cast<unsigned char>(raw[8]) == 0x80);
  CHECK(static_cast<unsigned char>(raw[9]) == 0x40);
  const auto b = parse_pbm(raw + format_pbm(a[0], true), "b.pbm");
  REQUIRE(b.size() == 2);
  CHECK(b[0].bits == a[0].bits);
  CHECK(b[1].bits == a[0].bits);
  CHECK(is_pbm("P1 "));
  CHECK(is_pbm("P4\n"));
  CHECK_FALSE(is_pbm("P2\n"));
  CHECK_FALSE(is_pbm("1 -1"));
}

TEST_CASE("pbm: tiles become pattern rows (black = +1) and back") {
  // A 4x2 image of two 2x2 tiles.
  const auto im = parse_pbm("P1 4 2  1 0 0 0  0 1 1 1", "t.pbm");
  int64_t per_row = 0;
  const Tensor p = bitmaps_to_patterns(im, 2, 2, "t.pbm", &per_row);
  CHECK(per_row == 2);
  test::check_close(p, Tensor({2, 4}, {1, -1, -1, 1, -1, -1, 1, 1}), 0, 0);
  const Tensor whole = bitmaps_to_patterns(im, 0, 0, "t.pbm");
  CHECK(whole.shape() == Shape({1, 8}));
  const Bitmap back = patterns_to_bitmap(p, 2, 2, 2);
  CHECK(back.bits == im[0].bits);
  const Bitmap column = patterns_to_bitmap(p, 2, 2, 1);
  CHECK(column.width == 2);
  CHECK(column.height == 4);
  const Bitmap padded = patterns_to_bitmap(Tensor({3, 4}, 1.0f), 2, 2, 2);
  CHECK(padded.width == 4);
  CHECK(padded.height == 4);
  CHECK(padded.bits[15] == 0);
  CHECK_THROWS_AS(bitmaps_to_patterns(im, 3, 2, "t.pbm"), DataError);
  CHECK_THROWS_AS(patterns_to_bitmap(p, 3, 2, 2), ShapeError);
}

TEST_CASE("pbm: errors name the file and the image") {
  auto message = [](const std::string& bytes) {
    try {
      parse_pbm(bytes, "x.pbm");
    } catch (const DataError& e) {
      CHECK(e.file() == "x.pbm");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("P1 2 2 1 0 1") == "PBM image 1: file cut short after 3 of 4 pixels");
  CHECK(message("P1 2 1 1 2") == "PBM image 1: pixel 2 is '2', not 0 or 1");
  CHECK(message("P4 16 2\n\x01") ==
        "PBM image 1: file cut short (16 x 2 pixels promised, 1 bytes left)");
  // A header promising 3.6e9 pixels is refused before anything is allocated.
  CHECK(message("P4\n60000 60000\n") ==
        "PBM image 1: file cut short (60000 x 60000 pixels promised, 0 bytes left)");
  CHECK(message("P1\n60000 60000\n0 1") ==
        "PBM image 1: file cut short (60000 x 60000 pixels promised, 4 bytes left)");
  CHECK(message("P1 1 1 1 junk") == "PBM image 2: unexpected bytes after the previous image");
  CHECK(message("P1 x") == "PBM image 1: expected the width");
  CHECK_THROWS_AS(bitmaps_to_patterns(parse_pbm("P1 1 1 1 P1 2 1 1 1", "y"), 0, 0, "y"), DataError);
}

}  // namespace attnkit_unit_pbm_test
