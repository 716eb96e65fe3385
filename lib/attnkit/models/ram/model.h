// The recurrent attention model (RAM; Mnih, Heess, Graves & Kavukcuoglu 2014, "Recurrent
// Models of Visual Attention"): a network that sees an image only through a few glimpses
// (vision/glimpse.h), chooses where to look next, and classifies after the last glimpse.
//
//   glimpse network  h_g = ReLU(Linear(ρ(x, l))), h_l = ReLU(Linear(l)),
//                    g = ReLU(Linear(h_g) + Linear(h_l)); with glimpse_net "conv", h_g
//                    reads each patch through a small conv stack first (below)
//   core             rnn: h_t = ReLU(Linear(g_t) + Linear(h_{t-1})) (the paper's), or an LSTM
//   location policy  l_t ~ N(μ_t, σ² I), μ_t = tanh(Linear(h_t)), σ fixed (--loc-std); the
//                    sample is clipped to [-1, 1]² before the sensor sees it
//   baseline         b_t = Linear(h_t), regressed on the reward
//   action           logits = Linear(h_T) after the last of T glimpses
//
// The first location is drawn uniformly from [-1, 1]² (as the paper's); glimpses 2..T are
// at the policy's samples. Training: the classifier (glimpse network, core, action network)
// by the cross-entropy of the final logits; the location policy by REINFORCE
// (rl/reinforce.h) with reward R = 1 when the final classification (the argmax) is right,
// else 0, the loss −Σ_{t<T} (R − b_t) log π(l_t | h_t) summed over the T − 1 chosen
// locations and averaged over images; the baseline by (b_t − R)² (RamPolicyOptions below
// has the variants: M paths an image, the probability reward, normalisation). The policy
// and the baseline read h_t as a constant: REINFORCE trains only the location network, the
// regression only the baseline (the reference implementations do the same).
// --random-glimpses is the paper's ablation: every location uniform, no policy.
//
// The convolutional glimpse network (glimpse_net "conv", as later RAM/DRAM work did): every
// patch of the k scales, as a one-channel g × g image, goes through the same blocks of
// conv 3×3 (padding 1, with bias) → ReLU → 2×2 max pooling, one block per entry of
// glimpse_channels; the k feature maps [C, g / 2^blocks, g / 2^blocks], flattened, are what
// h_g's Linear reads. No batch norm: the model stays a plain function of its parameters.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/core/rng.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/rnn.h"
#include "attnkit/train/best.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"
#include "attnkit/vision/cnn.h"
#include "attnkit/vision/glimpse.h"
#include "attnkit/vision/image_set.h"

