// Optimisers over ad::Parameters (their .grad, filled by Tape::backward), learning-rate
// schedules and gradient clipping. State (moments) is kept per parameter inside the
// optimiser, allocated on construction. step() updates the values and counts the step;
// zero_grad() clears the gradients for the next one. A parameter with copies > 1
// (ad::Parameter) is updated with copies × the learning rate (each copy's step, summed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::nn {

// The learning rate at step s (1-based) is lr · factor(s):
//   warm-up  s < warmup: s / warmup (linear ramp), then
//   Constant        1
//   InverseSqrt     √(warmup / s) (Vaswani et al.'s schedule without its d^-0.5 factor;
//                   with warmup 0: 1/√s)
//   Step            gamma^⌊s / step_size⌋
//   Cosine          (1 + cos(π p)) / 2, p = (s - warmup) / (total - warmup) clamped to [0, 1]:
//                   from 1 after the warm-up to 0 at step total (Loshchilov & Hutter 2017,
//                   without restarts)
struct Schedule {
  enum class Kind { Constant, InverseSqrt, Step, Cosine };
  Kind kind = Kind::Constant;
  int64_t warmup = 0;
  int64_t step_size = 1;
  double gamma = 0.1;
  int64_t total = 0;  // Cosine: the run's last step
  double factor(int64_t step) const;
};

// The trainers' --schedule values: "constant", "inverse-sqrt" and "cosine" (over total steps),
// after a linear warm-up of warmup steps. Anything else is a ChoiceError listing them.
Schedule parse_schedule(const std::string& name, int64_t warmup, int64_t total);
// Throws the same ChoiceError as parse_schedule for a name it would refuse.
void check_schedule_name(const std::string& name);

// Everything an optimiser carries from one step to the next, so that a resumed run continues
// exactly: the step count, the base learning rate, and its per-parameter buffers, named
// "<parameter name>/<slot>" (slots: SGD "momentum" (only with momentum); Adam "m", "v";
// RMSProp "n", "g", "delta").
struct OptimizerState {
  int64_t steps = 0;
  double lr = 0.0;
  std::map<std::string, Tensor> buffers;
};

class Optimizer {
 public:
  Optimizer(std::vector<ad::Parameter*> params, double lr, Schedule schedule);
  virtual ~Optimizer() = default;
  // One update from the current gradients.
  void step();
  void zero_grad();
  int64_t steps() const { return steps_; }
  double base_lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  // Parameter p's steps use scale × the rate (default 1 for every parameter): e.g. a slower
  // learning rate for one part of a model. Not part of state(): it is configuration, set
  // again before a resumed run continues. UsageError when p is not one of params() or the
  // scale is negative or not finite.
  void set_lr_scale(const ad::Parameter* p, double scale);
  double lr_scale(size_t k) const { return lr_scale_[k]; }
  // The rate the next step() uses.
  double current_lr() const { return lr_ * schedule_.factor(steps_ + 1); }
  const std::vector<ad::Parameter*>& params() const { return params_; }

  // A copy of the state (see OptimizerState).
  OptimizerState state() const;
  // Restores a state from state(). A missing or extra buffer, or one whose shape differs
  // from its parameter's, is a DataError naming it; nothing is changed unless all fits.
  void load_state(const OptimizerState& s);

 protected:
  // Update elements [begin, end) of parameter k from its grad with learning rate lr at step
  // `step` (1-based). step() calls it on blocks of the parameters from several threads
  // (nn::for_param_blocks), so it must touch only those elements.
  virtual void update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) = 0;
  std::vector<ad::Parameter*> params_;
  // Per-parameter state tensors of the same shape as the parameter, `n` of them each.
  std::vector<std::vector<Tensor>> state_;
  void init_state(std::vector<std::string> slots);  // one named buffer per slot
  void init_state(int n);                           // slots "0", "1", ... (older subclasses)
  std::vector<std::string> slots_;

 private:
  double lr_;
  Schedule schedule_;
  int64_t steps_ = 0;
  std::vector<double> lr_scale_;  // per parameter
};

// v = μ v + g (+ weight decay · θ); θ -= lr · v (Nesterov: θ -= lr · (g + μ v)). PyTorch's SGD.
class SGD : public Optimizer {
 public:
  SGD(std::vector<ad::Parameter*> params, double lr, double momentum = 0.0, bool nesterov = false,
      double weight_decay = 0.0, Schedule schedule = {});

 private:
  void update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) override;
  double momentum_, weight_decay_;
  bool nesterov_;
};

// Adam (Kingma & Ba), as torch.optim.Adam: m = β1 m + (1-β1) g, v = β2 v + (1-β2) g²,
// θ -= lr · m̂ / (√v̂ + ε) with bias-corrected m̂, v̂; weight decay adds wd · θ to g.
class Adam : public Optimizer {
 public:
  Adam(std::vector<ad::Parameter*> params, double lr = 1e-3, double beta1 = 0.9,
       double beta2 = 0.999, double eps = 1e-8, double weight_decay = 0.0, Schedule schedule = {});

 private:
  void update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) override;
  double b1_, b2_, eps_, wd_;
};

// RMSProp. Centred (Graves 2013, "Generating sequences with recurrent neural networks",
// eqs. 38-41, the NTM's optimiser): n = ρ n + (1-ρ) g², ḡ = ρ ḡ + (1-ρ) g,
// Δ = μ Δ - lr · g / √(n - ḡ² + ε), θ += Δ, with ρ = 0.95, μ = 0.9, ε = 1e-4 INSIDE the
// square root (PyTorch adds its ε outside). Not centred: ḡ is left out.
class RMSProp : public Optimizer {
 public:
  RMSProp(std::vector<ad::Parameter*> params, double lr = 1e-4, double decay = 0.95,
          double momentum = 0.9, double eps = 1e-4, bool centered = true, Schedule schedule = {});

 private:
  void update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) override;
  double rho_, mu_, eps_;
  bool centered_;
};

// The global L2 norm ‖g‖ of all the gradients (Σ g² in double, vectorised in a fixed order;
// a parameter with copies > 1 counts that many times, as its separate copies would).
double grad_norm(const std::vector<ad::Parameter*>& params);
// Scales every gradient by max_norm / ‖g‖ when the global L2 norm ‖g‖ over all of them
// (in double) exceeds max_norm; returns ‖g‖ before clipping.
double clip_grad_norm(const std::vector<ad::Parameter*>& params, double max_norm);
// Scales the gradients by max_norm / σ when the spectral norm σ (largest singular value, in
// double) of the matrix they form stacked row-wise exceeds max_norm; returns σ before
// clipping. Each gradient is read as [rows, cols] with cols its last dimension (a vector is
// one row); all must have the same cols (ShapeError otherwise). σ ≤ the L2 norm, equal for
// rank-one gradients. This is Matlab's norm(G) of a matrix, as the MemN2N authors' code
// clips each weight.
double clip_grad_spectral(const std::vector<ad::Parameter*>& params, double max_norm);
// Clamps every gradient element to [-value, value].
void clip_grad_value(const std::vector<ad::Parameter*>& params, double value);

}  // namespace attnkit::nn
