#include "attnkit/memory/memn2n/train.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/trainer.h"

namespace attnkit::memory {

using ad::Tape;
using ad::Var;

data::Vocab babi_vocab(const std::vector<data::BabiExample>& examples) {
  data::TokenCounts counts;
  // A story is repeated in every question of it: count each sentence once per story so that
  // counts (and so ids) do not depend on how many questions a story has.
  const data::StoryPrefix* last_story = nullptr;
  for (const data::BabiExample& e : examples) {
    size_t from = 0;
    if (last_story && last_story->is_prefix_of(e.story)) {
      from = last_story->size();
    } else if (last_story && last_story->size() <= e.story.size() &&
               std::equal(last_story->begin(), last_story->end(), e.story.begin())) {
      from = last_story->size();  // the same statements, read into another story object
    }
    for (size_t i = from; i < e.story.size(); ++i) data::count_tokens(counts, e.story[i]);
    last_story = &e.story;
    data::count_tokens(counts, e.question);
    ++counts[e.answer];
  }
  return data::Vocab::build(counts);
}

std::vector<EncodedQA> encode_babi(const std::vector<data::BabiExample>& examples,
                                   const data::Vocab& vocab, int64_t memory) {
  std::vector<EncodedQA> out;
  out.reserve(examples.size());
  for (const data::BabiExample& e : examples) {
    EncodedQA q;
    const int64_t n = static_cast<int64_t>(e.story.size());
    q.story_offset = std::max<int64_t>(0, n - memory);
    for (int64_t i = q.story_offset; i < n; ++i)
      q.memory.push_back(vocab.encode(e.story[static_cast<size_t>(i)]));
    q.query = vocab.encode(e.question);
    q.answer = vocab.id(e.answer);
    q.task = e.task;
    for (int f : e.support) q.support.push_back(f >= q.story_offset ? f - q.story_offset : -1);
    out.push_back(std::move(q));
  }
  return out;
}

MemBatch make_batch(const std::vector<EncodedQA>& data, const std::vector<size_t>& idx,
                    const MemN2NConfig& cfg, Rng* noise) {
  MemBatch b;
  b.B = static_cast<int64_t>(idx.size());
  b.M = b.J = b.Jq = 1;
  for (size_t i : idx) {
    const EncodedQA& q = data.at(i);
    b.M = std::max<int64_t>(b.M, static_cast<int64_t>(q.memory.size()));
    for (const auto& s : q.memory) b.J = std::max<int64_t>(b.J, static_cast<int64_t>(s.size()));
    b.Jq = std::max<int64_t>(b.Jq, static_cast<int64_t>(q.query.size()));
  }
  b.story.assign(static_cast<size_t>(b.B * b.M * b.J), 0);
  b.time.assign(static_cast<size_t>(b.B * b.M), 0);
  b.mask = Tensor({b.B, b.M});
  b.query.assign(static_cast<size_t>(b.B * b.Jq), 0);
  b.answer.resize(static_cast<size_t>(b.B));
  const int32_t max_age = static_cast<int32_t>(cfg.time_rows() - 1);
  std::vector<int32_t> ages;
  for (int64_t r = 0; r < b.B; ++r) {
    const EncodedQA& q = data[idx[static_cast<size_t>(r)]];
    const int64_t n = static_cast<int64_t>(q.memory.size());
    ages.resize(static_cast<size_t>(n));
    std::iota(ages.begin(), ages.end(), 0);
    if (noise && n > 0) {
      const int64_t blanks = static_cast<int64_t>(
          noise->below(static_cast<uint64_t>(std::ceil(0.1 * static_cast<double>(n))) + 1));
      std::vector<int32_t> slots(static_cast<size_t>(n + blanks));
      std::iota(slots.begin(), slots.end(), 0);
      for (size_t i = slots.size() - 1; i > 0; --i) std::swap(slots[i], slots[noise->below(i + 1)]);
      std::copy(slots.begin(), slots.begin() + n, ages.begin());
      std::sort(ages.begin(), ages.end());
    }
    for (int64_t s = 0; s < n; ++s) {  // slot s = the s-th most recent sentence
      const std::vector<int32_t>& sent = q.memory[static_cast<size_t>(n - 1 - s)];
      std::copy(sent.begin(), sent.end(), b.story.begin() + (r * b.M + s) * b.J);
      b.time[static_cast<size_t>(r * b.M + s)] = std::min(ages[static_cast<size_t>(s)], max_age);
      b.mask.at(r, s) = 1.0f;
    }
    std::copy(q.query.begin(), q.query.end(), b.query.begin() + r * b.Jq);
    b.answer[static_cast<size_t>(r)] = q.answer;
  }
  return b;
}

void split_validation(const std::vector<EncodedQA>& all, double fraction, uint64_t seed,
                      std::vector<EncodedQA>* train, std::vector<EncodedQA>* val) {
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed ^ 0x5eedba5eULL);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const size_t n = all.size();
  size_t nv = n < 2 ? 0 : static_cast<size_t>(std::lround(fraction * static_cast<double>(n)));
  nv = std::min(nv, n - std::min<size_t>(n, 1));
  train->clear();
  val->clear();
  for (size_t i = 0; i < n; ++i) (i < n - nv ? train : val)->push_back(all[order[i]]);
}

