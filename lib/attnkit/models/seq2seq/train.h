// Training a sequence-to-sequence model, the logic behind seq2seq-train, as a module of the
// training layer (train/module.h): the corpus (a TSV of pairs or two aligned files, a
// validation file or a seeded share of the corpus), the vocabularies of the training pairs,
// length-grouped batches in a seeded order per epoch, teacher-forced cross-entropy (label
// smoothing, scheduled sampling) per target token as the slices' loss, Adam with warm-up and
// schedule, and validation: the mean loss per target token over the validation pairs and
// greedy corpus BLEU on the first of them, in the model's tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/data/batch.h"
#include "attnkit/data/corpus.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/seq2seq/model.h"
#include "attnkit/nn/optim.h"
#include "attnkit/train/basic_module.h"
#include "attnkit/train/module.h"

namespace attnkit::models {

// Where the pairs come from and how they become ids.
struct Seq2SeqDataOptions {
  std::string pairs;           // SOURCE<TAB>TARGET lines, or:
  std::string source, target;  // aligned files
  std::string valid;           // validation pairs ("": a share of the corpus)
  double valid_fraction = 0.1;
  std::string tokens = "words";  // words or chars
  int64_t min_freq = 1;
  int64_t max_len = 0;        // 0: all
  bool shared_vocab = false;  // one vocabulary for both sides
  void validate() const;      // UsageError naming the field
};

struct Seq2SeqData {
  std::vector<data::EncodedPair> train, valid;
  data::Vocab source_vocab, target_vocab;
  data::Tokenization tok = data::Tokenization::Words;
  int64_t max_len = 0;
};

// Reads, splits (seeded), builds the vocabularies of the training pairs and encodes.
Seq2SeqData load_seq2seq_data(const Seq2SeqDataOptions& o, uint64_t seed);

// The training recipe's model-specific settings (the shared ones come with the layer).
struct Seq2SeqRecipe {
  int64_t batch_size = 64;
  int64_t epochs = 10, steps = 0;  // the run's length: steps, or epochs when steps is 0
  double lr = 1e-3;
  int64_t warmup = 0;
  std::string schedule = "constant";  // or inverse-sqrt
  double label_smoothing = 0.0;
  double teacher_forcing = 1.0;
  int64_t bleu_sentences = 200;
  uint64_t seed = 1;        // batch order, and the model's initial draws
  bool dropout = true;      // false: dropout off (deterministic comparisons)
  std::string config_yaml;  // stored in every file written
  void validate() const;
};

// seq2seq-train's configuration, each key once: the data's and the recipe's settings and the
// architecture, in the order of the tool's --help and of the YAML the model file stores (the
// loader reads the architecture back through the same list, file.cpp). --hidden is the width
// of either type; --shared-embeddings shares the vocabulary and the tables (config()).
struct Seq2SeqSettings {
  Seq2SeqDataOptions data;
  Seq2SeqRecipe recipe;
  Seq2SeqConfig model;
  double dropout = 0.0;
  template <class V>
  void fields(V& v) {
    auto type = fields::text(
        model.type, [](const std::string& s, const std::string&) { return parse_model_type(s); },
        [](ModelType t) { return std::string(model_type_name(t)); });
    auto cell = fields::text(
        model.cell, [](const std::string& s, const std::string&) { return nn::parse_cell_kind(s); },
        [](nn::CellKind k) { return std::string(cell_name(k)); });
    auto attention = fields::text(
        model.attention,
        [](const std::string& s, const std::string&) { return parse_attention(s); },
        [](AttentionKind a) { return std::string(attention_name(a)); });
    v(data.tokens,
      {"tokens", "KIND", "tokenisation of both sides: words (the textbook's) or chars"});
    v(data.min_freq, {"min-freq", "N", "tokens seen fewer times become <unk>", nullptr, true});
    v(data.max_len,
      {"len-max", "N", "longest sequence kept, with <bos>/<eos> (0: all)", "max-len", true});
    v(data.valid_fraction,
      {"valid-fraction", "F", "share of the corpus held out for validation, in [0, 1)", nullptr,
       true});
    v(type, {"type", "KIND", "rnn or transformer"});
    v(cell, {"cell", "KIND", "rnn: lstm, gru or rnn", nullptr, true});
    v(model.embed, {"embed", "N", "rnn: embedding size", nullptr, true});
    v(model.hidden,
      {"hidden", "N", "rnn: hidden units per layer; transformer: model width", nullptr, true});
    v(model.layers, {"layers", "N", "encoder and decoder layers", nullptr, true});
    v(model.bidirectional, {"bidirectional", "", "rnn: bi-directional encoder"});
    v(attention, {"attention", "KIND",
                  "rnn: none, bahdanau, luong-dot, luong-general, luong-concat, structured (a "
                  "CRF's marginals), sigmoid or syntactic (a dependency CRF's soft parents)",
                  nullptr, true});
    v(fields::negated(model.input_feeding),
      {"no-input-feeding", "", "rnn, luong-*: do not feed the attentional state back"});
    v(recipe.teacher_forcing,
      {"teacher-forcing", "P", "rnn: probability of feeding the gold previous token", nullptr,
       true});
    v(model.heads, {"heads", "N", "transformer: attention heads", nullptr, true});
    v(model.d_ff, {"ff", "N", "transformer: feed-forward width", "d-ff", true});
    v(data.shared_vocab,
      {"shared-embeddings", "",
       "transformer: one joint vocabulary; one table for source, target and output"});
    v(dropout, {"dropout", "P", "dropout rate", nullptr, true});
    v(recipe.label_smoothing, {"label-smoothing", "E", "label smoothing epsilon", nullptr, true});
    v(recipe.bleu_sentences,
      {"bleu-sentences", "N", "validation pairs translated (greedy) for BLEU", nullptr, true});
  }
  // The architecture: `model` with the width --hidden, the shared tables and the dropout.
  Seq2SeqConfig config() const;
  // The reverse: the settings of a net's architecture (put_seq2seq stores them).
  void set_net(const Seq2SeqConfig& c);
};

// The module on the shared base (train::BasicModule: the optimiser, the run's length, the
// stored configuration, the last evaluation). Its batches are length-grouped
// (data::make_batches), not an epoch's shuffle of items, so it is no DatasetModule; the model
// keeps its own parameter store. Its files hold no result/ numbers (finish()): a model file
// is what it was before the module moved onto the base.
class Seq2SeqTraining : public train::BasicModule {
 public:
  Seq2SeqTraining(Seq2SeqConfig config, Seq2SeqData data, Seq2SeqRecipe recipe);
  // Training a model that exists already (e.g. loaded from a file).
  Seq2SeqTraining(std::unique_ptr<Seq2Seq> model, Seq2SeqData&& data, Seq2SeqRecipe recipe);

