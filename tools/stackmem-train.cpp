// stackmem-train: train a Stack-, Queue- or DeQue-LSTM (or the plain LSTM) on transductions.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/stack_lstm.h"

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
    app.config_options().add_options()(
        "memory", po::value(&c.memory)->value_name("KIND")->default_value(c.memory),
        "stack, queue, deque, set (unordered slots read by content) or none (the plain LSTM)")(
        "embed", po::value(&c.embed)->value_name("N")->default_value(c.embed),
        "symbol embedding size")("hidden",
                                 po::value(&c.hidden)->value_name("N")->default_value(c.hidden),
                                 "controller LSTM units")(
        "width", po::value(&c.width)->value_name("N")->default_value(c.width),
        "the memory's value size")(
        "read-out", po::bool_switch(&c.read_out),
        "the prediction also sees this step's read (without: the paper's form, from the "
        "controller alone; the read enters the next step's input)")(
        "two-controllers", po::bool_switch(&c.two_controllers),
        "one LSTM controller (and push, pop and value layers) for the source and another, "
        "starting from its state, for the separator and the target, around the one memory")(
        "bottom-push-bias",
        po::value(&c.bottom_push_bias)->value_name("B")->default_value(c.bottom_push_bias),
        "a deque: the initial bias of its bottom push strengths (0: drawn as the other "
        "biases; negative: it starts pushing at the top only, its bottom end a queue's)")(
        "input-control", po::bool_switch(&c.input_control),
        "--two-controllers: the decoder's push, pop and value come from the symbol it reads "
        "and the memory's read (one linear layer), not from its LSTM state, so that they "
        "cannot follow a count of the symbols written (a set: the encoder's keys and strengths "
        "from the symbol alone)")(
        "push-bias", po::value(&c.push_bias)->value_name("B")->default_value(c.push_bias),
        "the initial bias of the push strengths (--two-controllers: the encoder's; a deque: at "
        "both ends unless --bottom-push-bias; 0: drawn as the other biases; positive: the "
        "values start strong, the first one too, so that the oldest still reads whole after a "
        "long source)")(
        "pop-bias", po::value(&c.pop_bias)->value_name("B")->default_value(c.pop_bias),
        "the initial bias of the pop strengths (-1: Grefenstette et al., Appendix B; a deque, "
        "which pops at both ends, keeps its values with a lower one)")(
        "decoder-push-bias",
        po::value(&c.decoder_push_bias)->value_name("B")->default_value(c.decoder_push_bias),
        "--two-controllers: the initial bias of the decoder's push strengths (0: drawn as the "
        "other biases; negative: the decoder starts consuming the memory without covering "
        "it with its own pushes)")(
        "encoder-pop-bias",
        po::value(&c.encoder_pop_bias)->value_name("B")->default_value(c.encoder_pop_bias),
        "--two-controllers: the initial bias of the encoder's pop strengths (0: --pop-bias, "
        "which then sets the decoder's alone; lower: the source is stored whole while the "
        "decoder's pops start higher)")(
        "decoder-bottom-pop-bias",
        po::value(&c.decoder_bottom_pop_bias)
            ->value_name("B")
            ->default_value(c.decoder_bottom_pop_bias),
        "--two-controllers, a deque: the initial bias of the decoder's bottom pop strengths "
        "(0: --pop-bias; lower: the decoder starts popping from the top only, so that a "
        "reversal keeps the oldest values it answers last)")(
        "op-cost", po::value(&c.op_cost)->value_name("C")->default_value(c.op_cost),
        "a cost per unit of push and pop strength, added to the loss (0: none): the "
        "controllers learn to leave the memory alone where the task does not need it")(
        "depth-input", po::bool_switch(&c.depth_input),
        "the controllers also read how full the memory is (tanh of its total strength), so "
        "that decoding can stop when it runs empty")(
        "stack-rnn", po::bool_switch(&c.stack_rnn),
        "Joulin & Mikolov's stack RNN instead of an LSTM with --memory")(
        "stacks", po::value(&c.stacks)->value_name("K")->default_value(c.stacks),
        "--stack-rnn: the number of stacks")(
        "stack-top", po::value(&c.stack_top)->value_name("N")->default_value(c.stack_top),
        "--stack-rnn: the top elements of each stack fed back to the hidden layer")(
        "rounding", po::bool_switch(&c.rounding),
        "--stack-rnn: decoding takes each stack's likeliest action whole (training keeps "
        "the soft ones)");
    app.epilog(
        "The model reads the source, a separator and (teacher-forced) the target, and is\n"
        "trained on the cross-entropy of the target symbols and <eos>; the log's loss is per\n"
        "target symbol. The pop strengths' bias starts at -1 (Grefenstette et al., Appendix B).\n"
        "stackmem-run decodes greedily and measures coarse and fine accuracy.");
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "stack-lstm", out);
    data::Vocab vocab = memory::transduce_vocab(train_path);
    auto train = memory::read_transduce(train_path, vocab);
    std::vector<memory::TransduceExample> valid;
    if (!valid_path.empty()) valid = memory::read_transduce(valid_path, vocab);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    memory::StackTraining module(c, o, std::move(vocab), std::move(train), std::move(valid),
                                 tf.steps, tf.epochs, app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
