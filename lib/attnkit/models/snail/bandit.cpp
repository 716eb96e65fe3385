#include "attnkit/models/snail/bandit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/io/config.h"
#include "attnkit/train/load.h"

namespace attnkit::rl {

void BanditConfig::validate() const {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw UsageError(what);
  };
  need(arms >= 2 && arms <= 1000, "arms must be from 2 to 1000");
  need(pulls >= 1 && pulls <= 10000, "pulls must be from 1 to 10000");
  need(width >= 1 && filters >= 1 && key >= 1 && value >= 1,
       "embed, filters, key-size and value-size must be >= 1");
}

void BanditTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  if (!(entropy >= 0)) throw UsageError("entropy must be >= 0");
  if (!(value_weight >= 0)) throw UsageError("value-weight must be >= 0");
  if (!(discount > 0 && discount <= 1)) throw UsageError("discount must be in (0, 1]");
  if (eval_episodes < 1) throw UsageError("eval-episodes must be >= 1");
}

SnailBanditPolicy::SnailBanditPolicy(nn::ParamStore& ps, const BanditConfig& c, Rng& rng)
    : c_((c.validate(), c)),
      in_(ps, "snail.input", c.arms + 2, c.width, rng),
      tc1_(ps, "snail.tc1", c.width, c.pulls, c.filters, rng),
      at1_(ps, "snail.attn1", tc1_.out_channels(), c.key, c.value, rng),
      tc2_(ps, "snail.tc2", at1_.out_channels(), c.pulls, c.filters, rng),
      at2_(ps, "snail.attn2", tc2_.out_channels(), c.key, c.value, rng),
      policy_(ps, "snail.policy", at2_.out_channels(), c.arms, rng),
      value_(ps, "snail.value", at2_.out_channels(), 1, rng) {}

SnailBanditPolicy::Out SnailBanditPolicy::operator()(Tape& t, Var inputs) const {
  Var h = ad::relu(in_(t, inputs));
  h = at2_(t, tc2_(t, at1_(t, tc1_(t, h))));
  return {policy_(t, h), value_(t, h)};
}

BanditBatch draw_bandits(int64_t episodes, int64_t arms, Rng& rng) {
  BanditBatch b;
  b.episodes = episodes;
  b.arms = arms;
  b.probs.resize(static_cast<size_t>(episodes * arms));
  for (double& p : b.probs) p = rng.uniform_double();
  return b;
}

double Rollout::mean_return() const {
  double s = 0.0;
  for (float r : rewards) s += r;
  return episodes ? s / static_cast<double>(episodes) : 0.0;
}

double Rollout::return_se() const {
  if (episodes < 2) return 0.0;
  const double m = mean_return();
  double ss = 0.0;
  for (int64_t e = 0; e < episodes; ++e) {
    double g = 0.0;
    for (int64_t t = 0; t < pulls; ++t) g += rewards[static_cast<size_t>(e * pulls + t)];
    ss += (g - m) * (g - m);
  }
  return std::sqrt(ss / static_cast<double>(episodes - 1) / static_cast<double>(episodes));
}

Tensor policy_inputs(const Rollout& r, int64_t arms, int64_t steps) {
  const int64_t c = arms + 2;
  Tensor x({r.episodes, steps, c}, 0.0f);
  for (int64_t e = 0; e < r.episodes; ++e)
    for (int64_t t = 0; t < steps; ++t) {
      float* row = x.data() + (e * steps + t) * c;
      if (t > 0) {
        const size_t prev = static_cast<size_t>(e * r.pulls + t - 1);
        row[r.actions[prev]] = 1.0f;
        row[arms] = r.rewards[prev];
      }
      row[arms + 1] = static_cast<float>(t) / static_cast<float>(r.pulls);
    }
  return x;
}

