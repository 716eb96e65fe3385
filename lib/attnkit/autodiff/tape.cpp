#include "attnkit/autodiff/tape.h"

#include <algorithm>
#include <cstring>

#include "attnkit/core/error.h"

namespace attnkit::ad {

Parameter::Parameter(std::string name_, Tensor value_)
    : name(std::move(name_)), value(std::move(value_)), grad(value.shape()) {}

Tape& Var::tape() const {
  if (!tape_) throw Error("use of an empty ad::Var (no node)");
  return *tape_;
}
const Tensor& Var::value() const { return tape().value(*this); }
const Tensor& Var::grad() const { return tape().grad(*this); }
bool Var::requires_grad() const { return tape().requires_grad(*this); }

Tape::Tape(uint64_t seed) : rng_(seed) {}

Tape::~Tape() {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].destroy) nodes_[i].destroy(nodes_[i].fn);
}

namespace {

size_t param_slot(const Parameter* p, size_t mask) {
  auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  h ^= h >> 17;
  h *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 32) & mask;
}

}  // namespace

int32_t Tape::ParamIds::find(const Parameter* p) const {
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = param_slot(p, mask);; i = (i + 1) & mask) {
    if (slots_[i].first == p) return slots_[i].second;
    if (!slots_[i].first) return -1;
  }
}

void Tape::ParamIds::insert(const Parameter* p, int32_t id) {
  if ((count_ + 1) * 2 > slots_.size()) {  // at most half full: a probe always ends
    std::vector<std::pair<const Parameter*, int32_t>> old(std::max<size_t>(16, 2 * slots_.size()),
                                                          {nullptr, -1});
    old.swap(slots_);
    count_ = 0;
    for (const auto& e : old)
      if (e.first) insert(e.first, e.second);
  }
  const size_t mask = slots_.size() - 1;
  size_t i = param_slot(p, mask);
  while (slots_[i].first) i = (i + 1) & mask;
  slots_[i] = {p, id};
  ++count_;
}

void Tape::ParamIds::clear() {
  if (count_ == 0) return;
  std::fill(slots_.begin(), slots_.end(), std::pair<const Parameter*, int32_t>{nullptr, -1});
  count_ = 0;
}

Tape::Node& Tape::new_node() { return nodes_.next(); }  // release_nodes() reset it

void* Tape::arena_alloc(size_t bytes) {
  constexpr size_t kAlign = alignof(std::max_align_t), kBlock = size_t{64} << 10;
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  for (;; ++arena_block_, arena_used_ = 0) {
    if (arena_block_ == arena_.size()) {
      ArenaBlock b;
      b.bytes = std::max(kBlock, bytes);
      b.mem.reset(new std::max_align_t[b.bytes / kAlign]);
      arena_.push_back(std::move(b));
    }
    ArenaBlock& b = arena_[arena_block_];
    if (arena_used_ + bytes <= b.bytes) {
      void* p = reinterpret_cast<char*>(b.mem.get()) + arena_used_;
      arena_used_ += bytes;
      return p;
    }
  }
}

Tape::Node& Tape::node(Var v) {
  if (!v.valid() || &v.tape() != this || v.id() < 0 || v.id() >= size())
    throw Error("ad::Var does not belong to this tape (or the tape was cleared)");
  return nodes_[static_cast<size_t>(v.id())];
}
const Tape::Node& Tape::node(Var v) const { return const_cast<Tape*>(this)->node(v); }

Var Tape::constant(Tensor value) { return input(std::move(value), false); }

Var Tape::constant_view(const Tensor& value) {
  Node& n = new_node();  // n.value, unused, holds no values
  n.ext_value = &value;
  return Var(this, static_cast<int32_t>(nodes_.size() - 1));
}

Var Tape::input(Tensor value, bool requires_grad) {
  Node& n = new_node();
  n.value = std::move(value);
  n.requires_grad = requires_grad;
  return Var(this, static_cast<int32_t>(nodes_.size() - 1));
}

Var Tape::param(Parameter& p) {
  const int32_t known = param_ids_.find(&p);
  if (known >= 0) return Var(this, known);
  if (!local_grads_ && p.grad.shape() != p.value.shape()) p.grad = Tensor(p.value.shape());
  Node& n = new_node();  // n.value, unused, holds no values
  n.ext_value = &p.value;
  n.ext_grad = local_grads_ ? nullptr : &p.grad;  // local: n.grad, allocated by grad()
  n.has_grad = !local_grads_;
  n.requires_grad = true;
  const auto id = static_cast<int32_t>(nodes_.size() - 1);
  param_ids_.insert(&p, id);
  return Var(this, id);
}

