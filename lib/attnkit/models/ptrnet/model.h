// Pointer networks (Vinyals, Fortunato & Jaitly 2015): an LSTM encoder over the input points,
// an LSTM decoder whose input is the embedding of the point it chose last, and additive
// attention used as the output: p(c_m = j | c_<m, x) = softmax_j(vᵀ tanh(W e_j + U d_m)).
//
// Positions: 0 is the end of the output (a learned vector in the encoder's place), 1..n the
// input points, so the indices are the problem files' 1-based ones. Every answer is followed
// by the end position. The decoder starts from the encoder's final state with a learned "go"
// input. Points are embedded by a linear map of their coordinates (the paper feeds them to the
// LSTM directly: the same up to the LSTM's input weights).
//
// Masking (on by default; off reproduces the paper): a chosen point cannot be chosen again,
// except the first one, which closes a hull (any time) or a tour (after every point); after
// the closing point only the end remains; sorting can end only after every point, a tour only
// when closed. Masked positions get probability exactly 0, in training as in decoding.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/rnn.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"

namespace attnkit::models {

struct PtrNetConfig {
  std::string task = "sort";          // sort, hull or tsp
  int64_t embed = 128, hidden = 128;  // the attention's size is hidden
  bool mask = true;
  // The encoder reads the points both ways (each output sees every point; the decoder starts
  // from the forward direction's state). Not the paper's model: an option for hulls, where
  // whether a point is a vertex depends on the points after it.
  bool bidirectional = false;
  // Each hyper-parameter once (core/fields.h): the tool's options, the stored YAML, the loader.
  template <class V>
  void fields(V& v) {
    v(task,
      {"task", "TASK", "sort, hull or tsp: how the files' lines read, and what the mask allows"});
    v(embed, {"embed", "N", "the points' embedding size"});
    v(hidden,
      {"hidden", "N", "LSTM units of the encoder and the decoder, and the attention's size"});
    v(fields::negated(mask),
      {"no-mask", "", "let the decoder choose a point again (the paper's model)"});
    v(bidirectional, {"bidirectional", "",
                      "read the points both ways (not the paper's model: each encoder output then "
                      "sees every point)"});
  }
  void validate() const;
  data::PtrTask kind() const { return data::parse_ptr_task(task); }
};

// Which positions (0 = end, 1..n) the mask leaves open after the 1-based choices `seq`.
std::vector<uint8_t> ptr_allowed(data::PtrTask task, bool mask, int64_t n,
                                 const std::vector<int32_t>& seq);

class PtrNet {
 public:
  PtrNet(nn::ParamStore& ps, const PtrNetConfig& c, Rng& rng);
  const PtrNetConfig& config() const { return c_; }
  // The summed cross-entropy over each item's answer and its end, and how many (teacher
  // forcing). DataError when an answer is empty or the mask forbids one of its steps.
  ad::Var loss(ad::Tape& t, const std::vector<const data::PtrProblem*>& items,
               int64_t* tokens) const;
  // Greedy decoding of several problems at once (any sizes); without the end (1-based).
  // attention (optional): per problem, each step's distribution over [end, 1..n]
  // ([steps, n + 1]).
  std::vector<std::vector<int32_t>> greedy(const std::vector<const data::PtrProblem*>& ps,
                                           std::vector<Tensor>* attention = nullptr) const;
  // Beam search with k hypotheses: the finished output of the highest total log-probability
  // (no length normalisation). k = 1 is greedy decoding.
  std::vector<int32_t> beam(const data::PtrProblem& p, int k, Tensor* attention = nullptr) const;
  // The most steps a decoding takes for n points.
  static int64_t max_steps(int64_t n) { return 2 * n + 2; }

 private:
  struct Encoded;
  Encoded encode(ad::Tape& t, const std::vector<const data::PtrProblem*>& ps) const;
  ad::Var scores(ad::Tape& t, ad::Var keys, const nn::State& s) const;
  PtrNetConfig c_;
  data::PtrTask task_;
  nn::Linear in_;  // coordinates → embed
  nn::RecurrentEncoder encoder_;
  nn::RecurrentCell decoder_;
  nn::Embedding go_, end_;  // [1, embed], [1, hidden]
  nn::Linear wk_, wq_;      // hidden → hidden (the pointer's W and U)
  ad::Parameter* v_;        // [hidden]
};

// ---- evaluation (ptr-run --eval, the trainer's validation)
struct PtrScore {
  int64_t problems = 0;
  double exact = 0, valid = 0;  // shares
  int64_t measured = 0;         // valid outputs (the means below are over them)
  double length = 0, optimum = 0,
         nn = 0;        // tsp: mean tour lengths (prediction, answer, nearest neighbour)
  double coverage = 0;  // hull: mean area of the prediction / the answer's
};
// Decodes every problem: greedy in batches of 64, or beam search (beam > 1) one at a time,
// on `threads` threads (0: all); the outputs without the end.
std::vector<std::vector<int32_t>> decode_ptr(const PtrNet& m,
                                             const std::vector<data::PtrProblem>& ps, int beam,
                                             int threads);
// Decodes (greedy, or beam k > 1) every problem (with answers) and scores it, by n and
// over all (key -1).
std::map<int64_t, PtrScore> evaluate_ptr(const PtrNet& m, const std::vector<data::PtrProblem>& ps,
                                         int beam, int threads,
                                         std::vector<std::vector<int32_t>>* outputs = nullptr);
std::string ptr_score_tsv(data::PtrTask task, const std::map<int64_t, PtrScore>& s);

struct PtrTrainOptions {
  int64_t batch = 128;
  double lr = 1e-3;
  std::string schedule = "constant";  // or inverse-sqrt (after `warmup` steps)
  int64_t warmup = 0;
  // The data files, for messages: a problem's error names its file and line.
  std::string train_file, valid_file;
  void validate() const;
};

// Training as a module of the training layer: shuffled epochs of batches in 2 fixed slices
// (larger products than 4 would give: bench/README.md), the loss a mean per output step;
// evaluation: greedy decoding of the validation problems (exact share, valid share, and for
// tours the mean length over the answers' minus 1).
class PtrTraining : public train::DatasetModule {
 public:
  PtrTraining(PtrNetConfig config, PtrTrainOptions o, std::vector<data::PtrProblem> train,
              std::vector<data::PtrProblem> valid, int64_t steps_or_0, int64_t epochs,
              uint64_t seed, std::string config_yaml);
  const PtrNet& model() const { return *model_; }
  std::string kind() const override { return "ptrnet"; }
  int slices() const override { return 2; }
  // Threads beyond the 2 slices compute panels of the slices' large products (train/module.h):
  // without them 2 slices cap a step at 2 threads.
  bool split_products() const override { return true; }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }

 private:
  PtrNetConfig cfg_;
  PtrTrainOptions o_;
  std::vector<data::PtrProblem> train_, valid_;
  std::unique_ptr<PtrNet> model_;
};

using LoadedPtrNet = train::Loaded<PtrNetConfig, PtrNet>;
LoadedPtrNet load_ptrnet(const std::string& path);

}  // namespace attnkit::models
