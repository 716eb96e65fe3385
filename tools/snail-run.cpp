// snail-run: play bandits with a trained SNAIL policy, beside the classic strategies.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/rl/bandit.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("snail-run", argc, argv, [](cli::App& app) {
    std::string model, out = "-", trace;
    int64_t episodes = 1000, arms = 5, pulls = 10;
    app.describe(
        "Play fresh Bernoulli bandits with a policy from snail-train and compare it "
        "with random, greedy, UCB1, Thompson sampling and the oracle on the same bandits.",
        "[--model MODEL] [--episodes N] [--seed S] [-o TABLE.tsv] [--trace PULLS.tsv]");
    app.options().add_options()("model", po::value(&model)->value_name("MODEL"),
                                "a model from snail-train (without it: the baselines only)")(
        "episodes", po::value(&episodes)->value_name("N")->default_value(episodes),
        "bandits to play")("arms", po::value(&arms)->value_name("K")->default_value(arms),
                           "arms, without --model (else the model's)")(
        "pulls", po::value(&pulls)->value_name("N")->default_value(pulls),
        "pulls, without --model (else the model's)")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the table (- is standard output)")(
        "trace", po::value(&trace)->value_name("FILE"),
        "every pull of the policy (or, without --model, of Thompson sampling) as TSV");
    app.enable(cli::kSeed);
    app.epilog(
        "Output (TSV): agent, mean_return, se, episodes; one row each for snail (the policy\n"
        "sampled), snail-greedy (its most likely arm), random, greedy (the best mean so far,\n"
        "each arm once first), ucb1, thompson (Beta(1, 1) priors) and oracle (the best arm every\n"
        "pull). All play the same bandits (drawn from --seed), each with its own reward draws.\n"
        "The paper's Table 3 (N = 10, K = 5): random 5.0, Gittins 6.6, SNAIL 6.6.");
    app.parse();
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
