#include "attnkit/memory/ntm/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/train/load.h"

namespace attnkit::memory {

void NtmTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  if (!(clip_value >= 0)) throw UsageError("clip-value must be >= 0");
  if (!(clip_norm >= 0)) throw UsageError("clip must be >= 0");
  if (!(write_penalty >= 0)) throw UsageError("write-penalty must be >= 0");
  if (optimizer != "rmsprop" && optimizer != "adam")
    throw UsageError("optimizer: unknown optimiser '" + optimizer + "' (rmsprop, adam)");
}

std::unique_ptr<nn::Optimizer> make_ntm_optimizer(const Ntm& ntm, const NtmTrainOptions& o) {
  o.validate();
  if (o.optimizer == "adam")
    return std::make_unique<nn::Adam>(ntm.trainable(), o.lr, 0.9, 0.999, o.eps);
  return std::make_unique<nn::RMSProp>(ntm.trainable(), o.lr, o.decay, o.momentum, o.eps);
}

namespace {
NtmConfig sized(NtmConfig c, const NtmSource& src) {
  c.input = src.input_width();
  c.output = src.output_width();
  c.validate();
  return c;
}
}  // namespace

NtmTraining::NtmTraining(NtmConfig config, NtmTrainOptions options, NtmSource source, int64_t steps,
                         uint64_t seed, std::string config_yaml)
    : DrawnModule(steps, seed, std::move(config_yaml), "episodes", seed ^ 0x5eed5eedULL),
      cfg_(sized(std::move(config), source)),
      o_(std::move(options)),
      src_(std::move(source)) {
  o_.validate();
  if (!src_.fresh && src_.count() < 1) throw DataError("the data set holds no episode");
  if (!src_.fresh) epochs_ = train::EpochBatches(src_.count(), o_.batch, seed);
  Rng init(seed);
  ntm_ = std::make_unique<Ntm>(ps_, cfg_, init);
  opt_ = make_ntm_optimizer(*ntm_, o_);
}

int64_t NtmTraining::batches_per_epoch() const {
  return src_.fresh ? DrawnModule::batches_per_epoch() : epochs_.per_epoch();
}

void NtmTraining::describe(nn::ModelFile& f) const {
  DrawnModule::describe(f);
  f.set_arch("input", cfg_.input);
  f.set_arch("output", cfg_.output);
  if (src_.symbols) f.texts["vocab"] = src_.pairs.vocab.format();
}

void NtmTraining::check_resume(const nn::ModelFile& ck) const {
  if (ck.arch("input", 1, 1 << 20, "ntm/input") != cfg_.input ||
      ck.arch("output", 1, 1 << 20, "ntm/output") != cfg_.output)
    throw DataError("the checkpoint's input/output sizes do not fit this task or data", ck.file);
  const auto v = ck.texts.find("vocab");
  const std::string mine = src_.symbols ? src_.pairs.vocab.format() : "";
  if ((v == ck.texts.end() ? std::string() : v->second) != mine)
    throw DataError("the checkpoint was trained on other symbols (another vocabulary)", ck.file);
}

int64_t NtmTraining::begin_batch(const nn::TrainState& s) {
  batch_.clear();
  if (src_.fresh) {
    for (int64_t b = 0; b < o_.batch; ++b) batch_.push_back(data::make_episode(src_.task, draws()));
  } else {
    for (int64_t k : epochs_.batch(s))
      batch_.push_back(src_.symbols ? src_.pairs.episode(k) : src_.data.episode(k));
  }
  return static_cast<int64_t>(batch_.size());
}

train::Slice NtmTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  train::Slice out;
  ad::Var total;
  double wrong = 0, change = 0;
  for (int64_t i = begin; i < end; ++i) {
    const data::Episode& e = batch_[static_cast<size_t>(i)];
    EpisodeResult r = src_.symbols ? run_symbol_episode(*ntm_, t, e, o_.write_penalty)
                                   : run_episode(*ntm_, t, e, o_.write_penalty);
    total = total.valid() ? ad::add(total, r.objective) : r.objective;
    wrong += static_cast<double>(r.wrong_bits);
    if (o_.write_penalty > 0) change += r.write_change.value()[0];
  }
  const int64_t n = end - begin;
  out.loss = n == 1 ? total : ad::mul(total, 1.0f / static_cast<float>(n));
  out.weight = static_cast<double>(n);
  out.sums = {wrong, change};
  return out;
}

