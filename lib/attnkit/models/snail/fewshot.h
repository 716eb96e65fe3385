// Few-shot image classification with SNAIL (Mishra et al. 2018, Section 4.1 and Appendix B's
// Omniglot architecture), on any labelled image set such as Fashion-MNIST: an episode is
// N·K labelled support images of N classes drawn at random and one unlabelled query of one
// of them; the labels 0..N-1 are assigned to the classes afresh in every episode, so what
// is learned is how to use the support set, not the classes. Meta-training draws episodes
// from some classes; the test draws them from classes held out from training.
//
// The model reads the episode as a sequence of N·K + 1 steps: an embedding of each image
// (4 blocks of 3x3 convolution, ReLU and 2x2 max pooling, as the paper's Omniglot embedding
// without its batch normalisation, whose batch statistics would make a step depend on how
// the batch is cut into slices) concatenated with the one-hot label (zeros for the query),
// then attention → TC → attention → TC → attention (models/snail/blocks.h) and a linear map to N
// logits, read at the query's step. The loss is the cross-entropy of the query.
//
// The baseline on the same features: the query takes the label of the nearest class mean
// of the support embeddings (Euclidean; with one shot, the nearest support image); and the
// same on raw pixels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/fields.h"
#include "attnkit/core/rng.h"
#include "attnkit/models/snail/bandit.h"
#include "attnkit/models/snail/blocks.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/train/basic_module.h"
#include "attnkit/train/loaded.h"

namespace attnkit::models {

struct FewShotConfig {
  int64_t ways = 5;                 // N classes an episode
  int64_t shots = 1;                // K support images a class
  int64_t height = 28, width = 28;  // image size
  int64_t channels = 32;            // filters of each embedding block
  int64_t filters = 32;             // each dense block's filters
  int64_t key = 32;                 // attention: key and query size
  int64_t value = 32;               // attention: value size
  int64_t steps() const { return ways * shots + 1; }
  // Each hyper-parameter once (core/fields.h): snail-train's options (--task fewshot), the
  // stored YAML, the loader. The SNAIL blocks' sizes (filters, key, value) are
  // rl::BanditConfig's fields, snail-train's options for either task; the image size is the
  // data's (the file's arch/).
  template <class V>
  void fields(V& v) {
    v(ways, {"ways", "N", "fewshot: classes an episode"});
    v(shots, {"shots", "K", "fewshot: labelled pictures a class"});
    v(channels,
      {"channels", "N", "fewshot: filters of each of the 4 convolution blocks of the embedding"});
  }
  void validate() const;  // UsageError naming the field
};

// snail-train's configuration keys, each once, in its --help and stored YAML's order: the
// task, the SNAIL blocks' sizes and the bandit (rl::BanditConfig), the training options, the
// few-shot data and the few-shot model.
struct SnailTrainSettings {
  std::string task = "bandit";
  rl::BanditConfig bandit;
  rl::BanditTrainOptions train;
  std::string images, labels, classes = "0,2,4,6,8";
  FewShotConfig fewshot;
  template <class V>
  void fields(V& v) {
    v(task, {"task", "TASK", "bandit, or fewshot (N-way K-shot image classification)"});
    bandit.fields(v);
    train.fields(v);
    v(fields::unset(images),
      {"input,i", "FILE",
       "fewshot: pictures [n, H, W] (IDX, .npy, ...; IDX bytes are scaled to [0, 1]); default: "
       "Fashion-MNIST's 60,000 training pictures",
       "images"});
    v(fields::unset(labels),
      {"labels", "FILE", "fewshot: their class ids [n] (default: Fashion-MNIST's)"});
    v(classes, {"classes", "LIST",
                "fewshot: the classes episodes are drawn from in training; evaluation draws from "
                "the others"});
    fewshot.fields(v);
  }
};

// Images [n, H, W] with values in [0, 1] and their class ids, indexed by class.
struct LabelledImages {
  Tensor images;
  std::vector<int32_t> labels;
  std::vector<int32_t> classes;                // the classes kept, ascending
  std::vector<std::vector<int64_t>> by_class;  // image indices of classes[i]
  int64_t height() const { return images.dim(1); }
  int64_t width() const { return images.dim(2); }
};
// Keeps the images of `classes` (empty: all). images [n, H, W] (or [n, 1, H, W]) with values
// in [0, 255] when `scale_255` (IDX bytes) else [0, 1]; labels [n] (or [n, 1]) whole numbers
// in [0, 1000).
// DataError naming `name` (the images) on a shape problem, `labels_name` (the labels; empty:
// `name`) on a label problem or a class with fewer images than `min_per_class`.
// The class ids of `labels` (ascending), after checking that images and labels fit each other
// as select_classes requires (DataError naming `name` otherwise).
std::vector<int32_t> label_classes(const Tensor& images, const Tensor& labels,
                                   const std::string& name, const std::string& labels_name = "");
LabelledImages select_classes(const Tensor& images, const Tensor& labels,
                              const std::vector<int32_t>& classes, bool scale_255,
                              int64_t min_per_class, const std::string& name,
                              const std::string& labels_name = "");

// Pictures and their labels read from tensor files (IDX bytes scaled to [0, 1]). An empty
// path is Fashion-MNIST's file of `split` ("train" or "test") in Debian's folder
// (vision::fmnist_file: a missing one names the package to install).
struct Pictures {
  Tensor images, labels;
  bool bytes = false;       // IDX: values 0-255
  std::string name;         // the images' path
  std::string labels_name;  // the labels' path
};
Pictures read_pictures(std::string images, std::string labels, const std::string& split);

// The training classes `train` and the others (held out) of `p`, each with at least
// shots + 1 pictures a class; UsageError when either side has fewer than c.ways classes.
struct ClassSplit {
  LabelledImages train, held_out;
};
ClassSplit split_classes(const Pictures& p, const std::vector<int32_t>& train,
                         const FewShotConfig& c);

// A batch of episodes: images [E, T, H, W] (T = N·K + 1, the query last), the episode labels
// of the supports [E, T - 1] and of the query [E], and the original classes of each step.
struct EpisodeBatch {
  int64_t episodes = 0, ways = 0, steps = 0;
  Tensor images;
  std::vector<int32_t> support_labels;  // [E, T - 1]
  std::vector<int32_t> query_labels;    // [E]
  std::vector<int32_t> classes;         // [E, T]: the data set's class of each image
};
// N distinct classes in random order (the episode label of the i-th is i), K distinct
// support images of each, the query an image of a uniformly drawn one of them distinct
// from its supports; the supports shuffled.
EpisodeBatch draw_episodes(const LabelledImages& data, int64_t episodes, int64_t ways,
                           int64_t shots, Rng& rng);

class SnailFewShot {
 public:
  SnailFewShot(nn::ParamStore& ps, const FewShotConfig& c, Rng& rng);
  // images [B, H, W] → embeddings [B, D].
  ad::Var embed(ad::Tape& t, ad::Var images) const;
  int64_t embedding_size() const { return embed_size_; }
  // Logits [E, N] of each episode's query.
  ad::Var operator()(ad::Tape& t, const EpisodeBatch& b, int64_t begin, int64_t end) const;
  const FewShotConfig& config() const { return c_; }

