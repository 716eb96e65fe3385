// BERT (Devlin et al. 2019): a Transformer encoder pretrained by masked-language modelling
// (MLM) and next-sentence prediction (NSP), small enough to train here.
//
// Tokens: a word-level vocabulary (data/vocab.h, d2l's tokenisation), whose reserved ids serve
// BERT: <pad> = 0 pads, <bos> = 1 is [CLS], <eos> = 2 is [SEP], <unk> = 3; one more id, V (the
// vocabulary's size), is [MASK]. An input is [CLS] A [SEP] B [SEP] with segment 0 for
// [CLS] A [SEP] and 1 for B [SEP] (a single sentence: [CLS] A [SEP], all segment 0).
//
// The model, as the paper's (and Google's released code):
//   x = LayerNorm(token + segment + position embeddings), dropout (learned positions);
//   post-norm encoder layers: LN(x + MHA(x)), LN(x + FFN(x)), FFN = W2 GELU(W1 x + b1) + b2;
//   MLM head at the masked positions: h = LN(GELU(W x + b)), logits = h Eᵀ + bias with E the
//   token embedding table (tied) and its own output bias [V + 1];
//   NSP head on [CLS]: logits = W_o tanh(W_p x_cls + b_p) + b_o (2 classes: 0 = not next,
//   1 = next). Embeddings are N(0, 0.02²), as BERT's initialiser range.
// The pretraining loss is the mean MLM cross-entropy over the batch's masked tokens plus the
// mean NSP cross-entropy over its pairs.
//
// Masking (the paper's): of each pair's tokens other than [CLS]/[SEP], 15% are chosen (the
// count is 0.15 n rounded up or down at random with the fraction as the probability of
// rounding up, so the share is 15% in expectation even for short pairs), and each chosen one
// becomes [MASK] with probability 0.8, a uniformly random ordinary token (not a reserved id)
// with 0.1, or stays with 0.1. Pairs: for a sentence that has a next one in its document, B is
// that next sentence with probability 0.5, else a uniformly random sentence of a uniformly
// random other document. Everything drawn for an example comes from an Rng seeded by (seed,
// epoch, example index) alone: the same for any --threads, and after a resume.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/data/vocab.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/transformer.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"

namespace attnkit::models {

struct BertConfig {
  int64_t vocab = 0;  // the vocabulary's size V (the tables have V + 1 rows: [MASK] = V)
  int64_t layers = 2, hidden = 128, heads = 2, ff = 256, max_len = 64;
  float dropout = 0.1f;
  // Each hyper-parameter once (core/fields.h): bert-pretrain's options, the stored YAML, the
  // loader (the vocabulary's size is the file's vocabulary).
  template <class V>
  void fields(V& v) {
    v(layers, {"layers", "N", "encoder layers"});
    v(hidden, {"hidden", "N", "the model's width (embeddings, attention, heads)"});
    v(heads, {"heads", "N", "attention heads (divide --hidden)"});
    v(ff, {"ff", "N", "the feed-forward layers' hidden units"});
    v(max_len, {"len-max", "N",
                "the longest input in tokens, [CLS] and the two [SEP] included (longer pairs are "
                "cut from the end of their longer sentence); the position table's size",
                "max-len"});
    v(dropout, {"dropout", "P",
                "dropout after the embeddings, on the attention weights and after each sub-layer"});
  }
  void validate() const;  // UsageError naming the option
};

constexpr int32_t kBertCls = data::Vocab::kBos, kBertSep = data::Vocab::kEos;

// One input sequence and its targets.
struct BertExample {
  std::vector<int32_t> tokens;     // [CLS] A [SEP] (B [SEP]), masked tokens replaced
  std::vector<int32_t> segments;   // 0/1, tokens' length
  std::vector<int32_t> positions;  // masked positions, ascending
  std::vector<int32_t> labels;     // the original token at each masked position
  int32_t is_next = -1;            // NSP target: 1 next, 0 random, -1 none
};

struct BertLosses {
  ad::Var mlm, nsp;               // summed cross-entropies (shape []); invalid when no target
  int64_t masked = 0, pairs = 0;  // how many targets each sums over
  int64_t mlm_correct = 0, nsp_correct = 0;
  std::vector<int32_t> mlm_predicted;  // argmax of each masked position, in order
};

class Bert {
 public:
  Bert(nn::ParamStore& ps, const BertConfig& c, Rng& rng);
  const BertConfig& config() const { return c_; }
  // The encoder's output [B, n, hidden] for examples padded to the longest (n); DataError for
  // an example longer than max_len, an empty one, or a token outside [0, V].
  ad::Var encode(ad::Tape& t, const std::vector<const BertExample*>& xs) const;
  // The MLM logits [P, V + 1] at `rows` of the encoded [B·n, hidden].
  ad::Var mlm_logits(ad::Tape& t, ad::Var encoded, const std::vector<int32_t>& rows) const;
  // The NSP logits [B, 2] from the encoded [B, n, hidden].
  ad::Var nsp_logits(ad::Tape& t, ad::Var encoded) const;
  // Both losses (sums) with their counts and the correct predictions.
  BertLosses losses(ad::Tape& t, const std::vector<const BertExample*>& xs) const;