double NtmTraining::clip_gradients(double clip) {
  const double norm = nn::clip_grad_norm(ntm_->trainable(), clip > 0 ? clip : 1e300);
  if (o_.clip_value > 0) nn::clip_grad_value(ntm_->trainable(), o_.clip_value);
  return norm;
}

train::StepEnd NtmTraining::end_step(const nn::TrainState&, double, const train::Metrics& sums) {
  train::StepEnd e;
  const double n = static_cast<double>(batch_.size());
  e.metrics = {{src_.symbols ? "symbols_per_seq" : "bits_per_seq", sums[0].second / n}};
  if (o_.write_penalty > 0) e.metrics.emplace_back("write_change", sums[1].second / n);
  return e;
}

std::vector<std::string> NtmTraining::step_metrics() const {
  const std::string wrong = src_.symbols ? "symbols_per_seq" : "bits_per_seq";
  if (o_.write_penalty > 0) return {wrong, "write_change"};
  return {wrong};
}

LoadedNtm load_ntm(const std::string& path) {
  LoadedNtm m;
  m.file = nn::load_model_file(path, "ntm");
  m.input = m.file.arch("input", 1, 1 << 20, "ntm/input");
  m.output = m.file.arch("output", 1, 1 << 20, "ntm/output");
  m.config = ntm_config_from_yaml(m.file.config_yaml, path, m.input, m.output);
  if (m.file.texts.count("vocab")) {
    m.symbols = true;
    m.vocab = data::Vocab::parse(m.file.texts.at("vocab"), path + " (vocabulary)");
    if (m.vocab.size() != m.input || m.vocab.size() != m.output)
      throw DataError("the vocabulary has " + std::to_string(m.vocab.size()) +
                          " tokens, the model " + std::to_string(m.input) + " inputs and " +
                          std::to_string(m.output) + " outputs",
                      path);
  }
  train::in_file(path, [&] { m.model = train::build<Ntm>(m.file, m.params, m.config); });
  return m;
}

NtmSource read_ntm_source(const std::string& path) {
  NtmSource src;
  src.fresh = false;
  const std::string bytes = io::read_all(path);  // once: the path may be a pipe
  if (io::detect_format(std::string_view(bytes).substr(0, 8)) == io::Format::Npz) {
    src.data = parse_ntm_dataset(bytes, path);
  } else {
    src.symbols = true;
    src.pairs = parse_ntm_pairs(bytes, path);
  }
  return src;
}

std::vector<int32_t> ntm_answer(const Ntm& ntm, ad::Tape& tape, const data::Episode& e) {
  ad::Var y = ntm.forward(tape, e.input);
  std::vector<int32_t> a = symbol_answer(y.value(), e);
  tape.clear();
  return a;
}

std::map<int64_t, data::Accuracy> evaluate_ntm_pairs(const Ntm& ntm, ad::Tape& tape,
                                                     const NtmPairs& pairs, int64_t bucket,
                                                     const std::function<void(int64_t)>& done) {
  if (pairs.width() != ntm.config().input || pairs.width() != ntm.config().output)
    throw DataError("the pairs' vocabulary has " + std::to_string(pairs.width()) +
                        " tokens, the model " + std::to_string(ntm.config().input),
                    pairs.file);
  std::vector<data::TransduceScore> scores;
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < pairs.count(); ++i) {
    scores.push_back(data::score_transduction(pairs.targets[static_cast<size_t>(i)],
                                              ntm_answer(ntm, tape, pairs.episode(i))));
    lengths.push_back(static_cast<int64_t>(pairs.targets[static_cast<size_t>(i)].size()));
    if (done) done(i + 1);
  }
  return data::accuracy_by_length(lengths, scores, bucket);
}

bool is_ntm_dataset(const std::string& path) {
  if (path.empty() || path == "-" || !io::split_member(path).second.empty()) return false;
  if (io::detect_format(io::read_all(path).substr(0, 8)) != io::Format::Npz) return false;
  const std::map<std::string, Tensor> a = io::read_npz(path);
  return a.count("inputs") && a.count("steps");
}

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> v;
  std::stringstream ss(text);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end || x < 1 || x > 100000)
      throw UsageError("--lengths: '" + tok + "' is not a whole number in [1, 100000]");
    v.push_back(x);
  }
  if (v.empty()) throw UsageError("--lengths: no lengths given");
  return v;
}

