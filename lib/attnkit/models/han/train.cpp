#include "attnkit/models/han/train.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <utility>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/trainer.h"

namespace attnkit::models::han {

namespace {
constexpr int64_t kEvalBatch = 64;
constexpr int64_t kPoolBatches = 16;  // batches of documents sorted by length together
}  // namespace

void HanTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  nn::check_schedule_name(schedule);
  if (warmup < 0) throw UsageError("warmup must be >= 0");
}

void split_validation(std::vector<data::TextDoc>& train, std::vector<data::TextDoc>& valid,
                      double fraction, uint64_t seed) {
  if (!(fraction > 0 && fraction < 1))
    throw UsageError("--valid-fraction must be between 0 and 1 (exclusive)");
  const int64_t n = static_cast<int64_t>(train.size());
  const int64_t k = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  if (k < 1 || k >= n)
    throw UsageError("--valid-fraction " + std::to_string(fraction) + " of " + std::to_string(n) +
                     " documents leaves no validation or no training documents");
  // A permutation from the seed alone (mixed, so that it is not the first epoch's order).
  const auto order = nn::epoch_order(seed ^ 0x5a17u, 0, n);
  std::vector<uint8_t> out(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < k; ++i) out[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1;
  std::vector<data::TextDoc> keep;
  for (int64_t i = 0; i < n; ++i)
    (out[static_cast<size_t>(i)] ? valid : keep)
        .push_back(std::move(train[static_cast<size_t>(i)]));
  train = std::move(keep);
}

std::vector<std::string> collect_labels(const std::vector<data::TextDoc>& docs,
                                        const std::string& name) {
  std::set<std::string> s;
  for (const auto& d : docs) {
    if (d.label.empty())
      throw DataError("document without a label", name, static_cast<long>(d.line));
    s.insert(d.label);
  }
  if (s.size() < 2)
    throw DataError("the documents have " + std::to_string(s.size()) +
                        " label(s): a classifier needs at least 2",
                    name);
  return {s.begin(), s.end()};
}

std::vector<Doc> encode_docs(const std::vector<data::TextDoc>& docs, const data::Vocab& v,
                             const std::vector<std::string>& labels, const std::string& name,
                             bool need_label) {
  std::vector<Doc> out;
  out.reserve(docs.size());
  for (const auto& d : docs) {
    int32_t y = -1;
    if (!d.label.empty()) {
      const auto it = std::lower_bound(labels.begin(), labels.end(), d.label);
      if (it == labels.end() || *it != d.label) {
        std::string list;
        for (size_t i = 0; i < labels.size() && i < 10; ++i) list += (i ? ", " : "") + labels[i];
        throw DataError("unknown label '" + d.label + "' (the model's labels: " + list + ")", name,
                        static_cast<long>(d.line));
      }
      y = static_cast<int32_t>(it - labels.begin());
    } else if (need_label) {
      throw DataError("document without a label", name, static_cast<long>(d.line));
    }
    out.push_back(encode_doc(d, v, y));
  }
  return out;
}

HanTraining::HanTraining(HanConfig config, HanTrainOptions o,
                         const std::vector<data::TextDoc>& train,
                         const std::vector<data::TextDoc>& valid, const std::string& train_name,
                         const std::string& valid_name, int64_t steps_or_0, int64_t epochs,
                         uint64_t seed, std::string config_yaml)
    : cfg_(std::move(config)), o_(std::move(o)), seed_(seed), config_yaml_(std::move(config_yaml)) {
  cfg_.validate();
  o_.validate();
  if (train.empty()) throw DataError("no training documents", train_name);
  labels_ = collect_labels(train, train_name);
  data::TokenCounts counts;
  for (const auto& d : train)
    for (const auto& s : d.sentences) data::count_tokens(counts, s);
  vocab_ = data::Vocab::build(counts, cfg_.min_freq);
  train_ = encode_docs(train, vocab_, labels_, train_name, true);
  valid_ = encode_docs(valid, vocab_, labels_, valid_name, true);
  steps_ = steps_or_0 > 0 ? steps_or_0 : epochs * batches_per_epoch();
  if (steps_ < 1) throw UsageError("steps or epochs must be >= 1");
  Rng init(seed);
  model_ = std::make_unique<HanNet>(ps_, cfg_, vocab_.size(), static_cast<int64_t>(labels_.size()),
                                    init);
  if (!o_.embeddings.empty()) embeddings_found_ = model_->load_embeddings(o_.embeddings, vocab_);
  opt_ = std::make_unique<nn::Adam>(ps_.params(), o_.lr, 0.9, 0.999, 1e-8, 0.0,
                                    nn::parse_schedule(o_.schedule, o_.warmup, steps_));
}

int64_t HanTraining::batches_per_epoch() const {
  return (static_cast<int64_t>(train_.size()) + o_.batch - 1) / o_.batch;
}

void HanTraining::describe(nn::ModelFile& f) const {
  f.config_yaml = config_yaml_;
  f.texts["vocab"] = vocab_.format();
  f.strings["labels"] = labels_;
  f.set_arch("vocab", vocab_.size());
  f.set_arch("classes", static_cast<int64_t>(labels_.size()));
}

void HanTraining::check_resume(const nn::ModelFile& f) const {
  if (f.strings.count("labels") && f.string_list("labels") != labels_)
    throw DataError("the checkpoint was trained on other labels", f.file);
  if (f.texts.count("vocab") && f.text("vocab") != vocab_.format())
    throw DataError("the checkpoint was trained with another vocabulary (other training data)",
                    f.file);
}

std::vector<std::vector<int64_t>> length_batches(const std::vector<Doc>& docs, bool by_sentences,
                                                 int64_t batch, uint64_t seed, int64_t epoch) {
  const int64_t n = static_cast<int64_t>(docs.size()), pool = kPoolBatches * batch;
  const auto order = nn::epoch_order(seed, epoch, n);
  auto key = [&](int64_t i) {
    const Doc& d = docs[static_cast<size_t>(i)];
    return by_sentences ? static_cast<int64_t>(d.sentences.size()) : d.words();
  };
  std::vector<std::vector<int64_t>> out;
  for (int64_t p0 = 0; p0 < n; p0 += pool) {
    std::vector<int64_t> p(order.begin() + p0, order.begin() + std::min(n, p0 + pool));
    std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
    for (size_t b0 = 0; b0 < p.size(); b0 += static_cast<size_t>(batch))
      out.emplace_back(p.begin() + static_cast<std::ptrdiff_t>(b0),
                       p.begin() + static_cast<std::ptrdiff_t>(
                                       std::min(p.size(), b0 + static_cast<size_t>(batch))));
  }
  // The batches in an order of their own (mixed seed: not the documents' permutation).
  const auto shuffle = nn::epoch_order(seed ^ 0x6a7b1e5u, epoch, static_cast<int64_t>(out.size()));
  std::vector<std::vector<int64_t>> mixed;
  mixed.reserve(out.size());
  for (int64_t k : shuffle) mixed.push_back(std::move(out[static_cast<size_t>(k)]));
  return mixed;
}

int64_t HanTraining::begin_batch(const nn::TrainState& s) {
  if (order_epoch_ != s.epoch)
    batches_ = length_batches(train_, model_->arch() == Arch::Han, o_.batch, seed_, s.epoch),
    order_epoch_ = s.epoch;
  batch_.clear();
  for (int64_t i : batches_.at(static_cast<size_t>(s.position)))
    batch_.push_back(&train_[static_cast<size_t>(i)]);
  return static_cast<int64_t>(batch_.size());
}

train::Slice HanTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  std::vector<const Doc*> items(batch_.begin() + begin, batch_.begin() + end);
  std::vector<int32_t> y;
  for (const Doc* d : items) y.push_back(d->label);
  train::Slice s;
  s.loss = nn::cross_entropy(model_->forward(t, items).logits, y);
  s.weight = static_cast<double>(items.size());
  return s;
}

