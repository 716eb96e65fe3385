// A labelled image set, as image-gen writes it: the one reader of such files for every image
// model (img-train/-run, ram-train/-run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::models {

// Images [N, H, W] (values in [0, 1] by image-gen's contract; any finite value is read) and
// one class id a image (-1 when the file has none and they were not required).
struct ImageSet {
  Tensor images;
  std::vector<int32_t> labels;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

// Reads FILE.npz's arrays images [N, H, W] (a single [H, W] image is read as N = 1) and
// labels [N] (whole numbers in [0, 100000)). with_labels false: labels may be absent (then
// -1). DataError naming the file for a missing array, a wrong shape, an empty set, a value
// that is not finite (its matrix, row and column) or a label that is not a class id.
ImageSet read_image_set(const std::string& path, bool with_labels = true);

}  // namespace attnkit::models