namespace {

int32_t argmax_row(const float* p, int64_t n) {
  return static_cast<int32_t>(std::max_element(p, p + n) - p);
}

}  // namespace

MemN2NTraining::MemN2NTraining(MemN2N& model, const std::vector<EncodedQA>& train,
                               const std::vector<EncodedQA>& val, const TrainOptions& opt,
                               Phase phase, std::string config_yaml)
    : DatasetModule(opt.batch, opt.seed, std::move(config_yaml)),
      model_(model),
      train_(train),
      val_(val),
      o_(opt),
      phase_(phase) {
  if (train.empty()) throw DataError("no training questions");
  if (opt.batch < 1) throw UsageError("batch-size must be at least 1");
  if (opt.epochs < 1) throw UsageError("epochs must be at least 1");
  // the longest possible run (linear start at its most); end_step stops it at its real end
  set_run(static_cast<int64_t>(train.size()), 0, (opt.ls ? opt.ls_max_epochs : 0) + opt.epochs);
  auto sgd = std::make_unique<nn::SGD>(model.params().params(), opt.lr);
  sgd_ = sgd.get();
  opt_ = std::move(sgd);
}

std::string MemN2NTraining::kind() const { return kMemN2NKind; }

int MemN2NTraining::total_epochs() const {
  return (phase_.linear ? o_.ls_max_epochs : phase_.ls_epochs) + o_.epochs;
}

int64_t MemN2NTraining::max_steps() const { return total_steps(); }

double MemN2NTraining::lr(int64_t epoch) const {
  if (phase_.linear) return o_.ls_lr;
  const int64_t e = epoch - phase_.ls_epochs;
  return o_.lr *
         (o_.anneal_every > 0 ? std::pow(0.5, static_cast<double>(e / o_.anneal_every)) : 1.0);
}

void MemN2NTraining::save_state(nn::ModelFile& m) const {
  m.numbers["phase/linear"] = phase_.linear;
  m.numbers["phase/ls_epochs"] = phase_.ls_epochs;
  m.numbers["phase/best_val_loss"] = phase_.best_val_loss;
  m.numbers["phase/ls_stale"] = phase_.ls_stale;
  m.numbers["phase/loss_sum"] = phase_.loss_sum;
  m.numbers["phase/wrong"] = phase_.wrong;
  m.numbers["phase/grad_norm"] = phase_.grad_norm;
  best_.save_state(m);  // nothing without keep_best
  if (best_linear_) m.numbers["phase/best_linear"] = 1;
}

void MemN2NTraining::load_state(const nn::ModelFile& m) {
  Phase p;
  p.linear = m.number("phase/linear") != 0;
  p.ls_epochs = static_cast<int>(m.integer("phase/ls_epochs", 0, 1 << 20));
  p.best_val_loss = m.number("phase/best_val_loss");
  p.ls_stale = m.numbers.count("phase/ls_stale")
                   ? static_cast<int>(m.integer("phase/ls_stale", 0, 1 << 20))
                   : 0;
  p.loss_sum = m.number("phase/loss_sum");
  p.wrong = m.number("phase/wrong");
  p.grad_norm = m.number("phase/grad_norm");
  phase_ = p;
  best_.load_state(m, model_.params());
  best_linear_ = m.numbers.count("phase/best_linear") && m.number("phase/best_linear") != 0;
}

void MemN2NTraining::on_batch(const nn::TrainState& st) {
  const int64_t epoch = st.epoch, position = st.position;
  const std::vector<size_t> idx(batch().begin(), batch().end());
  Rng noise(o_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch) * 1000003ULL +
            static_cast<uint64_t>(position));
  // The slices as the layer cuts the batch (kBatchChunks, fewer for a short batch), made in
  // order so that the noise drawn is the whole batch's, row by row.
  const int64_t B = static_cast<int64_t>(idx.size());
  const int64_t C = std::min(kBatchChunks, B);
  parts_.clear();
  for (int64_t c = 0; c < C; ++c) {
    const std::vector<size_t> sub(idx.begin() + B * c / C, idx.begin() + B * (c + 1) / C);
    parts_.push_back(make_batch(train_, sub, model_.config(), o_.rn ? &noise : nullptr));
  }
  linear_ = phase_.linear;
  sgd_->set_lr(lr(epoch));
}

