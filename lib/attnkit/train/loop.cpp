#include "attnkit/train/loop.h"

#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/core/fault.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"

namespace attnkit::train {

namespace {
std::string describe(double v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"); }
}  // namespace

Loop::Loop(LoopOptions options, nn::ParamStore& params, nn::Optimizer& optimizer)
    : opt_(std::move(options)), params_(params), optimizer_(optimizer) {
  if (opt_.kind.empty()) throw Error("Loop needs a model kind");
  if (opt_.model_path.empty()) throw UsageError("no model file to write (give -o FILE)");
  if (opt_.steps < 0) throw UsageError("the number of steps must be 0 or more");
  if (opt_.checkpoint_every < 0) throw UsageError("--checkpoint-every must be 0 or more");
  checkpoint_path_ =
      opt_.checkpoint_path.empty() ? opt_.model_path + ".ckpt" : opt_.checkpoint_path;
  if (checkpoint_path_ == opt_.model_path)
    throw UsageError("the checkpoint and the model must be different files ('" + checkpoint_path_ +
                     "')");
  base_.kind = opt_.kind;
}

void Loop::add_rng(const std::string& name, Rng& rng) {
  for (const auto& r : rngs_)
    if (r.first == name) throw Error("two generators named '" + name + "'");
  rngs_.emplace_back(name, &rng);
}

bool Loop::resume() {
  if (!opt_.resume) return false;
  resume_from(nn::load_model_file(checkpoint_path_, opt_.kind));
  return true;
}

void Loop::resume_from(const nn::ModelFile& c) {
  // Everything is read and checked before anything changes.
  nn::TrainState s;
  s.step = c.integer("train/step");
  s.epoch = c.integer("train/epoch");
  s.position = c.integer("train/position");
  std::vector<Rng> rngs;
  for (const auto& [name, rng] : rngs_) {
    rngs.emplace_back();
    try {
      rngs.back().set_state(c.text("rng/" + name));
    } catch (Error& e) {
      e.locate(c.file);
      throw;
    }
  }
  // Parameters and optimiser state: each checks fully before changing (ParamStore values
  // are copied back if the optimiser state then fails).
  std::vector<Tensor> saved;
  for (const ad::Parameter* p : params_.params()) saved.push_back(p->value.clone());
  nn::get_params(c, params_);
  try {
    nn::get_optimizer(c, optimizer_);
  } catch (...) {
    size_t i = 0;
    for (ad::Parameter* p : params_.params()) p->value = std::move(saved[i++]);
    throw;
  }
  for (size_t i = 0; i < rngs_.size(); ++i) *rngs_[i].second = rngs[i];
  if (on_load_) on_load_(c);
  state_ = s;
  last_good_ = s.step;
}

void Loop::check_finite(const char* what, double v) const {
  if (std::isfinite(v)) return;
  throw DataError(std::string(what) + " became " + describe(v) + " at step " +
                  std::to_string(state_.step) + "; " + last_good_text());
}

std::string Loop::last_good_text() const {
  if (last_good_ >= 0)
    return "the last good checkpoint is " + checkpoint_path_ + " (step " +
           std::to_string(last_good_) + ")";
  if (opt_.checkpoint_every > 0) return "no checkpoint was written yet";
  return "no checkpoint was written (checkpoints are off)";
}

void Loop::check_params() const {
  for (const ad::Parameter* p : params_.params())
    for (float v : p->value.values())
      if (!std::isfinite(v))
        throw DataError("parameter '" + p->name + "' became " + describe(v) + " at step " +
                        std::to_string(state_.step) + "; " + last_good_text());
}

nn::ModelFile Loop::final_model() const {
  check_params();
  nn::ModelFile m;
  m.kind = base_.kind;
  m.config_yaml = base_.config_yaml;
  m.strings = base_.strings;
  m.numbers = base_.numbers;
  m.texts = base_.texts;
  for (const auto& [k, t] : base_.tensors) m.tensors[k] = t.clone();
  nn::put_params(m, params_);
  m.numbers["train/step"] = static_cast<double>(state_.step);
  m.numbers["train/epoch"] = static_cast<double>(state_.epoch);
  return m;
}

nn::ModelFile Loop::checkpoint() const {
  nn::ModelFile m = final_model();
  m.numbers["train/position"] = static_cast<double>(state_.position);
  nn::put_optimizer(m, optimizer_);
  for (const auto& [name, rng] : rngs_) m.texts["rng/" + name] = rng->state();
  if (on_save_) on_save_(m);
  return m;
}

void Loop::save_checkpoint() {
  if (opt_.writer) nn::save_model_file(checkpoint_path_, checkpoint());
  last_good_ = state_.step;
}

void Loop::save_model() const {
  if (opt_.writer) nn::save_model_file(opt_.model_path, final_model());
}

void Loop::stop_interrupted() {
  if (last_good_ != state_.step) save_checkpoint();
  throw Interrupted("interrupted at step " + std::to_string(state_.step) + "; " + checkpoint_path_ +
                    " holds it: resume with --resume");
}

void Loop::run(const std::function<LoopStep(nn::TrainState&)>& step,
               const std::function<void(const nn::TrainState&, const LoopStep&)>& report) {
  while (state_.step < opt_.steps) {
    nn::TrainState next = state_;
    LoopStep r = step(next);
    if (r.dropped) stop_interrupted();
    next.step = state_.step + 1;  // the step count is the Loop's
    state_ = next;
    check_finite("loss", r.loss);
    check_finite("gradient norm", r.grad_norm);
    if (report) report(state_, r);
    fault_point("step");  // tests' kill point: the log is a row ahead of the checkpoint
    if (r.interrupted) stop_interrupted();
    if (r.stop) break;
    if (opt_.checkpoint_every > 0 && state_.step % opt_.checkpoint_every == 0 &&
        state_.step < opt_.steps)
      save_checkpoint();
  }
  if (opt_.checkpoint_every > 0 && last_good_ != state_.step) save_checkpoint();
  if (opt_.save_model) save_model();
}

}  // namespace attnkit::train