namespace {

Rollout empty_rollout(int64_t episodes, int64_t pulls) {
  Rollout r;
  r.episodes = episodes;
  r.pulls = pulls;
  r.actions.assign(static_cast<size_t>(episodes * pulls), 0);
  r.rewards.assign(static_cast<size_t>(episodes * pulls), 0.0f);
  return r;
}

float pull(const BanditBatch& b, int64_t e, int32_t a, Rng& rng) {
  return rng.uniform_double() < b.p(e, a) ? 1.0f : 0.0f;
}

// Beta(a, b) for whole a, b >= 1: X / (X + Y) with Gamma(a) and Gamma(b) as sums of
// exponentials.
double beta_sample(int64_t a, int64_t b, Rng& rng) {
  auto gamma = [&](int64_t k) {
    double s = 0.0;
    for (int64_t i = 0; i < k; ++i) s -= std::log(1.0 - rng.uniform_double());
    return s;
  };
  const double x = gamma(a), y = gamma(b);
  return x / (x + y);
}

}  // namespace

Rollout play(const SnailBanditPolicy& policy, const BanditBatch& bandits, Rng& rng, bool greedy) {
  const int64_t n = policy.config().pulls, k = policy.config().arms;
  if (bandits.arms != k)
    throw ShapeError("the bandits have " + std::to_string(bandits.arms) + " arms, the policy " +
                     std::to_string(k));
  Rollout r = empty_rollout(bandits.episodes, n);
  ad::Tape tape;  // one for the episode's pulls: its pool serves every pull after the first
  tape.set_recording(false);
  for (int64_t t = 0; t < n; ++t) {
    tape.clear();
    const Tensor& logits = policy(tape, tape.constant(policy_inputs(r, k, t + 1))).logits.value();
    Tensor now({bandits.episodes, k});
    for (int64_t e = 0; e < bandits.episodes; ++e)
      std::copy(logits.data() + (e * (t + 1) + t) * k, logits.data() + (e * (t + 1) + t + 1) * k,
                now.data() + e * k);
    const std::vector<int32_t> a = greedy ? argmax_rows(now) : sample_categorical(now, rng);
    for (int64_t e = 0; e < bandits.episodes; ++e) {
      const size_t i = static_cast<size_t>(e * n + t);
      r.actions[i] = a[static_cast<size_t>(e)];
      r.rewards[i] = pull(bandits, e, r.actions[i], rng);
    }
  }
  return r;
}

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names = {"random", "greedy", "ucb1", "thompson", "oracle"};
  return names;
}

Rollout play_baseline(const std::string& name, const BanditBatch& bandits, int64_t pulls,
                      Rng& rng) {
  const auto& names = baseline_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UsageError("unknown bandit baseline '" + name + "'");
  const int64_t k = bandits.arms;
  Rollout r = empty_rollout(bandits.episodes, pulls);
  for (int64_t e = 0; e < bandits.episodes; ++e) {
    std::vector<int64_t> wins(static_cast<size_t>(k), 0), tries(static_cast<size_t>(k), 0);
    for (int64_t t = 0; t < pulls; ++t) {
      int32_t a = 0;
      if (name == "random") {
        a = static_cast<int32_t>(rng.below(static_cast<uint64_t>(k)));
      } else if (name == "oracle") {
        for (int64_t j = 1; j < k; ++j)
          if (bandits.p(e, j) > bandits.p(e, a)) a = static_cast<int32_t>(j);
      } else if (name == "thompson") {
        double best = -1.0;
        for (int64_t j = 0; j < k; ++j) {
          const double s = beta_sample(1 + wins[j], 1 + tries[j] - wins[j], rng);
          if (s > best) best = s, a = static_cast<int32_t>(j);
        }
      } else if (t < k) {  // greedy and ucb1: every arm once first
        a = static_cast<int32_t>(t);
      } else {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < k; ++j) {
          double v = static_cast<double>(wins[j]) / static_cast<double>(tries[j]);
          if (name == "ucb1") v += std::sqrt(2.0 * std::log(static_cast<double>(t)) / tries[j]);
          if (v > best) best = v, a = static_cast<int32_t>(j);
        }
      }
      const size_t i = static_cast<size_t>(e * pulls + t);
      r.actions[i] = a;
      r.rewards[i] = pull(bandits, e, a, rng);
      ++tries[a];
      wins[a] += r.rewards[i] > 0;
    }
  }
  return r;
}

