// snail-train: meta-train SNAIL on Bernoulli bandits by REINFORCE, or as a few-shot classifier.
#include <algorithm>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/snail/bandit.h"
#include "attnkit/models/snail/fewshot.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("snail-train", argc, argv, [](cli::App& app) {
    std::string out;
    cli::TrainingFlags tf;
    // The recipe of pipelines/snail-bandit.sh.
    tf.batch_size = 64, tf.steps = 3000, tf.lr = 1e-3, tf.clip = 1.0, tf.log_every = 50;
    tf.eval_every = 500;
    tf.offered = cli::kAllTraining & ~(cli::kEpochs | cli::kSchedule);
    tf.batch_help =
        "episodes (fresh bandits) per step, played in 4 slices: the same model for any --threads";
    tf.clip_help = "scale the gradients to a global L2 norm of at most C (0: off)";
    models::SnailTrainSettings s;
    app.describe(
        "Meta-train SNAIL (temporal convolutions and causal attention): a policy on "
        "Bernoulli multi-armed bandits by REINFORCE with a learned baseline, or a few-shot "
        "image classifier.",
        "[--arms K] [--pulls N] [--steps S] [--seed S] -o MODEL [--log LOG.tsv]\n"
        "       snail-train --task fewshot [--ways N] [--shots K] [--classes LIST] -o MODEL");
    app.options().add_options()("output,o", po::value(&out)->value_name("MODEL"),
                                "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, s);
    app.epilog(
        "Each episode is a new bandit whose arms pay 1 with probabilities drawn from U[0, 1];\n"
        "the return is the number of successes in N pulls. The loss is REINFORCE's over every\n"
        "pull, with the value head as the baseline and an entropy bonus. The log's return is\n"
        "the training batches' mean return; eval_return is the sampled policy's on a fixed\n"
        "set of --eval-episodes bandits. snail-run compares a model with random, greedy, UCB1,\n"
        "Thompson sampling and the oracle on the same bandits.\n\n"
        "--task fewshot: each episode is N x K labelled pictures of N classes and one query of\n"
        "one of them, the labels 0..N-1 given to the classes afresh each episode; the loss is\n"
        "the query's cross-entropy. Training draws episodes from --classes of --input; the\n"
        "log's eval_accuracy is on a fixed set of episodes of the other classes, beside\n"
        "eval_embed_nn, the nearest class mean on the model's own embeddings. Defaults:\n"
        "Fashion-MNIST (Debian's dataset-fashion-mnist), 5-way 1-shot, classes 0,2,4,6,8.");
    app.enable(cli::kPictures);
    app.parse();

    if (s.task == "fewshot")
      for (const char* opt :
           {"arms", "pulls", "entropy", "value-weight", "discount", "normalize-advantage"})
        if (app.given(opt))
          throw UsageError(std::string("--") + opt + " is for --task bandit, not fewshot");
    // Any kind here: with --resume the task comes from the checkpoint, and the training layer
    // checks the checkpoint's kind against the module's.
    const train::TrainOptions topt = cli::resolve_training(app, tf, "", out);
    if (s.task == "fewshot") {
      models::FewShotConfig& fc = s.fewshot;
      fc.filters = s.bandit.filters, fc.key = s.bandit.key, fc.value = s.bandit.value;
      fc.validate();
      models::ClassSplit d =
          models::split_classes(models::read_pictures(s.images, s.labels, "train"),
                                models::parse_class_list(s.classes, "--classes"), fc);
      fc.height = d.train.height(), fc.width = d.train.width();
      models::FewShotTrainOptions fo;
      fo.batch = tf.batch_size, fo.lr = tf.lr, fo.eval_episodes = s.train.eval_episodes;
      models::FewShotTraining module(fc, fo, std::move(d.train), std::move(d.held_out), tf.steps,
                                     app.common().seed, app.config_yaml());
      cli::train(app, module, topt);
      return;
    }
    if (s.task != "bandit")
      throw UsageError("--task must be bandit or fewshot, not '" + s.task + "'");
    s.train.batch = tf.batch_size, s.train.lr = tf.lr;
    rl::BanditTraining module(s.bandit, s.train, tf.steps, app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
