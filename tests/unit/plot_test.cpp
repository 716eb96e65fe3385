// lib/attnkit/plot: the PNG decodes (libpng) to the layout's size, a weight of 1 and a
// weight of 0 get different colours, labels are drawn, errors on token counts; the SVG has
// the same size and one rect per cell.
#include <png.h>

#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"
#include "attnkit/plot/heatmap.h"
#include "test_util.h"

using namespace attnkit;
using namespace attnkit::plot;

namespace {

Image decode(const std::string& bytes) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&pi, bytes.data(), bytes.size()));
  pi.format = PNG_FORMAT_RGB;
  Image im;
  im.width = static_cast<int>(pi.width);
  im.height = static_cast<int>(pi.height);
  im.rgb.resize(PNG_IMAGE_SIZE(pi));
  REQUIRE(png_image_finish_read(&pi, nullptr, im.rgb.data(), 0, nullptr));
  return im;
}

bool same(Rgb a, Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

}  // namespace

TEST_CASE("PNG heatmap: size, colours of 1 and 0, labels, round trip through libpng") {
  const Tensor w({2, 3}, std::vector<float>{1, 0, 0.5f, 0, 1, -INFINITY});
  HeatmapSpec spec;
  spec.rows = {"a", "b"};
  spec.cols = {"x", "yy", "zzz"};
  spec.title = "T";
  const Layout l = heatmap_layout(w, spec);
  const Image im = render_heatmap(w, spec, l);
  const Image back = decode(encode_png(im));
  REQUIRE(back.width == l.width);
  REQUIRE(back.height == l.height);
  CHECK(back.rgb == im.rgb);
  const auto& p = l.panels.at(0);
  auto centre = [&](int i, int j) {
    return back.at(p.x + j * l.cell + l.cell / 2, p.y + i * l.cell + l.cell / 2);
  };
  CHECK(same(centre(0, 0), colour(1.0f)));
  CHECK(same(centre(0, 1), colour(0.0f)));
  CHECK(!same(centre(0, 0), centre(0, 1)));
  CHECK(same(centre(1, 1), centre(0, 0)));
  CHECK(!same(centre(1, 2), centre(0, 1)));  // masked: grey
  // some ink left of the first row (its label)
  int ink = 0;
  for (int x = 0; x < p.x; ++x)
    for (int y = p.y; y < p.y + l.cell; ++y) ink += same(back.at(x, y), Rgb{0, 0, 0});
  CHECK(ink > 3);
}

TEST_CASE("panels per batch item and head; SVG of the same size") {
  const Tensor w({2, 3, 4, 5}, 0.2f);
  const Layout l = heatmap_layout(w, {});
  CHECK(l.panels.size() == 6);
  CHECK(l.panels[4].caption == "item 1, head 1");
  const std::string svg = heatmap_svg(w, {}, l);
  CHECK(svg.find("width=\"" + std::to_string(l.width) + "\" height=\"" + std::to_string(l.height) +
                 "\"") != std::string::npos);
  size_t rects = 0;
  for (size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1))
    ++rects;
  CHECK(rects == 6 * 4 * 5 + 1);  // cells and the legend bar
}

TEST_CASE("token counts must match; UTF-8 decoding") {
  const Tensor w({2, 3});
  HeatmapSpec spec;
  spec.rows = {"one"};
  CHECK_THROWS_WITH_AS(heatmap_layout(w, spec), "1 row tokens but the weights have 2 rows",
                       DataError);
  CHECK_THROWS_AS(heatmap_layout(Tensor({0, 3}), {}), ShapeError);
  CHECK(utf8_decode("é<") == std::vector<uint32_t>{0xE9, '<'});
  CHECK(utf8_decode("\xff") == std::vector<uint32_t>{0xFFFD});
}