namespace attnkit::models {

struct RamConfig {
  vision::GlimpseConfig glimpse;   // g = 12, k = 3, s = 2: patches of 12, 24, 48 pixels
  int64_t glimpses = 6;            // T
  int64_t glimpse_hidden = 128;    // h_g and h_l
  std::string glimpse_net = "fc";  // fc (the paper's) or conv
  std::vector<int64_t> glimpse_channels = {16, 32};  // conv: one block each
  int64_t hidden = 256;                              // g and the core's state
  std::string core = "rnn";                          // rnn or lstm
  double loc_std = 0.1;                              // σ of the location policy
  bool random_glimpses = false;
  int64_t height = 60, width = 60, classes = 10;  // the images it reads (the file's arch/)
  // Each hyper-parameter once (core/fields.h): ram-train's options, the stored YAML, the loader.
  template <class V>
  void fields(V& v) {
    v(glimpse.size, {"glimpse-size", "G", "side of each patch after resampling (g)"});
    v(glimpse.scales, {"glimpse-scales", "K", "patches per glimpse (k)"});
    v(glimpse.factor, {"glimpse-factor", "S", "each patch is S times as wide as the one before"});
    v(glimpses, {"glimpses", "N", "glimpses per image; the class is read after the last"});
    v(glimpse_hidden, {"glimpse-hidden", "N", "units of h_g and h_l"});
    v(glimpse_net, {"glimpse-net", "KIND",
                    "fc (h_g = ReLU(Linear(patches)), the paper's) or conv (each patch through "
                    "conv blocks first)",
                    nullptr, true});
    v(fields::text(glimpse_channels, vision::parse_channels_field, fields::join_sizes),
      {"glimpse-channels", "C,C", "conv: channels of each conv block (3x3, ReLU, 2x2 max pooling)",
       nullptr, true});
    v(hidden, {"hidden", "N", "units of the glimpse feature g and the core's state"});
    v(core, {"core", "KIND", "rnn (h = ReLU(Linear(g) + Linear(h)), the paper's) or lstm"});
    v(loc_std,
      {"loc-std", "S", "standard deviation of the location policy (locations in [-1, 1])"});
    v(random_glimpses,
      {"random-glimpses", "",
       "the ablation: every location uniform in [-1, 1]^2, nothing learned about where"});
  }
  void validate() const;  // UsageError naming the option
  // What h_g's Linear reads per glimpse: k·g·g pixels (fc), or k·C·(g / 2^blocks)² (conv).
  int64_t what_features() const;
};

// How the location policy is trained (ram-train's --loc-samples, --reward,
// --normalize-advantage).
//   samples M    each image is run M times per step, each with its own sampled glimpse path
//                (the paper's M, a lower-variance gradient); the cross-entropy is averaged
//                over the M paths, and with M >= 2 the baseline of a path is the mean reward
//                of the image's other M − 1 paths (rl::leave_one_out_baseline) instead of
//                the learned b_t (which is then not trained);
//   reward       "correct": 1 when the final argmax is right, else 0 (the paper's);
//                "prob": the probability the final softmax gives the true class (denser);
//   normalize_advantage  the advantages scaled to mean 0, standard deviation 1 over the
//                batch's rows (rl::ReinforceOptions).
struct RamPolicyOptions {
  int64_t samples = 1;
  std::string reward = "correct";
  bool normalize_advantage = false;
  void validate() const;  // UsageError / ChoiceError naming the option
};

// What a loss saw: right final classifications and the location means' saturation, counted
// over the batch's B · M glimpse paths.
struct RamLossStats {
  int64_t paths = 0;      // B · M
  int64_t correct = 0;    // paths whose final argmax is the label
  int64_t means = 0;      // location-mean components computed (2 per chosen location)
  int64_t saturated = 0;  // of them, |μ| > 0.9
};

// One pass over a batch: what each step saw and did.
struct RamTrace {
  std::vector<Tensor> locations;  // per glimpse [B, 2] (x, y), as the sensor saw them
  std::vector<Tensor> patches;    // per glimpse [B, k, g, g] (kept when asked)
};

class Ram {
 public:
  struct ConvBlock {  // a conv block of the convolutional glimpse network
    ad::Parameter* w;
    ad::Parameter* b;
  };
  Ram(nn::ParamStore& ps, const RamConfig& c, Rng& rng);
  const RamConfig& config() const { return c_; }

  struct Out {
    ad::Var logits;                  // [B, classes]
    std::vector<ad::Var> log_probs;  // per chosen location (T − 1) [B, 1]; empty if random
    std::vector<ad::Var> baselines;  // per chosen location [B, 1]
    std::vector<Tensor> means;       // per chosen location, the policy's mean μ [B, 2]
  };
  // Runs T glimpses over images [B, H, W]. Locations are drawn from `rng` (the first and,
  // with random_glimpses, all uniformly; the others from the policy), unless `fixed` gives
  // all T of them ([B, 2] each; then nothing is drawn and the log-probabilities are those
  // of the given locations). trace (optional) records locations, and patches if keep_patches.
  Out run(ad::Tape& t, const Tensor& images, Rng& rng, const std::vector<Tensor>* fixed = nullptr,
          RamTrace* trace = nullptr, bool keep_patches = false) const;

  // The glimpse network alone: patches [B, k·g·g] and locations [B, 2] → g [B, hidden].
  ad::Var glimpse_net(ad::Tape& t, ad::Var patches, ad::Var locations) const;

