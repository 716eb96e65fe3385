// The glimpse sensor of the recurrent attention model (Mnih, Heess, Graves & Kavukcuoglu
// 2014, "Recurrent Models of Visual Attention", Section 3.1): around a location l, k square
// patches of growing size g, g·s, g·s², ... (s = `factor`), each brought down to g × g, so
// the centre is seen sharply and the surround coarsely (a "retina").
//
// Coordinates. l = (x, y) ∈ [-1, 1]² with x horizontal: (-1, -1) is the image's top-left
// corner, (1, 1) its bottom-right, (0, 0) its centre. On an H × W image (pixel (r, c) covering
// [r, r + 1) × [c, c + 1)) the centre is at cy = (y + 1) H / 2, cx = (x + 1) W / 2, and
// patch j of side S = g·s^j covers rows top .. top + S − 1 with top = ⌊cy − S/2 + 1/2⌋
// (columns likewise): S pixels centred on (cy, cx), rounding half up. Any l is accepted;
// pixels outside the image read as 0 (locations near or beyond the border see zeros).
//
// Resampling: average pooling, as the paper's reference implementations do (a patch of side
// S = g·s^j is cut into g × g blocks of s^j × s^j pixels and each block's mean, zeros outside
// the image included, is one output pixel). Patch j = 0 is the image's own pixels.
//
// Checked against an independent NumPy crop-and-resize (testdata/make_glimpse_golden.py).
#pragma once

#include <cstdint>

#include "attnkit/core/tensor.h"

namespace attnkit::vision {

struct GlimpseConfig {
  int64_t size = 12;      // g: each patch's side after resampling
  int64_t scales = 3;     // k: patches per glimpse
  int64_t factor = 2;     // s: each patch is s times the previous one's side
  void validate() const;  // UsageError naming the option: g 1-256, k 1-8, s 1-8, g·s^(k-1) ≤ 4096
  int64_t side(int64_t scale) const;  // g · s^scale: the patch's side on the image
  int64_t features() const { return scales * size * size; }
};

// A patch on the image: its top-left pixel (may be outside) and side.
struct PatchBox {
  int64_t top = 0, left = 0, side = 0;
};
// Patch `scale` of a glimpse at l = (x, y) on an H × W image.
PatchBox glimpse_box(double x, double y, int64_t height, int64_t width, const GlimpseConfig& c,
                     int64_t scale);

// Glimpses of images [N, H, W] at locations [N, 2] (x, y per row) → [N, k, g, g]
// (patch j in [:, j]). ShapeError when the shapes do not fit.
Tensor glimpse(const Tensor& images, const Tensor& locations, const GlimpseConfig& c);

}  // namespace attnkit::vision
