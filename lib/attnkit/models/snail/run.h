// Running SNAIL, the logic behind snail-run: a bandit policy (or the baselines alone) on
// fresh Bernoulli bandits, or a few-shot model on fresh episodes of held-out classes.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/hooks.h"

namespace attnkit::models {

// What snail-run was asked (the tool's options, by their long names).
struct SnailRunOptions {
  std::string model;  // "": the bandit baselines alone
  int64_t episodes = 1000, arms = 5, pulls = 10;
  uint64_t seed = 0;
  std::string trace;                    // bandits: every pull of one agent as TSV ("": none)
  std::string images, labels, classes;  // few-shot models
};
// The TSV table of snail-run: a model of kind snail-fewshot scored on o.episodes episodes of
// the test classes (agent, accuracy, se, episodes), else the bandit agents (rl::agents_tsv),
// with o.trace written when named. Options of the other kind of model are a UsageError.
std::string run_snail(const SnailRunOptions& o, const GivenOption& given);

}  // namespace attnkit::models