void LengthReport::add(const Ntm& ntm, ad::Tape& tape, const data::Episode& e) {
  ad::Var y = ntm.forward(tape, e.input);
  const Tensor mask = output_mask(e);
  const int64_t w = wrong_bits(y.value(), e.target, &mask);
  int64_t bits = 0;
  for (int64_t i = 0; i < mask.size(); ++i) bits += mask[i] != 0.0f;
  tape.clear();
  for (LengthScore* s : {&by_length[e.len], &all}) {
    s->sequences += 1;
    s->wrong += w;
    s->bits += bits;
  }
  by_length[e.len].length = e.len;
}

std::string LengthReport::tsv() const {
  std::string text = "length\tsequences\tbits_per_seq\twrong_fraction\n";
  char buf[160];
  for (const auto& [len, s] : by_length) {
    std::snprintf(buf, sizeof buf, "%lld\t%lld\t%.6g\t%.6g\n", static_cast<long long>(len),
                  static_cast<long long>(s.sequences), s.bits_per_sequence(), s.wrong_fraction());
    text += buf;
  }
  std::snprintf(buf, sizeof buf, "all\t%lld\t%.6g\t%.6g\n", static_cast<long long>(all.sequences),
                all.bits_per_sequence(), all.wrong_fraction());
  return text + buf;
}

Tensor output_probabilities(const Tensor& y) {
  Tensor p(y.shape());
  for (int64_t i = 0; i < y.size(); ++i)
    p[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(y[i]))));
  return p;
}

Tensor symbol_probabilities(const Tensor& y) {
  Tensor p(y.shape());
  const int64_t rows = y.dim(0), v = y.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    double top = y.at(r, 0), sum = 0;
    for (int64_t j = 1; j < v; ++j) top = std::max<double>(top, y.at(r, j));
    for (int64_t j = 0; j < v; ++j) sum += std::exp(static_cast<double>(y.at(r, j)) - top);
    for (int64_t j = 0; j < v; ++j)
      p.at(r, j) = static_cast<float>(std::exp(static_cast<double>(y.at(r, j)) - top) / sum);
  }
  return p;
}

namespace {

// Stacks T tensors of one shape into [T, ...].
Tensor stack(const std::vector<Tensor>& xs) {
  if (xs.empty()) throw UsageError("trace: no steps recorded");
  Shape s{static_cast<int64_t>(xs.size())};
  for (int64_t d : xs[0].shape()) s.push_back(d);
  Tensor out(s);
  const int64_t n = xs[0].size();
  for (size_t i = 0; i < xs.size(); ++i)
    std::copy(xs[i].values().begin(), xs[i].values().end(),
              out.data() + static_cast<int64_t>(i) * n);
  return out;
}

// Rows h of a [T, H, X] stack → [T, X].
Tensor head(const Tensor& t, int64_t h) {
  const int64_t T = t.dim(0), X = t.dim(2);
  Tensor out({T, X});
  for (int64_t s = 0; s < T; ++s)
    for (int64_t x = 0; x < X; ++x) out.at(s, x) = t.at(s, h, x);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> trace_arrays(const NtmTrace& trace,
                                                         const NtmConfig& cfg, Tensor inputs,
                                                         Tensor outputs) {
  std::vector<std::pair<std::string, Tensor>> arrays;
  const Tensor rw = stack(trace.read_w), rr = stack(trace.reads);
  for (int h = 0; h < cfg.read_heads; ++h) {
    arrays.emplace_back("read" + std::to_string(h), head(rw, h));
    arrays.emplace_back("reads" + std::to_string(h), head(rr, h));
  }
  if (cfg.write_heads > 0) {
    const Tensor ww = stack(trace.write_w), er = stack(trace.erase), ad = stack(trace.add);
    for (int h = 0; h < cfg.write_heads; ++h) {
      arrays.emplace_back("write" + std::to_string(h), head(ww, h));
      arrays.emplace_back("erase" + std::to_string(h), head(er, h));
      arrays.emplace_back("add" + std::to_string(h), head(ad, h));
    }
  }
  arrays.emplace_back("memory", stack(trace.memory));
  arrays.emplace_back("inputs", std::move(inputs));
  arrays.emplace_back("outputs", std::move(outputs));
  return arrays;
}

}  // namespace attnkit::memory
