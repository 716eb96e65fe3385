// Files of the Hopfield tools: nets (.npz with W and b) and pattern files, which are tensors
// (text, .npy, an .npz member) or PBM bitmaps (see io/pbm.h), told apart by content.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/tensor.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield/model.h"

namespace attnkit::memory {

// How patterns map to pictures: tiles of tile_w x tile_h pixels, per_row tiles to a row of
// a sheet. Zero fields are unknown.
struct ImageLayout {
  int64_t tile_w = 0, tile_h = 0, per_row = 0;
  int64_t pixel = 1;      // a written sheet draws each pattern value as pixel x pixel (for eyes)
  bool from_pbm = false;  // set by read_patterns when the file was a PBM
};

// The layout asked for by an image size WxH ("" = none) and tiles per row C (0 = none);
// UsageError naming the field on bad text.
ImageLayout parse_layout(const std::string& image_size, int64_t tiles_per_row);

// Reads patterns ([rows, N]) from `path`. A PBM file is cut into tiles of layout->tile_w x
// tile_h (0 x 0: one pattern per image) and layout receives what was found. With `bipolar`,
// values other than -1/+1 are DataErrors naming the file, row and column. Errors carry the path.
Tensor read_patterns(const std::string& path, ImageLayout* layout, bool bipolar = true);

// Writes patterns: a name ending in .pbm gets a PBM sheet (raw P4; tiles of the layout's size,
// or sqrt(N) x sqrt(N) for a square N, else a DataError asking for --image-size; per_row
// from the layout, else 10; each value layout.pixel pixels square), anything else goes
// through io::write_tensor.
void write_patterns(const std::string& path, const Tensor& patterns, const ImageLayout& layout,
                    const io::WriteOptions& opt);

// A net from an .npz holding W (N x N) and optionally b (N values; zero when absent).
// Throws DataError/ShapeError naming the file.
Net load_net(const std::string& path);
void save_net(const std::string& path, const Net& net);

}  // namespace attnkit::memory
