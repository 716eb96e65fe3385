#include "attnkit/vision/glimpse.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnkit/core/error.h"

namespace attnkit::vision {

void GlimpseConfig::validate() const {
  if (size < 1 || size > 256) throw UsageError("glimpse-size must be from 1 to 256");
  if (scales < 1 || scales > 8) throw UsageError("glimpse-scales must be from 1 to 8");
  if (factor < 1 || factor > 8) throw UsageError("glimpse-factor must be from 1 to 8");
  int64_t s = size;
  for (int64_t j = 1; j < scales; ++j) {
    s *= factor;
    if (s > 4096)
      throw UsageError("the largest glimpse patch (glimpse-size x glimpse-factor^(scales-1)) " +
                       std::string("must be at most 4096 pixels wide"));
  }
}

int64_t GlimpseConfig::side(int64_t scale) const {
  int64_t s = size;
  for (int64_t j = 0; j < scale; ++j) s *= factor;
  return s;
}

PatchBox glimpse_box(double x, double y, int64_t height, int64_t width, const GlimpseConfig& c,
                     int64_t scale) {
  PatchBox b;
  b.side = c.side(scale);
  const double cy = (y + 1.0) * 0.5 * static_cast<double>(height);
  const double cx = (x + 1.0) * 0.5 * static_cast<double>(width);
  const double half = 0.5 * static_cast<double>(b.side);
  b.top = static_cast<int64_t>(std::floor(cy - half + 0.5));
  b.left = static_cast<int64_t>(std::floor(cx - half + 0.5));
  return b;
}

Tensor glimpse(const Tensor& images, const Tensor& locations, const GlimpseConfig& c) {
  c.validate();
  if (images.rank() != 3)
    throw ShapeError("glimpse: images must be [N, H, W], not " + shape_str(images.shape()));
  const int64_t n = images.dim(0), h = images.dim(1), w = images.dim(2);
  if (locations.rank() != 2 || locations.dim(0) != n || locations.dim(1) != 2)
    throw ShapeError("glimpse: locations must be [" + std::to_string(n) + ", 2] for images " +
                     shape_str(images.shape()) + ", not " + shape_str(locations.shape()));
  const int64_t g = c.size, k = c.scales;
  Tensor out({n, k, g, g}, 0.0f);
  // Each output row: the block's image rows added column by column into col (contiguous,
  // vectorised), then each run of r columns added; columns outside the image stay 0.
  std::vector<float> col(static_cast<size_t>(c.side(k - 1)));
  for (int64_t i = 0; i < n; ++i) {
    const float* img = images.data() + i * h * w;
    const double x = locations.data()[2 * i], y = locations.data()[2 * i + 1];
    if (!std::isfinite(x) || !std::isfinite(y))
      throw DataError("glimpse: location " + std::to_string(i + 1) + " is not finite");
    for (int64_t j = 0; j < k; ++j) {
      const PatchBox b = glimpse_box(x, y, h, w, c, j);
      const int64_t r = b.side / g;  // block side
      const float inv = 1.0f / static_cast<float>(r * r);
      float* o = out.data() + (i * k + j) * g * g;
      const int64_t c0 = std::max<int64_t>(b.left, 0), c1 = std::min<int64_t>(b.left + b.side, w);
      if (c0 >= c1) continue;  // the patch lies beside the image: all zeros
      for (int64_t p = 0; p < g; ++p) {
        const int64_t r0 = std::max<int64_t>(b.top + p * r, 0);
        const int64_t r1 = std::min<int64_t>(b.top + (p + 1) * r, h);
        if (r0 >= r1) continue;
        float* cs = col.data() + (c0 - b.left);
        const int64_t len = c1 - c0;
        std::fill(col.begin(), col.begin() + b.side, 0.0f);
        for (int64_t rr = r0; rr < r1; ++rr) {
          const float* row = img + rr * w + c0;
          for (int64_t q = 0; q < len; ++q) cs[q] += row[q];
        }
        for (int64_t q = 0; q < g; ++q) {
          float s = 0.0f;
          for (int64_t e = q * r; e < (q + 1) * r; ++e) s += col[static_cast<size_t>(e)];
          o[p * g + q] = s * inv;
        }
      }
    }
  }
  return out;
}

}  // namespace attnkit::vision
