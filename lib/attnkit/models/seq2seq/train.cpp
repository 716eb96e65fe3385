#include "attnkit/models/seq2seq/train.h"

#include <algorithm>
#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/eval/bleu.h"
#include "attnkit/models/seq2seq/file.h"

namespace attnkit::models {

Seq2SeqConfig Seq2SeqSettings::config() const {
  Seq2SeqConfig c = model;
  c.d_model = c.hidden;
  c.shared_embeddings = data.shared_vocab;
  c.dropout = static_cast<float>(dropout);
  return c;
}

void Seq2SeqSettings::set_net(const Seq2SeqConfig& c) {
  model = c;
  if (c.type == ModelType::Transformer) model.hidden = c.d_model;
  data.shared_vocab = c.shared_embeddings;
  dropout = c.dropout;
}

void Seq2SeqDataOptions::validate() const {
  if (pairs.empty() == (source.empty() && target.empty()))
    throw UsageError("give the corpus as -i PAIRS or as --source and --target");
  if (pairs.empty() && (source.empty() || target.empty()))
    throw UsageError("--source and --target go together");
  if (min_freq < 1) throw UsageError("min-freq must be at least 1");
  if (max_len != 0 && max_len < 3) throw UsageError("len-max must be 0 or at least 3");
  if (!(valid_fraction >= 0 && valid_fraction < 1))
    throw UsageError("valid-fraction must be in [0, 1)");
  try {
    data::parse_tokenization(tokens);
  } catch (const Error& e) {
    throw UsageError(std::string("tokens: ") + e.what());
  }
}

Seq2SeqData load_seq2seq_data(const Seq2SeqDataOptions& o, uint64_t seed) {
  o.validate();
  Seq2SeqData d;
  d.tok = data::parse_tokenization(o.tokens);
  d.max_len = o.max_len;
  data::ParallelCorpus corpus =
      o.pairs.empty() ? data::read_aligned(o.source, o.target) : data::read_tsv(o.pairs);
  data::TrainValid tv;
  if (!o.valid.empty()) {
    tv.train = std::move(corpus);
    tv.valid = data::read_tsv(o.valid);
  } else {
    tv = data::split_train_valid(corpus, o.valid_fraction, seed);
  }
  if (tv.train.size() == 0)
    throw DataError("no training pairs", o.pairs.empty() ? o.source : o.pairs);
  data::TokenCounts sc = data::count_side(tv.train, data::Side::Source, d.tok);
  data::TokenCounts tc = data::count_side(tv.train, data::Side::Target, d.tok);
  if (o.shared_vocab) {
    for (const auto& [k, v] : tc) sc[k] += v;
    d.source_vocab = data::Vocab::build(sc, o.min_freq);
    d.target_vocab = d.source_vocab;
  } else {
    d.source_vocab = data::Vocab::build(sc, o.min_freq);
    d.target_vocab = data::Vocab::build(tc, o.min_freq);
  }
  data::EncodeOptions eo;
  eo.source_tok = eo.target_tok = d.tok;
  eo.max_source_len = eo.max_target_len = o.max_len;
  d.train = data::encode(tv.train, d.source_vocab, d.target_vocab, eo);
  d.valid = data::encode(tv.valid, d.source_vocab, d.target_vocab, eo);
  return d;
}

void Seq2SeqRecipe::validate() const {
  if (batch_size < 1) throw UsageError("batch-size must be at least 1");
  if (!(lr > 0)) throw UsageError("lr must be positive");
  if (warmup < 0) throw UsageError("warmup must be 0 or more");
  nn::check_schedule_name(schedule);
  if (!(label_smoothing >= 0 && label_smoothing < 1))
    throw UsageError("label-smoothing must be in [0, 1)");
  if (!(teacher_forcing >= 0 && teacher_forcing <= 1))
    throw UsageError("teacher-forcing must be in [0, 1]");
  if (bleu_sentences < 0) throw UsageError("bleu-sentences must be 0 or more");
}

namespace {

// The recipe's schedule over its total steps (--steps, or --epochs passes over `pairs`).
nn::Schedule schedule_of(const Seq2SeqRecipe& r, size_t pairs) {
  const int64_t batches = (static_cast<int64_t>(pairs) + r.batch_size - 1) / r.batch_size;
  return nn::parse_schedule(r.schedule, r.warmup, r.steps > 0 ? r.steps : r.epochs * batches);
}

std::unique_ptr<Seq2Seq> build(Seq2SeqConfig c, const Seq2SeqData& d, uint64_t seed) {
  c.src_vocab = d.source_vocab.size();
  c.tgt_vocab = d.target_vocab.size();
  return Seq2Seq::create(c, seed);
}

}  // namespace

Seq2SeqTraining::Seq2SeqTraining(Seq2SeqConfig config, Seq2SeqData data, Seq2SeqRecipe recipe)
    : Seq2SeqTraining(build(config, data, recipe.seed), std::move(data), std::move(recipe)) {
}  // data moves only in the member's initialiser

Seq2SeqTraining::Seq2SeqTraining(std::unique_ptr<Seq2Seq> model, Seq2SeqData&& data,
                                 Seq2SeqRecipe recipe)
    : BasicModule(recipe.seed, recipe.config_yaml),
      data_(std::move(data)),
      recipe_((recipe.validate(), std::move(recipe))),
      model_(std::move(model)) {
  opt_ = std::make_unique<nn::Adam>(model_->params().params(), recipe_.lr, 0.9, 0.98, 1e-9, 0.0,
                                    schedule_of(recipe_, data_.train.size()));
  if (data_.train.empty()) throw DataError("no training pairs");
  batches_ =
      (static_cast<int64_t>(data_.train.size()) + recipe_.batch_size - 1) / recipe_.batch_size;
  steps_ = recipe_.steps > 0 ? recipe_.steps : recipe_.epochs * batches_;
  if (steps_ < 1) throw UsageError("epochs or steps must be at least 1");
}

void Seq2SeqTraining::describe(nn::ModelFile& f) const {
  BasicModule::describe(f);
  put_seq2seq(f, model_->config(), data_.source_vocab, data_.target_vocab, data_.tok);
}

void Seq2SeqTraining::check_resume(const nn::ModelFile& ck) const {
  const LoadedSeq2Seq b = get_seq2seq(ck);
  if (b.source_vocab.format() != data_.source_vocab.format() ||
      b.target_vocab.format() != data_.target_vocab.format())
    throw DataError("the checkpoint was trained on other data or settings (vocabularies differ)",
                    ck.file);
}

int64_t Seq2SeqTraining::begin_batch(const nn::TrainState& s) {
  if (cached_epoch_ != s.epoch) {
    data::BatchOptions bo;
    bo.batch_size = recipe_.batch_size;
    bo.seed = recipe_.seed;
    epoch_batches_ = data::make_batches(data_.train, bo, static_cast<uint64_t>(s.epoch));
    cached_epoch_ = s.epoch;
  }
  batch_ = &epoch_batches_[static_cast<size_t>(s.position)];
  return batch_->size();
}

void Seq2SeqTraining::set_batch(data::Batch b) {
  own_ = std::move(b);
  batch_ = &own_;
}

train::Slice Seq2SeqTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  const bool whole = begin == 0 && end == batch_->size();
  const data::Batch part = whole ? data::Batch() : batch_rows(*batch_, begin, end);
  int64_t k = 0;
  if (!recipe_.dropout) t.set_training(false);
  train::Slice s;
  s.loss = model_->loss(t, whole ? *batch_ : part, static_cast<float>(recipe_.label_smoothing),
                        static_cast<float>(recipe_.teacher_forcing), &k);
  s.weight = static_cast<double>(k);
  s.sums = {static_cast<double>(k)};
  return s;
}

