// Shape: a tensor's dimensions, the interface of a std::vector<int64_t> without its heap
// allocation: up to kInline dimensions are held in the object itself (every Tensor's shape,
// whose rank is at most 4), more on the heap (a shape that an error message is about, or
// one being built). A tape step makes a Tensor for every value and gradient and copies
// shapes into its backward closures; as std::vector each was a malloc and a free.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace attnkit {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr size_t kInline = 4;

  Shape() noexcept {}
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  explicit Shape(size_t n, int64_t value = 0) { resize(n, value); }
  template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
  Shape(It first, It last) {
    assign(first, last);
  }
  // Implicit, as the std::vector<int64_t> that Shape was: shapes read from files and built
  // in loops.
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }

  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      heap_.reset();
      cap_ = static_cast<uint32_t>(kInline);
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() = default;

  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return cap_; }
  // Whether the dimensions are held in the object (no heap buffer).
  bool is_inline() const noexcept { return !heap_; }

  int64_t* data() noexcept { return heap_ ? heap_.get() : buf_; }
  const int64_t* data() const noexcept { return heap_ ? heap_.get() : buf_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& at(size_t i) {
    if (i >= size_) throw std::out_of_range("Shape::at");
    return data()[i];
  }
  const int64_t& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("Shape::at");
    return data()[i];
  }
  int64_t& front() { return data()[0]; }
  const int64_t& front() const { return data()[0]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  void reserve(size_t n) {
    if (n <= cap_) return;
    std::unique_ptr<int64_t[]> h(new int64_t[n]);
    std::copy(begin(), end(), h.get());
    heap_ = std::move(h);
    cap_ = static_cast<uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(int64_t d) {
    if (size_ == cap_) reserve(2 * size_t{cap_});
    data()[size_++] = d;
  }
  void pop_back() { --size_; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
  void assign(It first, It last) {
    const auto n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<uint32_t>(n);
  }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  void assign(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  iterator insert(const_iterator pos, int64_t d) { return insert(pos, size_t{1}, d); }
  iterator insert(const_iterator pos, size_t n, int64_t d) {
    const size_t at = open(pos, n);
    std::fill(data() + at, data() + at + n, d);
    return data() + at;
  }
  template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
  iterator insert(const_iterator pos, It first, It last) {
    // The range may be this shape's own: copied out before the shape moves.
    const Shape items(first, last);
    const size_t at = open(pos, items.size());
    std::copy(items.begin(), items.end(), data() + at);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> dims) {
    return insert(pos, dims.begin(), dims.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_t>(first - begin());
    const auto n = static_cast<size_t>(last - first);
    std::copy(data() + at + n, end(), data() + at);
    size_ -= static_cast<uint32_t>(n);
    return data() + at;
  }
  void swap(Shape& o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  friend bool operator<(const Shape& a, const Shape& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator>(const Shape& a, const Shape& b) { return b < a; }
  friend bool operator<=(const Shape& a, const Shape& b) { return !(b < a); }
  friend bool operator>=(const Shape& a, const Shape& b) { return !(a < b); }

 private:
  // Leaves o empty and inline, as a moved-from std::vector is empty.
  void take(Shape& o) noexcept {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      cap_ = o.cap_;
      o.cap_ = static_cast<uint32_t>(kInline);
    } else {
      std::copy(o.buf_, o.buf_ + o.size_, buf_);
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  // Makes room for n dimensions at pos; returns pos as an index.
  size_t open(const_iterator pos, size_t n) {
    const auto at = static_cast<size_t>(pos - begin());
    if (size_ + n > cap_) reserve(std::max<size_t>(size_ + n, 2 * cap_));
    std::copy_backward(data() + at, end(), end() + n);
    size_ += static_cast<uint32_t>(n);
    return at;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = static_cast<uint32_t>(kInline);
  int64_t buf_[kInline] = {};  // zeroed: the compiler cannot see that size_ guards reads
  std::unique_ptr<int64_t[]> heap_;
};

inline void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

}  // namespace attnkit
