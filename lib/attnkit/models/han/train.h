// Training a document classifier (models/han/model.h) on the training layer (train/module.h):
// the vocabulary and the classes from the training documents, shuffled epochs of batches of
// documents of similar length (length_batches below) cut into 4 fixed slices (so the same model for
// any --threads and rank count), the loss the mean cross-entropy per document, and validation
// accuracy after every epoch: with validation documents the model kept is the one of the best
// validation accuracy (the earliest of equals), its parameters kept in checkpoints too
// (best/<name>), so that a resumed run keeps the same.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/data/docs.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/han/model.h"
#include "attnkit/nn/optim.h"
#include "attnkit/train/best.h"
#include "attnkit/train/module.h"

namespace attnkit::models::han {

struct HanTrainOptions {
  int64_t batch = 64;
  double lr = 1e-3;
  std::string schedule = "constant";
  int64_t warmup = 0;
  std::string embeddings;  // word2vec text file ("": none)
  void validate() const;
};

// Moves a share `fraction` (in (0, 1)) of `train`, chosen by `seed`, to `valid` (in file order).
// UsageError when it would leave either side empty.
void split_validation(std::vector<data::TextDoc>& train, std::vector<data::TextDoc>& valid,
                      double fraction, uint64_t seed);

// The classes: the training documents' labels, sorted. DataError (naming `name` and the line)
// for a document without a label, and when there are fewer than 2 classes.
std::vector<std::string> collect_labels(const std::vector<data::TextDoc>& docs,
                                        const std::string& name);
// Each document's words as ids and its label as a class index: DataError naming `name` and
// the line for a label not among `labels` (required when need_label).
std::vector<Doc> encode_docs(const std::vector<data::TextDoc>& docs, const data::Vocab& v,
                             const std::vector<std::string>& labels, const std::string& name,
                             bool need_label);

// An epoch's batches, as the paper makes them (documents of similar length together, so
// that little is padded): the documents in the order nn::epoch_order(seed, epoch), cut into
// pools of 16 batches, each pool sorted by length (sentences for the HAN, words otherwise;
// stable), cut into batches of `batch`, and the batches put in an order drawn from the seed
// and the epoch. Every document is in exactly one batch; a function of the arguments only.
std::vector<std::vector<int64_t>> length_batches(const std::vector<Doc>& docs, bool by_sentences,
                                                 int64_t batch, uint64_t seed, int64_t epoch);

class HanTraining : public train::Module {
 public:
  HanTraining(HanConfig config, HanTrainOptions o, const std::vector<data::TextDoc>& train,
              const std::vector<data::TextDoc>& valid, const std::string& train_name,
              const std::string& valid_name, int64_t steps_or_0, int64_t epochs, uint64_t seed,
              std::string config_yaml);
  const HanNet& model() const { return *model_; }
  const data::Vocab& vocab() const { return vocab_; }
  const std::vector<std::string>& labels() const { return labels_; }
  int64_t embeddings_found() const { return embeddings_found_; }
  std::string kind() const override { return "han"; }
  nn::ParamStore& params() override { return ps_; }
  nn::Optimizer& optimizer() override { return *opt_; }
  int64_t total_steps() const override { return steps_; }
  int64_t batches_per_epoch() const override;
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& f) const override;
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;
  int slices() const override { return 4; }
  int64_t begin_batch(const nn::TrainState& s) override;
  // begin_batch only picks the batch: a signal stops the run within a step.
  bool stops_within_step() const override { return true; }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  double score() override;
  void finish(nn::ModelFile& f) override;

 private:
  HanConfig cfg_;
  HanTrainOptions o_;
  data::Vocab vocab_;
  std::vector<std::string> labels_;
  std::vector<Doc> train_, valid_;
  int64_t steps_;
  uint64_t seed_;
  std::string config_yaml_;
  int64_t embeddings_found_ = 0;
  nn::ParamStore ps_;
  std::unique_ptr<HanNet> model_;
  std::unique_ptr<nn::Optimizer> opt_;
  std::vector<const Doc*> batch_;
  std::vector<std::vector<int64_t>> batches_;  // the epoch's batches (documents' indices)
  int64_t order_epoch_ = -1;
  // The best validation so far (the model kept): its parameters and loss; the last one's.
  train::BestParams best_{"valid_accuracy", true};
  double last_accuracy_ = 0, last_loss_ = 0;
  bool evaluated_ = false;
};

// Accuracy and mean cross-entropy of a model on documents with labels, in batches of 64 on
// `threads` threads (0: all); the probabilities [N, classes] when asked.
struct HanScore {
  double accuracy = 0, loss = 0;
};
HanScore score_docs(const HanNet& m, const std::vector<Doc>& docs, int threads,
                    Tensor* probabilities = nullptr);
// Probabilities [N, classes] of documents (labels not needed), and the attention when asked.
// When the documents hold more words than the vocabulary, the word GRU reads each word's input
// projections from HanNet::word_projections()' table, made once: the same values up to
// rounding (score_docs, which training validates with, multiplies every word as the training
// forward pass does).
Tensor predict_docs(const HanNet& m, const std::vector<Doc>& docs, int threads,
                    std::vector<Tensor>* words = nullptr, std::vector<Tensor>* sentences = nullptr);

}  // namespace attnkit::models::han
