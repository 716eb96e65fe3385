// snail-run: play bandits with a trained SNAIL policy, beside the classic strategies.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/snail/run.h"

using namespace attnkit;
namespace po = boost::program_options;

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
    app.enable(cli::kPictures);
    app.parse();
    const cli::Outputs outputs({out}, {trace});  // checked now; side ones removed on failure
    models::SnailRunOptions o;
    o.model = model, o.trace = trace, o.images = images, o.labels = labels, o.classes = classes;
    o.episodes = episodes, o.arms = arms, o.pulls = pulls, o.seed = app.common().seed;
    cli::write_text(out, models::run_snail(o, cli::given(app)));
  });
}
