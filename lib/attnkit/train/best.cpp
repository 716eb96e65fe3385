#include "attnkit/train/best.h"

#include "attnkit/core/error.h"

namespace attnkit::train {

bool BestParams::offer(double score, const nn::ParamStore& ps, const Also& also) {
  if (!params_.empty() && !beats(score, score_)) return false;
  score_ = score;
  also_ = also;
  params_.clear();
  for (const ad::Parameter* p : ps.params()) params_[p->name] = p->value.clone();
  return true;
}

double BestParams::better(double last) const {
  return params_.empty() || beats(last, score_) ? last : score_;
}

void BestParams::finish(nn::ModelFile& f, double last, const Also& last_also) const {
  const bool best = !params_.empty() && !beats(last, score_);  // else the last is the best
  // The parameters as the trainer wrote them (nn::put_params: "param/<name>"), replaced.
  if (best)
    for (const auto& [name, t] : params_) f.tensors["param/" + name] = t.clone();
  f.numbers["result/" + key_] = best ? score_ : last;
  f.numbers["result/last_" + key_] = last;
  for (const auto& [name, v] : best ? also_ : last_also) f.numbers["result/" + name] = v;
}

bool BestParams::restore(nn::ParamStore& ps) const {
  if (params_.empty()) return false;
  for (ad::Parameter* p : ps.params()) {
    const auto it = params_.find(p->name);
    if (it == params_.end() || it->second.shape() != p->value.shape())
      throw DataError("BestParams::restore: no kept " + p->name + " of shape " +
                      shape_str(p->value.shape()));
    p->value = it->second.clone();
  }
  return true;
}

void BestParams::save_state(nn::ModelFile& f) const {
  if (params_.empty()) return;
  for (const auto& [name, t] : params_) f.tensors["best/" + name] = t.clone();
  f.numbers["best/" + key_] = score_;
  for (const auto& [name, v] : also_) f.numbers["best/" + name] = v;
}

void BestParams::load_state(const nn::ModelFile& f, const nn::ParamStore& ps) {
  params_.clear(), also_.clear();
  if (!f.numbers.count("best/" + key_)) return;  // no candidate before the checkpoint
  score_ = f.number("best/" + key_);
  // The other figures: best/<name> numbers that are not a parameter's (those are tensors).
  for (const auto& [name, v] : f.numbers)
    if (name.rfind("best/", 0) == 0 && name != "best/" + key_) also_[name.substr(5)] = v;
  for (const ad::Parameter* p : ps.params()) {
    const Tensor& t = f.tensor("best/" + p->name);
    if (t.shape() != p->value.shape())
      throw DataError("checkpoint: best/" + p->name + " has shape " + shape_str(t.shape()) +
                          ", the model needs " + shape_str(p->value.shape()),
                      f.file);
    params_[p->name] = t.clone();
  }
}

}  // namespace attnkit::train
