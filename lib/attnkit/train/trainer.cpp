#include "attnkit/train/trainer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/train/dist.h"
#include "attnkit/train/loop.h"

namespace attnkit::train {

namespace {

// Sums of the log window since its last row: saved in checkpoints, so that the first row
// after a resume averages the same steps as in an uninterrupted run.
struct Window {
  int64_t steps = 0;
  double loss = 0, norm = 0;
  std::vector<double> metrics;
  void add(double l, double n, const Metrics& m) {
    ++steps;
    loss += l;
    norm += n;
    if (metrics.size() < m.size()) metrics.resize(m.size(), 0.0);
    for (size_t i = 0; i < m.size(); ++i) metrics[i] += m[i].second;
  }
  double mean(double sum) const { return steps ? sum / static_cast<double>(steps) : NAN; }
  void save(nn::ModelFile& f, const std::vector<std::string>& names) const {
    f.numbers["log/steps"] = static_cast<double>(steps);
    f.numbers["log/loss"] = loss;
    f.numbers["log/grad_norm"] = norm;
    for (size_t i = 0; i < names.size() && i < metrics.size(); ++i)
      f.numbers["log/m/" + names[i]] = metrics[i];
  }
  void load(const nn::ModelFile& f, const std::vector<std::string>& names) {
    *this = Window();
    if (!f.numbers.count("log/steps")) return;
    steps = f.integer("log/steps");
    loss = f.number("log/loss");
    norm = f.number("log/grad_norm");
    metrics.assign(names.size(), 0.0);
    for (size_t i = 0; i < names.size(); ++i)
      if (f.numbers.count("log/m/" + names[i])) metrics[i] = f.number("log/m/" + names[i]);
  }
};

// The configuration YAML ("key: value" lines) without the keys of a run's cadence.
std::string without_cadence(const std::string& yaml) {
  std::string out;
  size_t i = 0;
  while (i < yaml.size()) {
    size_t e = yaml.find('\n', i);
    if (e == std::string::npos) e = yaml.size();
    const std::string line = yaml.substr(i, e - i);
    bool skip = false;
    for (const char* k : {"log-every:", "checkpoint-every:", "eval-every:"})
      if (line.rfind(k, 0) == 0) skip = true;
    if (!skip) out += line + (e < yaml.size() ? "\n" : "");
    i = e + 1;
  }
  return out;
}

}  // namespace

void TrainOptions::validate() const {
  if (model_path.empty()) throw UsageError("no model file to write (give -o FILE)");
  if (checkpoint_every < 0) throw UsageError("checkpoint-every must be 0 or more");
  if (log_every < 0) throw UsageError("log-every must be 0 or more");
  if (eval_every < 0) throw UsageError("eval-every must be 0 or more");
  if (!(clip >= 0)) throw UsageError("clip must be 0 or more");
}

void check_writable(const std::string& path) {
  if (path.empty() || path == "-") return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw IoError("is a directory, not a file to write", path);
  io::AtomicFile probe(path);  // creates a temporary beside it; removed without commit()
}

int remove_stale_temporaries(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const std::string prefix = "." + p.filename().string() + ".tmp.";
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0 &&
        e.is_regular_file(ec)) {
      std::filesystem::remove(e.path(), ec);
      if (!ec) ++n;
    }
  }
  return n;
}

std::string CheckpointLock::lock_path(const std::string& checkpoint) {
  const std::filesystem::path p(checkpoint);
  return (p.parent_path() / ("." + p.filename().string() + ".lock")).string();
}

CheckpointLock::CheckpointLock(const std::string& checkpoint) : path_(lock_path(checkpoint)) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw IoError(std::string("cannot create a lock file: ") + std::strerror(errno), path_);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char buf[32] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK)
        throw IoError(std::string("cannot lock: ") + std::strerror(err), path_);
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      throw IoError("is in use by another run" + (pid.empty() ? "" : " (process " + pid + ")") +
                        ": wait for it to end, or train to another -o or --checkpoint",
                    checkpoint);
    }
    // A run ending removes its lock file: between our open and flock it may have gone, and
    // then the lock is the one at the path now.
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // the process id is only for the message of a run that finds the lock held
      }
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
  throw IoError("cannot lock: its lock file keeps being replaced", path_);
}

CheckpointLock::~CheckpointLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while held: a run waiting on it then finds it gone and retries
  ::close(fd_);
}

