// Show, Attend and Tell (Xu et al. 2015), soft attention: a CNN encoder (vision/cnn.h) gives
// L annotation vectors a_1..a_L of D channels (the regions); an LSTM decoder writes the
// caption one word at a time, attending over the regions.
//
//   ā = (1/L) Σ_i a_i;  h_0 = tanh(f_init,h(ā)), c_0 = tanh(f_init,c(ā))     (the paper's 4.2.1)
//   e_ti = v · tanh(W_a a_i + W_h h_{t-1})          additive attention (ad::additive_scores)
//          (+ W_y E y_{t-1} inside the tanh with word_query: the query also sees the word
//          just emitted, which h_{t-1} has not read yet)
//   α_t = softmax(e_t);  ẑ_t = β_t Σ_i α_ti a_i,  β_t = σ(f_β(h_{t-1}))    (the gate, 4.2.1)
//   h_t, c_t = LSTM([E y_{t-1}; ẑ_t], h_{t-1}, c_{t-1})
//   p(y_t | ...) = softmax(L_o(E y_{t-1} + L_h h_t + L_z ẑ_t))             (deep output, eq. 7)
//
// Loss of an image: -Σ_t log p(y_t) + λ Σ_i (1 - Σ_t α_ti)² (the doubly stochastic
// regularisation, eq. 14), t over the caption's words and its end. The training layer divides
// the batch's sum by its number of predicted tokens.
// attention "none": the no-attention baseline (NIC-style): the context is ā at every step,
// gated the same way; the decoder is otherwise the same (and α is uniform, 1/L).
// attention "hard": stochastic hard attention (the paper's 4.1): the same α_t, but the context
// is one region a_{s_t}, s_t ~ Multinoulli(α_t). Training (forward with a HardSampling) draws,
// for each image, with probability sample_prob one location per word (the REINFORCE path) and
// otherwise takes the expected context Σ_i α_ti a_i (the soft path, as the paper does half the
// time; the authors' code draws this choice once per minibatch, here once per image). For a
// sampled image b with n_b predicted tokens and cost C_b = −log p(y|s̃, a) / n_b (its mean
// per token) the loss adds the score-function surrogate of eq. 12 and the entropy bonus,
//   reinforce · n_b (C_b − baseline) · Σ_t log p(s̃_t | a) − entropy · Σ_t H(α_t),
// With reinforce = 1 the gradient, ∇(−log p(y|s̃)) + (−log p(y|s̃) − n_b b) ∇ log p(s̃), is the
// REINFORCE estimate of ∇E_s̃[−log p(y|s̃, a)], unbiased for any b (rl/reinforce.h; the
// baseline is a moving average of the per-token cost, b ← 0.9 b + 0.1 C̄, kept by the
// trainer, so that captions of different lengths share it). The entropy term covers every
// image's live steps. Without sampling (evaluation, decoding) the context is the argmax region.
// reward (CaptionReward): "caption" is the above; "to-go" weights step t's log p(s̃_t) by the
// cost of the tokens from t on, Σ_{k>=t} c_k, against the baseline (n_b − t) b (unbiased too:
// s̃_t cannot change the earlier tokens; lower variance); "word" by its own token's c_t
// against b (biased: it ignores s̃_t's effect on later tokens through the LSTM's state).
//
// Words: a vocabulary of the training captions (data::Vocab: <pad> <bos> <eos> <unk>, then by
// count); a caption is decoded until <eos> or max_len words.
// pad: the images are padded with `pad` zeros on every side before the CNN, so that the grid
// of regions can split evenly: 56×56 scenes padded by 4 give 64×64 and, after 3 poolings, an
// 8×8 grid whose halves are the scene's halves (unpadded, 7×7, the middle row and column lie
// on the cells' border and belong to no cell).
// coords: each annotation vector gets two more channels, the centre of its region on the grid
// in (-1, 1): a_i ← [a_i; y_i; x_i], y_i = 2(r + ½)/H' − 1, x_i = 2(c + ½)/W' − 1 for region
// (r, c) (CoordConv's channels, on the regions): the keys W_a a_i, the context ẑ_t and ā then
// carry where a region is, which a padded CNN's features say only near the image's border.
// D is then the CNN's last channel count + 2 (annotation_size).
// Regions map to the scenes' 2×2 grid of cells by their centre: region (r, c) of an H'×W' grid
// is in the top half when (r + ½)/H' < ½, the bottom half when > ½ (and in no cell when its
// centre lies on the middle line: odd H'), the same for columns; cells 0..3 = top-left,
// top-right, bottom-left, bottom-right (IMAGES.md).
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
#include "attnkit/nn/rnn.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"
#include "attnkit/vision/cnn.h"

