// snail-train: meta-train a SNAIL policy on Bernoulli multi-armed bandits by REINFORCE.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/rl/bandit.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("snail-train", argc, argv, [](cli::App& app) {
    std::string out, task = "bandit";
    cli::TrainingFlags tf;
    // The recipe of pipelines/snail-bandit.sh.
    tf.batch_size = 64, tf.steps = 3000, tf.lr = 1e-3, tf.clip = 1.0, tf.log_every = 50;
    tf.eval_every = 500;
    tf.offered = cli::kAllTraining & ~(cli::kEpochs | cli::kSchedule);
    tf.batch_help =
        "episodes (fresh bandits) per step, played in 4 slices: the same model for any --threads";
    tf.clip_help = "scale the gradients to a global L2 norm of at most C (0: off)";
    rl::BanditConfig c;
    rl::BanditTrainOptions o;
    app.describe(
        "Meta-train a SNAIL policy (temporal convolutions and causal attention) on "
        "Bernoulli multi-armed bandits by REINFORCE with a learned baseline.",
        "[--arms K] [--pulls N] [--steps S] [--seed S] -o MODEL [--log LOG.tsv]");
    app.options().add_options()("output,o", po::value(&out)->value_name("MODEL"),
                                "the trained model (required)");
    cli::add_training_options(app, tf);
    app.config_options().add_options()("task",
                                       po::value(&task)->value_name("TASK")->default_value(task),
                                       "bandit (the only task)")(
        "arms", po::value(&c.arms)->value_name("K")->default_value(c.arms), "arms of each bandit")(
        "pulls", po::value(&c.pulls)->value_name("N")->default_value(c.pulls), "pulls per episode")(
        "width", po::value(&c.width)->value_name("N")->default_value(c.width),
        "input projection size")("filters",
                                 po::value(&c.filters)->value_name("N")->default_value(c.filters),
                                 "filters of each dense block")(
        "key-size", po::value(&c.key)->value_name("N")->default_value(c.key),
        "attention key and query size")(
        "value-size", po::value(&c.value)->value_name("N")->default_value(c.value),
        "attention value size")(
        "entropy", po::value(&o.entropy)->value_name("B")->default_value(o.entropy, "0.01"),
        "weight of the entropy bonus")(
        "value-weight",
        po::value(&o.value_weight)->value_name("W")->default_value(o.value_weight, "0.5"),
        "weight of the baseline's squared error")(
        "discount", po::value(&o.discount)->value_name("G")->default_value(o.discount, "1"),
        "discount of the returns-to-go")("normalize-advantage",
                                         po::bool_switch(&o.normalize_advantage),
                                         "normalise the advantages of each slice")(
        "eval-episodes",
        po::value(&o.eval_episodes)->value_name("N")->default_value(o.eval_episodes),
        "bandits of each evaluation (a fixed set)");
    app.epilog(
        "Each episode is a new bandit whose arms pay 1 with probabilities drawn from U[0, 1];\n"
        "the return is the number of successes in N pulls. The loss is REINFORCE's over every\n"
        "pull, with the value head as the baseline and an entropy bonus. The log's return is\n"
        "the training batches' mean return; eval_return is the sampled policy's on a fixed\n"
        "set of --eval-episodes bandits. snail-run compares a model with random, greedy, UCB1,\n"
        "Thompson sampling and the oracle on the same bandits.");
    app.parse();

    const train::TrainOptions topt = cli::resolve_training(app, tf, "snail-bandit", out);
    if (task != "bandit") throw UsageError("--task: only 'bandit' is known");
    o.batch = tf.batch_size, o.lr = tf.lr;
    rl::BanditTraining module(c, o, tf.steps, app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