train::Slice MemN2NTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const {
  const MemBatch& b = parts_.at(static_cast<size_t>(slice));
  if (end - begin != b.B) throw Error("memn2n: the layer's slice does not match the batch's");
  Var logits = model_.forward(t, b, !linear_);
  train::Slice out;
  out.loss = ad::mul(nn::cross_entropy(logits, b.answer), static_cast<float>(b.B));  // summed
  out.weight = static_cast<double>(b.B);
  const Tensor& lv = logits.value();
  const int64_t V = lv.dim(1);
  double wrong = 0;
  for (int64_t r = 0; r < b.B; ++r)
    wrong += argmax_row(lv.data() + r * V, V) != b.answer[static_cast<size_t>(r)];
  out.sums = {wrong};
  return out;
}

double MemN2NTraining::clip_gradients(double clip) {
  const double max_norm = clip > 0 ? clip : 1e300;
  if (o_.clip_global) {
    last_norm_ = nn::clip_grad_norm(sgd_->params(), max_norm);
  } else {  // each weight on its own (the reference code's way); the norm reported is global
    last_norm_ = nn::grad_norm(sgd_->params());
    if (o_.clip_spectral) {
      for (const auto& group : model_.weight_groups()) nn::clip_grad_spectral(group, max_norm);
    } else {
      for (ad::Parameter* p : sgd_->params()) nn::clip_grad_norm({p}, max_norm);
    }
  }
  return last_norm_;
}

train::StepEnd MemN2NTraining::end_step(const nn::TrainState& st, double loss,
                                        const train::Metrics& sums) {
  train::StepEnd end;
  const int64_t epoch = st.epoch;
  const int64_t n = static_cast<int64_t>(train_.size());
  phase_.loss_sum += loss;
  phase_.grad_norm = std::max(phase_.grad_norm, last_norm_);
  phase_.wrong += sums.empty() ? 0.0 : sums[0].second;
  if (st.position + 1 < batches_per_epoch()) return end;

  // the end of an epoch: validation, the phase
  EpochStats& s = last_;
  s = EpochStats();
  s.epoch = static_cast<int>(epoch + 1);
  s.linear = linear_;
  s.lr = lr(epoch);
  s.train_loss = phase_.loss_sum / static_cast<double>(n);
  s.train_error = phase_.wrong / static_cast<double>(n);
  s.grad_norm = phase_.grad_norm;
  if (!val_.empty()) {
    const EvalResult ev = memory::evaluate(model_, val_, linear_, false, o_.batch);
    s.val_loss = ev.loss;
    s.val_error = error_rate(val_, ev.predicted);
  } else {
    s.val_loss = s.train_loss;
    s.val_error = s.train_error;
  }
  phase_.loss_sum = phase_.wrong = phase_.grad_norm = 0.0;
  if (o_.keep_best && (!linear_ || model_.config().attention == HopAttention::CrfKim) &&
      best_.offer(s.val_error, model_.params()))
    best_linear_ = linear_;
  if (phase_.linear) {
    ++phase_.ls_epochs;
    if (s.val_loss < phase_.best_val_loss) {
      phase_.best_val_loss = s.val_loss;
      phase_.ls_stale = 0;
    } else {
      ++phase_.ls_stale;
    }
    if ((o_.ls_patience > 0 && phase_.ls_stale >= o_.ls_patience) ||
        phase_.ls_epochs >= o_.ls_max_epochs) {
      phase_.linear = false;  // the softmax goes back in from the next epoch
      phase_.best_val_loss = 1e300;
      phase_.ls_stale = 0;
    }
  } else {
    phase_.best_val_loss = std::min(phase_.best_val_loss, s.val_loss);
  }
  end.stop = epoch + 1 >= total_epochs();
  if (end.stop && o_.keep_best && best_.restore(model_.params()))
    model_.set_kim_full(model_.config().attention == HopAttention::CrfKim && best_linear_);
  return end;
}

std::vector<std::string> MemN2NTraining::eval_metrics() const {
  return {"linear", "train_loss", "train_error", "val_loss", "val_error"};
}

