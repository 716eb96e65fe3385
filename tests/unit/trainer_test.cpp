// The shared training loop (nn/trainer): exact resume after a kill, the NaN/Inf guard,
// damaged checkpoints; with a tiny regression model on the autodiff engine.
#include "attnkit/nn/trainer.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "attnkit/autodiff/ops.h"
#include "attnkit/autodiff/tape.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/train/best.h"
#include "attnkit/train/loop.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_trainer_test {

using namespace attnkit;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/attnkit_tr_" + std::to_string(getpid()) + "_" + name;
}

struct Killed {};

// y = x·w_true + noise, 20 examples of 3 features, batches of 4 in a shuffled order each
// epoch, a 3→5→1 network with dropout (draws from the tape's RNG) trained with Adam.
struct Run {
  static constexpr int64_t kN = 20, kBatch = 4, kBatches = kN / kBatch;
  Tensor x{{kN, 3}}, y{{kN, 1}};
  nn::ParamStore store;
  std::unique_ptr<nn::Adam> adam;
  ad::Tape tape{99};
  uint64_t seed = 5;

  Run() {
    Rng data(1);
    for (int64_t i = 0; i < kN; ++i) {
      float t = 0.5f;
      for (int j = 0; j < 3; ++j) {
        x.at(i, j) = static_cast<float>(data.normal());
        t += x.at(i, j) * static_cast<float>(j + 1);
      }
      y.at(i, 0) = t + 0.1f * static_cast<float>(data.normal());
    }
    Rng init(2);
    Tensor w1({5, 3}), w2({1, 5});
    nn::init_normal(w1, init, 0.5f);
    nn::init_normal(w2, init, 0.5f);
    store.add("l1.W", std::move(w1));
    store.add("l1.b", Tensor({5}));
    store.add("l2.W", std::move(w2));
    store.add("l2.b", Tensor({1}));
    adam = std::make_unique<nn::Adam>(store.params(), 0.05);
    tape.set_training(true);
  }

  train::LoopOptions options(const std::string& model, int64_t steps, int64_t every, bool resume) {
    train::LoopOptions o;
    o.kind = "regress";
    o.model_path = model;
    o.steps = steps;
    o.checkpoint_every = every;
    o.resume = resume;
    return o;
  }

  // One step; kill_at > 0 throws Killed when about to do that step (a kill -9 mid-run).
  train::LoopStep step(nn::TrainState& s, int64_t kill_at = 0, int64_t nan_at = 0) {
    if (kill_at > 0 && s.step + 1 == kill_at) throw Killed{};
    const auto order = nn::epoch_order(seed, s.epoch, kBatches);
    const int64_t b = order[static_cast<size_t>(s.position)];
    Tensor xb({kBatch, 3}), yb({kBatch, 1});
    for (int64_t i = 0; i < kBatch; ++i) {
      for (int j = 0; j < 3; ++j) xb.at(i, j) = x.at(b * kBatch + i, j);
      yb.at(i, 0) = y.at(b * kBatch + i, 0);
    }
    tape.clear();
    ad::Var h = ad::tanh(ad::linear(tape.constant(std::move(xb)), tape.param(store.get("l1.W")),
                                    tape.param(store.get("l1.b"))));
    h = ad::dropout(h, 0.2f);
    ad::Var out = ad::linear(h, tape.param(store.get("l2.W")), tape.param(store.get("l2.b")));
    ad::Var loss = ad::mean(ad::square(ad::sub(out, tape.constant(std::move(yb)))));
    adam->zero_grad();
    tape.backward(loss);
    const double norm = nn::clip_grad_norm(store.params(), 5.0);
    adam->step();
    s.advance(kBatches);
    double l = loss.value()[0];
    if (nan_at > 0 && s.step + 1 == nan_at) l = std::numeric_limits<double>::quiet_NaN();
    return {l, norm, {{"norm", norm}}};
  }
};

std::string bytes_of(const std::string& path) { return io::read_all(path); }

}  // namespace