namespace attnkit::models {

enum class CaptionAttention { Soft, None, Hard };
CaptionAttention parse_caption_attention(const std::string& name);  // "soft", "none", "hard"
// Hard attention's reward for each sampled location (see CaptionModel::forward).
enum class CaptionReward { Caption, ToGo, Word };
CaptionReward parse_caption_reward(const std::string& name);  // "caption", "to-go", "word"

struct CaptionConfig {
  std::vector<int64_t> channels = {16, 32};  // the CNN's blocks
  std::string attention = "soft";
  int64_t embed = 64, hidden = 128, attn = 64;  // word embedding, LSTM units, W_a's size
  double lambda = 1.0;                          // doubly stochastic regularisation
  int64_t max_len = 20;                         // decoding: most words before <eos>
  int64_t pad = 0;          // black pixels added on every side before the CNN (aligns the regions)
  bool coords = false;      // two coordinate channels on every annotation vector (see above)
  bool word_query = false;  // the attention's query adds W_y E y_{t-1} (see above)
  // hard attention's training (see above)
  double reinforce = 1.0;          // λ_r, the REINFORCE term's weight
  double entropy = 0.002;          // λ_e, the entropy bonus (the authors' default)
  double sample_prob = 0.5;        // the share of images that sample (the rest: expected context)
  double baseline_decay = 0.9;     // the moving-average baseline's decay
  std::string reward = "caption";  // what each log p(s̃_t) is weighted by (CaptionReward)
  int64_t sample_warmup = 0;       // training steps over which the sampling share rises from 0
  // caption-train's --pad as given: "auto" or a number, made `pad` with the data's image size
  // (parse_caption_pad); the model file holds pad itself (arch/pad).
  std::string pad_option = "auto";
  // Each hyper-parameter once (core/fields.h): caption-train's options (which set coords
  // first: on unless --no-coords), the stored YAML, the loader (pad and coords: the file's
  // arch/ numbers, the options' values in files written before them).
  template <class V>
  void fields(V& v) {
    v(attention, {"attention", "KIND",
                  "soft (the paper's soft attention), hard (one region sampled per word, trained "
                  "by REINFORCE) or none (the mean region at every step)"});
    v(fields::text(channels, vision::parse_channels_field, fields::join_sizes),
      {"channels", "LIST",
       "the CNN's blocks: output channels of each conv 3x3 + batch norm + ReLU + 2x2 max pool"});
    v(embed, {"embed", "N", "word embedding size"});
    v(hidden, {"hidden", "N", "LSTM units"});
    v(attn, {"attention-size", "N", "the additive attention's size"});
    v(lambda, {"lambda", "R",
               "weight of the doubly stochastic regularisation sum_i (1 - sum_t alpha_ti)^2"});
    v(max_len, {"len-max", "N", "decoding: the most words of a caption", "max-len"});
    v(pad_option,
      {"pad", "N|auto",
       "black pixels added on every side before the CNN; auto: the fewest that make the grid of "
       "regions even (4 on 56x56 scenes: a 4x4 grid with 4 blocks, 8x8 with 3)",
       nullptr, true});
    v(fields::negated(coords),
      {"no-coords", "",
       "leave out the two coordinate channels that every region's annotation vector carries by "
       "default: the centre of the region on the grid, in (-1, 1), so that attention knows where a "
       "region lies"});
    // --coords, which had no effect once the channels became the default: stored (false) where
    // it stood; a file written before that may hold true, and has its channels.
    v(fields::retired(coords, true), {"coords", "", ""});
    v(word_query, {"word-query", "",
                   "the attention's query also sees the word just emitted: e = v . tanh(W_a a + "
                   "W_h h + W_y E y_prev)"});
    v(reinforce, {"reinforce", "R",
                  "hard: weight of the REINFORCE term n (C - b) sum_t log p(s_t) (1: unbiased)",
                  nullptr, true});
    v(entropy,
      {"entropy", "R", "hard: weight of the entropy bonus sum_t H(alpha_t)", nullptr, true});
    v(sample_prob,
      {"sample-prob", "P",
       "hard: the share of images that sample their regions (the others take the expected context)",
       nullptr, true});
    v(baseline_decay,
      {"baseline-decay", "R",
       "hard: decay of the moving-average baseline b <- decay b + (1 - decay) C", nullptr, true});
    v(reward,
      {"reward", "KIND",
       "hard: what weights each step's log p(s_t): caption (the whole caption's cost, the paper's "
       "eq. 12), to-go (the cost of the words from that step on) or word (that step's word alone)",
       nullptr, true});
    v(sample_warmup,
      {"sample-warmup", "N",
       "hard: the sampling share rises linearly from 0 to --sample-prob over the first N steps "
       "(before it, the expected context trains the attention as soft attention does)",
       nullptr, true});
  }
  void validate() const;  // UsageError
  CaptionAttention kind() const { return parse_caption_attention(attention); }
  CaptionReward reward_kind() const { return parse_caption_reward(reward); }
  // D, the size of an annotation vector: the CNN's last channel count (+ 2 with coords).
  int64_t annotation_size() const { return channels.back() + (coords ? 2 : 0); }
};

// The least padding p >= 0 (pixels on every side) with which h + 2p and w + 2p both divide
// by 2^(blocks + 1): `blocks` 2x2 poolings then leave an even grid of regions, whose halves
// are the image's halves (56x56 scenes: 4, an 8x8 grid with 3 blocks, 4x4 with 4; 28x28
// with 4 blocks: 2, a 2x2 grid); 0 when no p does (e.g. an odd side) or blocks is 0.
// caption-train's `--pad auto`, its default.
int64_t even_grid_pad(int64_t h, int64_t w, size_t blocks);
// caption-train's --pad: "auto" (even_grid_pad of h x w images and `blocks`) or a whole
// number (UsageError otherwise; the range is CaptionConfig::validate's).
int64_t parse_caption_pad(const std::string& text, int64_t h, int64_t w, size_t blocks);

// Images and their captions (IMAGES.md): images [N, H, W], one caption per image, each token's
// cell (-1 for tokens that name no item; empty when the file has no second column).
struct CaptionData {
  Tensor images;
  std::vector<std::vector<std::string>> captions;
  std::vector<std::vector<int32_t>> cells;
  int64_t size() const { return images.rank() ? images.dim(0) : 0; }
};
// Reads images (an .npz with an "images" member, or any tensor spec io::read_tensor reads,
// [N, H, W]) and captions (TSV: CAPTION[<TAB>TOKEN_CELLS]). DataError naming the file and line:
// a count that differs from N, an empty caption, TOKEN_CELLS not one integer in -1..3 per
// token, images not [N, H, W].
CaptionData read_caption_data(const std::string& images, const std::string& captions);
// Only the images (for captioning without references).
Tensor read_caption_images(const std::string& images);
// What caption-run captions: images [N, H, W] as read_caption_images reads them, or one grey
// picture [H, W] → [1, H, W]: PGM or PNG (io/tensor_io.h: samples / maxval, colour as luma),
// .npy or a text matrix. The models are trained on light items on a black (0) background;
// `invert` takes 1 − v for pictures drawn dark on light. DataError naming the file: another
// rank, a non-finite value, and with `invert` a value outside [0, 1].
Tensor read_caption_input(const std::string& spec, bool invert = false);

// The cell (0..3) of region l on an h × w grid, -1 for none (see above).
int cell_of_region(int64_t l, int64_t h, int64_t w);
// The coordinate channels of an h × w grid: [h·w, 2], row l = (y, x) of region l (see coords).
Tensor region_coords(int64_t h, int64_t w);

class CaptionModel {
 public:
  CaptionModel(nn::ParamStore& ps, const CaptionConfig& c, data::Vocab vocab, Rng& rng);
  const CaptionConfig& config() const { return c_; }
  const data::Vocab& vocab() const { return vocab_; }
  vision::CnnEncoder& encoder() { return cnn_; }
  const vision::CnnEncoder& encoder() const { return cnn_; }

