// Meta-reinforcement learning on Bernoulli multi-armed bandits (SNAIL, Mishra et al. 2018,
// Section 4.3 and Table 3; the task of Duan et al.'s RL², 2016): each episode is a new
// bandit of K arms whose success probabilities are drawn from U[0, 1]; the agent pulls N
// times and its return is the number of successes. A policy that learns across episodes
// how to explore and exploit within one is what is trained, by REINFORCE (rl/reinforce.h).
//
// The SNAIL policy: at time t it reads (one-hot a_{t−1}, r_{t−1}, t / N) and outputs
// logits over the K arms and a value (the learned baseline), through
// Linear → TC → attention → TC → attention (Appendix B's bandit architecture, sizes set by
// BanditConfig). Causality lets a whole episode be re-read in one pass once its actions
// are known: the rollout samples step by step, the training pass is one forward.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/fields.h"
#include "attnkit/core/rng.h"
#include "attnkit/models/snail/blocks.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/basic_module.h"
#include "attnkit/train/best.h"
#include "attnkit/train/loaded.h"

namespace attnkit::rl {

struct BanditConfig {
  int64_t arms = 5;      // K
  int64_t pulls = 10;    // N
  int64_t width = 32;    // the input projection
  int64_t filters = 32;  // each dense block's filters
  int64_t key = 16;      // attention: key and query size
  int64_t value = 16;    // attention: value size
  // Each hyper-parameter once (core/fields.h): snail-train's options, the stored YAML, the
  // loaders (the few-shot model takes filters, key and value from here too).
  template <class V>
  void fields(V& v) {
    v(arms, {"arms", "K", "arms of each bandit"});
    v(pulls, {"pulls", "N", "pulls per episode"});
    v(width, {"embed", "N", "the observations' embedding size (a linear projection)", "width"});
    v(filters, {"filters", "N", "filters of each dense block"});
    v(key, {"key-size", "N", "attention key and query size"});
    v(value, {"value-size", "N", "attention value size"});
  }
  void validate() const;  // UsageError naming the field
};

class SnailBanditPolicy {
 public:
  SnailBanditPolicy(nn::ParamStore& ps, const BanditConfig& c, Rng& rng);
  // inputs [B, T, K + 2] → logits [B, T, K] and values [B, T, 1].
  struct Out {
    Var logits, values;
  };
  Out operator()(Tape& t, Var inputs) const;
  const BanditConfig& config() const { return c_; }

