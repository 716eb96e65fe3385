// Image classifiers on the training layer (issue 17): images [N, H, W] with labels [N] (an
// .npz from image-gen, or any with those two arrays).
//
//   mlp           the images flattened, fully connected ReLU layers of `hidden` units (the
//                 RAM paper's baseline is --hidden 64,64), a linear classifier;
//   cnn           blocks of conv 3x3 (padding 1, no bias) + batch norm + ReLU + 2x2 max
//                 pooling (`channels` a block; no pooling once a side is below 2), global
//                 average pooling, a linear classifier;
//   cnn-sagan     the cnn with SAGAN's block (f, g C → max(1, C/8), h C → C, 1x1
//                 convolutions; y = γ o + x, γ = 0 at the start) after block `attn_after`;
//   cnn-nonlocal  the same with the embedded-Gaussian non-local block (θ, φ, g C → max(1, C/2),
//                 W back to C, zero-initialised: the identity at the start).
//
// Batch normalisation trains on each slice's own statistics (the training layer cuts a batch
// into 4 fixed slices: the same model for any --threads); the statistics used at evaluation
// are computed exactly, block after block, over a fixed calibration set (the first up to
// 4,096 training images, in file order) whenever the model is evaluated or saved — no running
// average, so they do not depend on the order of the steps or on slices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"
#include "attnkit/vision/image_set.h"

namespace attnkit::models {

struct ImgNetConfig {
  std::string arch = "cnn";
  std::vector<int64_t> hidden = {64, 64};        // mlp
  std::vector<int64_t> channels = {16, 32, 32};  // cnn blocks
  int64_t attn_after = 2;                        // the block after which attention sits (1-based)
  int64_t height = 0, width = 0, classes = 0;    // from the data
  // Each hyper-parameter once (core/fields.h): img-train's options, the stored YAML, the
  // loader. (height, width and classes are the data's, stored after them by img-train.)
  template <class V>
  void fields(V& v);
  // The data's sizes, a field list of their own (not options: img-train takes them from the
  // data).
  template <class V>
  void data_fields(V& v) {
    v(height, {"height", "H", "the pictures' height"});
    v(width, {"width", "W", "the pictures' width"});
    v(classes, {"classes", "N", "the number of classes"});
  }
  // The data's sizes as YAML ("height: 28\nwidth: 28\nclasses: 10\n"): img-train stores them
  // after the options, the loader reads them back (data_fields both).
  std::string data_yaml() const;
  void validate() const;  // UsageError naming the key
  bool conv() const { return arch != "mlp"; }
};

// "64,64" → {64, 64}; UsageError naming `key` on bad text or a value < 1.
std::vector<int64_t> parse_sizes(const std::string& text, const std::string& key);
std::string format_sizes(const std::vector<int64_t>& v);

template <class V>
void ImgNetConfig::fields(V& v) {
  v(arch, {"arch", "A", "mlp, cnn, cnn-sagan or cnn-nonlocal"});
  v(fields::text(hidden, parse_sizes, format_sizes),
    {"hidden", "N,N", "mlp: units of each hidden layer"});
  v(fields::text(channels, parse_sizes, format_sizes),
    {"channels", "C,C", "cnn: channels of each conv block"});
  v(attn_after,
    {"attn-after", "K", "cnn-sagan, cnn-nonlocal: the block (1-based) after which attention sits"});
}

class ImgNet {
 public:
  ImgNet(nn::ParamStore& ps, const ImgNetConfig& c, Rng& rng);
  const ImgNetConfig& config() const { return c_; }
  // Logits [b, classes] of images [b, H, W] starting at `images`. training: batch norm on
  // the batch's own statistics; otherwise the calibrated ones.
  ad::Var logits(ad::Tape& t, const float* images, int64_t b, bool training) const;
  // The evaluation statistics of each batch norm from `images` [M, H, W] (see above).
  void calibrate(const Tensor& images, int threads);
  // Class predictions (argmax; ties: the lowest class) of every image, on `threads` threads.
  std::vector<int32_t> predict(const Tensor& images, int threads) const;

 private:
  struct Block {
    ad::Parameter *w, *gamma, *beta, *mean, *var;
  };
  ad::Var features(ad::Tape& t, ad::Var x, bool training, int64_t upto) const;
  ad::Var attention(ad::Tape& t, ad::Var x) const;
  ImgNetConfig c_;
  std::vector<nn::Linear> mlp_;
  std::vector<Block> blocks_;
  std::vector<ad::Parameter*> attn_;  // f, fb, g, gb, h, hb, gamma / θ, θb, φ, φb, g, gb, W, Wb
  std::unique_ptr<nn::Linear> out_;
};

struct ImgTrainOptions {
  int64_t batch = 64;
  double lr = 1e-3;
  std::string schedule = "constant";
  int64_t warmup = 0;
};

class ImgTraining : public train::DatasetModule {
 public:
  ImgTraining(ImgNetConfig c, ImgTrainOptions o, ImageSet train, ImageSet valid, int64_t steps_or_0,
              int64_t epochs, uint64_t seed, int threads, std::string config_yaml);
  const ImgNet& model() const { return *model_; }
  std::string kind() const override { return "imgclass"; }
  int slices() const override { return 4; }
  std::vector<std::string> slice_sums() const override { return {"correct"}; }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  double score() override { return 0.0; }  // no criterion for best-of-runs
  // Evaluates (calibrating the batch norm statistics the file keeps) and writes the metrics
  // and the calibrated parameters.
  void finish(nn::ModelFile& f) override;

 private:
  void on_batch(const nn::TrainState& s) override;  // gathers the batch's images
  ImgNetConfig c_;
  ImgTrainOptions o_;
  ImageSet train_, valid_;
  int threads_;
  std::unique_ptr<ImgNet> model_;
  Tensor calib_;
  Tensor batch_images_;
};

// Accuracy and per-class accuracy of predictions against labels.
struct ImgScore {
  int64_t n = 0, correct = 0;
  std::vector<int64_t> class_n, class_correct;
};
ImgScore score_predictions(const std::vector<int32_t>& pred, const std::vector<int32_t>& labels,
                           int64_t classes);

using LoadedImgNet = train::Loaded<ImgNetConfig, ImgNet>;
LoadedImgNet load_imgnet(const std::string& path);

}  // namespace attnkit::models
