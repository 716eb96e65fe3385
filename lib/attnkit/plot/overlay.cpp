#include "attnkit/plot/overlay.h"

#include <algorithm>
#include <cstdio>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"

namespace attnkit::plot {

Image render_overlays(const Tensor& image, const std::vector<OverlayQuery>& queries, int scale) {
  if (image.rank() != 2 || image.size() == 0)
    throw ShapeError("overlay: the image must be [H, W], got " + shape_str(image.shape()));
  const int64_t H = image.dim(0), W = image.dim(1);
  for (const OverlayQuery& q : queries)
    if (q.map.rank() != 2 || H % q.map.dim(0) || W % q.map.dim(1))
      throw ShapeError("overlay: an attention map " + shape_str(q.map.shape()) +
                       " does not divide the image " + shape_str(image.shape()));
  if (scale <= 0) scale = static_cast<int>(std::max<int64_t>(2, 256 / std::max(H, W)));
  const int gap = 8, pw = static_cast<int>(W) * scale, ph = static_cast<int>(H) * scale;
  const int panels = 1 + static_cast<int>(queries.size());
  // One colour scale for every panel, 0 to the largest weight of any map, shown by a bar
  // right of the panels with its values: a uniform map is then read as what it is (every
  // weight the same small number), not as a panel saturated at the top colour.
  float vmax = 0.0f;
  for (const OverlayQuery& q : queries)
    for (int64_t i = 0; i < q.map.size(); ++i) vmax = std::max(vmax, q.map[i]);
  const bool bar = !queries.empty();
  constexpr int kBarW = 12, kTickChars = 8;
  Image img;
  img.width =
      panels * pw + (panels + 1) * gap + (bar ? kBarW + 4 + kTickChars * kAdvance + gap : 0);
  bool labels = false;
  for (const OverlayQuery& q : queries) labels = labels || !q.label.empty();
  constexpr int kLabelScale = 2;
  const int strip = labels ? kGlyphH * kLabelScale + gap : 0;
  img.height = ph + 2 * gap + strip;
  img.rgb.assign(static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3, 255);
  auto put = [&](int x, int y, Rgb c) {
    const size_t i =
        (static_cast<size_t>(y) * static_cast<size_t>(img.width) + static_cast<size_t>(x)) * 3;
    img.rgb[i] = c.r, img.rgb[i + 1] = c.g, img.rgb[i + 2] = c.b;
  };
  // Text in the 5x7 font at `s` times its size, black, its top-left corner at (tx, ty).
  auto text = [&](const std::vector<uint32_t>& cps, int tx, int ty, int s) {
    for (size_t k = 0; k < cps.size(); ++k) {
      const uint8_t* g = glyph(cps[k]);
      for (int r = 0; r < kGlyphH; ++r)
        for (int b = 0; b < kGlyphW; ++b) {
          if (!(g[r] & (0x10 >> b))) continue;
          for (int sy = 0; sy < s; ++sy)
            for (int sx = 0; sx < s; ++sx) {
              const int x = tx + (static_cast<int>(k) * kAdvance + b) * s + sx, y = ty + r * s + sy;
              if (x >= 0 && x < img.width && y >= 0 && y < img.height) put(x, y, {0, 0, 0});
            }
        }
    }
  };
  float lo = image[0], hi = image[0];
  for (int64_t i = 0; i < image.size(); ++i)
    lo = std::min(lo, image[i]), hi = std::max(hi, image[i]);
  const float span = hi > lo ? hi - lo : 1.0f;
  for (int p = 0; p < panels; ++p) {
    const int x0 = gap + p * (pw + gap), y0 = gap;
    const OverlayQuery* q = p ? &queries[static_cast<size_t>(p - 1)] : nullptr;
    const float mmax = vmax;
    for (int64_t r = 0; r < H; ++r)
      for (int64_t c = 0; c < W; ++c) {
        const float g = (image.at(r, c) - lo) / span;
        Rgb px{static_cast<uint8_t>(255 * g), static_cast<uint8_t>(255 * g),
               static_cast<uint8_t>(255 * g)};
        if (q) {
          const int64_t mr = r / (H / q->map.dim(0)), mc = c / (W / q->map.dim(1));
          const Rgb heat = colour(mmax > 0 ? q->map.at(mr, mc) / mmax : 0.0f);
          // 60% attention colour over 40% image
          px = {static_cast<uint8_t>(0.6f * heat.r + 0.4f * px.r),
                static_cast<uint8_t>(0.6f * heat.g + 0.4f * px.g),
                static_cast<uint8_t>(0.6f * heat.b + 0.4f * px.b)};
        }
        for (int dy = 0; dy < scale; ++dy)
          for (int dx = 0; dx < scale; ++dx)
            put(x0 + static_cast<int>(c) * scale + dx, y0 + static_cast<int>(r) * scale + dy, px);
      }
    if (q && q->row >= 0 && q->row < H && q->col >= 0 && q->col < W) {
      const int qx = x0 + static_cast<int>(q->col) * scale,
                qy = y0 + static_cast<int>(q->row) * scale;
      const int s = std::max(scale, 3);
      for (int k = -1; k <= s; ++k) {
        for (int e : {-1, s}) {
          const int xa = std::clamp(qx + k, 0, img.width - 1),
                    ya = std::clamp(qy + e, 0, img.height - 1);
          const int xb = std::clamp(qx + e, 0, img.width - 1),
                    yb = std::clamp(qy + k, 0, img.height - 1);
          put(xa, ya, {230, 20, 20});
          put(xb, yb, {230, 20, 20});
        }
      }
    }
    if (q && !q->label.empty()) {
      // The label centred under the panel, cut to the panel's width.
      std::vector<uint32_t> cps = utf8_decode(q->label);
      const size_t fit = static_cast<size_t>(std::max(1, pw / (kAdvance * kLabelScale)));
      if (cps.size() > fit) cps.resize(fit);
      const int tw = static_cast<int>(cps.size()) * kAdvance * kLabelScale;
      text(cps, x0 + std::max(0, (pw - tw) / 2), y0 + ph + gap / 2, kLabelScale);
    }
  }
  if (bar) {
    // The colour bar: the top colour at the top, 0 at the bottom, three values beside it.
    const int bx = panels * pw + (panels + 1) * gap, by = gap;
    for (int y = 0; y < ph; ++y) {
      const Rgb c =
          colour(ph > 1 ? 1.0f - static_cast<float>(y) / static_cast<float>(ph - 1) : 1.0f);
      for (int x = 0; x < kBarW; ++x) put(bx + x, by + y, c);
    }
    for (int k = 0; k <= 2; ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(vmax) * (2 - k) / 2.0);
      std::vector<uint32_t> cps = utf8_decode(buf);
      if (cps.size() > static_cast<size_t>(kTickChars)) cps.resize(kTickChars);
      const int ty = std::clamp(by + k * (ph - 1) / 2 - kGlyphH / 2, 0, img.height - kGlyphH);
      text(cps, bx + kBarW + 4, ty, 1);
    }
  }
  return img;
}

}  // namespace attnkit::plot