TEST_CASE("trainer: a run resumed after a kill ends with the same model, bit for bit") {
  const std::string a = temp_path("a.akm"), b = temp_path("b.akm");
  {
    Run r;
    train::Loop t(r.options(a, 23, 0, false), r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    t.base().config_yaml = "hidden: 5\n";
    CHECK_FALSE(t.resume());
    int reports = 0;
    t.run([&](nn::TrainState& s) { return r.step(s); },
          [&](const nn::TrainState& s, const train::LoopStep&) { CHECK(s.step == ++reports); });
    CHECK(reports == 23);
    CHECK(t.state().epoch == 4);
    CHECK(t.state().position == 3);
  }
  {
    Run r;  // killed before step 17: the last checkpoint is at step 14
    train::Loop t(r.options(b, 23, 7, false), r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    t.base().config_yaml = "hidden: 5\n";
    CHECK_THROWS_AS(t.run([&](nn::TrainState& s) { return r.step(s, 17); }), Killed);
    CHECK(t.last_checkpoint_step() == 14);
  }
  const nn::ModelFile ck = nn::load_model_file(b + ".ckpt", "regress");
  CHECK(ck.integer("train/step") == 14);
  CHECK(ck.integer("optim/steps") == 14);
  {
    Run r;  // a new process: fresh model, resumed
    train::Loop t(r.options(b, 23, 7, true), r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    t.base().config_yaml = "hidden: 5\n";
    CHECK(t.resume());
    CHECK(t.state().step == 14);
    CHECK(t.state().epoch == 2);
    CHECK(t.state().position == 4);
    t.run([&](nn::TrainState& s) { return r.step(s); });
  }
  const nn::ModelFile ma = nn::load_model_file(a), mb = nn::load_model_file(b);
  CHECK(ma.integer("train/step") == 23);
  CHECK(mb.config_yaml == "hidden: 5\n");
  CHECK(mb.tensors.count("optim/l1.W/m") == 0);  // the final model has no optimiser state
  CHECK(bytes_of(a) == bytes_of(b));
  CHECK(nn::load_model_file(b + ".ckpt").integer("train/step") == 23);

  // without the tape's RNG state the resumed run drifts (dropout masks differ): the
  // comparison above can fail
  const std::string c = temp_path("c.akm");
  {
    Run r;
    train::Loop t(r.options(c, 14, 7, false), r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    t.run([&](nn::TrainState& s) { return r.step(s); });
  }
  {
    Run r;
    train::Loop t(r.options(c, 23, 7, true), r.store, *r.adam);
    t.resume();  // the tape RNG not registered: starts from its seed again
    t.run([&](nn::TrainState& s) { return r.step(s); });
  }
  CHECK(bytes_of(a) != bytes_of(c));
  for (const auto& p : {a, b, c}) {
    std::remove(p.c_str());
    std::remove((p + ".ckpt").c_str());
  }
}

TEST_CASE("trainer: a NaN loss stops the run and keeps the last good checkpoint") {
  const std::string m = temp_path("nan.akm");
  Run r;
  train::Loop t(r.options(m, 30, 5, false), r.store, *r.adam);
  t.add_rng("tape", r.tape.rng());
  try {
    t.run([&](nn::TrainState& s) { return r.step(s, 0, 13); });
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) ==
          "loss became NaN at step 13; the last good checkpoint is " + m + ".ckpt (step 10)");
  }
  CHECK(nn::load_model_file(m + ".ckpt").integer("train/step") == 10);
  CHECK_THROWS_AS(nn::load_model_file(m), IoError);  // no final model

  // a non-finite gradient norm, and non-finite parameters at checkpoint time
  Run r2;
  train::Loop t2(r2.options(m, 30, 0, false), r2.store, *r2.adam);
  try {
    t2.run([&](nn::TrainState& s) {
      train::LoopStep res = r2.step(s);
      res.grad_norm = std::numeric_limits<double>::infinity();
      return res;
    });
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) ==
          "gradient norm became +Inf at step 1; no checkpoint was written (checkpoints are off)");
  }
  Run r3;
  train::Loop t3(r3.options(m, 30, 2, false), r3.store, *r3.adam);
  try {
    t3.run([&](nn::TrainState& s) {
      const bool poison = s.step == 3;  // the 4th step
      train::LoopStep res = r3.step(s);
      if (poison) r3.store.get("l2.b").value[0] = std::numeric_limits<float>::quiet_NaN();
      return res;
    });
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) ==
          "parameter 'l2.b' became NaN at step 4; the last good checkpoint is " + m +
              ".ckpt (step 2)");
  }
  CHECK(nn::load_model_file(m + ".ckpt").integer("train/step") == 2);
  std::remove((m + ".ckpt").c_str());
}