RunResult run(Module& m, const TrainOptions& o, const Hooks& hooks) {
  o.validate();
  const bool writer = dist::rank() == 0;
  LoopOptions to;
  to.kind = m.kind();
  to.model_path = o.model_path;
  to.checkpoint_path = o.checkpoint_path;
  to.steps = m.total_steps();
  to.checkpoint_every = o.checkpoint_every;
  to.resume = o.resume;
  to.writer = writer;
  to.save_model = false;  // written once, below, with the run's results
  Loop loop(to, m.params(), m.optimizer());
  // Every path is checked before any work: a typo must not cost a run.
  std::unique_ptr<CheckpointLock> lock;
  if (writer) {
    check_writable(o.model_path);
    check_writable(loop.checkpoint_path());
    if (!o.resume) check_writable(o.log_path);
    // One run a checkpoint; then what a killed write left is no live run's and goes.
    lock = std::make_unique<CheckpointLock>(loop.checkpoint_path());
    remove_stale_temporaries(loop.checkpoint_path());
    remove_stale_temporaries(o.model_path);
  }
  m.add_rngs(loop);
  m.describe(loop.base());
  loop.base().numbers["train/seed"] = static_cast<double>(o.seed);
  loop.base().numbers["train/run"] = static_cast<double>(o.run);
  const std::vector<std::string> names = m.step_metrics();
  Window window;
  loop.on_save([&](nn::ModelFile& f) {
    m.save_state(f);
    window.save(f, names);
    if (!o.run_options.empty()) f.texts["run/options"] = o.run_options;
  });
  loop.on_load([&](const nn::ModelFile& f) {
    m.load_state(f);
    window.load(f, names);
  });
  if (o.resume) {
    const nn::ModelFile ck = nn::load_model_file(loop.checkpoint_path(), m.kind());
    m.check_resume(ck);
    // The position in the epoch must lie in this run's epoch (a damaged or re-signed file
    // could hold any number; batches are cut at position x batch size).
    const int64_t batches = m.batches_per_epoch();
    const int64_t position = ck.integer("train/position");
    if (position >= batches)
      throw DataError("train/position " + std::to_string(position) + " is outside an epoch of " +
                          std::to_string(batches) + " batches",
                      ck.file);
    loop.resume_from(ck);
    if (o.lr_override > 0) m.optimizer().set_lr(o.lr_override);
  }
  std::optional<io::TsvLog> log;
  if (writer && !o.log_path.empty()) {
    if (o.resume && loop.state().step > 0)
      log.emplace(o.log_path, loop.state().step);
    else
      log.emplace(o.log_path);
  }
  const std::vector<std::string> eval_names = m.eval_metrics();
  if (log && !log->columns().empty()) {
    // A resumed log: its columns must be this run's (a validation set given then and not
    // now would fail at the first row, after the work).
    std::vector<std::string> want = {"step", "epoch", "loss", "grad_norm", "lr"};
    want.insert(want.end(), names.begin(), names.end());
    want.insert(want.end(), eval_names.begin(), eval_names.end());
    std::vector<std::string> have = log->columns();
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    if (want != have) {
      auto join = [](const std::vector<std::string>& v) {
        std::string t;
        for (const std::string& x : v) t += (t.empty() ? "" : ", ") + x;
        return t;
      };
      throw DataError("the log's columns (" + join(log->columns()) + ") are not this run's (" +
                          join(want) +
                          "): resume with the run's own data files (--valid), or another --log",
                      o.log_path);
    }
  }
  const int64_t total = m.total_steps();
  if (hooks.started) hooks.started(loop.state().step);

  RunResult result;
  Tapes tapes;
  // An interrupt: rank 0 writes the checkpoint while the other ranks, which write nothing,
  // wait for it here (were they to end first, the launcher would kill rank 0 mid-write).
  try {
    loop.run(
        [&](nn::TrainState& s) {
          LoopStep r;
          // One process stops before the step when a signal came during the last one (or its
          // evaluation), and within the step when the module allows it (stops_within_step);
          // ranks stop together, after the step in which their flags were exchanged.
          const bool one = dist::ranks() == 1 && hooks.interrupted;
          if (one && hooks.interrupted()) {
            r.interrupted = r.dropped = true;
            return r;
          }
          const int64_t rows = m.begin_batch(s);
          const bool stop_asked = hooks.interrupted && hooks.interrupted();
          StepOut out;
          try {
            out = step(m, tapes, rows, o.seed, s.step, o.clip, stop_asked, 0,
                       one && m.stops_within_step() ? hooks.interrupted : std::function<bool()>());
          } catch (const StepDropped&) {
            r.interrupted = r.dropped = true;
            return r;
          }
          r.loss = out.loss;
          r.grad_norm = out.grad_norm;
          StepEnd end = m.end_step(s, out.loss, out.sums);
          r.metrics = std::move(end.metrics);
          r.stop = end.stop;
          r.interrupted = out.interrupted;
          s.advance(m.batches_per_epoch());
          return r;
        },
        [&](const nn::TrainState& s, const LoopStep& r) {
          window.add(r.loss, r.grad_norm, r.metrics);
          const bool last = s.step == total || r.stop;
          const bool eval_now =
              (o.eval_every > 0 && s.step % o.eval_every == 0) || last || m.eval_due(s);
          Metrics ev;
          if (eval_now && writer && !eval_names.empty()) {
            ev = m.evaluate();
            result.eval = ev;
          }
          const bool row_now = o.log_every > 0 ? s.step % o.log_every == 0 : s.position == 0;
          if (row_now || last || (eval_now && !eval_names.empty())) {
            if (log) {
              io::TsvLog::Row row{{"step", static_cast<double>(s.step)},
                                  {"epoch", static_cast<double>(s.epoch)},
                                  {"loss", window.mean(window.loss)},
                                  {"grad_norm", window.mean(window.norm)},
                                  {"lr", m.optimizer().current_lr()}};
              for (size_t i = 0; i < names.size(); ++i)
                row.push_back(
                    {names[i], i < window.metrics.size() ? window.mean(window.metrics[i]) : NAN});
              for (const std::string& n : eval_names) {
                double v = NAN;
                for (const auto& [k, x] : ev)
                  if (k == n) v = x;
                row.push_back({n, v});
              }
              log->row(row);
            }
            window = Window();
          }
          if (hooks.progress) {
            Metrics shown{{"loss", r.loss}};
            for (const auto& kv : r.metrics) shown.push_back(kv);
            for (const auto& kv : result.eval) shown.push_back(kv);
            hooks.progress(s.step, total, shown);
          }
        });
  } catch (const Interrupted&) {
    dist::barrier();
    throw;
  }
  result.steps = loop.state().step;
  result.score = m.score();
  nn::ModelFile final_file = loop.final_model();
  // How often a run logged, checkpointed or evaluated does not change the model: those keys
  // stay in checkpoints (a resume takes them from there) but not in the model file.
  final_file.config_yaml = without_cadence(final_file.config_yaml);
  final_file.numbers["result/score"] = result.score;
  m.finish(final_file);
  if (writer) nn::save_model_file(o.model_path, final_file);
  dist::barrier();
  return result;
}