train::Metrics MemN2NTraining::evaluate() {
  return {{"linear", last_.linear ? 1.0 : 0.0},
          {"train_loss", last_.train_loss},
          {"train_error", last_.train_error},
          {"val_loss", last_.val_loss},
          {"val_error", last_.val_error}};
}

double MemN2NTraining::score() {
  score_ = error_rate(train_, memory::evaluate(model_, train_).predicted);
  return score_;
}

void MemN2NTraining::finish(nn::ModelFile& m) {
  if (score_ < 0) score();
  m.numbers["result/train_error"] = score_;
  m.numbers["result/val_error"] =
      val_.empty() ? 0.0 : error_rate(val_, memory::evaluate(model_, val_).predicted);
  m.numbers["result/seed"] = static_cast<double>(o_.seed);
  // the architecture was described at the start; a crf-kim model kept from linear start
  // keeps its potentials (not written otherwise: the files stay as before)
  if (model_.config().kim_full) m.set_arch("kim_full", 1);
}

MemN2NTraining::StepOut MemN2NTraining::step(int64_t epoch, int64_t position) {
  nn::TrainState st;
  st.epoch = epoch;
  st.position = position;
  st.step = calls_;
  const int64_t rows = begin_batch(st);
  const train::StepOut o = train::step(*this, tapes_, rows, o_.seed, calls_++, o_.clip);
  StepOut out;
  out.loss = o.loss;
  out.grad_norm = o.grad_norm;
  if (!std::isfinite(o.loss)) return out;
  const train::StepEnd e = end_step(st, o.loss, o.sums);
  out.epoch_end = position + 1 == batches_per_epoch();
  out.done = e.stop;
  if (out.epoch_end) out.stats = last_;
  return out;
}

EvalResult evaluate(const MemN2N& model, const std::vector<EncodedQA>& data, bool linear,
                    bool want_attention, int64_t batch) {
  EvalResult r;
  Tape t;
  t.set_recording(false);
  t.set_training(false);
  const int64_t n = static_cast<int64_t>(data.size());
  const int hops = model.config().hops;
  double loss_sum = 0.0;
  std::vector<size_t> idx;
  std::vector<Var> att;
  for (int64_t s = 0; s < n; s += batch) {
    idx.resize(static_cast<size_t>(std::min(n, s + batch) - s));
    std::iota(idx.begin(), idx.end(), static_cast<size_t>(s));
    const MemBatch b = make_batch(data, idx, model.config(), nullptr);
    t.clear();
    att.clear();
    Var logits = model.forward(t, b, !linear, want_attention ? &att : nullptr);
    loss_sum += static_cast<double>(nn::cross_entropy(logits, b.answer).value()[0]) *
                static_cast<double>(b.B);
    const Tensor& lv = logits.value();
    const int64_t V = lv.dim(1);
    for (int64_t i = 0; i < b.B; ++i) {
      r.predicted.push_back(argmax_row(lv.data() + i * V, V));
      if (!want_attention) continue;
      const int64_t m = static_cast<int64_t>(data[idx[static_cast<size_t>(i)]].memory.size());
      Tensor a({m, static_cast<int64_t>(hops)});
      for (int k = 0; k < hops; ++k)
        for (int64_t row = 0; row < m; ++row)  // oldest first; slot 0 is the most recent
          a.at(row, k) = att[static_cast<size_t>(k)].value().at(i, m - 1 - row);
      r.attention.push_back(std::move(a));
    }
  }
  r.loss = n ? loss_sum / static_cast<double>(n) : 0.0;
  return r;
}

double error_rate(const std::vector<EncodedQA>& data, const std::vector<int32_t>& predicted) {
  if (data.empty()) return 0.0;
  int64_t wrong = 0;
  for (size_t i = 0; i < data.size(); ++i) wrong += predicted.at(i) != data[i].answer;
  return static_cast<double>(wrong) / static_cast<double>(data.size());
}

FactSelection fact_selection(const std::vector<EncodedQA>& data,
                             const std::vector<Tensor>& attention) {
  if (attention.size() != data.size())
    throw ShapeError("fact_selection: " + std::to_string(attention.size()) +
                     " attention maps for " + std::to_string(data.size()) + " questions");
  FactSelection r;
  for (size_t q = 0; q < data.size(); ++q) {
    const Tensor& a = attention[q];
    const int64_t n = static_cast<int64_t>(data[q].memory.size());
    if (a.rank() != 2 || a.dim(0) != n)
      throw ShapeError("fact_selection: question " + std::to_string(q) + "'s attention is " +
                       shape_str(a.shape()) + " for " + std::to_string(n) + " sentences");
    const int64_t K = a.dim(1);
    const int64_t pairs = std::min<int64_t>(K, static_cast<int64_t>(data[q].support.size()));
    for (int64_t k = 0; k < pairs; ++k) {
      int64_t best = -1;
      for (int64_t i = 0; i < n; ++i)
        if (best < 0 || a.at(i, k) > a.at(best, k)) best = i;
      r.correct += best >= 0 && best == data[q].support[static_cast<size_t>(k)];
      ++r.scored;
    }
  }
  return r;
}