 private:
  BanditConfig c_;
  nn::Linear in_;
  nn::TCBlock tc1_;
  nn::AttentionBlock at1_;
  nn::TCBlock tc2_;
  nn::AttentionBlock at2_;
  nn::Linear policy_, value_;
};

// One batch of bandits: probs [episodes x arms], row-major.
struct BanditBatch {
  int64_t episodes = 0, arms = 0;
  std::vector<double> probs;
  double p(int64_t e, int64_t a) const { return probs[static_cast<size_t>(e * arms + a)]; }
};
BanditBatch draw_bandits(int64_t episodes, int64_t arms, Rng& rng);

// Played episodes: actions and rewards [episodes x pulls].
struct Rollout {
  int64_t episodes = 0, pulls = 0;
  std::vector<int32_t> actions;
  std::vector<float> rewards;
  double mean_return() const;
  double return_se() const;  // standard error of the mean return over episodes
};

// The policy's inputs for played steps: [episodes, T, K + 2] for the first T steps.
Tensor policy_inputs(const Rollout& r, int64_t arms, int64_t steps);

// Plays the bandits with the policy: sampled actions (greedy: the argmax), rewards drawn
// with `rng`. Without gradients (a scratch tape).
Rollout play(const SnailBanditPolicy& policy, const BanditBatch& bandits, Rng& rng,
             bool greedy = false);

// Baselines on the same bandits: "random", "greedy" (the best empirical mean so far, each
// arm once first), "ucb1" (Auer et al. 2002), "thompson" (Beta(1, 1) priors), "oracle"
// (the best arm every pull: an upper bound no agent reaches).
Rollout play_baseline(const std::string& name, const BanditBatch& bandits, int64_t pulls, Rng& rng);
const std::vector<std::string>& baseline_names();

// Every agent on the same `episodes` bandits drawn from `seed`, each with its own stream of
// reward draws: the policy sampled ("snail") and greedy ("snail-greedy") when one is given,
// then the baselines. TSV: agent, mean_return, se (over episodes), episodes.
struct AgentScore {
  std::string agent;
  double mean = 0.0, se = 0.0;
  Rollout rollout;
};
std::vector<AgentScore> compare_agents(const SnailBanditPolicy* policy, int64_t arms, int64_t pulls,
                                       int64_t episodes, uint64_t seed,
                                       BanditBatch* bandits = nullptr);
std::string agents_tsv(const std::vector<AgentScore>& scores);
// One row per pull: episode, pull, action, reward, best_arm (1-based arms and episodes).
std::string rollout_tsv(const Rollout& r, const BanditBatch& bandits);

struct BanditTrainOptions {
  int64_t batch = 64;  // episodes per step
  double lr = 1e-3;
  double entropy = 0.01;  // β of the entropy bonus
  double value_weight = 0.5;
  double discount = 1.0;  // γ of the returns-to-go
  bool normalize_advantage = false;
  int64_t eval_episodes = 1000;
  void validate() const;
  // snail-train's keys (batch and lr come from its training options).
  template <class V>
  void fields(V& v) {
    v(entropy, {"entropy", "B", "weight of the entropy bonus"});
    v(value_weight, {"value-weight", "W", "weight of the baseline's squared error"});
    v(discount, {"discount", "G", "discount of the returns-to-go"});
    v(normalize_advantage, {"normalize-advantage", "", "normalise the advantages of each slice"});
    v(eval_episodes,
      {"eval-episodes", "N", "bandits (or few-shot episodes) of each evaluation (a fixed set)"});
  }
};

// Meta-training as a module of the training layer: each step plays o.batch fresh bandits
// (drawn from a generator kept in checkpoints) in 4 slices (fixed: the same model for any
// --threads or MPI ranks), and the loss is the REINFORCE loss over every step of every
// episode with the value head as the baseline. Step metric: the batch's mean return.
// Evaluation: the mean return of the sampled policy on eval_episodes bandits of a fixed
// seed (the same at every evaluation). The model kept is the best evaluation's, not the last
// (REINFORCE's return wanders: it may peak before the end), among the evaluations at every
// kBestEvery-th step and the last (a fixed schedule, evaluated whatever --eval-every says, so
// that how often the log evaluates does not change the model): its parameters are copied at
// each new best, carried in checkpoints (best/<parameter>, best/eval_return), and written as
// the model, with result/eval_return the best and result/last_eval_return the last.
class BanditTraining : public train::DrawnModule {
 public:
  BanditTraining(BanditConfig config, BanditTrainOptions options, int64_t steps, uint64_t seed,
                 std::string config_yaml = "");
  const SnailBanditPolicy& policy() const { return *policy_; }
  std::string kind() const override { return "snail-bandit"; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int slices() const override { return 4; }
  int64_t begin_batch(const nn::TrainState& s) override;
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  std::vector<std::string> slice_sums() const override { return {"return"}; }
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override { return {"return"}; }
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override { return {"eval_return"}; }
  static constexpr int64_t kBestEvery = 500;
  bool eval_due(const nn::TrainState& s) const override { return s.step % kBestEvery == 0; }
  double score() override;
  void finish(nn::ModelFile& f) override;
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;

 private:
  BanditConfig cfg_;
  BanditTrainOptions o_;
  std::unique_ptr<SnailBanditPolicy> policy_;
  BanditBatch batch_;
  double last_eval_ = 0.0;
  bool have_eval_ = false;
  int64_t step_ = 0;  // the steps done (end_step), for the best's schedule
  train::BestParams best_{"eval_return", true};  // the best evaluation's parameters
};

using LoadedBandit = train::Loaded<BanditConfig, SnailBanditPolicy>;
LoadedBandit load_bandit(const std::string& path);

// The configuration a model file stores (the keys of snail-train).
BanditConfig bandit_config_from_yaml(const std::string& yaml, const std::string& file);

}  // namespace attnkit::rl
