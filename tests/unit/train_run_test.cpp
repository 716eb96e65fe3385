// The training layer's files (train/trainer.h): a resumed checkpoint's position checked
// against the epoch, the checkpoint's lock, and stale temporaries removed at every start.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "attnkit/core/alloc_budget.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ptrnet/model.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/train/trainer.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_train_run_test {

using namespace attnkit;

namespace {

// A tiny pointer network on 40 sorting problems, batches of 8: 5 batches an epoch.
template <class M = models::PtrTraining>
std::unique_ptr<M> tiny(int64_t steps) {
  Rng rng(3);
  data::PtrGenOptions g;
  g.task = data::parse_ptr_task("sort"), g.n_min = 3, g.n_max = 4;
  std::vector<data::PtrProblem> probs;
  for (int i = 0; i < 40; ++i) {
    probs.push_back(data::make_ptr_problem(g, rng));
    probs.back().answer = data::ptr_answer(g, probs.back());
  }
  models::PtrNetConfig c;
  c.task = "sort", c.embed = 4, c.hidden = 6;
  models::PtrTrainOptions o;
  o.batch = 8;
  return std::make_unique<M>(c, o, probs, std::vector<data::PtrProblem>{}, steps, 0, 1,
                             "task: sort\nembed: 4\nhidden: 6\n");
}

// The pointer network as a module whose steps may be dropped part-way (its begin_batch only
// picks the batch), as han's and bert's are.
struct Droppable : models::PtrTraining {
  using models::PtrTraining::PtrTraining;
  bool stops_within_step() const override { return true; }
};

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return (e.file().empty() ? "" : e.file() + ": ") + e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("train::run: a checkpoint's position outside the epoch is refused before any step") {
  test::TempDir dir;
  train::TrainOptions o;
  o.model_path = dir / "m.akm";
  o.checkpoint_every = 2;
  {
    auto m = tiny(2);
    REQUIRE(m->batches_per_epoch() == 5);
    train::run(*m, o);
  }
  const std::string ck = dir / "m.akm.ckpt";
  nn::ModelFile f = nn::load_model_file(ck);
  CHECK(f.integer("train/position") == 2);
  // Re-signed with a position that position x batch would overflow at batches above 2048
  // (a crash before), and with the first position past the epoch's end.
  for (double position : {4503599627370496.0, 5.0}) {
    f.numbers["train/position"] = position;
    nn::save_model_file(ck, f);
    o.resume = true;
    auto m = tiny(4);
    const std::string e = message([&] { train::run(*m, o); });
    CHECK_MESSAGE(e.find("m.akm.ckpt: train/position ") != std::string::npos, e);
    CHECK_MESSAGE(e.find("is outside an epoch of 5 batches") != std::string::npos, e);
  }
  f.numbers["train/position"] = 4.0;  // the last batch of the epoch: fine
  nn::save_model_file(ck, f);
  auto m = tiny(4);
  CHECK(train::run(*m, o).steps == 4);
}

TEST_CASE("train::CheckpointLock: one holder at a time; its file goes with it") {
  test::TempDir dir;
  const std::string ck = dir / "m.akm.ckpt";
  const std::string lock = train::CheckpointLock::lock_path(ck);
  CHECK(lock == dir / ".m.akm.ckpt.lock");
  {
    train::CheckpointLock a(ck);
    CHECK(std::filesystem::exists(lock));
    // flock locks are per open file: a second open in the same process conflicts too.
    const std::string e = message([&] { train::CheckpointLock b(ck); });
    CHECK_MESSAGE(e.find("m.akm.ckpt: is in use by another run (process ") != std::string::npos, e);
    train::CheckpointLock other(dir / "n.akm.ckpt");  // another checkpoint is free
  }
  CHECK_FALSE(std::filesystem::exists(lock));
  train::CheckpointLock again(ck);
  // A training run on a locked checkpoint stops before any work.
  train::TrainOptions o;
  o.model_path = dir / "m.akm";
  auto m = tiny(2);
  CHECK(message([&] { train::run(*m, o); }).find("is in use by another run") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.akm"));
}

TEST_CASE("train::run: a fresh start removes the temporaries a killed write left") {
  test::TempDir dir;
  const std::string stale_ck = dir.file(".m.akm.ckpt.tmp.AbC123", "junk");
  const std::string stale_model = dir.file(".m.akm.tmp.XyZ789", "junk");
  const std::string other = dir.file(".other.akm.tmp.Qrs456", "keep");
  train::TrainOptions o;
  o.model_path = dir / "m.akm";
  auto m = tiny(1);
  train::run(*m, o);
  CHECK_FALSE(std::filesystem::exists(stale_ck));
  CHECK_FALSE(std::filesystem::exists(stale_model));
  CHECK(std::filesystem::exists(other));
  CHECK(std::filesystem::exists(dir / "m.akm"));
}

TEST_CASE("AllocBudget: tensors past the budget are refused before they are allocated") {
  {
    const AllocBudget b(100, "too much", "f.akm");
    Tensor a({8, 8});  // 64 of 100
    CHECK(message([] { Tensor t({6, 7}); }) == "f.akm: too much (a tensor of 42 values, 36 left)");
    Tensor c({6, 6}, std::vector<float>(36));  // made from values: not charged
    Tensor d({36});                            // exactly what is left
    CHECK(message([] { Tensor t({1}); }).find("0 left") != std::string::npos);
  }
  Tensor free({1000, 1000});  // no budget outside the scope
  CHECK(free.size() == 1000000);
}

TEST_CASE("load_ptrnet: a re-signed configuration larger than its tensors is refused at once") {
  test::TempDir dir;
  train::TrainOptions o;
  o.model_path = dir / "m.akm";
  auto m = tiny(1);
  train::run(*m, o);
  CHECK(models::load_ptrnet(o.model_path).config.hidden == 6);
  nn::ModelFile f = nn::load_model_file(o.model_path);
  const size_t at = f.config_yaml.find("hidden: 6");
  REQUIRE(at != std::string::npos);
  // hidden 8000: some 2 GB of LSTM weights from a file of a few kilobytes (signed again by
  // save_model_file, so that only the budget stands in the way).
  f.config_yaml.replace(at, 9, "hidden: 8000");
  nn::save_model_file(o.model_path, f);
  const std::string e = message([&] { models::load_ptrnet(o.model_path); });
  CHECK_MESSAGE(e.find("m.akm: the stored configuration asks for far more memory than the file's "
                       "tensors hold") != std::string::npos,
                e);
}

// A signal (Hooks::interrupted) stops a run of one process before its next step, and, for a
// module that allows it, within the step it arrives in (the step dropped, its state before it
// checkpointed); resumed, either run ends with the model of a run never stopped.
TEST_CASE("train::run: a signal stops the run before the next step, or within the step") {
  test::TempDir dir;
  train::TrainOptions o;
  o.model_path = dir / "ref.akm";
  train::run(*tiny(6), o);
  const std::string ref = io::read_all(dir / "ref.akm");
  REQUIRE(!ref.empty());
  for (const bool within : {false, true}) {
    CAPTURE(within);
    o.model_path = dir / (within ? "w.akm" : "b.akm");
    o.resume = false;
    std::unique_ptr<models::PtrTraining> m;
    if (within)
      m = tiny<Droppable>(6);
    else
      m = tiny(6);
    // Polls a step: one before it, one for the flag it carries, and with `within` one
    // before each of its slices' forward and backward passes (4 slices of 8 problems).
    const int64_t polls = 2 + (within ? 2 * train::slice_count(*m, 8) : 0);
    std::atomic<int64_t> calls{0};  // polled by the slices' threads
    train::Hooks h;
    // A signal during step 3, after 2 steps' polls and: with `within`, 3 of step 3's (so
    // the poll before its second slice's forward pass sees it); without, 2 (so that the step
    // runs on, and the poll before step 4 sees it).
    const int64_t before = 2 * polls + (within ? 3 : 2);
    h.interrupted = [&] { return ++calls > before; };
    CHECK(message([&] {
            train::run(*m, o, h);
          }).find(within ? "interrupted at step 2;" : "interrupted at step 3;") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(o.model_path));
    REQUIRE(std::filesystem::exists(o.model_path + ".ckpt"));
    o.resume = true;
    train::run(*tiny(6), o);
    CHECK(io::read_all(o.model_path) == ref);
  }
}

}  // namespace attnkit_unit_train_run_test