  Seq2Seq& model() { return *model_; }
  const Seq2SeqData& data() const { return data_; }
  int64_t batches() const { return batches_; }

  std::string kind() const override { return "seq2seq"; }
  nn::ParamStore& params() override { return model_->params(); }
  int64_t batches_per_epoch() const override { return batches_; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int64_t begin_batch(const nn::TrainState& s) override;
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  // Slices of at most 32 pairs: a function of the recipe, so the model is the same for any
  // --threads and ranks (before, ranks x threads slices: the model depended on the machine).
  int slices() const override { return static_cast<int>((recipe_.batch_size + 31) / 32); }
  bool split_products() const override { return true; }
  std::vector<std::string> slice_sums() const override { return {"tokens"}; }
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override { return {"tokens"}; }
  std::vector<std::string> eval_metrics() const override;
  train::Metrics evaluate() override;
  void finish(nn::ModelFile&) override {}

  // The current batch (after begin_batch).
  const data::Batch& batch() const { return *batch_; }
  // Uses `b` as the current batch (benchmarks and tests choose their own batches).
  void set_batch(data::Batch b);

 private:
  Seq2SeqData data_;
  Seq2SeqRecipe recipe_;
  std::unique_ptr<Seq2Seq> model_;
  int64_t batches_ = 0;
  std::vector<data::Batch> epoch_batches_;
  int64_t cached_epoch_ = -1;
  data::Batch own_;
  const data::Batch* batch_ = nullptr;
};

// Teacher-forced mean loss per target token over `pairs` (no dropout), and greedy corpus
// BLEU (0-100) of the first `bleu_sentences` translations against their references.
double validation_loss(const Seq2Seq& model, const std::vector<data::EncodedPair>& pairs,
                       int64_t batch_size);
double validation_bleu(const Seq2Seq& model, const std::vector<data::EncodedPair>& pairs,
                       const data::Vocab& target_vocab, int64_t sentences, int64_t max_len);

}  // namespace attnkit::models
