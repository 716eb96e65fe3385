// stackmem-train: train a Stack-, Queue- or DeQue-LSTM (or the plain LSTM) on transductions.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/stackmem/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("stackmem-train", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    cli::TrainingFlags tf;
    tf.batch_size = 16, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 5.0, tf.log_every = 50;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "pairs per step, in slices of at most 32 (the same model for any --threads)";
    memory::StackLstmConfig c;
    memory::StackTrainOptions o;
    app.describe(
        "Train an LSTM with a continuous stack, queue or deque (Grefenstette et al. "
        "2015), or the plain LSTM, on SOURCE<TAB>TARGET transductions.",
        "-i PAIRS.tsv [--valid PAIRS.tsv] [--memory KIND] -o MODEL [--log LOG.tsv]");
    app.options().add_options()("input,i",
                                po::value(&train_path)->value_name("PAIRS.tsv")->required(),
                                "training pairs (transduce-gen's lines)")(
        "valid", po::value(&valid_path)->value_name("PAIRS.tsv"),
        "validation pairs: coarse and fine accuracy after every epoch")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    app.epilog(
        "The model reads the source, a separator and (teacher-forced) the target, and is\n"
        "trained on the cross-entropy of the target symbols and <eos>; the log's loss is per\n"
        "target symbol. The pop strengths' bias starts at -1 (Grefenstette et al., Appendix B).\n"
        "stackmem-run decodes greedily and measures coarse and fine accuracy.\n"
        "Training keeps every step of a pair, and the memory's values at each, so its memory\n"
        "grows as the square of the pair's length, times the batch (each row is as long as\n"
        "its batch's longest pair): a pair whose batch is estimated to need more than 2048 MB\n"
        "is refused, naming its file and line (a stack of width 32: about 900 symbols in\n"
        "batches of 16, 3,700 with --batch-size 1).\n"
        "Decoding keeps only the current step, and takes pairs of any length.");
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "stack-lstm", out);
    data::Vocab vocab = memory::transduce_vocab(train_path);
    auto train = memory::read_transduce(train_path, vocab, &c, tf.batch_size);
    std::vector<memory::TransduceExample> valid;
    if (!valid_path.empty()) valid = memory::read_transduce(valid_path, vocab);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    memory::StackTraining module(c, o, std::move(vocab), std::move(train), std::move(valid),
                                 tf.steps, tf.epochs, app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
