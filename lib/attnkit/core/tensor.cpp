#include "attnkit/core/tensor.h"

#include <limits>

#include "attnkit/core/alloc_budget.h"
#include "attnkit/core/error.h"

namespace attnkit {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  if (shape.size() > static_cast<size_t>(Tensor::kMaxRank))
    throw ShapeError("rank " + std::to_string(shape.size()) + " of shape " + shape_str(shape) +
                     " is above the supported " + std::to_string(Tensor::kMaxRank));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError("negative dimension in shape " + shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw ShapeError("shape " + shape_str(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

namespace {
thread_local AllocBudget* g_budget = nullptr;
}  // namespace

AllocBudget::AllocBudget(int64_t floats, std::string message, std::string file)
    : left_(floats), message_(std::move(message)), file_(std::move(file)), outer_(g_budget) {
  g_budget = this;
}

AllocBudget::~AllocBudget() { g_budget = outer_; }

void AllocBudget::charge(int64_t floats) {
  AllocBudget* b = g_budget;
  if (b == nullptr) return;
  if (floats > b->left_)
    throw DataError(b->message_ + " (a tensor of " + std::to_string(floats) + " values, " +
                        std::to_string(b->left_) + " left)",
                    b->file_);
  b->left_ -= floats;
}

Tensor::Tensor(Shape shape, float fill) : shape_(std::move(shape)) {
  const int64_t n = shape_numel(shape_);
  AllocBudget::charge(n);
  data_.assign(static_cast<size_t>(n), fill);
}

Tensor::Tensor(Shape shape, std::vector<float> values)
    : shape_(std::move(shape)), data_(std::move(values)) {
  if (shape_numel(shape_) != static_cast<int64_t>(data_.size()))
    throw ShapeError("shape " + shape_str(shape_) + " does not hold " +
                     std::to_string(data_.size()) + " values");
}

int64_t Tensor::dim(int i) const {
  int r = rank();
  int k = i < 0 ? r + i : i;
  if (k < 0 || k >= r)
    throw ShapeError("no dimension " + std::to_string(i) + " in shape " + shape_str(shape_));
  return shape_[static_cast<size_t>(k)];
}

void Tensor::reshape(Shape shape) {
  if (shape_numel(shape) != size())
    throw ShapeError("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  shape_ = std::move(shape);
}

Shape as_batch_shape(const Shape& shape) {
  switch (shape.size()) {
    case 1:
      return {1, 1, shape[0]};
    case 2:
      return {1, shape[0], shape[1]};
    case 3:
      return shape;
    default:
      throw ShapeError("expected a matrix or a batch of matrices, got shape " + shape_str(shape));
  }
}

}  // namespace attnkit
