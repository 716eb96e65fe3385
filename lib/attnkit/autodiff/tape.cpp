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

Tape::Node& Tape::node(Var v) {
  if (!v.valid() || &v.tape() != this || v.id() < 0 || v.id() >= size())
    throw Error("ad::Var does not belong to this tape (or the tape was cleared)");
  return nodes_[static_cast<size_t>(v.id())];
}
const Tape::Node& Tape::node(Var v) const { return const_cast<Tape*>(this)->node(v); }

Var Tape::constant(Tensor value) { return input(std::move(value), false); }

Var Tape::input(Tensor value, bool requires_grad) {
  nodes_.emplace_back();
  Node& n = nodes_.back();
  n.value = std::move(value);
  n.requires_grad = requires_grad;
  return Var(this, static_cast<int32_t>(nodes_.size() - 1));
}

Var Tape::param(Parameter& p) {
  auto it = param_ids_.find(&p);
  if (it != param_ids_.end()) return Var(this, it->second);
  if (!local_grads_ && p.grad.shape() != p.value.shape()) p.grad = Tensor(p.value.shape());
  nodes_.emplace_back();
  Node& n = nodes_.back();
  n.value = Tensor(Shape{0});
  n.ext_value = &p.value;
  n.ext_grad = local_grads_ ? nullptr : &p.grad;  // local: n.grad, allocated by grad()
  n.has_grad = !local_grads_;
  n.requires_grad = true;
  const auto id = static_cast<int32_t>(nodes_.size() - 1);
  param_ids_.emplace(&p, id);
  return Var(this, id);
}

Var Tape::push(Tensor value, const std::vector<Var>& inputs, BackwardFn backward) {
  bool rg = false;
  if (recording_)
    for (const Var& v : inputs)
      if (v.valid() && node(v).requires_grad) rg = true;
  nodes_.emplace_back();
  Node& n = nodes_.back();
  n.value = std::move(value);
  n.requires_grad = rg;
  if (rg) n.backward = std::move(backward);
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

bool Tape::has_grad(Var v) const { return node(v).has_grad; }

const Tensor* Tape::local_grad(const Parameter& p) const {
  auto it = param_ids_.find(&p);
  if (it == param_ids_.end()) return nullptr;
  const Node& n = nodes_[static_cast<size_t>(it->second)];
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
    if (n.has_grad && n.backward) std::fill(n.grad.values().begin(), n.grad.values().end(), 0.0f);
  }
  Tensor& g = grad(out);
  for (int64_t i = 0; i < g.size(); ++i) g[i] += seed[i];
  for (int32_t i = out.id(); i >= 0; --i) {
    Node& n = nodes_[static_cast<size_t>(i)];
    if (n.has_grad && n.backward) n.backward(*this, Var(this, i));
  }
}

void Tape::recycle(Tensor&& t) {
  if (t.size() == 0) return;
  auto it = pool_.find(t.size());
  if (it == pool_.end() || it->second.free.size() >= it->second.peak) return;  // freed
  it->second.free.push_back(std::move(t.values()));
}

void Tape::clear() {
  for (auto& kv : pool_) {
    Bin& bin = kv.second;
    bin.peak = std::max(bin.peak, bin.used);
    bin.used = 0;
  }
  for (Node& n : nodes_) {
    recycle(std::move(n.value));
    recycle(std::move(n.grad));
  }
  nodes_.clear();
  for (Tensor& x : scratch_) recycle(std::move(x));
  scratch_.clear();
  param_ids_.clear();
}

Tensor Tape::alloc(Shape shape) {
  const int64_t n = shape_numel(shape);
  Bin& bin = pool_[n];
  ++bin.used;
  if (!bin.free.empty()) {
    std::vector<float> v = std::move(bin.free.back());
    bin.free.pop_back();
    return Tensor(std::move(shape), std::move(v));
  }
  return Tensor(std::move(shape));
}

size_t Tape::pooled() const {
  size_t n = 0;
  for (const auto& kv : pool_) n += kv.second.free.size();
  return n;
}

Tensor* Tape::scratch(Shape shape) {
  scratch_.push_back(alloc(std::move(shape)));
  return &scratch_.back();
}

Tensor Tape::zeros(Shape shape) {
  Tensor t = alloc(std::move(shape));
  std::fill(t.values().begin(), t.values().end(), 0.0f);
  return t;
}

}  // namespace attnkit::ad