Var Tape::param_t(Parameter& p) {
  const int32_t known = param_t_ids_.find(&p);
  if (known >= 0) return Var(this, known);
  const Tensor& w = p.value;
  if (w.rank() != 2)
    throw ShapeError("param_t: " + p.name + " has shape " + shape_str(w.shape()) + ", not 2-D");
  const int64_t r = w.dim(0), c = w.dim(1);
  Tensor y = alloc({c, r});
  // In tiles of 16 x 16: the rows written lie r floats apart, and a whole column of them
  // (e.g. 64 rows 1 KB apart) falls into a few of the L1 cache's sets and evicts itself.
  constexpr int64_t kTile = 16;
  const float* src = w.data();
  float* dst = y.data();
  for (int64_t i0 = 0; i0 < r; i0 += kTile)
    for (int64_t j0 = 0; j0 < c; j0 += kTile) {
      const int64_t i1 = std::min(r, i0 + kTile), j1 = std::min(c, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) dst[j * r + i] = src[i * c + j];
    }
  const Var v = constant(std::move(y));
  param_t_ids_.insert(&p, v.id());
  return v;
}

Var Tape::record(Tensor&& value, const Var* inputs, size_t count) {
  bool rg = false;
  if (recording_)
    for (size_t i = 0; i < count; ++i)
      if (inputs[i].valid() && node(inputs[i]).requires_grad) rg = true;
  Node& n = new_node();
  n.value = std::move(value);
  n.requires_grad = rg;
  return Var(this, static_cast<int32_t>(nodes_.size() - 1));
}

const Tensor& Tape::value(Var v) const {
  const Node& n = node(v);
  return n.ext_value ? *n.ext_value : n.value;
}

Tensor& Tape::grad(Var v) {
  Node& n = node(v);
  if (n.ext_grad) return *n.ext_grad;
  if (!n.has_grad) {
    n.grad = zeros(n.ext_value ? n.ext_value->shape() : n.value.shape());
    n.has_grad = true;
  }
  return n.grad;
}

Tensor& Tape::grad(Var v, bool& assign) {
  Node& n = node(v);
  assign = false;
  if (n.ext_grad) return *n.ext_grad;
  if (!n.has_grad) {
    n.grad = alloc(n.ext_value ? n.ext_value->shape() : n.value.shape());
    n.has_grad = true;
    assign = true;
  }
  return n.grad;
}

bool Tape::has_grad(Var v) const { return node(v).has_grad; }

const Tensor* Tape::local_grad(const Parameter& p) const {
  const int32_t id = param_ids_.find(&p);
  if (id < 0) return nullptr;
  const Node& n = nodes_[static_cast<size_t>(id)];
  return !n.ext_grad && n.has_grad ? &n.grad : nullptr;
}
bool Tape::requires_grad(Var v) const { return node(v).requires_grad; }

void Tape::backward(Var loss) {
  const Tensor& y = value(loss);
  if (y.size() != 1)
    throw ShapeError("backward: the loss must hold one value, got shape " + shape_str(y.shape()));
  Tensor seed(y.shape(), 1.0f);
  backward(loss, seed);
}

void Tape::backward(Var out, const Tensor& seed) {
  Node& o = node(out);
  const Tensor& y = o.ext_value ? *o.ext_value : o.value;
  if (seed.shape() != y.shape())
    throw ShapeError("backward: seed of shape " + shape_str(seed.shape()) +
                     " for an output of shape " + shape_str(y.shape()));
  // Gradients of interior nodes belong to one backward pass; leaves accumulate.
  for (int32_t i = 0; i <= out.id(); ++i) {
    Node& n = nodes_[static_cast<size_t>(i)];
    if (n.has_grad && n.call) std::fill(n.grad.values().begin(), n.grad.values().end(), 0.0f);
  }
  Tensor& g = grad(out);
  for (int64_t i = 0; i < g.size(); ++i) g[i] += seed[i];
  for (int32_t i = out.id(); i >= 0; --i) {
    Node& n = nodes_[static_cast<size_t>(i)];
    if (n.has_grad && n.call) n.call(n.fn, *this, Var(this, i));
  }
}

