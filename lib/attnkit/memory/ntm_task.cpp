#include "attnkit/memory/ntm_task.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "attnkit/core/error.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"

namespace attnkit::memory {

NtmDataset read_ntm_dataset(const std::string& path) {
  std::map<std::string, Tensor> a = io::read_npz(path);
  NtmDataset d;
  auto take = [&](const char* name, int rank) {
    auto it = a.find(name);
    if (it == a.end())
      throw DataError(
          std::string("no array '") + name +
              "' (expected a data set from seqtask-gen: inputs, targets, mask, steps, lengths)",
          path);
    if (it->second.rank() != rank)
      throw DataError(std::string("array '") + name + "' is " + shape_str(it->second.shape()) +
                          ", expected rank " + std::to_string(rank),
                      path);
    return std::move(it->second);
  };
  d.inputs = take("inputs", 3);
  d.targets = take("targets", 3);
  d.mask = take("mask", 2);
  d.steps = take("steps", 1);
  d.lengths = take("lengths", 1);
  const int64_t c = d.inputs.dim(0), t = d.inputs.dim(1);
  if (c < 1 || t < 1) throw DataError("the data set holds no episodes", path);
  if (d.targets.dim(0) != c || d.targets.dim(1) != t || d.mask.shape() != Shape{c, t} ||
      d.steps.size() != c || d.lengths.size() != c)
    throw DataError("arrays do not fit together: inputs " + shape_str(d.inputs.shape()) +
                        ", targets " + shape_str(d.targets.shape()) + ", mask " +
                        shape_str(d.mask.shape()) + ", steps " + shape_str(d.steps.shape()),
                    path);
  for (int64_t i = 0; i < c; ++i)
    if (!(d.steps[i] >= 1 && d.steps[i] <= static_cast<float>(t)) ||
        d.steps[i] != std::floor(d.steps[i]))
      throw DataError("episode " + std::to_string(i + 1) + ": steps " +
                          io::format_number(d.steps[i]) + " is not a whole number in [1, " +
                          std::to_string(t) + "]",
                      path);
  for (const Tensor* x : {&d.inputs, &d.targets, &d.mask})
    for (int64_t i = 0; i < x->size(); ++i)
      if (!std::isfinite((*x)[i])) throw DataError("a value is not finite", path);
  return d;
}

data::Episode NtmDataset::episode(int64_t i) const {
  data::Episode e;
  const int64_t t = static_cast<int64_t>(steps[i]), tm = inputs.dim(1);
  const int64_t in = input_width(), out = output_width();
  e.input = Tensor({t, in});
  e.target = Tensor({t, out});
  e.mask = Tensor({t});
  std::copy(inputs.data() + i * tm * in, inputs.data() + i * tm * in + t * in, e.input.data());
  std::copy(targets.data() + i * tm * out, targets.data() + i * tm * out + t * out,
            e.target.data());
  std::copy(mask.data() + i * tm, mask.data() + i * tm + t, e.mask.data());
  e.len = static_cast<int64_t>(lengths[i]);
  return e;
}

Tensor output_mask(const data::Episode& e) {
  Tensor m(e.target.shape());
  const int64_t w = e.target.dim(1);
  for (int64_t i = 0; i < m.size(); ++i) m[i] = e.mask[i / w];
  return m;
}

EpisodeResult run_episode(const Ntm& ntm, ad::Tape& t, const data::Episode& e,
                          double write_penalty) {
  EpisodeResult r;
  ad::Var y = ntm.forward(t, e.input, nullptr, write_penalty > 0 ? &r.write_change : nullptr);
  const Tensor mask = output_mask(e);
  r.wrong_bits = wrong_bits(y.value(), e.target, &mask);
  for (int64_t i = 0; i < mask.size(); ++i) r.scored_bits += mask[i] != 0.0f;
  // The mean over scored bits times their number: the sum, the cost of the whole sequence.
  r.loss = ad::mul(nn::bce_with_logits(y, e.target, &mask), static_cast<float>(r.scored_bits));
  r.objective = write_penalty > 0
                    ? ad::add(r.loss, ad::mul(r.write_change, static_cast<float>(write_penalty)))
                    : r.loss;
  return r;
}

NtmConfig ntm_config_from_yaml(const std::string& yaml, const std::string& file, int64_t input,
                               int64_t output) {
  io::StoredConfig c(yaml, file);
  NtmConfig cfg;
  cfg.input = input;
  cfg.output = output;
  cfg.controller = c.get<std::string>("controller");
  cfg.controller_size = c.get<int64_t>("controller-size");
  cfg.controller_layers = c.get<int>("controller-layers");
  cfg.read_heads = c.get<int>("read-heads");
  cfg.write_heads = c.get<int>("write-heads");
  cfg.memory_rows = c.get<int64_t>("memory-rows");
  cfg.memory_cols = c.get<int64_t>("memory-cols");
  cfg.shift_range = c.get<int>("shift-range");
  cfg.memory_init = c.get<std::string>("memory-init");
  cfg.weight_init = c.get<std::string>("weight-init");
  cfg.add_activation = c.get<std::string>("add-activation");
  io::check_stored([&] { cfg.validate(); }, file);
  return cfg;
}

std::string ntm_task_from_yaml(const std::string& yaml, const std::string& file,
                               data::SeqTaskOptions* opt) {
  io::StoredConfig c(yaml, file);
  const std::string task = c.get<std::string>("task", "");
  if (task.empty()) return task;
  io::check_stored([&] { *opt = data::SeqTaskOptions::defaults(data::parse_seq_task(task)); },
                   file);
  // 0 stands for the task's default (ntm-train's keys).
  auto nonzero = [&](const char* key, int64_t fallback) {
    const int64_t v = c.get<int64_t>(key, 0);
    return v ? v : fallback;
  };
  opt->width = nonzero("width", opt->width);
  opt->min_len = nonzero("min-len", opt->min_len);
  opt->max_len = nonzero("max-len", opt->max_len);
  opt->min_repeats = c.get<int64_t>("min-repeats", opt->min_repeats);
  opt->max_repeats = c.get<int64_t>("max-repeats", opt->max_repeats);
  opt->item_len = c.get<int64_t>("item-len", opt->item_len);
  return task;
}

}  // namespace attnkit::memory
