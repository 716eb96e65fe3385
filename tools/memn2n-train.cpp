// memn2n-train: trains an End-To-End (or Key-Value) Memory Network on bAbI tasks.
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
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
    std::string out, task = "1", tying = "adjacent", pe_form = "code", clip_kind = "spectral",
                     pe_length = "sentence", attention = "softmax";
    bool joint = false, no_pe = false, no_te = false, no_ls = false, no_rn = false, kv = false,
         mask_empty = false;
    mem::MemN2NDataOptions d;
    mem::MemN2NConfig cfg;
    cfg.dim = 0;  // 0: 20 for one task, 50 joint
    mem::TrainOptions opt;
    opt.anneal_every = -1;  // -1: 25, or 15 joint
    opt.ls_max_epochs = 0;  // 0: 20, or 30 joint
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
        "input,i", po::value(&d.dir)->value_name("DIR")->required(),
        "a bAbI directory holding qaN_*_train.txt files (the data set's en/ or en-10k/)")(
        "output,o", po::value(&out)->value_name("MODEL")->required(), "the trained model")(
        "attention", po::value(&attention)->value_name("KIND")->default_value(attention),
        "how the hops attend: softmax (MemN2N's), unary (independent hops) or crf (a chain CRF "
        "over the memory each hop reads, Kim et al. 2017); stored in the model");
    for (const char* f : {"pe", "te", "ls", "rn"})  // old configuration keys: the default now
      app.config_options().add_options()(f, po::bool_switch(),
                                         "no effect: on by default (kept for one release)");
    ak::cli::add_training_options(app, tf);
    app.config_options().add_options()("task",
                                       po::value(&task)->value_name("LIST")->default_value(task),
                                       "tasks: N, all, or a list such as 1,2,4-20")(
        "joint", po::bool_switch(&joint), "one model for all the listed tasks")(
        "hops", po::value(&cfg.hops)->value_name("K")->default_value(cfg.hops),
        "memory hops (1-10)")("dim", po::value(&cfg.dim)->value_name("D")->default_value(cfg.dim),
                              "embedding size (0: 20 for one task, 50 joint)")(
        "memory", po::value(&d.memory)->value_name("N")->default_value(d.memory),
        "the last N sentences of a story form the memory")(
        "no-pe", po::bool_switch(&no_pe), "bag of words instead of position encoding")(
        "pe-form", po::value(&pe_form)->value_name("F")->default_value(pe_form),
        "the position encoding's weights: code (the authors' Matlab code, around 1) or paper (the "
        "formula as printed, around 1/2)")(
        "pe-length", po::value(&pe_length)->value_name("L")->default_value(pe_length),
        "the position encoding's J: sentence (each sentence's word count, the paper) or longest "
        "(the training data's "
        "longest sentence or question, + 1 for the time word with temporal encoding: the authors' "
        "code)")("no-te", po::bool_switch(&no_te), "no temporal encoding")(
        "no-ls", po::bool_switch(&no_ls), "no linear start")(
        "no-rn", po::bool_switch(&no_rn),
        "no random noise (up to 10% empty time slots in training)")(
        "tying", po::value(&tying)->value_name("T")->default_value(tying),
        "adjacent or layerwise weight tying")("kv", po::bool_switch(&kv),
                                              "the Key-Value Memory Network instead")(
        "mask-empty", po::bool_switch(&mask_empty),
        "empty memory slots get no attention (default: as the authors' code, they take part in the "
        "softmax with score 0)")(
        "anneal-every",
        po::value(&opt.anneal_every)->value_name("E")->default_value(opt.anneal_every),
        "halve the learning rate every E epochs (0: never; -1: 25; joint 15, or 5 with 10k "
        "questions a task)")(
        "ls-lr", po::value(&opt.ls_lr)->value_name("R")->default_value(opt.ls_lr, "0.005"),
        "learning rate during linear start")(
        "ls-patience", po::value(&opt.ls_patience)->value_name("E")->default_value(opt.ls_patience),
        "end linear start after E epochs without a new best validation loss (0: never, only "
        "--ls-max-epochs)")(
        "ls-max-epochs",
        po::value(&opt.ls_max_epochs)->value_name("E")->default_value(opt.ls_max_epochs),
        "longest linear start (0: 20, or 30 joint on 1k: the authors' code's fixed lengths)")(
        "clip-kind", po::value(&clip_kind)->value_name("KIND")->default_value(clip_kind),
        "each weight's gradient norm that --clip bounds: spectral (its largest singular value, a "
        "word table stacked "
        "with its temporal rows: the authors' code) or l2")(
        "clip-global", po::bool_switch(&opt.clip_global),
        "clip the norm of all the gradients together (default: each weight's on its own)")(
        "valid-fraction",
        po::value(&d.val_fraction)->value_name("F")->default_value(d.val_fraction, "0.1"),
        "fraction of each task's training questions held out for validation");
    app.epilog(
        "Defaults: the paper's best configuration, PE TE LS RN (Sukhbaatar et al. 2015, Table 1;\n"
        "task 1 alone: 0.0% test error, 1k joint: 12.2%), and the authors' Matlab code's\n"
        "training: SGD on the loss summed over a batch of 32, rate 0.005 in both phases (0.01\n"
        "with --no-ls) halved every 25 epochs of 100 (15 of 60 joint; 5 of 20 joint on 10k),\n"
        "20 epochs of linear start (30 joint on 1k) at --ls-lr, each weight's gradient norm\n"
        "clipped at 40, 10% held out for validation. Errors are fractions of questions.\n"
        "--runs K keeps the run with the lowest training error (the paper's criterion).");
    app.stored_key("valid-fraction", "val-fraction");  // the model file's key
    app.parse();
    const ak::train::TrainOptions o = ak::cli::resolve_training(app, tf, mem::kMemN2NKind, out);
    try {
      d.tasks = ak::data::parse_babi_tasks(task);
      cfg.tying = mem::parse_tying(tying), cfg.pe_form = mem::parse_pe_form(pe_form);
      cfg.attention =
          ak::cli::parse_option("--attention", [&] { return mem::parse_hop_attention(attention); });
    } catch (const ak::DataError& e) {
      throw ak::UsageError(e.what());
    }
    if (d.tasks.size() > 1 && !joint)
      throw ak::UsageError(
          "--task " + task +
          " names several tasks: add --joint (one model for them all) or train one model per task");
    cfg.pe = !no_pe, cfg.te = !no_te, cfg.kv = kv, cfg.mask_empty = mask_empty;
    opt.ls = !no_ls, opt.rn = !no_rn, opt.batch = tf.batch_size,
    opt.epochs = static_cast<int>(tf.epochs);
    opt.lr = tf.lr, opt.clip = tf.clip, opt.clip_spectral = mem::parse_clip_kind(clip_kind);
    opt.validate();
    if (pe_length != "sentence" && pe_length != "longest")
      throw ak::UsageError("--pe-length must be sentence or longest, not '" + pe_length + "'");
    const auto data =
        std::make_shared<const mem::MemN2NData>(mem::load_memn2n_data(d, app.common().seed));
    mem::memn2n_recipe(*data, opt, cfg, pe_length == "longest");
    ak::cli::train_runs(app, tf.runs, o, [&](uint64_t seed) {
      opt.seed = seed;
      return std::make_unique<mem::MemN2NJob>(data, std::make_unique<mem::MemN2N>(cfg, seed), opt,
                                              app.config_yaml());
    });
  });
}