namespace {

// The pool's size classes: every size up to 64 floats, then 8 a doubling (64, 72, ..., 120,
// 128, 144, ...), so that the buffers of batches of nearby shapes share bins and a buffer is
// at most 1/8 larger than what it serves. class_up: the smallest class holding n floats;
// class_down: the largest class a buffer of capacity c can serve.
constexpr int64_t kExactClasses = 64;
int64_t class_step(int64_t n) {
  int e = 0;
  while ((int64_t{2} << e) <= n) ++e;  // 2^e <= n < 2^(e+1)
  return int64_t{1} << (e - 3);
}
int64_t class_up(int64_t n) {
  if (n <= kExactClasses) return n;
  const int64_t step = class_step(n);
  return (n + step - 1) / step * step;
}
int64_t class_down(int64_t c) {
  if (c <= kExactClasses) return c;
  const int64_t step = class_step(c);
  return c / step * step;
}
// The bin of a class in Tape::pool_: the class itself up to 64, then 8 bins a doubling.
size_t class_index(int64_t cls) {
  if (cls <= kExactClasses) return static_cast<size_t>(cls);
  int e = 0;
  while ((int64_t{2} << e) <= cls) ++e;  // 2^e <= cls < 2^(e+1), e >= 6
  return static_cast<size_t>(kExactClasses + 1 + (e - 6) * 8 + (cls >> (e - 3)) - 8);
}

}  // namespace

void Tape::recycle(Tensor&& t) {
  const int64_t cap = static_cast<int64_t>(t.values().capacity());
  if (cap == 0) return;
  const size_t idx = class_index(class_down(cap));
  if (idx >= pool_.size() || pool_[idx].free.size() >= pool_[idx].peak) return;  // freed
  if (pool_floats_ + cap > 2 * step_peak_) return;                               // freed
  pool_floats_ += cap;
  pool_[idx].free.push_back(std::move(t.values()));
}

void Tape::clear() {
  step_peak_ = std::max(step_peak_, step_floats_);
  step_floats_ = 0;
  for (Bin& bin : pool_) {
    bin.peak = std::max(bin.peak, bin.used);
    bin.used = 0;
  }
  release_nodes();
  for (size_t i = 0; i < scratch_.size(); ++i) recycle(std::move(scratch_[i]));
  scratch_.reset();
  param_ids_.clear();
  param_t_ids_.clear();
  arena_block_ = arena_used_ = 0;
}

void Tape::release_nodes() {
  const size_t count = nodes_.size();
  for (size_t i = 0; i < count; ++i) {
    Node& n = nodes_[i];
    recycle(std::move(n.value));
    recycle(std::move(n.grad));
  }
  for (size_t i = 0; i < count; ++i) {  // as new_node() hands them out again
    Node& n = nodes_[i];
    // What the pool did not take is freed now, as when the nodes were destroyed.
    if (n.value.values().capacity()) std::vector<float>().swap(n.value.values());
    if (n.grad.values().capacity()) std::vector<float>().swap(n.grad.values());
    if (n.destroy) n.destroy(n.fn);
    n.ext_value = nullptr;
    n.ext_grad = nullptr;
    n.has_grad = n.requires_grad = false;
    n.fn = nullptr;
    n.call = nullptr;
    n.destroy = nullptr;
  }
  nodes_.reset();
}

Tensor Tape::alloc(Shape shape) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return Tensor(std::move(shape));
  const int64_t cls = class_up(n);
  const size_t idx = class_index(cls);
  if (idx >= pool_.size()) pool_.resize(idx + 1);
  Bin& bin = pool_[idx];
  ++bin.used;
  step_floats_ += cls;
  std::vector<float> v;
  if (!bin.free.empty()) {
    // A buffer of exactly n values if there is one (a loop of fixed shapes always finds it),
    // else one at least as long, else the last: growing within the capacity writes zeros.
    auto& fr = bin.free;
    size_t pick = fr.size() - 1;
    bool longer = false;
    for (size_t i = fr.size(); i-- > 0;) {
      const auto have = static_cast<int64_t>(fr[i].size());
      if (have == n) {
        pick = i;
        break;
      }
      if (have > n && !longer) {
        pick = i;
        longer = true;
      }
    }
    v = std::move(fr[pick]);
    fr[pick] = std::move(fr.back());
    fr.pop_back();
    pool_floats_ -= static_cast<int64_t>(v.capacity());
  } else {
    v.reserve(static_cast<size_t>(cls));  // room for any size of the class, when recycled
  }
  v.resize(static_cast<size_t>(n));  // within the capacity: no reallocation
  // n is shape_numel(shape): the Tensor need not count the shape again.
  return Tensor::adopt(std::move(shape), std::move(v));
}

size_t Tape::pooled() const {
  size_t n = 0;
  for (const Bin& bin : pool_) n += bin.free.size();
  return n;
}

Tensor* Tape::scratch(Shape shape) {
  Tensor& x = scratch_.next();
  x = alloc(std::move(shape));
  return &x;
}

Tensor Tape::zeros(Shape shape) {
  Tensor t = alloc(std::move(shape));
  std::fill(t.values().begin(), t.values().end(), 0.0f);
  return t;
}

}  // namespace attnkit::ad