 private:
  BertConfig c_;
  nn::Embedding token_, segment_, position_;
  nn::LayerNorm embed_norm_;
  std::vector<nn::TransformerEncoderLayer> layers_;
  nn::Linear mlm_dense_;
  nn::LayerNorm mlm_norm_;
  ad::Parameter* mlm_bias_;
  nn::Linear pooler_, nsp_out_;
};

// ---- data
// Documents of sentences, each sentence its token ids.
struct BertCorpus {
  std::vector<std::vector<std::vector<int32_t>>> docs;
  int64_t sentences() const;
};
// Reads text: one sentence a line, blank (or white-space-only) lines between documents;
// d2l's word tokenisation. DataError naming the file for invalid UTF-8 or no sentence.
std::vector<std::vector<std::vector<std::string>>> read_bert_text(const std::string& path);
BertCorpus encode_bert_text(const std::vector<std::vector<std::vector<std::string>>>& docs,
                            const data::Vocab& vocab);
// The vocabulary of the documents' tokens (min_freq >= 1); max_size > 0 keeps the most
// frequent ones only, max_size tokens with the reserved four (data::Vocab::build).
data::Vocab bert_vocab(const std::vector<std::vector<std::vector<std::string>>>& docs,
                       int64_t min_freq, int64_t max_size = 0);

// What masking did (counts), added up over examples.
struct MaskStats {
  int64_t candidates = 0, chosen = 0, as_mask = 0, as_random = 0, as_kept = 0;
  void add(const MaskStats& o);
};

// The sentence pairs of a corpus: one per sentence that has a next one in its document.
// DataError when there is none, or when the corpus has fewer than two documents (a random
// B comes from another document).
class BertPairs {
 public:
  BertPairs(const BertCorpus& c, int64_t vocab, int64_t max_len);
  int64_t size() const { return static_cast<int64_t>(items_.size()); }
  // Example i drawn from its own Rng (seeded from seed, epoch and i): the pair, truncated to
  // max_len (the longer sentence loses its last token first), and its masking.
  BertExample make(int64_t i, uint64_t seed, int64_t epoch, MaskStats* stats = nullptr) const;

