// snail-run: play bandits with a trained SNAIL policy, beside the classic strategies.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/snail_fewshot.h"
#include "attnkit/rl/bandit.h"

using namespace attnkit;
namespace po = boost::program_options;

namespace {

// snail-run with a model of kind snail-fewshot: fresh episodes of the held-out classes.
std::string run_fewshot(cli::App& app, const std::string& model_path, int64_t episodes,
                        std::string images, std::string labels, const std::string& classes) {
  if (episodes < 1) throw UsageError("episodes must be >= 1");
  const models::LoadedFewShot m = models::load_fewshot(model_path);
  for (const char* opt : {"arms", "pulls", "trace"})
    if (app.given(opt))
      throw UsageError(std::string("--") + opt + " is for bandit models, not few-shot ones");
  const models::Pictures p = models::read_pictures(images, labels, "test");
  std::vector<int32_t> held;
  if (!classes.empty()) {
    held = models::parse_class_list(classes, "--classes");
  } else {
    for (int32_t k : models::label_classes(p.images, p.labels, p.name))
      if (!std::binary_search(m.train_classes.begin(), m.train_classes.end(), k)) held.push_back(k);
  }
  if (static_cast<int64_t>(held.size()) < m.config.ways)
    throw UsageError("the model plays " + std::to_string(m.config.ways) +
                     "-way episodes; the test classes are only " + std::to_string(held.size()));
  const models::LabelledImages d =
      models::select_classes(p.images, p.labels, held, p.bytes, m.config.shots + 1, p.name);
  if (d.height() != m.config.height || d.width() != m.config.width)
    throw DataError("pictures of " + std::to_string(d.height()) + " x " +
                        std::to_string(d.width()) + " for a model of " +
                        std::to_string(m.config.height) + " x " + std::to_string(m.config.width),
                    p.name);
  Rng rng(app.common().seed);
  const models::EpisodeBatch b =
      models::draw_episodes(d, episodes, m.config.ways, m.config.shots, rng);
  const models::FewShotScores s = models::score_episodes(m.model.get(), b);
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

}  // namespace

int main(int argc, char** argv) {
  return cli::run("snail-run", argc, argv, [](cli::App& app) {
    std::string model, out = "-", trace;
    int64_t episodes = 1000, arms = 5, pulls = 10;
    std::string images, labels, classes;
    app.describe(
        "Play fresh Bernoulli bandits with a policy from snail-train and compare it "
        "with random, greedy, UCB1, Thompson sampling and the oracle on the same bandits; or "
        "test a few-shot model (snail-train --task fewshot) on episodes of held-out classes.",
        "[--model MODEL] [--episodes N] [--seed S] [-o TABLE.tsv] [--trace PULLS.tsv]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL"),
                                "a model from snail-train (without it: the baselines only)")(
        "episodes", po::value(&episodes)->value_name("N")->default_value(episodes),
        "bandits to play")("arms", po::value(&arms)->value_name("K")->default_value(arms),
                           "arms, without --model (else the model's)")(
        "pulls", po::value(&pulls)->value_name("N")->default_value(pulls),
        "pulls, without --model (else the model's)")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the table (- is standard output)")(
        "trace", po::value(&trace)->value_name("FILE"),
        "every pull of the policy (or, without --model, of Thompson sampling) as TSV")(
        "input,i", po::value(&images)->value_name("FILE"),
        "few-shot models: test pictures (default: Fashion-MNIST's 10,000 test pictures)")(
        "labels", po::value(&labels)->value_name("FILE"), "few-shot models: their class ids")(
        "classes", po::value(&classes)->value_name("LIST"),
        "few-shot models: the classes episodes are drawn from (default: those the model was "
        "not trained on)");
    app.enable(cli::kSeed);
    app.epilog(
        "Output (TSV): agent, mean_return, se, episodes; one row each for snail (the policy\n"
        "sampled), snail-greedy (its most likely arm), random, greedy (the best mean so far,\n"
        "each arm once first), ucb1, thompson (Beta(1, 1) priors) and oracle (the best arm every\n"
        "pull). All play the same bandits (drawn from --seed), each with its own reward draws.\n"
        "The paper's Table 3 (N = 10, K = 5): random 5.0, Gittins 6.6, SNAIL 6.6.\n\n"
        "With a few-shot model: --episodes fresh episodes (drawn from --seed) of the test\n"
        "classes; TSV agent, accuracy, se, episodes for snail (the model's answer), embed-nn\n"
        "(the nearest class mean of the supports on the model's embeddings), pixel-nn (the\n"
        "same on raw pixels) and chance (1 / N).");
    app.parse();
    const bool fewshot =
        !model.empty() && nn::load_model_file(model).kind == std::string("snail-fewshot");
    if (fewshot) {
      const std::string table = run_fewshot(app, model, episodes, images, labels, classes);
      if (out == "-") {
        std::cout << table;
      } else {
        io::write_file(out, table);
      }
      return;
    }
    for (const char* opt : {"input", "labels", "classes"})
      if (app.given(opt))
        throw UsageError(std::string("--") + opt + " is for few-shot models (--model)");
    if (app.given("model") && (app.given("arms") || app.given("pulls")))
      throw UsageError("--arms and --pulls come from the model; give them only without --model");
    rl::LoadedBandit m;
    if (!model.empty()) {
      m = rl::load_bandit(model);
      arms = m.config.arms, pulls = m.config.pulls;
    } else {
      rl::BanditConfig c;
      c.arms = arms, c.pulls = pulls;
      c.validate();
    }
    rl::BanditBatch bandits;
    const auto scores =
        rl::compare_agents(m.policy.get(), arms, pulls, episodes, app.common().seed, &bandits);
    const std::string table = rl::agents_tsv(scores);
    if (!trace.empty()) {
      const std::string who = m.policy ? "snail" : "thompson";
      for (const auto& s : scores)
        if (s.agent == who) io::write_file(trace, rl::rollout_tsv(s.rollout, bandits));
    }
    if (out == "-") {
      std::cout << table;
    } else {
      io::write_file(out, table);
    }
  });
}