  // Hard attention's training pass: where the draws come from and the baseline to use.
  struct HardSampling {
    Rng* rng = nullptr;
    double baseline = 0.0;
    bool baseline_started = false;  // false: the pass's mean sampled cost is the baseline
    double sample_prob = -1.0;      // the share of images that sample (< 0: the config's)
    // Tests: forced locations, [step][image] (then every image samples; rng is not used).
    const std::vector<std::vector<int32_t>>* forced = nullptr;
  };
  struct Forward {
    ad::Var nll;                 // Σ over the batch's tokens of -log p
    ad::Var reg;                 // Σ over images of Σ_i (1 - Σ_t α_ti)²
    ad::Var loss;                // nll + λ reg (+ the hard terms when sampling)
    int64_t tokens = 0;          // predicted tokens (words and ends)
    std::vector<ad::Var> alpha;  // per step [B, L] (steps = the longest caption + 1)
    // hard attention, sampling: the images that sampled, their costs C_b (mean -log p per
    // token), Σ_t log p(s̃_t) per image [B, 1] (0 for the others), and the surrogate terms
    std::vector<uint8_t> sampled;
    std::vector<double> costs;
    std::vector<std::vector<double>> token_costs;  // [step][image]: -log p of the token (0: none)
    ad::Var log_pi, policy, entropy;
  };
  // Teacher-forced pass over images [B, H, W] with their captions (word ids, without <bos> and
  // <eos>). On a training tape `bn_sums` (optional) receives the CNN's batch-norm sums. `hard`
  // (hard attention only): the stochastic training pass; without it hard attention takes the
  // argmax region.
  Forward forward(ad::Tape& t, ad::Var images, const std::vector<std::vector<int32_t>>& captions,
                  std::vector<double>* bn_sums = nullptr, const HardSampling* hard = nullptr) const;