RunResult best_of_runs(int runs, const TrainOptions& o,
                       const std::function<std::unique_ptr<Module>(uint64_t)>& make,
                       const Hooks& hooks, const std::function<void(int, const RunResult&)>& done) {
  if (runs < 1) throw UsageError("runs must be at least 1");
  if (runs == 1) {
    std::unique_ptr<Module> m = make(o.seed);
    RunResult r = run(*m, o, hooks);
    if (done) done(0, r);
    return r;
  }
  if (dist::rank() == 0) check_writable(o.model_path);
  int best = -1;
  RunResult best_result;
  std::vector<std::string> files;
  for (int k = 0; k < runs; ++k) {
    TrainOptions ok = o;
    ok.seed = o.seed + static_cast<uint64_t>(k);
    ok.run = k;
    ok.model_path = o.model_path + ".run" + std::to_string(k + 1);
    ok.checkpoint_path =
        o.checkpoint_path.empty() ? "" : o.checkpoint_path + ".run" + std::to_string(k + 1);
    if (!o.log_path.empty() && o.log_path != "-")
      ok.log_path = o.log_path + ".run" + std::to_string(k + 1);
    files.push_back(ok.model_path);
    std::unique_ptr<Module> m = make(ok.seed);
    RunResult r;
    const std::string ck =
        ok.checkpoint_path.empty() ? ok.model_path + ".ckpt" : ok.checkpoint_path;
    std::error_code ec;
    if (o.resume && std::filesystem::exists(ok.model_path, ec) &&
        !std::filesystem::exists(ck, ec)) {
      // finished before the interruption: its score is in its file
      const nn::ModelFile f = nn::load_model_file(ok.model_path, m->kind());
      r.steps = f.integer("train/step");
      r.score = f.number("result/score");
    } else {
      ok.resume = o.resume && std::filesystem::exists(ck, ec);
      r = run(*m, ok, hooks);
      // A finished run keeps its score for a resume; its checkpoint is no longer needed.
      if (dist::rank() == 0) std::filesystem::remove(ck, ec);
    }
    if (done) done(k, r);
    if (best < 0 || r.score < best_result.score) best = k, best_result = r;
  }
  if (dist::rank() == 0) {
    std::filesystem::rename(files[static_cast<size_t>(best)], o.model_path);
    std::error_code ec;
    for (int k = 0; k < runs; ++k)
      if (k != best) std::filesystem::remove(files[static_cast<size_t>(k)], ec);
  }
  dist::barrier();
  return best_result;
}

}  // namespace attnkit::train
