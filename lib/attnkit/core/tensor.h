// Tensor: float32 values of rank 0 to 4, contiguous and row-major, with the shape in every
// error message. Move-only: a deep copy is explicit (clone()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/shape.h"

namespace attnkit {

// "[2, 3, 4]" — the spelling of shapes in messages.
std::string shape_str(const Shape& shape);
// Number of elements of a shape; throws ShapeError on a negative dimension, a rank above 4
// or a count that overflows.
int64_t shape_numel(const Shape& shape);

class Tensor {
 public:
  static constexpr int kMaxRank = 4;

  Tensor() : Tensor(Shape{0}) {}  // an empty vector, shape [0]
  explicit Tensor(Shape shape, float fill = 0.0f);
  Tensor(Shape shape, std::vector<float> values);  // throws ShapeError if sizes differ
  static Tensor scalar(float v) { return Tensor(Shape{}, std::vector<float>{v}); }
  // As Tensor(shape, values) when the caller has computed shape_numel(shape) and sized
  // values to it (the tape's pool): the shape is not checked again.
  static Tensor adopt(Shape shape, std::vector<float> values) {
    return Tensor(std::move(shape), std::move(values), Adopt{});
  }

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor clone() const { return Tensor(shape_, data_); }

  int rank() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  // Size of dimension i; negative i counts from the end (dim(-1) = columns).
  int64_t dim(int i) const;
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty(); }

  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  std::vector<float>& values() { return data_; }
  const std::vector<float>& values() const { return data_; }
  float& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
  float operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }

  // Element access for rank 2 (i, j) and rank 3 (b, i, j); unchecked in release builds.
  float& at(int64_t i, int64_t j) { return data_[static_cast<size_t>(i * shape_[1] + j)]; }
  float at(int64_t i, int64_t j) const { return data_[static_cast<size_t>(i * shape_[1] + j)]; }
  float& at(int64_t b, int64_t i, int64_t j) {
    return data_[static_cast<size_t>((b * shape_[1] + i) * shape_[2] + j)];
  }
  float at(int64_t b, int64_t i, int64_t j) const {
    return data_[static_cast<size_t>((b * shape_[1] + i) * shape_[2] + j)];
  }

  // Changes the shape in place, keeping the values; throws ShapeError if the element
  // counts differ.
  void reshape(Shape shape);

 private:
  struct Adopt {};
  Tensor(Shape shape, std::vector<float> values, Adopt)
      : shape_(std::move(shape)), data_(std::move(values)) {}

  Shape shape_;
  std::vector<float> data_;
};

// Views a rank-2 tensor as a batch of one and a rank-3 tensor as itself: the shape
// [batch, rows, cols] that tools map over. Rank 1 is one row. Throws ShapeError otherwise.
Shape as_batch_shape(const Shape& shape);

}  // namespace attnkit
