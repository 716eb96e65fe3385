// Finite-difference gradient checks of anything built on the tape: ops, layers, whole models.
//
// The output y = f(tape) (any shape) is reduced to the scalar L = Σ r_i y_i with a fixed
// random direction r, evaluated in double from y's float values; the analytic gradient of L
// (backward with seed r) is compared with the double-sided difference
// (L(θ + ε) - L(θ - ε)) / (θ⁺ - θ⁻) of every checked element θ, where θ± are the perturbed
// floats actually stored. An element passes when |analytic - numeric| <= atol + rtol ·
// max(|analytic|, |numeric|). The tape is reseeded before every evaluation, so dropout draws
// the same mask each time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::ad {

struct GradCheckOptions {
  double eps = 1e-2;
  double rtol = 2e-2;
  double atol = 1e-3;
  uint64_t seed = 1;           // direction r and the tape's Rng
  int64_t max_per_tensor = 0;  // > 0: check at most this many evenly spaced elements
};

struct GradCheckResult {
  bool ok = true;
  int64_t checked = 0;
  double worst = 0.0;  // largest |a - n| / (atol + rtol · max(|a|, |n|)); ok iff <= 1
  std::string where;   // the worst element: "name[i]: analytic A, numeric N"
};

// Checks the gradients of f's output with respect to the parameters (their values are
// perturbed in place and restored; their grads are overwritten). f enters them with
// t.param(p).
GradCheckResult check_gradients(const std::function<Var(Tape&)>& f,
                                const std::vector<Parameter*>& params,
                                const GradCheckOptions& opt = {});

// The same for plain input tensors: f receives them as leaf Vars, in order.
GradCheckResult check_gradients(const std::function<Var(Tape&, const std::vector<Var>&)>& f,
                                const std::vector<Tensor>& inputs,
                                const GradCheckOptions& opt = {});

}  // namespace attnkit::ad
