// Fashion-MNIST as Debian's dataset-fashion-mnist installs it: four IDX files (gzip-compressed
// or not) in one folder, default /usr/share/datasets/fashion-mnist:
//   train-images-idx3-ubyte[.gz]  train-labels-idx1-ubyte[.gz]   60,000 items
//   t10k-images-idx3-ubyte[.gz]   t10k-labels-idx1-ubyte[.gz]    10,000 items
#pragma once

#include <string>

#include "attnkit/vision/compose.h"

namespace attnkit::vision {

std::string default_fmnist_dir();

// The file of `kind` ("images" or "labels") of `split` ("train" or "test") in `dir`: the .gz
// name when it exists, else the plain one when that exists; IoError naming the .gz path and
// the Debian package dataset-fashion-mnist when neither does.
std::string fmnist_file(const std::string& dir, const std::string& split, const std::string& kind);

// The split's items, pixel bytes / 255. UsageError for a split other than train/test; IoError
// for a missing file (see fmnist_file); DataError for files that are not 28x28 u8 images with
// as many labels 0-9.
ItemSet load_fashion_mnist(const std::string& dir, const std::string& split);

}  // namespace attnkit::vision
