// The parameters at a training's best evaluation (RAM's lowest validation error, SNAIL's
// highest evaluation return), for a module whose model file holds the best, not the last:
// - offer(score, ps) at each candidate evaluation keeps a copy of the parameters when the
//   score beats the best so far;
// - save_state / load_state keep them in checkpoints (best/<name>, best/<key>), so that a run
//   stopped and resumed ends as one never stopped;
// - finish(f, last) writes them over the model's param/<name> when they are at least as good
//   as the last parameters (a tie: the best), and result/<key> and result/last_<key>.
// Other figures of an evaluation (HAN's validation loss beside its accuracy) may travel with
// the score: offer's `also` is kept with the parameters (best/<name> in checkpoints), and
// finish writes result/<name> from the winner's: the kept one's, or finish's `last_also`.
#pragma once

#include <map>
#include <string>

#include "attnkit/core/tensor.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/params.h"

namespace attnkit::train {

class BestParams {
 public:
  // key: the score's name ("valid_error"); higher_is_better: a return (true) or an error.
  BestParams(std::string key, bool higher_is_better)
      : key_(std::move(key)), higher_(higher_is_better) {}

  using Also = std::map<std::string, double>;
  // True when this offer is kept (the first, or one that beats the kept score).
  bool offer(double score, const nn::ParamStore& ps, const Also& also = {});
  bool empty() const { return params_.empty(); }
  // The better of the kept score and `last` (`last` alone when nothing is kept).
  double better(double last) const;
  void finish(nn::ModelFile& f, double last, const Also& last_also = {}) const;
  // Copies the kept parameters into ps (by name); false, ps untouched, when none is kept.
  // DataError when a kept tensor's shape is not the parameter's.
  bool restore(nn::ParamStore& ps) const;
  void save_state(nn::ModelFile& f) const;
  // DataError naming the file when a kept tensor's shape is not the parameter's.
  void load_state(const nn::ModelFile& f, const nn::ParamStore& ps);

 private:
  bool beats(double a, double b) const { return higher_ ? a > b : a < b; }
  std::string key_;
  bool higher_;
  double score_ = 0.0;
  Also also_;                             // the kept evaluation's other figures
  std::map<std::string, Tensor> params_;  // empty: none kept yet
};

}  // namespace attnkit::train