std::vector<AgentScore> compare_agents(const SnailBanditPolicy* policy, int64_t arms, int64_t pulls,
                                       int64_t episodes, uint64_t seed, BanditBatch* bandits_out) {
  if (episodes < 1) throw UsageError("episodes must be >= 1");
  Rng draw(seed);
  const BanditBatch b = draw_bandits(episodes, arms, draw);
  std::vector<AgentScore> out;
  uint64_t stream = 1;
  auto add = [&](const std::string& name, Rollout r) {
    out.push_back({name, r.mean_return(), r.return_se(), std::move(r)});
  };
  if (policy) {
    Rng r1(seed + 0x9E3779B97F4A7C15ull * stream++);
    add("snail", play(*policy, b, r1));
    Rng r2(seed + 0x9E3779B97F4A7C15ull * stream++);
    add("snail-greedy", play(*policy, b, r2, true));
  } else {
    stream += 2;
  }
  for (const std::string& name : baseline_names()) {
    Rng r(seed + 0x9E3779B97F4A7C15ull * stream++);
    add(name, play_baseline(name, b, pulls, r));
  }
  if (bandits_out) *bandits_out = b;
  return out;
}

std::string agents_tsv(const std::vector<AgentScore>& scores) {
  std::string s = "agent\tmean_return\tse\tepisodes\n";
  char buf[160];
  for (const AgentScore& a : scores) {
    std::snprintf(buf, sizeof buf, "%s\t%.3f\t%.3f\t%lld\n", a.agent.c_str(), a.mean, a.se,
                  static_cast<long long>(a.rollout.episodes));
    s += buf;
  }
  return s;
}

std::string rollout_tsv(const Rollout& r, const BanditBatch& b) {
  std::string s = "episode\tpull\taction\treward\tbest_arm\n";
  char buf[96];
  for (int64_t e = 0; e < r.episodes; ++e) {
    int64_t best = 0;
    for (int64_t j = 1; j < b.arms; ++j)
      if (b.p(e, j) > b.p(e, best)) best = j;
    for (int64_t t = 0; t < r.pulls; ++t) {
      const size_t i = static_cast<size_t>(e * r.pulls + t);
      std::snprintf(buf, sizeof buf, "%lld\t%lld\t%d\t%g\t%lld\n", static_cast<long long>(e + 1),
                    static_cast<long long>(t + 1), r.actions[i] + 1,
                    static_cast<double>(r.rewards[i]), static_cast<long long>(best + 1));
      s += buf;
    }
  }
  return s;
}

// ---- training

BanditTraining::BanditTraining(BanditConfig config, BanditTrainOptions options, int64_t steps,
                               uint64_t seed, std::string config_yaml)
    : DrawnModule(steps, seed, std::move(config_yaml), "bandits", seed ^ 0xBA4D17ULL),
      cfg_(std::move(config)),
      o_(std::move(options)) {
  cfg_.validate();
  o_.validate();
  Rng init(seed);
  policy_ = std::make_unique<SnailBanditPolicy>(ps_, cfg_, init);
  opt_ = std::make_unique<nn::Adam>(ps_.params(), o_.lr);
}

void BanditTraining::describe(nn::ModelFile& f) const {
  DrawnModule::describe(f);
  f.set_arch("arms", cfg_.arms);
  f.set_arch("pulls", cfg_.pulls);
}

void BanditTraining::check_resume(const nn::ModelFile& ck) const {
  if (ck.arch("arms", 2, 1000, "bandit/arms") != cfg_.arms ||
      ck.arch("pulls", 1, 10000, "bandit/pulls") != cfg_.pulls)
    throw DataError("the checkpoint was trained for other arms or pulls", ck.file);
}

