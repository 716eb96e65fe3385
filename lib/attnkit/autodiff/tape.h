// Reverse-mode automatic differentiation: a Tape records the operations of one forward pass
// (one training step) as nodes in creation order; backward() walks them in reverse and each
// node's backward function adds its share of the output gradient into its inputs' gradients.
//
//   ad::Tape t(seed);                        // one per training loop, cleared every step
//   ad::Var x = t.constant(batch);           // data: no gradient
//   ad::Var w = t.param(W);                  // a Parameter's value, not copied
//   ad::Var y = ad::tanh(ad::linear(x, w, t.param(b)));
//   ad::Var loss = ad::mean(y);
//   t.backward(loss);                        // W.grad and b.grad now hold dloss/dW, dloss/db
//   ... optimiser step ...
//   t.clear();                               // nodes dropped, buffers kept for the next step
//
// Design:
// - Nodes live in chunks of 256 that the tape keeps across clear(), so a Var's value()
//   reference stays valid while later ops are recorded and a step after the first allocates
//   no nodes. A Var is a (tape, index) handle: cheap to copy, valid until clear().
// - Backward functions (the ops' closures) are built in place in an arena of the tape, also
//   kept across clear(): recording a node costs no heap allocation of its own (what a closure
//   captures by value allocates as it would anywhere; a Shape of rank <= 4 does not).
// - Parameters live outside the tape (they persist across steps with their gradient and the
//   optimiser's state). t.param(p) enters p once per tape as a leaf that *refers* to p.value
//   and accumulates straight into p.grad: no copies of weights or gradients per step.
// - Gradients are allocated lazily (on first use, as zeros, or unwritten for an op that
//   writes the whole gradient: grad(v, assign)); nodes no gradient reaches are skipped. Ops whose
//   inputs need no gradient record no backward function at all, so an evaluation pass (or
//   set_recording(false)) keeps only values.
// - clear() moves every value and gradient buffer into a pool that alloc()/zeros() draw from
//   by size class (exact up to 64 floats, then 8 classes a doubling): a training loop
//   allocates almost nothing after its first steps. The pool keeps, per class, at most as
//   many buffers as alloc() was ever asked for between two clear()s, and in all at most
//   twice the most alloc() served between two clear()s, so it stays bounded: with bins of
//   exact sizes and no bound, values an op built without alloc() piled up step after step
//   (the NTM's: about 11 KB a step) and batches of ever new shapes kept adding bins
//   (seq2seq-train on fra.txt: 2.5 GB after 400 steps).
// - The tape is also the forward context: training() (dropout on/off) and rng() (dropout
//   masks), so layers need no extra arguments for them.
// - New ops are ordinary functions that compute a value and call push() with a backward
//   function; nothing needs registering (see ops.h for the built-in ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::ad {

// A trainable tensor that outlives tapes: its value, the gradient backward() accumulates
// into it (same shape; the optimiser zeroes it), and a name (for registries and files).
// copies > 1: the parameter stands for that many parameters that always receive the same
// gradient and whose sum is used (PyTorch's RNN/LSTM biases b_ih and b_hh, kept here as one
// b = b_ih + b_hh). Training then follows the separate copies exactly (without weight
// decay): nn's optimisers move it `copies` times as far as its gradient alone would (each
// copy makes the same step), and nn::grad_norm counts its squared gradient `copies` times.
// Not saved with the value: the layer that creates the parameter sets it.
struct Parameter {
  Parameter(std::string name_, Tensor value_);
  std::string name;
  Tensor value;
  Tensor grad;
  int copies = 1;
  int64_t size() const { return value.size(); }
};

class Tape;

// A handle to one node of a tape. Default-constructed: no node (valid() is false), used for
// optional inputs such as a missing bias.
class Var {
 public:
  Var() = default;
  Var(Tape* tape, int32_t id) : tape_(tape), id_(id) {}

  bool valid() const { return tape_ != nullptr; }
  Tape& tape() const;  // throws Error on an invalid Var
  int32_t id() const { return id_; }

  const Tensor& value() const;
  const Shape& shape() const { return value().shape(); }
  int rank() const { return value().rank(); }
  int64_t dim(int i) const { return value().dim(i); }
  int64_t size() const { return value().size(); }
  // After backward(): the gradient of the loss with respect to this node (zeros when none
  // reached it). For a param() leaf this is the Parameter's grad.
  const Tensor& grad() const;
  bool requires_grad() const;

