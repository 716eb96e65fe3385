#include "attnkit/plot/overlay.h"

#include <algorithm>

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
  Image img;
  img.width = panels * pw + (panels + 1) * gap;
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
  float lo = image[0], hi = image[0];
  for (int64_t i = 0; i < image.size(); ++i)
    lo = std::min(lo, image[i]), hi = std::max(hi, image[i]);
  const float span = hi > lo ? hi - lo : 1.0f;
  for (int p = 0; p < panels; ++p) {
    const int x0 = gap + p * (pw + gap), y0 = gap;
    const OverlayQuery* q = p ? &queries[static_cast<size_t>(p - 1)] : nullptr;
    float mmax = 0.0f;
    if (q)
      for (int64_t i = 0; i < q->map.size(); ++i) mmax = std::max(mmax, q->map[i]);
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
      const int tx = x0 + std::max(0, (pw - tw) / 2), ty = y0 + ph + gap / 2;
      for (size_t k = 0; k < cps.size(); ++k) {
        const uint8_t* g = glyph(cps[k]);
        for (int r = 0; r < kGlyphH; ++r)
          for (int b = 0; b < kGlyphW; ++b) {
            if (!(g[r] & (0x10 >> b))) continue;
            for (int sy = 0; sy < kLabelScale; ++sy)
              for (int sx = 0; sx < kLabelScale; ++sx) {
                const int x = tx + (static_cast<int>(k) * kAdvance + b) * kLabelScale + sx,
                          y = ty + r * kLabelScale + sy;
                if (x >= 0 && x < img.width && y >= 0 && y < img.height) put(x, y, {0, 0, 0});
              }
          }
      }
    }
  }
  return img;
}

}  // namespace attnkit::plot