 private:
  FewShotConfig c_;
  std::vector<ad::Parameter*> conv_w_, conv_b_;
  int64_t embed_size_ = 0;
  std::unique_ptr<nn::LayerNorm> embed_norm_;
  std::unique_ptr<nn::AttentionBlock> at1_, at2_, at3_;
  std::unique_ptr<nn::TCBlock> tc1_, tc2_;
  std::unique_ptr<nn::Linear> out_;
};

// Accuracy on `b` of the model (argmax of the query's logits), and of the nearest class
// mean on the model's embeddings and on raw pixels. model may be null (pixels only).
struct FewShotScores {
  int64_t episodes = 0;
  double snail = 0, embed_nn = 0, pixel_nn = 0;  // shares of queries right
};
FewShotScores score_episodes(const SnailFewShot* model, const EpisodeBatch& b, int64_t chunk = 256);

struct FewShotTrainOptions {
  int64_t batch = 32;  // episodes a step
  double lr = 1e-3;
  int64_t eval_episodes = 500;
  void validate() const;
};

// Meta-training on the training layer: fresh episodes every step (a generator kept in
// checkpoints), 4 fixed slices (the same model for any --threads or ranks); evaluation on
// eval_episodes fixed episodes of the held-out classes `eval`.
class FewShotTraining : public train::DrawnModule {
 public:
  FewShotTraining(FewShotConfig config, FewShotTrainOptions options, LabelledImages train,
                  LabelledImages eval, int64_t steps, uint64_t seed, std::string config_yaml = "");
  const SnailFewShot& model() const { return *model_; }
  std::string kind() const override { return "snail-fewshot"; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int slices() const override { return 4; }
  int64_t begin_batch(const nn::TrainState& s) override;
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  std::vector<std::string> slice_sums() const override { return {"right"}; }
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override { return {"accuracy"}; }
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override {
    return {"eval_accuracy", "eval_embed_nn"};
  }

 private:
  FewShotConfig cfg_;
  FewShotTrainOptions o_;
  LabelledImages train_, eval_;
  std::unique_ptr<SnailFewShot> model_;
  EpisodeBatch batch_;
};

struct LoadedFewShot : train::Loaded<FewShotConfig, SnailFewShot> {
  std::vector<int32_t> train_classes;
};
LoadedFewShot load_fewshot(const std::string& path);

// "0,2,4" → {0, 2, 4}: distinct whole numbers in [0, 1000); UsageError naming `what`.
std::vector<int32_t> parse_class_list(const std::string& text, const std::string& what);

}  // namespace attnkit::models
