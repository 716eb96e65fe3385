// ptr-train: train a pointer network (Vinyals et al. 2015) on ptrtask-gen's problems.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/models/ptrnet/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ptr-train", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    cli::TrainingFlags tf;
    tf.batch_size = 128, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 2.0, tf.log_every = 50;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "problems per step, in 2 slices (the same model for any --threads)";
    models::PtrNetConfig c;
    models::PtrTrainOptions o;
    app.describe(
        "Train a pointer network (an LSTM encoder-decoder whose additive attention "
        "points at its input) on sorting, convex-hull or travelling-salesman problems.",
        "--task sort|hull|tsp -i PROBLEMS [--valid PROBLEMS] -o MODEL [--log LOG.tsv]");
    app.options().add_options()(
        "input,i", po::value(&train_path)->value_name("PROBLEMS")->required(),
        "training problems with answers (ptrtask-gen's lines, or the paper's files)")(
        "valid", po::value(&valid_path)->value_name("PROBLEMS"),
        "validation problems: greedy decoding scored after every epoch; the best epoch is kept")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    app.epilog(
        "The loss is the cross-entropy of each answer index and of the end, per output step\n"
        "(the log's loss). By default already-chosen points are masked (probability 0): every\n"
        "sort or tsp output is a permutation; --no-mask reproduces the paper, where validity is\n"
        "learned. With --valid the model kept is the epoch's best: the most exact outputs (sort,\n"
        "hull) or the shortest mean tour against the answers' (tsp). ptr-run decodes and\n"
        "scores.");
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "ptrnet", out);
    const data::PtrTask task =
        cli::parse_option("--task", [&] { return data::parse_ptr_task(c.task); });
    const int dim = data::ptr_task_dim(task);
    auto train = data::read_ptr_problems(train_path, dim);
    std::vector<data::PtrProblem> valid;
    if (!valid_path.empty()) valid = data::read_ptr_problems(valid_path, dim);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    o.train_file = train_path, o.valid_file = valid_path;
    models::PtrTraining module(c, o, std::move(train), std::move(valid), tf.steps, tf.epochs,
                               app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