 private:
  Tape* tape_ = nullptr;
  int32_t id_ = -1;
};

// Adds the gradient of `out` (t.grad(out)) into the gradients of the op's inputs. push()
// takes any callable of this signature (a lambda, as the ops pass, or nullptr for none) and
// keeps it in the tape's arena; this type is only a name for one held elsewhere.
using BackwardFn = std::function<void(Tape& t, Var out)>;

class Tape {
 public:
  explicit Tape(uint64_t seed = 0);
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // ---- leaves
  Var constant(Tensor value);  // never gets a gradient
  // A constant that refers to `value` instead of holding a copy (a loop's tensors entered on
  // a tape cleared every iteration): `value` must outlive the Var and not change meanwhile.
  Var constant_view(const Tensor& value);
  Var input(Tensor value, bool requires_grad = true);  // a leaf whose grad() can be read
  // The parameter's value (referenced, not copied); backward() accumulates into p.grad.
  // Entering the same parameter twice on one tape gives the same Var.
  Var param(Parameter& p);
  // The transpose of a 2-D parameter's value, [in, out] for a weight [out, in], as a constant
  // (no gradient: ops that take it take the parameter too and send the gradient there; see
  // ad::linear's wt). Made once per tape (until clear()): a loop of small products over the
  // same weight then multiplies by it in the form BLAS runs fastest for few rows.
  Var param_t(Parameter& p);

  // ---- recording an op: `value` is the op's result, `inputs` the Vars it reads (a braced
  // list or a vector). When one of them requires a gradient (and recording is on)
  // `backward` (a callable void(Tape&, Var out), or nullptr) is moved into the tape's arena;
  // otherwise it is not kept and the node is a constant.
  template <class F>
  Var push(Tensor value, std::initializer_list<Var> inputs, F&& backward) {
    return push(std::move(value), inputs.begin(), inputs.size(), std::forward<F>(backward));
  }
  template <class F>
  Var push(Tensor value, const std::vector<Var>& inputs, F&& backward) {
    return push(std::move(value), inputs.data(), inputs.size(), std::forward<F>(backward));
  }
  template <class F>
  Var push(Tensor value, const Var* inputs, size_t count, F&& backward) {
    const Var v = record(std::move(value), inputs, count);
    using D = std::decay_t<F>;
    if constexpr (!std::is_same_v<D, std::nullptr_t>) {
      Node& n = nodes_[static_cast<size_t>(v.id())];
      if constexpr (std::is_same_v<D, BackwardFn>)
        if (!backward) return v;  // an empty std::function: none
      if (n.requires_grad) {
        static_assert(alignof(D) <= alignof(std::max_align_t), "over-aligned backward closure");
        D* fn = new (arena_alloc(sizeof(D))) D(std::forward<F>(backward));
        n.fn = fn;
        n.call = [](void* f, Tape& t, Var out) { (*static_cast<D*>(f))(t, out); };
        if constexpr (!std::is_trivially_destructible_v<D>)
          n.destroy = [](void* f) { static_cast<D*>(f)->~D(); };
      }
    }
    return v;
  }

  // ---- access (for op implementations)
  const Tensor& value(Var v) const;
  // The gradient buffer of v, allocated as zeros on first use.
  Tensor& grad(Var v);
  // The same for a backward function that writes every element of v's gradient: when
  // `assign` comes back true the buffer is new and its values are unspecified (write, do
  // not add), which saves zeroing it; otherwise add into it as with grad(). Writing x where
  // 0 + x was added gives the same bits (only a zero's sign may differ: the parameter
  // gradients, sums from +0, do not see it).
  Tensor& grad(Var v, bool& assign);
  bool has_grad(Var v) const;
  bool requires_grad(Var v) const;

  // ---- backward: seeds d loss/d loss = 1 (loss must hold one element) and runs every
  // reachable node's backward function in reverse order of creation. Gradients of leaves
  // (inputs, parameters) accumulate over calls; those of interior nodes are per call.
  void backward(Var loss);
  // The same with an explicit seed gradient of out's shape.
  void backward(Var out, const Tensor& seed);