 private:
  const BertCorpus* c_;
  int64_t vocab_, max_len_;
  std::vector<std::pair<int32_t, int32_t>> items_;  // (document, sentence)
};

// Masks an example's tokens in place as the paper does (see the top), from `rng`.
void bert_mask(BertExample& x, int64_t vocab, Rng& rng, MaskStats* stats = nullptr);

// ---- training
struct BertTrainOptions {
  int64_t batch = 512;
  double lr = 1e-3;
  std::string schedule = "constant";  // or inverse-sqrt
  int64_t warmup = 0;
  int64_t min_freq = 5;  // the vocabulary's: rarer words of the training text are <unk>
  int64_t max_size = 0;  // the vocabulary's cap, the reserved four included (0: none)
  void validate() const;
  // bert-pretrain's own key (batch, lr, schedule and warmup come from its training options).
  template <class V>
  void fields(V& v) {
    v(min_freq, {"min-freq", "N", "words seen fewer times in the training text are <unk>"});
    v(max_size, {"max-size", "N",
                 "keep the most frequent words only: at most N tokens with the reserved four "
                 "([MASK] is one more), the rest <unk> (0: no limit)",
                 nullptr, true});
  }
};

// Pretraining as a module of the training layer: shuffled epochs of pairs, batches in 4
// fixed slices (the same model for any --threads); the loss MLM mean + NSP mean over the
// global batch (Reduction::Sum of each slice's share). Step metrics: mlm_loss, nsp_loss,
// mlm_acc, nsp_acc. Evaluation: the masking statistics over the run so far (mask_share,
// mask_as_mask, mask_as_random, mask_as_kept), and with validation text the same losses and
// accuracies over its pairs (masked and paired once, from a fixed seed) and the majority-token
// baseline (the share of masked targets that are the training text's most frequent token).
class BertTraining : public train::DatasetModule {
 public:
  BertTraining(BertConfig config, BertTrainOptions o, data::Vocab vocab, BertCorpus train,
               BertCorpus valid, int64_t steps_or_0, int64_t epochs, uint64_t seed,
               std::string config_yaml);
  const Bert& model() const { return *model_; }
  const MaskStats& mask_stats() const { return stats_; }
  int64_t pairs() const { return pairs_->size(); }  // sentence pairs an epoch
  std::string kind() const override { return "bert"; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;
  int slices() const override { return 4; }
  train::Reduction reduction() const override { return train::Reduction::Sum; }
  std::vector<std::string> slice_sums() const override;
  // Uses these examples as the current batch (tests).
  void set_batch(std::vector<BertExample> xs);
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  // The batch's masking counts join the run's here, not when it is drawn, so that a step
  // dropped part-way leaves them as they were: a signal stops the run within a step.
  bool stops_within_step() const override { return true; }
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;

 private:
  void on_batch(const nn::TrainState& s) override;  // draws the batch's examples
  BertConfig cfg_;
  BertTrainOptions o_;
  data::Vocab vocab_;
  BertCorpus train_, valid_;
  std::unique_ptr<BertPairs> pairs_;
  std::vector<BertExample> valid_examples_;
  std::unique_ptr<Bert> model_;
  std::vector<BertExample> examples_;
  int64_t batch_masked_ = 0, batch_pairs_ = 0;
  MaskStats stats_;        // the run's, up to the last step made
  MaskStats batch_stats_;  // the current batch's (on_batch), added to stats_ in end_step
};

// Mean losses and accuracies of a model over examples (no dropout), in batches of 64.
struct BertScore {
  double mlm_loss = 0, nsp_loss = 0, mlm_acc = 0, nsp_acc = 0;
  int64_t masked = 0, pairs = 0;
};
BertScore evaluate_bert(const Bert& m, const std::vector<BertExample>& xs);

// ---- using a trained model
struct LoadedBert : train::Loaded<BertConfig, Bert> {
  data::Vocab vocab;
};
LoadedBert load_bert(const std::string& path);

// A single sentence as the model reads it: [CLS] tokens [SEP], segment 0. A token "[mask]"
// (the tokenisation lower-cases "[MASK]") becomes the [MASK] id; unknown words <unk>.
// DataError when it is longer than the model's max_len.
BertExample bert_sentence(const data::Vocab& vocab, int64_t max_len,
                          const std::vector<std::string>& tokens);

// For each [MASK] of the sentence: the k most probable ordinary tokens (reserved ids and
// [MASK] left out) with their probabilities under the full softmax, most probable first.
struct BertFill {
  int32_t position = 0;  // in the sentence's tokens (0 = the first word)
  std::vector<std::pair<int32_t, double>> top;
};
std::vector<BertFill> bert_fill(const Bert& m, const BertExample& x, int k);

// The encoder's output for each example: [n_i, hidden] (rows [CLS], the tokens, [SEP]).
std::vector<Tensor> bert_embed(const Bert& m, const std::vector<BertExample>& xs);

}  // namespace attnkit::models
