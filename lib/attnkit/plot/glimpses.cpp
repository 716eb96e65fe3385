#include "attnkit/plot/glimpses.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"

namespace attnkit::plot {
namespace {

constexpr int kMargin = 8, kCaption = 14, kGap = 16, kPatchGap = 3;
constexpr Rgb kInk{0, 0, 0};
// One colour a glimpse (cycled): distinct on grey.
constexpr Rgb kSteps[] = {{230, 25, 75},  {60, 180, 75},  {0, 130, 200},  {245, 130, 48},
                          {145, 30, 180}, {70, 240, 240}, {240, 50, 230}, {210, 245, 60}};

void set(Image& im, int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= im.width || y >= im.height) return;
  const size_t i =
      (static_cast<size_t>(y) * static_cast<size_t>(im.width) + static_cast<size_t>(x)) * 3;
  im.rgb[i] = c.r, im.rgb[i + 1] = c.g, im.rgb[i + 2] = c.b;
}

// Outline of [x0, x1) x [y0, y1), clipped to the clip box.
void rect(Image& im, int x0, int y0, int x1, int y1, Rgb c, int cx0, int cy0, int cx1, int cy1) {
  auto put = [&](int x, int y) {
    if (x >= cx0 && x < cx1 && y >= cy0 && y < cy1) set(im, x, y, c);
  };
  for (int x = x0; x < x1; ++x) put(x, y0), put(x, y1 - 1);
  for (int y = y0; y < y1; ++y) put(x0, y), put(x1 - 1, y);
}

void line(Image& im, int x0, int y0, int x1, int y1, Rgb c) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    set(im, x0, y0, c);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

void text(Image& im, int x, int y, const std::string& s, Rgb c, int scale = 1) {
  int pos = 0;
  for (uint32_t ch : utf8_decode(s)) {
    const uint8_t* g = glyph(ch);
    for (int r = 0; r < kGlyphH; ++r)
      for (int b = 0; b < kGlyphW; ++b)
        if (g[r] & (0x10 >> b))
          for (int sy = 0; sy < scale; ++sy)
            for (int sx = 0; sx < scale; ++sx)
              set(im, x + (pos + b) * scale + sx, y + r * scale + sy, c);
    pos += kAdvance;
  }
}

uint8_t grey(float v) {
  return static_cast<uint8_t>(std::lround(255.0f * std::clamp(v, 0.0f, 1.0f)));
}

}  // namespace

