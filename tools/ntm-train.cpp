// ntm-train: train a Neural Turing Machine on the paper's copy, repeat-copy or
// associative-recall task (fresh episodes every step) or on a seqtask-gen data set.
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/memory/ntm_train.h"
#include "attnkit/nn/trainer.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ntm-train", argc, argv, [](cli::App& app) {
    std::string data_path, out;
    int64_t log_every = 100;
    cli::TrainingFlags tf;
    // Configuration keys (YAML or command line).
    std::string task;
    int64_t width = 0, min_len = 0, max_len = 0, min_rep = 1, max_rep = 10, item_len = 3;
    int64_t steps = 30000;
    memory::NtmTrainOptions o;
    memory::NtmConfig m;
    app.describe("Train a Neural Turing Machine on copy, repeat-copy or associative recall.",
                 "(--task TASK | --data DATA.npz) [--config ntm.yaml] [--steps N] [--batch B] "
                 "[--seed S] -o MODEL [--log LOG.tsv] [--checkpoint-every N] [--resume]");
    app.options().add_options()
        ("data", po::value(&data_path)->value_name("DATA.npz"),
         "train on a seqtask-gen data set (in epochs, shuffled) instead of fresh episodes")
        ("output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)")
        ("log-every", po::value(&log_every)->value_name("N")->default_value(log_every),
         "steps per --log row and progress report (the metrics are averaged over them)");
    cli::add_checkpoint_options(app, tf);
    app.config_options().add_options()
        ("task", po::value(&task)->value_name("TASK"),
         "copy, repeat-copy or associative-recall (fresh episodes every step)")
        ("width", po::value(&width)->default_value(width), "task: bits per vector (0: the task's, 8 or 6)")
        ("min-len", po::value(&min_len)->default_value(min_len), "task: shortest length or fewest items (0: the task's)")
        ("max-len", po::value(&max_len)->default_value(max_len), "task: longest length or most items (0: the task's, 20, 10 or 6)")
        ("min-repeats", po::value(&min_rep)->default_value(min_rep), "repeat-copy: fewest repeats")
        ("max-repeats", po::value(&max_rep)->default_value(max_rep), "repeat-copy: most repeats")
        ("item-len", po::value(&item_len)->default_value(item_len), "associative recall: vectors per item")
        ("controller", po::value(&m.controller)->default_value(m.controller), "lstm or feedforward")
        ("controller-size", po::value(&m.controller_size)->default_value(m.controller_size), "controller units")
        ("controller-layers", po::value(&m.controller_layers)->default_value(m.controller_layers), "controller layers")
        ("read-heads", po::value(&m.read_heads)->default_value(m.read_heads), "read heads")
        ("write-heads", po::value(&m.write_heads)->default_value(m.write_heads), "write heads")
        ("memory-rows", po::value(&m.memory_rows)->default_value(m.memory_rows), "memory locations N")
        ("memory-cols", po::value(&m.memory_cols)->default_value(m.memory_cols), "memory width M")
        ("shift-range", po::value(&m.shift_range)->default_value(m.shift_range), "shifts -R..+R")
        ("memory-init", po::value(&m.memory_init)->default_value(m.memory_init), "constant (1e-6), random or learned")
        ("weight-init", po::value(&m.weight_init)->default_value(m.weight_init), "initial weightings: learned or uniform")
        ("add-activation", po::value(&m.add_activation)->default_value(m.add_activation), "tanh or linear")
        ("steps", po::value(&steps)->default_value(steps), "optimiser steps")
        ("batch", po::value(&o.batch)->default_value(o.batch), "sequences per step (gradients averaged)")
        ("optimizer", po::value(&o.optimizer)->default_value(o.optimizer), "rmsprop (Graves' centred form) or adam")
        ("lr", po::value(&o.lr)->default_value(o.lr), "learning rate")
        ("momentum", po::value(&o.momentum)->default_value(o.momentum), "rmsprop: momentum")
        ("decay", po::value(&o.decay)->default_value(o.decay), "rmsprop: decay of the averages")
        ("eps", po::value(&o.eps)->default_value(o.eps), "rmsprop: epsilon inside the square root; adam: outside")
        ("clip-value", po::value(&o.clip_value)->default_value(o.clip_value), "clamp gradients to [-V, V] (0: off)")
        ("clip-norm", po::value(&o.clip_norm)->default_value(o.clip_norm), "scale gradients to global norm <= C (0: off)")
        ("write-penalty", po::value(&o.write_penalty)->default_value(o.write_penalty),
         "add this times the writes' change of stored values (sum over cells of |M| |dM|, "
         "smoothed) to the cost: filling empty memory is free, wearing down what is stored "
         "costs (0: off)");
    app.enable(cli::kSeed | cli::kQuiet | cli::kConfig);
    app.epilog(
        "Cost: bits per sequence, the paper's unit: wrong bits after thresholding the outputs\n"
        "at 0.5, summed over a sequence. Progress on stderr shows it averaged over the last\n"
        "--log-every steps. With --resume the run continues from MODEL.ckpt bit for bit (same\n"
        "--threads 1) and the log keeps its rows up to the checkpoint; options not given again\n"
        "come from the checkpoint, and a larger --steps extends the run. A --lr given with\n"
        "--resume replaces the checkpoint's rate from there on.");
    app.parse();

    if (out.empty()) throw UsageError("the option '--output' is required but missing");
    const std::string cp = tf.checkpoint.empty() ? out + ".ckpt" : tf.checkpoint;
    std::unique_ptr<nn::ModelFile> ckpt;
    const bool lr_given = app.given("lr");  // before the checkpoint's keys fill in the rest
    if (tf.resume) {  // its configuration first: keys not given again come from it
      ckpt = std::make_unique<nn::ModelFile>(nn::load_model_file(cp, "ntm"));
      app.apply_config_fallback(ckpt->config_yaml, cp);
    }
    const nn::TrainerOptions topt = tf.trainer_options("ntm", out, steps);
    if (task.empty() == data_path.empty())
      throw UsageError("give either --task or --data");
    if (steps < 1) throw UsageError("--steps must be >= 1");
    o.validate();
    if (log_every < 1) throw UsageError("--log-every must be >= 1");

    data::SeqTaskOptions topts;
    memory::NtmDataset ds;
    if (!task.empty()) {
      topts = data::SeqTaskOptions::defaults(data::parse_seq_task(task));
      if (width) topts.width = width;
      if (min_len) topts.min_len = min_len;
      if (max_len) topts.max_len = max_len;
      topts.min_repeats = min_rep;
      topts.max_repeats = max_rep;
      topts.item_len = item_len;
      topts.validate();
      m.input = topts.input_width();
      m.output = topts.output_width();
    } else {
      ds = memory::read_ntm_dataset(data_path);
      m.input = ds.input_width();
      m.output = ds.output_width();
    }
    m.validate();

    nn::ParamStore ps;
    Rng init(app.common().seed);
    memory::Ntm ntm(ps, m, init);
    std::unique_ptr<nn::Optimizer> opt = memory::make_ntm_optimizer(ntm, o);
    nn::Trainer trainer(topt, ps, *opt);
    Rng episodes(app.common().seed ^ 0x5eed5eedULL);
    trainer.add_rng("episodes", episodes);
    trainer.base().config_yaml = app.config_yaml();
    trainer.base().numbers["ntm/input"] = static_cast<double>(m.input);
    trainer.base().numbers["ntm/output"] = static_cast<double>(m.output);
    if (ckpt) {
      if (ckpt->integer("ntm/input") != m.input || ckpt->integer("ntm/output") != m.output)
        throw DataError("the checkpoint's input/output sizes do not fit this task or data", cp);
      trainer.resume_from(*ckpt);
      // The optimiser state carries the checkpoint's rate; a --lr given again replaces it
      // from here on (e.g. a lower rate once the task is learned).
      if (lr_given) opt->set_lr(o.lr);
    }
    const int64_t start = trainer.state().step;
    std::unique_ptr<io::TsvLog> log = tf.open_log(start);
    cli::Progress bar(app.name(), steps, app.common().quiet);
    bar.set_start(start);
    ad::Tape tape(app.common().seed);
    std::unique_ptr<memory::NtmEpisodeSource> source =
        task.empty() ? std::make_unique<memory::NtmEpisodeSource>(ds, app.common().seed)
                     : std::make_unique<memory::NtmEpisodeSource>(topts, episodes);
    memory::NtmLogWindow window;
    trainer.run(
        [&](nn::TrainState& s) { return memory::ntm_train_step(ntm, tape, *opt, o, *source, s); },
        [&](const nn::TrainState& s, const nn::StepResult& r) {
          window.add(r, o.batch);
          if (s.step % log_every == 0 || s.step == steps) {
            if (log)
              log->row({{"step", static_cast<double>(s.step)},
                        {"sequences", static_cast<double>(s.step * o.batch)},
                        {"loss", window.loss()},
                        {"bits_per_seq", window.bits_per_sequence()},
                        {"grad_norm", window.grad_norm()},
                        {"lr", opt->current_lr()}});
            bar.update(s.step, {{"loss", window.loss()}, {"bits/seq", window.bits_per_sequence()}});
            window.reset();
          }
        });
    bar.finish();
  });
}