MemN2NData load_memn2n_data(const MemN2NDataOptions& o, uint64_t seed) {
  if (o.memory < 1) throw UsageError("memory-size must be at least 1");
  if (!(o.val_fraction >= 0 && o.val_fraction < 1))
    throw UsageError("valid-fraction must be in [0, 1)");
  MemN2NData d;
  d.tasks = o.tasks;
  std::vector<data::BabiExample> examples;
  std::vector<size_t> task_end;
  for (int t : o.tasks) {
    auto ex = data::read_babi(data::babi_task_file(o.dir, t, "train"));
    for (auto& e : ex) e.task = t;
    examples.insert(examples.end(), std::make_move_iterator(ex.begin()),
                    std::make_move_iterator(ex.end()));
    task_end.push_back(examples.size());
  }
  d.vocab = babi_vocab(examples);
  d.examples = static_cast<int64_t>(examples.size());
  const auto encoded = encode_babi(examples, d.vocab, o.memory);
  for (const auto& q : encoded) {
    d.longest = std::max<int64_t>(d.longest, static_cast<int64_t>(q.query.size()));
    for (const auto& sent : q.memory)
      d.longest = std::max<int64_t>(d.longest, static_cast<int64_t>(sent.size()));
  }
  for (size_t i = 0, from = 0; i < o.tasks.size(); from = task_end[i++]) {
    std::vector<EncodedQA> part(encoded.begin() + static_cast<std::ptrdiff_t>(from),
                                encoded.begin() + static_cast<std::ptrdiff_t>(task_end[i])),
        tr, va;
    split_validation(part, o.val_fraction, seed, &tr, &va);
    d.train.insert(d.train.end(), tr.begin(), tr.end());
    d.val.insert(d.val.end(), va.begin(), va.end());
  }
  return d;
}

void memn2n_recipe(const MemN2NData& d, TrainOptions& opt, MemN2NConfig& cfg, bool pe_longest) {
  const bool many = d.tasks.size() > 1;
  const bool big = many && d.examples >= 5000 * static_cast<int64_t>(d.tasks.size());
  if (opt.lr == 0) opt.lr = opt.ls ? 0.005 : 0.01;
  if (opt.epochs == 0) opt.epochs = big ? 20 : many ? 60 : 100;
  if (opt.anneal_every == -1) opt.anneal_every = big ? 5 : many ? 15 : 25;
  if (opt.ls_max_epochs == 0) opt.ls_max_epochs = many && !big ? 30 : 20;
  cfg.vocab = d.vocab.size();
  if (cfg.dim == 0) cfg.dim = many ? 50 : 20;
  if (pe_longest) cfg.pe_words = d.longest + (cfg.te ? 1 : 0);
}

void TrainOptions::validate() const {
  if (batch < 1 || epochs < 0 || !(lr >= 0) || anneal_every < -1 || !(clip >= 0) || !(ls_lr > 0) ||
      ls_max_epochs < 0 || ls_patience < 0)
    throw UsageError(
        "batch-size, epochs, lr, anneal-every, clip, ls-lr, ls-max-epochs or "
        "ls-patience is out of range");
}

bool parse_clip_kind(const std::string& text) {
  if (text != "l2" && text != "spectral")
    throw UsageError("clip-kind must be l2 or spectral, not '" + text + "'");
  return text == "spectral";
}

MemN2NJob::MemN2NJob(std::shared_ptr<const MemN2NData> data, std::unique_ptr<MemN2N> model,
                     const TrainOptions& opt, std::string config_yaml)
    : MemN2NTraining(
          *model, data->train, data->val, opt,
          [&] {
            Phase p;
            p.linear = opt.ls;
            return p;
          }(),
          std::move(config_yaml)),
      data_(std::move(data)),
      model_(std::move(model)) {}

void MemN2NJob::describe(nn::ModelFile& f) const {
  MemN2NTraining::describe(f);
  put_memn2n(f, model_->config(), data_->vocab, data_->tasks);
}

}  // namespace attnkit::memory
