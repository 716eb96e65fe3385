#include "attnkit/vision/fmnist.h"

#include <sys/stat.h>

#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::vision {

namespace {
bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
}  // namespace

std::string default_fmnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

std::string fmnist_file(const std::string& dir, const std::string& split, const std::string& kind) {
  if (split != "train" && split != "test")
    throw UsageError("unknown split '" + split + "' (choose train or test)");
  const std::string stem = (split == "train" ? "train-" : "t10k-") + kind +
                           (kind == "images" ? "-idx3-ubyte" : "-idx1-ubyte");
  const std::string base = (dir.empty() ? std::string(".") : dir) + "/" + stem;
  if (exists(base + ".gz")) return base + ".gz";
  if (exists(base)) return base;
  throw IoError(
      "no such file (Fashion-MNIST: install the Debian package dataset-fashion-mnist, or name "
      "the folder holding " +
          stem + ".gz with --fmnist DIR)",
      base + ".gz");
}

ItemSet load_fashion_mnist(const std::string& dir, const std::string& split) {
  const std::string ipath = fmnist_file(dir, split, "images");
  const std::string lpath = fmnist_file(dir, split, "labels");
  Tensor images = io::read_tensor(ipath);
  const Tensor labels = io::read_tensor(lpath);
  if (images.rank() != 3 || images.dim(1) != kItemSize || images.dim(2) != kItemSize)
    throw DataError("expected images of 28x28 pixels, found shape " + shape_str(images.shape()),
                    ipath);
  if (labels.rank() != 1 || labels.dim(0) != images.dim(0))
    throw DataError("expected " + std::to_string(images.dim(0)) + " labels, found shape " +
                        shape_str(labels.shape()),
                    lpath);
  for (int64_t i = 0; i < images.size(); ++i) {
    const float v = images[i];
    if (!(v >= 0.0f && v <= 255.0f) || v != std::floor(v))
      throw DataError("pixel " + std::to_string(i) + " is not a byte 0-255", ipath);
    images[i] = v / 255.0f;
  }
  std::vector<int> ls(static_cast<size_t>(labels.size()));
  for (int64_t i = 0; i < labels.size(); ++i) {
    const float v = labels[i];
    if (!(v >= 0.0f && v < kClasses) || v != std::floor(v))
      throw DataError("label " + std::to_string(i + 1) + " is not a class 0-9", lpath);
    ls[static_cast<size_t>(i)] = static_cast<int>(v);
  }
  return make_item_set(std::move(images), std::move(ls), ipath);
}

}  // namespace attnkit::vision
