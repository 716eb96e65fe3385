#include "attnkit/vision/image_set.h"

#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::models {

ImageSet read_image_set(const std::string& path, bool with_labels) {
  auto arrays = io::read_npz(path);
  auto it = arrays.find("images");
  if (it == arrays.end()) throw DataError("no array 'images' [N, H, W] in the archive", path);
  ImageSet s;
  s.images = std::move(it->second);
  if (s.images.rank() == 2) s.images.reshape({1, s.images.dim(0), s.images.dim(1)});
  if (s.images.rank() != 3 || s.images.size() == 0)
    throw DataError("images must be [N, H, W] with N >= 1, found " + shape_str(s.images.shape()),
                    path);
  // The pixel cap (io::set_max_pixels, --max-pixels) holds for pictures in archives too.
  if (static_cast<uint64_t>(s.images.dim(1)) * static_cast<uint64_t>(s.images.dim(2)) >
      io::max_pixels())
    throw DataError("images of " + std::to_string(s.images.dim(1)) + "x" +
                        std::to_string(s.images.dim(2)) + " pixels, more than the limit of " +
                        std::to_string(io::max_pixels()) + " (--max-pixels raises it)",
                    path);
  io::require_finite(s.images, path + ":images");
  const int64_t n = s.images.dim(0);
  auto lt = arrays.find("labels");
  if (lt == arrays.end()) {
    if (with_labels) throw DataError("no array 'labels' [N] in the archive", path);
    s.labels.assign(static_cast<size_t>(n), -1);
    return s;
  }
  const Tensor& l = lt->second;
  if (l.rank() != 1 || l.dim(0) != n)
    throw DataError(
        "labels must be [" + std::to_string(n) + "] (one an image), found " + shape_str(l.shape()),
        path);
  s.labels.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (!(l[i] >= 0.0f && l[i] < 100000.0f) || l[i] != std::floor(l[i]))
      throw DataError("label " + std::to_string(i + 1) + " is " + io::format_number(l[i]) +
                          ", not a class id (a whole number >= 0)",
                      path);
    s.labels.push_back(static_cast<int32_t>(l[i]));
  }
  return s;
}

}  // namespace attnkit::models
