// lib/attnkit/plot: the PNG decodes (libpng) to the layout's size, a weight of 1 and a
// weight of 0 get different colours, labels are drawn, errors on token counts; the SVG has
// the same size and one rect per cell.
#include <png.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"
#include "attnkit/plot/heatmap.h"
#include "attnkit/plot/overlay.h"
#include "attnkit/plot/tours.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_plot_test {

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

TEST_CASE("column labels: upright where one fits its cell (one character), else rotated") {
  const Tensor w({2, 2}, std::vector<float>{1, 0, 0, 1});
  auto label_box = [&](const std::vector<std::string>& cols, int& bw, int& bh) {
    HeatmapSpec spec;
    spec.cols = cols;
    const Layout l = heatmap_layout(w, spec);
    const Image im = render_heatmap(w, spec, l);
    const auto& p = l.panels.at(0);
    int x0 = 1 << 20, x1 = -1, y0 = 1 << 20, y1 = -1;  // the ink above the first column
    for (int x = p.x; x < p.x + l.cell; ++x)
      for (int y = 0; y < p.y; ++y)
        if (same(im.at(x, y), Rgb{0, 0, 0}))
          x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    bw = x1 - x0 + 1, bh = y1 - y0 + 1;
    return heatmap_svg(w, spec, l);
  };
  int bw = 0, bh = 0;
  const std::string up = label_box({"A", "B"}, bw, bh);
  CHECK(bh == 7);  // the 5 x 7 glyph upright: 7 high
  CHECK(bw == 5);
  CHECK(up.find("rotate(") == std::string::npos);
  const std::string rot = label_box({"AAAAA", "BBBBB"}, bw, bh);
  CHECK(bh == 29);  // five glyphs a quarter turn: 5 x 6 - 1 high
  CHECK(rot.find("rotate(-90") != std::string::npos);
  // Each label on its own: "A" upright beside a long "<eos>" rotated (the demo's dates).
  const std::string mixed = label_box({"A", "<eos>"}, bw, bh);
  CHECK(bh == 7);
  CHECK(bw == 5);
  CHECK(mixed.find("rotate(-90") != std::string::npos);
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

TEST_CASE("the font draws Western European letters and punctuation, a box for the rest") {
  auto rows = [](uint32_t c) {
    const uint8_t* g = glyph(c);
    return std::vector<uint8_t>(g, g + kGlyphH);
  };
  const std::vector<uint8_t> box = rows(0x4E2D), space = rows(' ');
  CHECK(box == rows(0xFFFD));
  // every accented letter of French, German and Spanish has a glyph of its own among the
  // letters of its case (an accented capital is a small capital: Ô is drawn as ô)
  for (const char* text : {"àâäåçéèêëîïôöùûüÿœæñáíóúß", "ÀÂÄÅÇÉÈÊËÎÏÔÖÙÛÜŸŒÆÑÁÍÓÚ"}) {
    const std::vector<uint32_t> letters = utf8_decode(text);
    CHECK(letters.size() >= 23);
    for (size_t i = 0; i < letters.size(); ++i) {
      CAPTURE(letters[i]);
      CHECK(rows(letters[i]) != box);
      for (size_t j = 0; j < i; ++j) CHECK(rows(letters[i]) != rows(letters[j]));
    }
  }
  // a lower-case accented letter is its letter's body under an accent
  // (a pair, not a structured binding: clang refuses to capture a binding in CAPTURE's lambda)
  for (const auto& pair : std::vector<std::pair<const char*, char>>{
           {"à", 'a'}, {"é", 'e'}, {"è", 'e'}, {"ô", 'o'}, {"ü", 'u'}, {"ñ", 'n'}, {"ÿ", 'y'}}) {
    const char* accented = pair.first;
    const char base = pair.second;
    CAPTURE(accented);
    const std::vector<uint8_t> g = rows(utf8_decode(accented).at(0)), b = rows(base);
    CHECK(std::equal(g.begin() + 2, g.end(), b.begin() + 2));
    CHECK((g[0] | g[1]) != 0);
    CHECK((b[0] | b[1]) == 0);
  }
  // French typography's spaces are blank; its quotes and dashes are drawn
  for (const uint32_t blank : {0xA0u, 0x202Fu, 0x2009u}) CHECK(rows(blank) == space);
  for (const uint32_t mark : utf8_decode("«»‘’“”–—…¡¿€")) {
    CAPTURE(mark);
    CHECK(rows(mark) != box);
    CHECK(rows(mark) != space);
  }
  CHECK(rows(0x2019) != rows(0x2018));
}

TEST_CASE("overlay: one colour scale for every panel, drawn as a bar with its values") {
  Tensor img({8, 8}, 0.0f);
  plot::OverlayQuery peak, flat;
  peak.row = peak.col = flat.row = flat.col = -1;
  peak.map = Tensor({2, 2}, 0.0f);
  peak.map[0] = 1.0f;                // all the weight on one cell
  flat.map = Tensor({2, 2}, 0.25f);  // uniform: each cell 1/4
  auto copy = [](const plot::OverlayQuery& q) {
    plot::OverlayQuery c;
    c.row = q.row, c.col = q.col, c.map = q.map.clone();
    return c;
  };
  std::vector<plot::OverlayQuery> flat_only;
  flat_only.push_back(copy(flat));
  const plot::Image one = plot::render_overlays(img, flat_only, 4);
  // Alone, the uniform map is the scale's top colour, but the bar says what that is: 0.25.
  const int gap = 8, pw = 32;
  const int bx = 2 * pw + 3 * gap;
  auto blend = [](plot::Rgb h) {  // 60% colour over the black image
    return plot::Rgb{static_cast<uint8_t>(0.6f * h.r), static_cast<uint8_t>(0.6f * h.g),
                     static_cast<uint8_t>(0.6f * h.b)};
  };
  auto eq = [](plot::Rgb a, plot::Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; };
  CHECK(eq(one.at(bx + 1, gap), plot::colour(1.0f)));           // the bar's top
  CHECK(eq(one.at(bx + 1, gap + pw - 1), plot::colour(0.0f)));  // its bottom
  int ink = 0;  // the values written right of the bar
  for (int y = 0; y < one.height; ++y)
    for (int x = bx + 12; x < one.width; ++x) ink += one.at(x, y).r == 0 && one.at(x, y).g == 0;
  CHECK(ink > 20);
  // Beside a peaked map, the uniform one is drawn at a quarter of the scale, not at its top.
  std::vector<plot::OverlayQuery> both;
  both.push_back(copy(peak));
  both.push_back(copy(flat));
  const plot::Image two = plot::render_overlays(img, both, 4);
  const int x2 = gap + 2 * (pw + gap);  // the third panel: the uniform map
  CHECK(eq(two.at(x2 + 20, gap + 20), blend(plot::colour(0.25f))));
  CHECK(eq(two.at(gap + pw + gap + 2, gap + 2), blend(plot::colour(1.0f))));  // the peak
}

TEST_CASE("tours: a legend names the answer, the output and the ring; degenerate outputs ringed") {
  // A square's hull; the output visits point 2 twice (invalid).
  data::PtrProblem p;
  p.q = {0, 0, data::kCoordScale, 0, data::kCoordScale, data::kCoordScale, 0, data::kCoordScale};
  p.answer = {1, 2, 3, 4, 1};
  plot::TourPanel tp{&p, {1, 2, 3, 2, 1}, ""};
  tp.caption = plot::tour_caption(data::PtrTask::Hull, 1, p, tp.prediction);
  CHECK(tp.caption == "#1 n=4 invalid");
  const std::string svg = plot::tours_svg({tp});
  CHECK(svg.find(">answer</text>") != std::string::npos);
  CHECK(svg.find(">output</text>") != std::string::npos);
  CHECK(svg.find(">a degenerate output's points</text>") != std::string::npos);
  // One ring in the legend, one around each point the output visits (1, 2 and 3).
  size_t rings = 0;
  for (size_t at = svg.find("r=\"5\""); at != std::string::npos; at = svg.find("r=\"5\"", at + 1))
    ++rings;
  CHECK(rings == 4);
  const plot::Image im = plot::render_tours({tp});
  auto red = [&](int x, int y) {
    const plot::Rgb c = im.at(x, y);
    return c.r == 214 && c.g == 39 && c.b == 40;
  };
  CHECK(red(12 + 100, 11));  // the legend's red line
  // Point 2 at pixel (208, 230): its ring passes (4, 3) from it, off every path.
  CHECK(red(208 - 4, 230 - 3));
  CHECK(!red(12 + 4, 34 + 3));  // point 4 (12, 34), not visited: no ring
  // An untrained model's "5 5": one point, no line; it is ringed. A valid hull is not.
  tp.prediction = {2, 2};
  CHECK(plot::tours_svg({tp}).find("r=\"5\"", svg.find("</g>")) != std::string::npos);
  tp.prediction = {1, 2, 3, 4, 1};
  const std::string ok = plot::tours_svg({tp});
  CHECK(ok.find("r=\"5\"", ok.find("</g>")) == std::string::npos);
}

TEST_CASE("a thin strip gets taller cells (a sensible aspect); a square matrix square ones") {
  Tensor strip({1, 120});
  for (int64_t j = 0; j < 120; ++j) strip[j] = static_cast<float>(j % 7) / 6.0f;
  const Layout l = heatmap_layout(strip, HeatmapSpec{});
  CHECK(l.cell == 10);
  CHECK(l.cell_h == 30);  // 3 times the width: 30 x 1200, not 10 x 1200
  const Image im = render_heatmap(strip, HeatmapSpec{}, l);
  const auto& p = l.panels.at(0);
  CHECK(same(im.at(p.x + 3 * l.cell + 5, p.y + 25), colour(3.0f / 6.0f)));  // cell 3, low part
  const Tensor sq({4, 4}, 0.5f);
  const Layout m = heatmap_layout(sq, HeatmapSpec{});
  CHECK(m.cell_h == m.cell);
  const std::string svg = heatmap_svg(strip, HeatmapSpec{}, l);
  CHECK(svg.find("width=\"10\" height=\"30\"") != std::string::npos);
}

}  // namespace attnkit_unit_plot_test
