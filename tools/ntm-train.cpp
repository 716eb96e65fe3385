// ntm-train: train a Neural Turing Machine on the paper's copy, repeat-copy or
// associative-recall task (fresh episodes every step), on a seqtask-gen data set, or on
// transduce-gen's symbol pairs.
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/progress.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/memory/ntm/train.h"
#include "attnkit/nn/trainer.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ntm-train", argc, argv, [](cli::App& app) {
    std::string data_path, out;
    cli::TrainingFlags tf;
    // The recipe of pipelines/ntm-copy.sh: Graves' RMSProp at 3e-4, batch 1, 30,000 sequences.
    tf.batch_size = 1, tf.steps = 30000, tf.lr = 3e-4, tf.clip = 0, tf.log_every = 100;
    tf.offered = cli::kAllTraining & ~(cli::kEpochs | cli::kSchedule | cli::kEval | cli::kRuns);
    tf.batch_help = "sequences per step (one slice each: the same model for any --threads)";
    tf.clip_help = "scale the gradients to a global L2 norm of at most C (0: off)";
    // Configuration keys (YAML or command line).
    memory::NtmTaskConfig t;
    memory::NtmTrainOptions o;
    memory::NtmConfig m;
    app.describe(
        "Train a Neural Turing Machine on copy, repeat-copy, associative recall or symbol "
        "transductions.",
        "(--task TASK | -i DATA.npz | -i PAIRS.tsv) [--config ntm.yaml] [--steps N] "
        "[--batch-size B] [--seed S] -o MODEL [--log LOG.tsv] [--checkpoint-every N] [--resume]");
    app.options().add_options()(
        "input,i", po::value(&data_path)->value_name("DATA"),
        "train on a seqtask-gen data set DATA.npz, or on transduce-gen's SOURCE<TAB>TARGET "
        "pairs (told apart by content), in shuffled epochs, instead of fresh episodes")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, t);
    cli::add_fields(app, m);
    cli::add_fields(app, o);
    app.epilog(
        "Defaults: the recipe of pipelines/ntm-copy.sh, which learns the copy task in about\n"
        "30,000 sequences (Graves' centred RMSProp at 3e-4, one sequence a step, an LSTM\n"
        "controller of 100 units, a 128 x 20 memory; the paper's 1e-4 learns several times\n"
        "slower). Cost: bits per sequence, the paper's unit: wrong bits after thresholding the\n"
        "outputs at 0.5, summed over a sequence; the log's bits_per_seq is its mean over the\n"
        "--log-every steps. A step's sequences are one slice each, their gradients added in\n"
        "order: the same model for any --threads and under mpirun.\n"
        "\n"
        "On symbol pairs (-i PAIRS.tsv, transduce-gen's lines) inputs and outputs are one\n"
        "channel per token of the pairs' vocabulary (4 reserved, then the symbols): the source\n"
        "one symbol a step, a delimiter step, then zero input while the outputs are to be the\n"
        "target and <eos>. The cost is the softmax cross-entropy of those steps (nats per\n"
        "sequence); the log's symbols_per_seq counts their wrong symbols. ntm-run --eval -i\n"
        "PAIRS.tsv reports coarse and fine accuracy as stackmem-run --eval does.");
    app.parse();

    const train::TrainOptions topt = cli::resolve_training(app, tf, "ntm", out);
    if (t.task.empty() == data_path.empty()) throw UsageError("give either --task or -i/--input");
    memory::NtmSource src;
    src.fresh = !t.task.empty();
    if (src.fresh) {
      src.task = t.options();
      src.task.validate();
    } else {
      src = memory::read_ntm_source(data_path);
    }
    o.batch = tf.batch_size, o.lr = tf.lr, o.clip_norm = tf.clip;
    memory::NtmTraining module(m, o, std::move(src), tf.steps, app.common().seed,
                               app.config_yaml());
    cli::train(app, module, topt);
  });
}