  struct Decoded {
    std::vector<int32_t> words;  // without <eos>
    // [steps, L]: one row per generated word (and the <eos> step): α, or for hard attention
    // the region it looked at (one-hot)
    Tensor alpha;
  };
  // Greedy decoding of images [B, H, W] (an evaluation pass: running statistics).
  std::vector<Decoded> greedy(const Tensor& images) const;
  // Beam search of one image [H, W] with k hypotheses: the finished caption of the highest
  // total log-probability (no length normalisation); k = 1 is greedy decoding.
  Decoded beam(const Tensor& image, int k) const;
  // The regions' grid (H', W') for images of H × W.
  std::pair<int64_t, int64_t> grid(int64_t h, int64_t w) const {
    return {cnn_.out_size(h + 2 * c_.pad), cnn_.out_size(w + 2 * c_.pad)};
  }
  std::vector<int32_t> encode(const std::vector<std::string>& words) const;

 private:
  struct Encoded;
  struct Step;
  Encoded encode_images(ad::Tape& t, ad::Var images, std::vector<double>* sums) const;
  struct Pick;
  Step step(ad::Tape& t, const Encoded& e, const std::vector<int32_t>& prev, const nn::State& s,
            Pick* pick = nullptr) const;
  CaptionConfig c_;
  CaptionAttention kind_;
  CaptionReward reward_;
  data::Vocab vocab_;
  vision::CnnEncoder cnn_;
  nn::Linear init_h_, init_c_;      // D → hidden
  nn::Embedding embed_;             // V × embed
  nn::Linear wa_, wh_;              // D → attn (no bias), hidden → attn
  std::unique_ptr<nn::Linear> wy_;  // word_query: embed → attn (no bias)
  ad::Parameter* v_;                // [attn]
  nn::Linear f_beta_;               // hidden → 1
  nn::RecurrentCell lstm_;          // [embed + D] → hidden
  nn::Linear l_h_, l_z_, l_o_;      // hidden → embed, D → embed, embed → V
};

// ---- evaluation (caption-run --eval, the trainer's validation)
struct CaptionScore {
  int64_t images = 0;
  double bleu4 = 0;         // corpus BLEU-4 in [0, 1] (sacreBLEU's defaults, eval/bleu.h)
  int64_t nouns = 0;        // reference tokens with a cell
  double noun_in_cell = 0;  // share of them whose α argmax lies in their item's cell
  double coverage_dev = 0;  // mean over images and regions of |1 - Σ_t α_ti|
};
// Decodes every image (greedy in batches of 64, or beam k > 1), on `threads` threads (0: all),
// and scores the captions against the references. The attention figures come from a
// teacher-forced pass over the reference captions (so every noun has its α).
CaptionScore evaluate_captions(const CaptionModel& m, const CaptionData& d, int beam, int threads,
                               std::vector<CaptionModel::Decoded>* outputs = nullptr);
std::vector<CaptionModel::Decoded> decode_captions(const CaptionModel& m, const Tensor& images,
                                                   int beam, int threads);

struct CaptionTrainOptions {
  int64_t batch = 64;
  double lr = 1e-3;
  std::string schedule = "constant";
  int64_t warmup = 0;
  // A caption model file whose weights (and the CNN's running statistics) start the run instead
  // of the seeded initialisation: the warm start of a hard model from a soft one. Its sizes
  // (channels, coords, embed, hidden, attention-size) and vocabulary must be this run's
  // (DataError naming the file otherwise); the attention kind and the training options may
  // differ.
  std::string init;
  void validate() const;
};

// Training as a module of the training layer: shuffled epochs in 4 fixed slices; the loss per
// predicted token; the CNN's running statistics move once a step by the whole batch
// (CnnEncoder::update_running); evaluation: greedy decoding of the validation images, BLEU-4.
class CaptionTraining : public train::DatasetModule {
 public:
  CaptionTraining(CaptionConfig config, CaptionTrainOptions o, CaptionData train, CaptionData valid,
                  int64_t steps_or_0, int64_t epochs, uint64_t seed, std::string config_yaml);
  const CaptionModel& model() const { return *model_; }
  std::string kind() const override { return "caption"; }
  void describe(nn::ModelFile& f) const override;
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;
  int slices() const override { return 4; }
  std::vector<std::string> slice_sums() const override;
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  train::StepEnd end_step(const nn::TrainState& s, double loss,
                          const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  void finish(nn::ModelFile& f) override;

 private:
  void on_batch(const nn::TrainState& s) override { step_ = s.step; }
  CaptionConfig cfg_;
  CaptionTrainOptions o_;
  CaptionData train_, valid_;
  std::vector<std::vector<int32_t>> ids_;
  std::unique_ptr<CaptionModel> model_;
  int64_t step_ = 0;                    // the current step (hard attention's sampling warm-up)
  rl::MovingAverageBaseline baseline_;  // hard attention: the moving average of the cost
};

using LoadedCaption = train::Loaded<CaptionConfig, CaptionModel>;
LoadedCaption load_caption(const std::string& path);

}  // namespace attnkit::models