  // Drops every node (Vars of this tape become invalid); buffers are kept for reuse.
  void clear();
  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }

  // ---- data parallelism: with local parameter gradients on, param() leaves accumulate into
  // buffers of this tape (zeros at first use after clear()) instead of Parameter::grad, so
  // several tapes may run forward and backward over the same parameters at once (each on
  // its own thread; the parameters' values must not change meanwhile). Set it while the
  // tape is empty.
  void set_local_param_grads(bool on) { local_grads_ = on; }
  bool local_param_grads() const { return local_grads_; }
  // The local gradient of p (local mode), or nullptr when no gradient reached p on this tape.
  const Tensor* local_grad(const Parameter& p) const;

  // ---- buffers from the pool
  Tensor alloc(Shape shape);  // values unspecified
  Tensor zeros(Shape shape);
  // A pooled tensor owned by the tape until clear(), for what a backward function saves
  // from its forward pass (the address stays valid until clear()).
  Tensor* scratch(Shape shape);
  // Buffers waiting in the pool (for tests: bounded however many steps ran).
  size_t pooled() const;

  // ---- forward context
  bool training() const { return training_; }
  void set_training(bool on) { training_ = on; }
  bool recording() const { return recording_; }
  // Off: ops keep no backward functions (inference); backward() then has nothing to do.
  void set_recording(bool on) { recording_ = on; }
  Rng& rng() { return rng_; }
  void seed(uint64_t s) { rng_ = Rng(s); }

 private:
  struct Node {
    Tensor value;
    const Tensor* ext_value = nullptr;  // param leaves: the Parameter's value
    Tensor grad;
    Tensor* ext_grad = nullptr;  // param leaves: the Parameter's grad
    bool has_grad = false;
    bool requires_grad = false;
    void* fn = nullptr;                         // the backward closure, in the arena
    void (*call)(void*, Tape&, Var) = nullptr;  // runs it; null: no backward function
    void (*destroy)(void*) = nullptr;           // its destructor; null: trivial
  };
  // Elements in chunks of 256 that stay allocated (and keep their addresses) until the tape
  // dies; size() counts those in use, reset() starts over (the caller resets the elements).
  template <class T>
  class Chunks {
   public:
    T& operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    const T& operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    T& next() {
      if (size_ == chunks_.size() * kChunk) chunks_.emplace_back(new T[kChunk]);
      return (*this)[size_++];
    }
    size_t size() const { return size_; }
    void reset() { size_ = 0; }

   private:
    static constexpr size_t kShift = 8, kChunk = size_t{1} << kShift;
    std::vector<std::unique_ptr<T[]>> chunks_;
    size_t size_ = 0;
  };
  // Parameter -> node id, open addressing; its table is kept across clear().
  class ParamIds {
   public:
    int32_t find(const Parameter* p) const;  // -1 when absent
    void insert(const Parameter* p, int32_t id);
    void clear();

   private:
    std::vector<std::pair<const Parameter*, int32_t>> slots_;
    size_t count_ = 0;
  };
  Node& node(Var v);
  const Node& node(Var v) const;
  Var record(Tensor&& value, const Var* inputs, size_t count);  // push() but the closure
  Node& new_node();
  void* arena_alloc(size_t bytes);  // aligned for std::max_align_t, valid until clear()
  void release_nodes();             // recycles the buffers, destroys the closures
  void recycle(Tensor&& t);

  Chunks<Node> nodes_;
  Chunks<Tensor> scratch_;
  ParamIds param_ids_;
  ParamIds param_t_ids_;  // param_t's nodes
  struct ArenaBlock {
    std::unique_ptr<std::max_align_t[]> mem;
    size_t bytes = 0;
  };
  std::vector<ArenaBlock> arena_;  // kept across clear()
  size_t arena_block_ = 0;         // the block being filled
  size_t arena_used_ = 0;          // bytes of it in use
  struct Bin {
    std::vector<std::vector<float>> free;  // buffers ready for alloc()
    size_t used = 0;                       // alloc() calls of this class since clear()
    size_t peak = 0;                       // the most of them between two clear()s
  };
  std::vector<Bin> pool_;    // by the index of the size class (tape.cpp's class_index)
  int64_t pool_floats_ = 0;  // the capacity of the buffers in the pool
  int64_t step_floats_ = 0;  // what alloc() served since clear(), in class sizes
  int64_t step_peak_ = 0;    // the most of it between two clear()s
  bool training_ = true, recording_ = true, local_grads_ = false;
  Rng rng_;
};

}  // namespace attnkit::ad
