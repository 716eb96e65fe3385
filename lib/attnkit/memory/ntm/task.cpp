#include "attnkit/memory/ntm/task.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "attnkit/core/error.h"
#include "attnkit/data/corpus.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"

namespace attnkit::memory {

NtmDataset read_ntm_dataset(const std::string& path) {
  const std::string bytes = io::read_all(path);
  if (io::detect_format(bytes) != io::Format::Npz) throw DataError("not an .npz archive", path);
  return parse_ntm_dataset(bytes, path);
}

NtmDataset parse_ntm_dataset(std::string_view bytes, const std::string& path) {
  std::map<std::string, Tensor> a;
  for (auto& m : io::parse_npz(bytes, path)) a.emplace(m.name, std::move(m.tensor));
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

namespace {

std::vector<std::string> symbols_of(const std::string& side) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < side.size()) {
    const size_t b = side.find_first_not_of(' ', at);
    if (b == std::string::npos) break;
    size_t e = side.find(' ', b);
    if (e == std::string::npos) e = side.size();
    out.push_back(side.substr(b, e - b));
    at = e;
  }
  return out;
}

}  // namespace

NtmPairs parse_ntm_pairs(std::string_view text, const std::string& path,
                         const data::Vocab* model_vocab) {
  const data::ParallelCorpus c = data::parse_tsv(text, path);
  if (c.pairs.empty()) throw DataError("no SOURCE<TAB>TARGET pairs", path);
  NtmPairs p;
  p.file = path;
  std::vector<std::vector<std::string>> src, tgt;
  data::TokenCounts counts;
  for (const data::SentencePair& sp : c.pairs) {
    src.push_back(symbols_of(sp.source));
    tgt.push_back(symbols_of(sp.target));
    for (const auto* side : {&src.back(), &tgt.back()})
      for (const std::string& w : *side)
        for (const char* r : data::Vocab::kReservedTokens)
          if (w == r)
            throw DataError("'" + w + "' is a reserved token, not a symbol", path, sp.line);
    if (!model_vocab) {
      data::count_tokens(counts, src.back());
      data::count_tokens(counts, tgt.back());
    }
  }
  p.vocab = model_vocab ? *model_vocab : data::Vocab::build(counts, 1);
  for (size_t i = 0; i < src.size(); ++i) {
    std::vector<int32_t> s_ids, t_ids;
    for (auto [words, ids] : {std::make_pair(&src[i], &s_ids), std::make_pair(&tgt[i], &t_ids)})
      for (const std::string& w : *words) {
        if (!p.vocab.contains(w))
          throw DataError("symbol '" + w + "' is not in the model's vocabulary (its " +
                              std::to_string(p.vocab.size() - data::Vocab::kReserved) + " symbols)",
                          path, c.pairs[i].line);
        ids->push_back(p.vocab.id(w));
      }
    p.sources.push_back(std::move(s_ids));
    p.targets.push_back(std::move(t_ids));
  }
  return p;
}

NtmPairs read_ntm_pairs(const std::string& path) {
  return parse_ntm_pairs(io::read_text(path), path);
}

NtmPairs read_ntm_pairs(const std::string& path, const data::Vocab& vocab) {
  return parse_ntm_pairs(io::read_text(path), path, &vocab);
}

data::Episode NtmPairs::episode(int64_t i) const {
  return symbol_episode(sources[static_cast<size_t>(i)], targets[static_cast<size_t>(i)], width());
}

data::Episode symbol_episode(const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                             int64_t width) {
  const int64_t S = static_cast<int64_t>(source.size()), T = static_cast<int64_t>(target.size());
  for (const auto* side : {&source, &target})
    for (int32_t id : *side)
      if (id < data::Vocab::kReserved || id >= width)
        throw DataError("symbol id " + std::to_string(id) + " is outside [" +
                        std::to_string(data::Vocab::kReserved) + ", " + std::to_string(width) +
                        ")");
  data::Episode e;
  const int64_t steps = S + 1 + T + 1;
  e.input = Tensor({steps, width}, 0.0f);
  e.target = Tensor({steps, width}, 0.0f);
  e.mask = Tensor({steps}, 0.0f);
  for (int64_t i = 0; i < S; ++i) e.input.at(i, source[static_cast<size_t>(i)]) = 1.0f;
  e.input.at(S, data::Vocab::kBos) = 1.0f;
  for (int64_t j = 0; j <= T; ++j) {
    const int32_t y = j < T ? target[static_cast<size_t>(j)] : data::Vocab::kEos;
    e.target.at(S + 1 + j, y) = 1.0f;
    e.mask[S + 1 + j] = 1.0f;
  }
  e.len = T;
  return e;
}

