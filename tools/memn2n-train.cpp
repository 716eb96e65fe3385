// memn2n-train: trains an End-To-End (or Key-Value) Memory Network on bAbI tasks.
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/train.h"

namespace ak = attnkit;
namespace mem = attnkit::memory;

int main(int argc, char** argv) {
  return ak::cli::run("memn2n-train", argc, argv, [](ak::cli::App& app) {
    namespace po = boost::program_options;
    std::string out, attention = "softmax";
    mem::MemN2NSettings st;
    ak::cli::TrainingFlags tf;
    // The paper's best configuration (PE, TE, LS, RN) and the authors' schedule; 0: the
    // recipe's value for the data (see the epilog).
    tf.batch_size = 32, tf.epochs = 0, tf.lr = 0, tf.clip = 40, tf.log_every = 0;
    tf.zero_is_recipe = true;
    tf.offered = ak::cli::kEpochs | ak::cli::kRuns;
    tf.lr_help = "SGD learning rate after linear start (0: 0.005 with linear start, else 0.01)";
    tf.clip_help = "rescale each weight's gradient to this norm (--clip-kind) at most (0: never)";
    app.describe("Train an End-To-End Memory Network (or a Key-Value one) on bAbI tasks.",
                 "[OPTIONS] -i DIR --task N|all -o MODEL");
    app.options().add_options()(
        "input,i", po::value(&st.data.dir)->value_name("DIR")->required(),
        "a bAbI directory holding qaN_*_train.txt files (the data set's en/ or en-10k/)")(
        "output,o", po::value(&out)->value_name("MODEL")->required(), "the trained model")(
        "attention", po::value(&attention)->value_name("KIND")->default_value(attention),
        "how the hops attend: softmax (MemN2N's), unary (independent hops), crf (a chain CRF "
        "over the memory each hop reads, Kim et al. 2017) or crf-kim (that paper's authors' "
        "binary CRF as their code has it: 2 hops, a learned U, two more output tables, an "
        "untied answer table); stored in the model");
    ak::cli::add_fields(app, st.retired);
    ak::cli::add_training_options(app, tf);
    ak::cli::add_fields(app, st);
    app.epilog(
        "Defaults: the paper's best configuration, PE TE LS RN (Sukhbaatar et al. 2015, Table 1;\n"
        "task 1 alone: 0.0% test error, 1k joint: 12.2%), and the authors' Matlab code's\n"
        "training: SGD on the loss summed over a batch of 32, rate 0.005 in both phases (0.01\n"
        "with --no-ls) halved every 25 epochs of 100 (15 of 60 joint; 5 of 20 joint on 10k),\n"
        "20 epochs of linear start (30 joint on 1k) at --ls-lr, each weight's gradient norm\n"
        "clipped at 40, 10% held out for validation. Errors are fractions of questions.\n"
        "--runs K keeps the run with the lowest training error (the paper's criterion).");
    app.parse();
    const ak::train::TrainOptions o = ak::cli::resolve_training(app, tf, mem::kMemN2NKind, out);
    try {
      st.data.tasks = ak::data::parse_babi_tasks(st.task);
    } catch (const ak::DataError& e) {
      throw ak::UsageError(e.what());
    }
    st.model.attention =
        ak::cli::parse_option("--attention", [&] { return mem::parse_hop_attention(attention); });
    if (st.data.tasks.size() > 1 && !st.joint)
      throw ak::UsageError(
          "--task " + st.task +
          " names several tasks: add --joint (one model for them all) or train one model per task");
    st.train.batch = tf.batch_size, st.train.epochs = static_cast<int>(tf.epochs);
    st.train.lr = tf.lr, st.train.clip = tf.clip;
    st.train.validate();
    if (st.pe_length != "sentence" && st.pe_length != "longest")
      throw ak::UsageError("--pe-length must be sentence or longest, not '" + st.pe_length + "'");
    const auto data =
        std::make_shared<const mem::MemN2NData>(mem::load_memn2n_data(st.data, app.common().seed));
    mem::memn2n_recipe(*data, st.train, st.model, st.pe_length == "longest");
    ak::cli::train_runs(app, tf.runs, o, [&](uint64_t seed) {
      st.train.seed = seed;
      return std::make_unique<mem::MemN2NJob>(data, std::make_unique<mem::MemN2N>(st.model, seed),
                                              st.train, app.config_yaml());
    });
  });
}