Image render_glimpses(const std::vector<GlimpsePanel>& panels, const vision::GlimpseConfig& c) {
  c.validate();
  if (panels.empty()) throw ShapeError("render_glimpses: no panels");
  const int64_t g = c.size, k = c.scales;
  int64_t h = 0, w = 0;
  size_t steps = 0;
  for (const GlimpsePanel& p : panels) {
    if (p.image.rank() != 2)
      throw ShapeError("render_glimpses: an image must be [H, W], not " +
                       shape_str(p.image.shape()));
    if (p.x.size() != p.y.size() || (!p.patches.empty() && p.patches.size() != p.x.size()))
      throw ShapeError("render_glimpses: the locations and patches of a panel differ in number");
    for (const Tensor& t : p.patches)
      if (t.shape() != Shape{k, g, g})
        throw ShapeError("render_glimpses: a patch stack is " + shape_str(t.shape()) + ", not " +
                         shape_str({k, g, g}));
    h = std::max(h, p.image.dim(0)), w = std::max(w, p.image.dim(1));
    steps = std::max(steps, p.x.size());
  }
  // The image magnified to about 240 pixels; patches at 3 pixels a sensor pixel (at least 2).
  const int zoom =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(8, 240 / std::max(h, w))));
  const int pz = g >= 24 ? 2 : 3, pside = static_cast<int>(g) * pz;
  const int img_w = static_cast<int>(w) * zoom, img_h = static_cast<int>(h) * zoom;
  const int strip_w = static_cast<int>(k) * (pside + kPatchGap) + 2 * kAdvance + 4;
  const int strip_h = static_cast<int>(steps) * (pside + kPatchGap);
  const int panel_h = kCaption + std::max(img_h, strip_h);
  Image im;
  im.width = 2 * kMargin + img_w + kGap + strip_w;
  im.height = kMargin + static_cast<int>(panels.size()) * (panel_h + kMargin);
  im.rgb.assign(static_cast<size_t>(im.width) * static_cast<size_t>(im.height) * 3, 255);
  int oy = kMargin;
  for (const GlimpsePanel& p : panels) {
    text(im, kMargin, oy, p.caption, kInk);
    const int iy = oy + kCaption, ix = kMargin;
    const int64_t ph = p.image.dim(0), pw = p.image.dim(1);
    for (int64_t r = 0; r < ph; ++r)
      for (int64_t q = 0; q < pw; ++q) {
        const uint8_t v = grey(p.image[r * pw + q]);
        for (int sy = 0; sy < zoom; ++sy)
          for (int sx = 0; sx < zoom; ++sx)
            set(im, ix + static_cast<int>(q) * zoom + sx, iy + static_cast<int>(r) * zoom + sy,
                {v, v, v});
      }
    const int cx1 = ix + static_cast<int>(pw) * zoom, cy1 = iy + static_cast<int>(ph) * zoom;
    int px = -1, py = -1;
    for (size_t s = 0; s < p.x.size(); ++s) {
      const Rgb col = kSteps[s % (sizeof kSteps / sizeof kSteps[0])];
      for (int64_t j = 0; j < k; ++j) {
        const vision::PatchBox b = vision::glimpse_box(p.x[s], p.y[s], ph, pw, c, j);
        const int x0 = ix + static_cast<int>(b.left) * zoom,
                  y0 = iy + static_cast<int>(b.top) * zoom;
        const int side = static_cast<int>(b.side) * zoom;
        rect(im, x0, y0, x0 + side, y0 + side, col, ix, iy, cx1, cy1);
      }
      const int mx =
          ix + static_cast<int>(std::lround((p.x[s] + 1.0) * 0.5 * static_cast<double>(pw) * zoom));
      const int my =
          iy + static_cast<int>(std::lround((p.y[s] + 1.0) * 0.5 * static_cast<double>(ph) * zoom));
      if (s > 0) line(im, px, py, mx, my, col);
      const std::string num = std::to_string(s + 1);
      text(im, mx - 2, my - 3, num, col);
      px = mx, py = my;
    }
    // What each glimpse saw.
    const int sx0 = ix + img_w + kGap;
    for (size_t s = 0; s < p.patches.size(); ++s) {
      const Rgb col = kSteps[s % (sizeof kSteps / sizeof kSteps[0])];
      const int ry = iy + static_cast<int>(s) * (pside + kPatchGap);
      text(im, sx0, ry + (pside - kGlyphH) / 2, std::to_string(s + 1), col);
      for (int64_t j = 0; j < k; ++j) {
        const int qx = sx0 + 2 * kAdvance + 4 + static_cast<int>(j) * (pside + kPatchGap);
        const float* v = p.patches[s].data() + j * g * g;
        for (int64_t r = 0; r < g; ++r)
          for (int64_t q = 0; q < g; ++q) {
            const uint8_t gv = grey(v[r * g + q]);
            for (int yy = 0; yy < pz; ++yy)
              for (int xx = 0; xx < pz; ++xx)
                set(im, qx + static_cast<int>(q) * pz + xx, ry + static_cast<int>(r) * pz + yy,
                    {gv, gv, gv});
          }
        rect(im, qx - 1, ry - 1, qx + pside + 1, ry + pside + 1, col, 0, 0, im.width, im.height);
      }
    }
    oy += panel_h + kMargin;
  }
  return im;
}

}  // namespace attnkit::plot