namespace {
// Per step: the scored steps' target ids, -1 elsewhere.
std::vector<int32_t> step_targets(const data::Episode& e) {
  const int64_t steps = e.target.dim(0), w = e.target.dim(1);
  std::vector<int32_t> y(static_cast<size_t>(steps), -1);
  for (int64_t s = 0; s < steps; ++s) {
    if (e.mask[s] == 0.0f) continue;
    for (int64_t v = 0; v < w; ++v)
      if (e.target.at(s, v) > 0.5f) y[static_cast<size_t>(s)] = static_cast<int32_t>(v);
  }
  return y;
}

int32_t likeliest(const Tensor& logits, int64_t s) {
  int32_t best = data::Vocab::kEos;
  for (int32_t v = 0; v < logits.dim(1); ++v)
    if (v != data::Vocab::kPad && v != data::Vocab::kBos && v != data::Vocab::kUnk &&
        logits.at(s, v) > logits.at(s, best))
      best = v;
  return best;
}
}  // namespace

std::vector<int32_t> symbol_answer(const Tensor& logits, const data::Episode& e) {
  std::vector<int32_t> out;
  for (int64_t s = 0; s < e.mask.size(); ++s) {
    if (e.mask[s] == 0.0f) continue;
    const int32_t y = likeliest(logits, s);
    if (y == data::Vocab::kEos) break;
    out.push_back(y);
  }
  return out;
}

std::vector<int32_t> symbol_target(const data::Episode& e) {
  std::vector<int32_t> out;
  for (int32_t y : step_targets(e)) {
    if (y < 0) continue;
    if (y == data::Vocab::kEos) break;
    out.push_back(y);
  }
  return out;
}

EpisodeResult run_symbol_episode(const Ntm& ntm, ad::Tape& t, const data::Episode& e,
                                 double write_penalty) {
  EpisodeResult r;
  ad::Var y = ntm.forward(t, e.input, nullptr, write_penalty > 0 ? &r.write_change : nullptr);
  const std::vector<int32_t> targets = step_targets(e);
  for (size_t s = 0; s < targets.size(); ++s) {
    if (targets[s] < 0) continue;
    ++r.scored_bits;
    r.wrong_bits += likeliest(y.value(), static_cast<int64_t>(s)) != targets[s];
  }
  r.loss = ad::mul(nn::cross_entropy(y, targets), static_cast<float>(r.scored_bits));
  r.objective = write_penalty > 0
                    ? ad::add(r.loss, ad::mul(r.write_change, static_cast<float>(write_penalty)))
                    : r.loss;
  return r;
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
  io::read_fields(c, cfg);
  io::check_stored([&] { cfg.validate(); }, file);
  return cfg;
}

std::string ntm_task_from_yaml(const std::string& yaml, const std::string& file,
                               data::SeqTaskOptions* opt) {
  io::StoredConfig c(yaml, file);
  NtmTaskConfig t;
  io::read_fields(c, t);
  if (t.task.empty()) return t.task;
  io::check_stored([&] { *opt = t.options(); }, file);
  return t.task;
}

data::SeqTaskOptions NtmTaskConfig::options() const {
  data::SeqTaskOptions o = data::SeqTaskOptions::defaults(data::parse_seq_task(task));
  if (width) o.width = width;  // 0 stands for the task's default
  if (min_len) o.min_len = min_len;
  if (max_len) o.max_len = max_len;
  o.min_repeats = min_repeats, o.max_repeats = max_repeats, o.item_len = item_len;
  return o;
}

}  // namespace attnkit::memory
