#include "attnkit/cli/training.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>

#include "attnkit/cli/progress.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/train/dist.h"

namespace attnkit::cli {

namespace {

std::atomic<int> g_signals{0};

extern "C" void on_signal(int sig) {
  if (g_signals.fetch_add(1) >= 1) {  // a second signal: end at once
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// SIGINT and SIGTERM handled for the lifetime of a run.
class SignalGuard {
 public:
  SignalGuard() {
    g_signals = 0;
    old_int_ = std::signal(SIGINT, on_signal);
    old_term_ = std::signal(SIGTERM, on_signal);
  }
  ~SignalGuard() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

std::string text(const char* help, const std::string& own) { return own.empty() ? help : own; }

// The options that locate the checkpoint (and --resume itself) are not restored from it.
const std::vector<std::string> kNotRestored = {"output", "resume", "checkpoint"};

// --resume, inside App::parse() before the values are checked: the checkpoint's
// configuration for every key not given again, and its run's options (the data files, the
// log, --runs) for every option not given again, so that `TRAINER --resume -o MODEL` alone
// continues the run. With --runs, the first run's checkpoint that exists (all runs share one
// configuration).
void restore_from_checkpoint(App& app, TrainingFlags& f) {
  const po::variables_map& vm = app.vm();
  if (!vm.count("resume") || !vm["resume"].as<bool>()) return;
  if (!vm.count("output") || vm["output"].empty()) return;  // resolve_training: -o is required
  const std::string model_path = vm["output"].as<std::string>();
  if (model_path.empty()) return;
  const std::string given_cp = vm.count("checkpoint") ? vm["checkpoint"].as<std::string>() : "";
  const int runs = vm.count("runs") ? vm["runs"].as<int>() : 1;
  const std::string cp = given_cp.empty() ? model_path + ".ckpt" : given_cp;
  std::string found;
  std::error_code ec;
  if (std::filesystem::exists(cp, ec)) found = cp;
  for (int k = 1; found.empty() && k <= std::max(runs, 64); ++k) {
    const std::string c = given_cp.empty() ? model_path + ".run" + std::to_string(k) + ".ckpt"
                                           : given_cp + ".run" + std::to_string(k);
    if (std::filesystem::exists(c, ec)) found = c;
  }
  if (found.empty())
    throw IoError(
        "no checkpoint to resume from (train with --checkpoint-every N, or stop a "
        "run with Ctrl-C, to get one)",
        cp);
  const nn::ModelFile ck = nn::load_model_file(found);
  app.store_fallback(ck.config_yaml, found, false);
  if (ck.texts.count("run/options")) app.store_fallback(ck.texts.at("run/options"), found, true);
  f.resumed_from = found;
  f.resumed_kind = ck.kind;
  f.resumed_batch = 0;
  try {
    const YAML::Node b = YAML::Load(ck.config_yaml)["batch-size"];
    if (b && b.IsScalar()) f.resumed_batch = b.as<int64_t>();
  } catch (const YAML::Exception&) {  // store_fallback above has named what is wrong
  }
  // The base seed: a run of --runs K stores its own (base + run).
  f.resumed_seed = -1;
  if (ck.numbers.count("train/seed"))
    f.resumed_seed =
        ck.integer("train/seed") - (ck.numbers.count("train/run") ? ck.integer("train/run") : 0);
}

}  // namespace

void add_training_options(App& app, TrainingFlags& f) {
  auto& opt = app.options();
  auto& cfg = app.config_options();
  opt.add_options()("checkpoint", po::value(&f.checkpoint)->value_name("FILE"),
                    "checkpoint file (default: the model's name + .ckpt)")(
      "resume", po::bool_switch(&f.resume),
      "continue from the checkpoint: options not given again come from it, options given "
      "win; ends with the same model as a run never stopped")(
      "log", po::value(&f.log)->value_name("FILE"),
      "training metrics as TSV, a row every --log-every steps");
  if (f.offered & kRuns)
    opt.add_options()("runs", po::value(&f.runs)->value_name("K")->default_value(f.runs),
                      "train K times (seeds S, S+1, ...) and keep the best run");
  cfg.add_options()("batch-size",
                    po::value(&f.batch_size)->value_name("N")->default_value(f.batch_size),
                    text("items per step", f.batch_help).c_str());
  if (f.offered & kEpochs)
    cfg.add_options()("epochs", po::value(&f.epochs)->value_name("N")->default_value(f.epochs),
                      "passes over the training data (unless --steps)");
  if (f.offered & kSteps)
    cfg.add_options()(
        "steps", po::value(&f.steps)->value_name("N")->default_value(f.steps),
        (f.offered & kEpochs) ? "optimiser steps (0: --epochs decides)" : "optimiser steps");
  cfg.add_options()("lr", po::value(&f.lr)->value_name("RATE")->default_value(f.lr),
                    text("learning rate", f.lr_help).c_str());
  if (f.offered & kSchedule)
    cfg.add_options()(
        "schedule", po::value(&f.schedule)->value_name("KIND")->default_value(f.schedule),
        text("learning-rate schedule after warm-up: constant, inverse-sqrt or cosine (to 0 at the "
             "last step)",
             f.schedule_help)
            .c_str())("warmup", po::value(&f.warmup)->value_name("N")->default_value(f.warmup),
                      "steps of linear learning-rate warm-up");
  cfg.add_options()("clip", po::value(&f.clip)->value_name("C")->default_value(f.clip),
                    text("clip the gradients' global L2 norm to C (0: off)", f.clip_help).c_str())(
      "checkpoint-every",
      po::value(&f.checkpoint_every)->value_name("N")->default_value(f.checkpoint_every),
      "write a checkpoint every N steps (0: only at the end and on an interrupt)")(
      "log-every", po::value(&f.log_every)->value_name("N")->default_value(f.log_every),
      "steps per --log row, metrics averaged over them (0: a row per epoch)");
  if (f.offered & kEval)
    cfg.add_options()("eval-every",
                      po::value(&f.eval_every)->value_name("N")->default_value(f.eval_every),
                      "steps between evaluations on the validation data (0: at the end only)");
  app.enable(kSeed | kQuiet | kConfig);
  app.before_notify([&f](App& a) { restore_from_checkpoint(a, f); });
}

train::TrainOptions resolve_training(App& app, TrainingFlags& f, const std::string& kind,
                                     const std::string& model_path) {
  if (model_path.empty()) throw UsageError("-o MODEL is required");
  const bool lr_given = app.given("lr");
  const std::string cp = f.checkpoint.empty() ? model_path + ".ckpt" : f.checkpoint;
  if (f.resume) {
    if (f.resumed_from.empty())  // restore_from_checkpoint found none (or -o was missing)
      throw IoError("no checkpoint to resume from", cp);
    if (!kind.empty() && f.resumed_kind != kind)  // "": the module checks it
      throw DataError("is " + std::string(std::strchr("aeiou", f.resumed_kind[0]) ? "an " : "a ") +
                          f.resumed_kind + " model, expected " + kind,
                      f.resumed_from);
    // The position in the epoch counts batches: a resumed run keeps its batch size (a
    // larger one would run past the epoch's end, a smaller one skip or repeat data).
    if (f.resumed_batch > 0 && f.batch_size != f.resumed_batch)
      throw UsageError("--batch-size " + std::to_string(f.batch_size) +
                       " is not the checkpoint's (" + std::to_string(f.resumed_batch) +
                       "): a resumed run keeps its batch size (train anew to change it)");
    if (!app.given("seed") && f.resumed_seed >= 0)
      app.common().seed = static_cast<uint64_t>(f.resumed_seed);
  }
  if (f.batch_size < 1) throw UsageError("--batch-size must be at least 1");
  if (f.epochs < 0 || f.steps < 0) throw UsageError("--epochs and --steps must be 0 or more");
  if (!f.zero_is_recipe && ((f.offered & kEpochs) ? (f.epochs < 1 && f.steps < 1) : f.steps < 1))
    throw UsageError((f.offered & kEpochs) ? "--epochs or --steps must be at least 1"
                                           : "--steps must be at least 1");
  if (!(f.lr > 0) && !(f.zero_is_recipe && f.lr == 0)) throw UsageError("--lr must be positive");
  if (f.warmup < 0) throw UsageError("--warmup must be 0 or more");
  if (f.runs < 1) throw UsageError("--runs must be at least 1");
  train::TrainOptions o;
  o.model_path = model_path;
  o.checkpoint_path = f.checkpoint;
  o.log_path = f.log;
  o.checkpoint_every = f.checkpoint_every;
  o.log_every = f.log_every;
  o.eval_every = f.eval_every;
  o.clip = f.clip;
  o.resume = f.resume;
  o.lr_override = f.resume && lr_given ? f.lr : 0.0;
  o.seed = app.common().seed;
  o.run_options = app.given_options_yaml(kNotRestored);
  try {
    o.validate();
  } catch (const UsageError& e) {
    throw UsageError(std::string("--") + e.what());
  }
  return o;
}

namespace {

// The hooks of a run: the signal flag and the progress bar, made when the run starts (it
// knows then where a resumed run starts from).
train::Hooks hooks_for(App& app, std::unique_ptr<Progress>& bar,
                       const std::function<std::string()>& label,
                       const std::function<int64_t()>& total) {
  train::Hooks h;
  h.interrupted = [] { return g_signals.load() > 0; };
  const bool quiet = app.common().quiet || train::dist::rank() != 0;
  h.started = [&bar, quiet, label, total](int64_t start) {
    bar = std::make_unique<Progress>(label(), total(), quiet);
    bar->set_start(start);
  };
  h.progress = [&bar](int64_t step, int64_t, const train::Metrics& shown) {
    if (bar) bar->update(step, shown);
  };
  return h;
}

void summary(App& app, const train::RunResult& r, const std::string& what, const std::string& out) {
  if (app.common().quiet || train::dist::rank() != 0) return;
  std::cerr << app.name() << ": " << what << r.steps << " steps; ";
  if (r.eval.empty()) {
    std::cerr << "no validation set";
  } else {
    for (size_t i = 0; i < r.eval.size(); ++i)
      std::cerr << (i ? ", " : "") << r.eval[i].first << " " << format_metric(r.eval[i].second);
  }
  std::cerr << "; wrote " << out << "\n";
}

}  // namespace

train::RunResult train(App& app, train::Module& m, const train::TrainOptions& o) {
  SignalGuard guard;
  std::unique_ptr<Progress> bar;
  const train::Hooks h = hooks_for(
      app, bar, [&] { return app.name(); }, [&] { return m.total_steps(); });
  train::RunResult r;
  try {
    r = train::run(m, o, h);
  } catch (const std::bad_alloc&) {
    if (bar) bar->finish();
    // What was being built: a training step of the model (or its checkpoint).
    throw Error("out of memory while training " + m.kind() +
                (o.model_path.empty() ? std::string() : " for " + o.model_path) +
                " (a step holds a batch's forward pass and gradients: try a smaller "
                "--batch-size, shorter items or a smaller model)");
  } catch (...) {
    if (bar) bar->finish();
    throw;
  }
  if (bar) bar->finish();
  summary(app, r, "", o.model_path);
  return r;
}

train::RunResult train_runs(App& app, int runs, const train::TrainOptions& o,
                            const std::function<std::unique_ptr<train::Module>(uint64_t)>& make) {
  if (runs == 1) {
    std::unique_ptr<train::Module> m = make(o.seed);
    return train(app, *m, o);
  }
  SignalGuard guard;
  std::unique_ptr<Progress> bar;
  int current = 0;
  train::Module* live = nullptr;
  const train::Hooks h = hooks_for(
      app, bar, [&] { return app.name() + " run " + std::to_string(current + 1); },
      [&] { return live ? live->total_steps() : int64_t{0}; });
  auto made = [&](uint64_t seed) {
    std::unique_ptr<train::Module> m = make(seed);
    live = m.get();
    return m;
  };
  train::RunResult r =
      train::best_of_runs(runs, o, made, h, [&](int k, const train::RunResult& res) {
        if (bar) bar->finish();
        bar.reset();
        current = k + 1;
        if (!app.common().quiet && train::dist::rank() == 0)
          std::cerr << app.name() << ": run " << k + 1 << "/" << runs << " (seed " << o.seed + k
                    << "): score " << format_metric(res.score) << "\n";
      });
  summary(app, r, "best of " + std::to_string(runs) + " runs, ", o.model_path);
  return r;
}

}  // namespace attnkit::cli
