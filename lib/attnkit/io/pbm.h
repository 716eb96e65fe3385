// Netpbm bitmaps (PBM): the plain "P1" and raw "P4" forms, one or several images per file
// (netpbm allows images back to back), and the mapping between bitmaps and pattern rows of
// -1/+1 that the Hopfield tools use: a black pixel (1 in PBM) is +1, a white one (0) is -1;
// the pixels of a pattern are taken row by row (pattern column j = y * width + x).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::io {

struct Bitmap {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> bits;  // height x width, row-major, 1 = black
};

// Whether bytes start like a PBM file: "P1" or "P4" followed by whitespace or '#'.
bool is_pbm(std::string_view head);

// Every image of a PBM file (P1 and P4 may be mixed). Throws DataError naming `name` (and the
// image) for a bad header, a pixel other than 0/1 in P1, or a file cut short.
std::vector<Bitmap> parse_pbm(std::string_view bytes, const std::string& name);

// One image as PBM bytes: raw P4 (default) or plain P1 (rows of "0 1 ...", lines of at most
// 70 characters as netpbm asks).
std::string format_pbm(const Bitmap& image, bool plain = false);

// Patterns from images: each image cut into tiles of tile_w x tile_h pixels, left to right
// and top to bottom, each tile one row of the result (tile_w = tile_h = 0: each whole image
// is one pattern, and every image must have the same size). Throws DataError naming `name`
// when an image is not a whole number of tiles or the sizes differ. `per_row` (optional)
// receives the tiles per row of the first image.
Tensor bitmaps_to_patterns(const std::vector<Bitmap>& images, int64_t tile_w, int64_t tile_h,
                           const std::string& name, int64_t* per_row = nullptr);

// A sheet: the rows of `patterns` (P x N, N = tile_w * tile_h) as tiles, `per_row` to a row
// of tiles (the last row padded with white tiles). A value > 0 is black, anything else
// white. Throws ShapeError when N != tile_w * tile_h.
Bitmap patterns_to_bitmap(const Tensor& patterns, int64_t tile_w, int64_t tile_h, int64_t per_row);

}  // namespace attnkit::io
