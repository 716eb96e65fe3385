#include "attnkit/models/snail/run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/snail/bandit.h"
#include "attnkit/models/snail/fewshot.h"
#include "attnkit/nn/model_file.h"

namespace attnkit::models {

namespace {

// A model of kind snail-fewshot: fresh episodes of the held-out classes.
std::string run_fewshot(const SnailRunOptions& o, const GivenOption& given) {
  const int64_t episodes = o.episodes;
  if (episodes < 1) throw UsageError("episodes must be >= 1");
  const LoadedFewShot m = load_fewshot(o.model);
  for (const char* opt : {"arms", "pulls", "trace"})
    if (given(opt))
      throw UsageError(std::string("--") + opt + " is for bandit models, not few-shot ones");
  const Pictures p = read_pictures(o.images, o.labels, "test");
  std::vector<int32_t> held;
  if (!o.classes.empty()) {
    held = parse_class_list(o.classes, "--classes");
  } else {
    for (int32_t k : label_classes(p.images, p.labels, p.name, p.labels_name))
      if (!std::binary_search(m.train_classes.begin(), m.train_classes.end(), k)) held.push_back(k);
  }
  if (static_cast<int64_t>(held.size()) < m.config.ways)
    throw UsageError("the model plays " + std::to_string(m.config.ways) +
                     "-way episodes; the test classes are only " + std::to_string(held.size()));
  const LabelledImages d =
      select_classes(p.images, p.labels, held, p.bytes, m.config.shots + 1, p.name, p.labels_name);
  if (d.height() != m.config.height || d.width() != m.config.width)
    throw DataError("pictures of " + std::to_string(d.height()) + " x " +
                        std::to_string(d.width()) + " for a model of " +
                        std::to_string(m.config.height) + " x " + std::to_string(m.config.width),
                    p.name);
  Rng rng(o.seed);
  const EpisodeBatch b = draw_episodes(d, episodes, m.config.ways, m.config.shots, rng);
  const FewShotScores s = score_episodes(m.model.get(), b);
  std::string out = "agent\taccuracy\tse\tepisodes\n";
  auto row = [&](const char* agent, double p) {
    const double se = std::sqrt(p * (1 - p) / static_cast<double>(episodes));
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s\t%.4f\t%.4f\t%lld\n", agent, p, se,
                  static_cast<long long>(episodes));
    out += buf;
  };
  row("snail", s.snail);
  row("embed-nn", s.embed_nn);
  row("pixel-nn", s.pixel_nn);
  row("chance", 1.0 / static_cast<double>(m.config.ways));
  return out;
}

// A bandit policy, or the baselines alone.
std::string run_bandit(const SnailRunOptions& o, const GivenOption& given) {
  for (const char* opt : {"input", "labels", "classes"})
    if (given(opt)) throw UsageError(std::string("--") + opt + " is for few-shot models (--model)");
  if (given("model") && (given("arms") || given("pulls")))
    throw UsageError("--arms and --pulls come from the model; give them only without --model");
  int64_t arms = o.arms, pulls = o.pulls;
  rl::LoadedBandit m;
  if (!o.model.empty()) {
    m = rl::load_bandit(o.model);
    arms = m.config.arms, pulls = m.config.pulls;
  } else {
    rl::BanditConfig c;
    c.arms = arms, c.pulls = pulls;
    c.validate();
  }
  rl::BanditBatch bandits;
  const auto scores = rl::compare_agents(m.model.get(), arms, pulls, o.episodes, o.seed, &bandits);
  const std::string table = rl::agents_tsv(scores);
  if (!o.trace.empty()) {
    const std::string who = m.model ? "snail" : "thompson";
    for (const auto& s : scores)
      if (s.agent == who) io::write_file(o.trace, rl::rollout_tsv(s.rollout, bandits));
  }
  return table;
}

}  // namespace

std::string run_snail(const SnailRunOptions& o, const GivenOption& given) {
  const bool fewshot =
      !o.model.empty() && nn::load_model_file(o.model).kind == std::string("snail-fewshot");
  return fewshot ? run_fewshot(o, given) : run_bandit(o, given);
}

}  // namespace attnkit::models