int64_t BanditTraining::begin_batch(const nn::TrainState&) {
  batch_ = draw_bandits(o_.batch, cfg_.arms, draws());
  return o_.batch;
}

train::Slice BanditTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  BanditBatch sub;
  sub.episodes = end - begin;
  sub.arms = cfg_.arms;
  sub.probs.assign(batch_.probs.begin() + begin * cfg_.arms,
                   batch_.probs.begin() + end * cfg_.arms);
  const Rollout r = play(*policy_, sub, t.rng());
  const int64_t n = cfg_.pulls, k = cfg_.arms, rows = sub.episodes * n;
  SnailBanditPolicy::Out out = (*policy_)(t, t.constant(policy_inputs(r, k, n)));
  Var logits = ad::reshape(out.logits, {rows, k});
  Var values = ad::reshape(out.values, {rows, 1});
  std::vector<float> togo(static_cast<size_t>(rows));
  for (int64_t e = 0; e < sub.episodes; ++e) {
    double g = 0.0;
    for (int64_t s = n - 1; s >= 0; --s) {
      const size_t i = static_cast<size_t>(e * n + s);
      g = r.rewards[i] + o_.discount * g;
      togo[i] = static_cast<float>(g);
    }
  }
  ReinforceOptions ro;
  ro.entropy = o_.entropy;
  ro.value_weight = o_.value_weight;
  ro.normalize_advantage = o_.normalize_advantage;
  PolicyLoss L = reinforce_loss(t, categorical_log_prob(logits, r.actions), togo, values, ro,
                                categorical_entropy(logits));
  train::Slice s;
  s.loss = L.total;
  s.weight = static_cast<double>(rows);
  s.sums = {r.mean_return() * static_cast<double>(sub.episodes)};
  return s;
}

train::StepEnd BanditTraining::end_step(const nn::TrainState& s, double,
                                        const train::Metrics& sums) {
  step_ = s.step + 1;
  train::StepEnd e;
  e.metrics = {{"return", sums[0].second / static_cast<double>(o_.batch)}};
  return e;
}

train::Metrics BanditTraining::evaluate() {
  Rng ev(0xE7A1ULL);  // the same bandits and draws at every evaluation
  const BanditBatch b = draw_bandits(o_.eval_episodes, cfg_.arms, ev);
  last_eval_ = play(*policy_, b, ev).mean_return();
  have_eval_ = true;
  // A candidate on the fixed schedule (the last step is weighed in finish(), not kept here:
  // a run stopped there and resumed must end as the run never stopped).
  if (step_ % kBestEvery == 0) best_.offer(last_eval_, ps_);
  return {{"eval_return", last_eval_}};
}

double BanditTraining::score() {
  if (!have_eval_) evaluate();
  return -best_.better(last_eval_);
}

void BanditTraining::finish(nn::ModelFile& f) {
  if (!have_eval_) evaluate();
  best_.finish(f, last_eval_);
}

void BanditTraining::save_state(nn::ModelFile& f) const { best_.save_state(f); }

void BanditTraining::load_state(const nn::ModelFile& f) { best_.load_state(f, ps_); }

BanditConfig bandit_config_from_yaml(const std::string& yaml, const std::string& file) {
  io::StoredConfig c(yaml, file);
  BanditConfig cfg;
  io::read_fields(c, cfg);
  io::check_stored([&] { cfg.validate(); }, file);
  return cfg;
}

LoadedBandit load_bandit(const std::string& path) {
  LoadedBandit m;
  m.file = nn::load_model_file(path, "snail-bandit");
  m.config = bandit_config_from_yaml(m.file.config_yaml, path);
  if (m.file.arch("arms", 2, 1000, "bandit/arms") != m.config.arms ||
      m.file.arch("pulls", 1, 10000, "bandit/pulls") != m.config.pulls)
    throw DataError("the model's sizes disagree with its stored configuration", path);
  train::in_file(path,
                 [&] { m.model = train::build<SnailBanditPolicy>(m.file, m.params, m.config); });
  return m;
}

}  // namespace attnkit::rl
