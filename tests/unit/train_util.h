// A helper for unit tests that train a module through the training layer's step, as
// train::run makes the steps, without its files, log or evaluation.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/nn/trainer.h"
#include "attnkit/train/module.h"

namespace attnkit::test {

struct StepResult {
  train::StepOut out;  // the loss, gradient norm and slice sums of the step
  train::StepEnd end;  // the module's end_step: its step metrics
};

// Runs `steps` steps of m from state s (advanced past them), the draws of each from `seed`
// and the step number, gradients clipped at `clip` (0: off); returns what every step gave.
inline std::vector<StepResult> train_steps(train::Module& m, int64_t steps, nn::TrainState& s,
                                           train::Tapes& tapes, uint64_t seed = 1,
                                           double clip = 5.0) {
  std::vector<StepResult> r;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t rows = m.begin_batch(s);
    StepResult x;
    x.out = train::step(m, tapes, rows, seed, s.step, clip);
    x.end = m.end_step(s, x.out.loss, x.out.sums);
    r.push_back(std::move(x));
    ++s.step;
    s.advance(m.batches_per_epoch());
  }
  return r;
}

}  // namespace attnkit::test