train::StepEnd Seq2SeqTraining::end_step(const nn::TrainState&, double,
                                         const train::Metrics& sums) {
  train::StepEnd e;
  e.metrics = {{"tokens", sums.empty() ? 0.0 : sums[0].second}};
  return e;
}

std::vector<std::string> Seq2SeqTraining::eval_metrics() const {
  if (data_.valid.empty()) return {};
  return {"valid_loss", "valid_bleu"};
}

train::Metrics Seq2SeqTraining::evaluate() {
  if (data_.valid.empty()) return {};
  const double loss = validation_loss(*model_, data_.valid, recipe_.batch_size);
  const double bleu = validation_bleu(*model_, data_.valid, data_.target_vocab,
                                      recipe_.bleu_sentences, data_.max_len);
  return evaluated({{"valid_loss", loss}, {"valid_bleu", bleu}}, loss);
}

double validation_loss(const Seq2Seq& model, const std::vector<data::EncodedPair>& pairs,
                       int64_t batch_size) {
  if (pairs.empty()) return NAN;
  ad::Tape vt(0);
  vt.set_training(false);
  vt.set_recording(false);
  data::BatchOptions vo;
  vo.batch_size = batch_size;
  vo.shuffle = false;
  double sum = 0;
  int64_t n = 0;
  for (const data::Batch& b : data::make_batches(pairs, vo)) {
    int64_t k = 0;
    ad::Var l = model.loss(vt, b, 0.0f, 1.0f, &k);
    sum += static_cast<double>(l.value()[0]) * static_cast<double>(k);
    n += k;
    vt.clear();
  }
  return n ? sum / static_cast<double>(n) : NAN;
}

double validation_bleu(const Seq2Seq& model, const std::vector<data::EncodedPair>& pairs,
                       const data::Vocab& target_vocab, int64_t sentences, int64_t max_len) {
  const size_t m = std::min(pairs.size(), static_cast<size_t>(std::max<int64_t>(sentences, 0)));
  if (m == 0) return NAN;
  std::vector<std::vector<int32_t>> srcs;
  for (size_t i = 0; i < m; ++i) srcs.push_back(pairs[i].source);
  DecodeOptions d;
  d.max_length = max_len > 0 ? max_len : 50;
  const auto tr = translate_all(model, srcs, d, 0);
  LoadedSeq2Seq view;  // tokens joined by spaces: BLEU over the model's tokens
  view.target_vocab = target_vocab;
  view.target_tok = data::Tokenization::Words;
  std::vector<std::string> hyp, ref;
  for (size_t i = 0; i < m; ++i) {
    hyp.push_back(target_text(view, tr[i].tokens));
    ref.push_back(target_text(view, pairs[i].target));
  }
  return 100.0 * eval::corpus_bleu(hyp, ref).score;
}

}  // namespace attnkit::models