  // The hybrid loss of one batch, a mean over its images (see the top), trained as `policy`
  // says; what it saw in *stats. fixed (see run) gives the locations of the B · M paths,
  // image i's m-th path at row i · M + m.
  ad::Var loss(ad::Tape& t, const Tensor& images, const std::vector<int32_t>& labels, Rng& rng,
               const RamPolicyOptions& policy = {}, RamLossStats* stats = nullptr,
               const std::vector<Tensor>* fixed = nullptr) const;

 private:
  RamConfig c_;
  nn::CellKind kind_;
  std::vector<ConvBlock> gconv_;  // glimpse_net conv
  nn::Linear glimpse_in_, loc_in_, g_from_glimpse_, g_from_loc_;
  nn::Linear core_in_, core_rec_;            // rnn core
  std::unique_ptr<nn::RecurrentCell> lstm_;  // lstm core
  nn::Linear loc_, baseline_, action_;
};

// Class probabilities of every image, each the mean of `samples` passes' softmax (Monte-
// Carlo averaging over location samples), in batches of 100 on `threads` threads; draws
// come from `seed` and the batch index alone (the same for any thread count). trace: every
// glimpse's locations [N, 2] (of the first sample).
Tensor ram_predict(const Ram& m, const Tensor& images, int64_t samples, uint64_t seed, int threads,
                   RamTrace* trace = nullptr, bool keep_patches = false);
// The share of images whose most probable class is not the label.
double ram_error(const Tensor& probs, const std::vector<int32_t>& labels);

struct RamTrainOptions {
  int64_t batch = 64;
  double lr = 1e-3;
  std::string schedule = "constant";
  int64_t warmup = 0;
  int64_t eval_samples = 1;
  double loc_lr = 0.0;  // > 0: the location network's (ram.locator.*) learning rate
  RamPolicyOptions policy;
  void validate() const;
};

// Training as a module of the training layer: shuffled epochs, batches in 2 fixed slices
// (the same model for any --threads), each slice's draws from its tape's generator. Step
// metrics: reward (the batch's share of right final classifications, over its B · M paths),
// saturated (the share of location-mean components with |μ| > 0.9) and loc_norm (the
// Frobenius norm of the location network's weight matrix, after the step). With loc_lr > 0
// the location network's parameters step at loc_lr (the optimiser's per-parameter scale
// loc_lr / lr, under the same schedule), the rest at lr. Evaluation after
// every epoch: valid_error with eval_samples samples; the best epoch is kept. The candidates
// are the epochs' ends and the last step (the earliest of equal errors), so --eval-every does
// not change the model; checkpoints carry the best (best/<name>), so a resumed run keeps the
// same. The model file's result/valid_error is the kept model's, result/last_valid_error the
// last step's.
class RamTraining : public train::DatasetModule {
 public:
  RamTraining(RamConfig config, RamTrainOptions o, ImageSet train, ImageSet valid,
              int64_t steps_or_0, int64_t epochs, uint64_t seed, std::string config_yaml);
  const Ram& model() const { return *model_; }
  std::string kind() const override { return "ram"; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int slices() const override { return 2; }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  std::vector<std::string> slice_sums() const override {
    return {"correct", "paths", "saturated", "means"};
  }
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override {
    return {"reward", "saturated", "loc_norm"};
  }
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  double score() override;
  void finish(nn::ModelFile& f) override;
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;

 private:
  RamConfig cfg_;
  RamTrainOptions o_;
  ImageSet train_, valid_;
  std::unique_ptr<Ram> model_;
  bool epoch_end_ = false;  // the last step ended an epoch (its evaluation is a candidate)
  bool have_eval_ = false;
  double last_error_ = 0.0;
  train::BestParams best_{"valid_error", false};  // the best epoch's parameters
};

using LoadedRam = train::Loaded<RamConfig, Ram>;
LoadedRam load_ram(const std::string& path);

// The trace as TSV: image, glimpse, x, y, then top, left, side of each patch (1-based image
// and glimpse numbers; pixel rows and columns from 0, possibly outside the image).
std::string ram_trace_tsv(const RamConfig& c, const RamTrace& trace);

}  // namespace attnkit::models