TEST_CASE("trainer: resuming from a missing, damaged or foreign checkpoint fails cleanly") {
  const std::string m = temp_path("dmg.akm");
  {
    Run r;
    train::Loop t(r.options(m, 6, 3, true), r.store, *r.adam);
    CHECK_THROWS_AS(t.resume(), IoError);  // no checkpoint yet
  }
  {
    Run r;
    train::Loop t(r.options(m, 6, 3, false), r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    t.run([&](nn::TrainState& s) { return r.step(s); });
  }
  const std::string good = io::read_all(m + ".ckpt");
  auto resume_error = [&](const std::string& bytes, const std::string& kind = "regress") {
    {
      io::AtomicFile f(m + ".ckpt");
      f.write(bytes);
      f.commit();
    }
    Run r;
    train::LoopOptions o = r.options(m, 6, 3, true);
    o.kind = kind;
    train::Loop t(o, r.store, *r.adam);
    t.add_rng("tape", r.tape.rng());
    const float w0 = r.store.get("l1.W").value[0];
    try {
      t.resume();
    } catch (const DataError& e) {
      CHECK(e.file() == m + ".ckpt");
      CHECK(r.store.get("l1.W").value[0] == w0);  // nothing changed
      CHECK(t.state().step == 0);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(resume_error(good.substr(0, good.size() / 2)).find("truncated") != std::string::npos);
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x01;
  CHECK(resume_error(flipped).find("checksum") != std::string::npos);
  CHECK(resume_error(good, "ntm") == "is a regress model, expected ntm");
  CHECK(resume_error(good) == "(no error)");
  // a checkpoint of a model with other shapes
  {
    nn::ModelFile c = nn::parse_model_file(good, "x");
    c.tensors["param/l1.W"] = Tensor({2, 2});
    CHECK(resume_error(nn::format_model_file(c)).find("l1.W") != std::string::npos);
    nn::ModelFile d = nn::parse_model_file(good, "x");
    d.texts.erase("rng/tape");
    CHECK(resume_error(nn::format_model_file(d)).find("rng/tape") != std::string::npos);
  }
  std::remove(m.c_str());
  std::remove((m + ".ckpt").c_str());
}

TEST_CASE("trainer: options are checked; epoch_order is a seeded permutation") {
  nn::ParamStore ps;
  ps.add("w", Tensor({1}));
  nn::SGD sgd(ps.params(), 0.1);
  train::LoopOptions o;
  o.kind = "k";
  CHECK_THROWS_AS(train::Loop(o, ps, sgd), UsageError);  // no model path
  o.model_path = "m";
  o.checkpoint_path = "m";
  CHECK_THROWS_AS(train::Loop(o, ps, sgd), UsageError);
  o.checkpoint_path = "";
  CHECK(train::Loop(o, ps, sgd).checkpoint_path() == "m.ckpt");

  const auto p = nn::epoch_order(3, 0, 50);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) CHECK(sorted[static_cast<size_t>(i)] == i);
  CHECK(p == nn::epoch_order(3, 0, 50));
  CHECK(p != nn::epoch_order(3, 1, 50));
  CHECK(p != nn::epoch_order(4, 0, 50));
  CHECK(nn::epoch_order(3, 0, 0).empty());
}

TEST_CASE("best params: the best evaluation's parameters and figures, kept across a checkpoint") {
  nn::ParamStore ps;
  ad::Parameter& w = ps.add("w", Tensor({2}, 1.0f));
  train::BestParams best("valid_accuracy", true);
  best.offer(0.5, ps, {{"valid_loss", 0.9}});
  w.value[0] = 2.0f;
  best.offer(0.7, ps, {{"valid_loss", 0.6}});
  w.value[0] = 3.0f;
  best.offer(0.7, ps, {{"valid_loss", 0.5}});  // a tie keeps the earlier
  CHECK(best.better(0.6) == 0.7);
  nn::ModelFile ck;
  best.save_state(ck);
  CHECK(ck.number("best/valid_loss") == 0.6);
  train::BestParams again("valid_accuracy", true);
  again.load_state(ck, ps);
  nn::ModelFile f;
  f.tensors["param/w"] = w.value.clone();
  again.finish(f, 0.7, {{"valid_loss", 0.5}});  // the last ties: the kept one wins
  CHECK(f.tensor("param/w")[0] == 2.0f);
  CHECK(f.number("result/valid_accuracy") == 0.7);
  CHECK(f.number("result/last_valid_accuracy") == 0.7);
  CHECK(f.number("result/valid_loss") == 0.6);
  nn::ModelFile g;
  g.tensors["param/w"] = w.value.clone();
  again.finish(g, 0.8, {{"valid_loss", 0.4}});  // the last is better: its figures
  CHECK(g.tensor("param/w")[0] == 3.0f);
  CHECK(g.number("result/valid_accuracy") == 0.8);
  CHECK(g.number("result/valid_loss") == 0.4);
  // restore: the kept values into the store (w holds 3 now, the kept 2)
  CHECK(again.restore(ps));
  CHECK(w.value[0] == 2.0f);
  CHECK_FALSE(train::BestParams("valid_accuracy", true).restore(ps));  // nothing kept
  CHECK(w.value[0] == 2.0f);
}

}  // namespace attnkit_unit_trainer_test