std::vector<std::string> HanTraining::eval_metrics() const {
  if (valid_.empty()) return {};
  return {"valid_accuracy", "valid_loss"};
}

train::Metrics HanTraining::evaluate() {
  if (valid_.empty()) return {};
  const HanScore s = score_docs(*model_, valid_, 0);
  train::Metrics m = {{"valid_accuracy", s.accuracy}, {"valid_loss", s.loss}};
  best_.offer(s.accuracy, ps_, {{"valid_loss", s.loss}});
  last_accuracy_ = s.accuracy, last_loss_ = s.loss, evaluated_ = true;
  return m;
}

double HanTraining::score() {
  if (valid_.empty()) return 0.0;
  if (!evaluated_) evaluate();
  return -best_.better(last_accuracy_);
}

void HanTraining::finish(nn::ModelFile& f) {
  if (valid_.empty()) return;
  if (!evaluated_) evaluate();
  best_.finish(f, last_accuracy_, {{"valid_loss", last_loss_}});
}

void HanTraining::save_state(nn::ModelFile& f) const { best_.save_state(f); }

void HanTraining::load_state(const nn::ModelFile& f) { best_.load_state(f, ps_); }

namespace {

Tensor predict(const HanNet& m, const std::vector<Doc>& docs, int threads,
               std::vector<Tensor>* words, std::vector<Tensor>* sentences, bool allow_table) {
  const int64_t N = static_cast<int64_t>(docs.size()), C = m.classes();
  const int64_t groups = (N + kEvalBatch - 1) / kEvalBatch;
  Tensor p({N, C});
  if (words) words->clear(), words->resize(static_cast<size_t>(N));
  if (sentences) sentences->clear(), sentences->resize(static_cast<size_t>(N));
  // The word GRU's input projections of every vocabulary word, once, when the documents hold
  // more words than the vocabulary: fewer products than each word's own.
  int64_t n_words = 0;
  for (const Doc& d : docs) n_words += d.words();
  const bool use_table =
      allow_table && (m.arch() == Arch::Han || m.arch() == Arch::Flat) && n_words > m.vocab_size();
  const Tensor table = use_table ? m.word_projections() : Tensor();
  parallel_for(
      groups,
      [&](int64_t g0, int64_t g1) {
        ad::Tape t;  // one a thread: its pool serves every group after the first
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t lo = g * kEvalBatch, hi = std::min(N, lo + kEvalBatch);
          std::vector<const Doc*> grp;
          for (int64_t i = lo; i < hi; ++i) grp.push_back(&docs[static_cast<size_t>(i)]);
          std::vector<Tensor> w, s;
          const bool att = words || sentences;
          Tensor q = m.probabilities(t, grp, att ? &w : nullptr, att ? &s : nullptr,
                                     use_table ? &table : nullptr);
          std::copy(q.data(), q.data() + q.size(), p.data() + lo * C);
          for (int64_t i = lo; i < hi; ++i) {
            if (words) (*words)[static_cast<size_t>(i)] = std::move(w[static_cast<size_t>(i - lo)]);
            if (sentences)
              (*sentences)[static_cast<size_t>(i)] = std::move(s[static_cast<size_t>(i - lo)]);
          }
        }
      },
      threads);
  return p;
}

}  // namespace

Tensor predict_docs(const HanNet& m, const std::vector<Doc>& docs, int threads,
                    std::vector<Tensor>* words, std::vector<Tensor>* sentences) {
  return predict(m, docs, threads, words, sentences, true);
}

HanScore score_docs(const HanNet& m, const std::vector<Doc>& docs, int threads,
                    Tensor* probabilities) {
  Tensor p = predict(m, docs, threads, nullptr, nullptr, false);
  const int64_t N = p.dim(0), C = p.dim(1);
  HanScore s;
  for (int64_t i = 0; i < N; ++i) {
    const int32_t y = docs[static_cast<size_t>(i)].label;
    if (y < 0)
      throw DataError("document " + std::to_string(i + 1) + " has no label to score against");
    int64_t best = 0;
    for (int64_t c = 1; c < C; ++c)
      if (p.at(i, c) > p.at(i, best)) best = c;
    s.accuracy += best == y;
    s.loss -= std::log(std::max(1e-30, static_cast<double>(p.at(i, y))));
  }
  if (N) s.accuracy /= static_cast<double>(N), s.loss /= static_cast<double>(N);
  if (probabilities) *probabilities = std::move(p);
  return s;
}

}  // namespace attnkit::models::han
