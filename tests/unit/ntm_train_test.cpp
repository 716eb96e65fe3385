// The NTM training and running library behind ntm-train and ntm-run (memory/ntm/train.h).
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm/train.h"
#include "test_util.h"
#include "train_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ntm_train_test {

using namespace attnkit;
using namespace attnkit::memory;

namespace {

NtmConfig small_copy_config() {
  NtmConfig cfg;
  cfg.input = 5;
  cfg.output = 4;
  cfg.controller_size = 24;
  cfg.memory_rows = 12;
  cfg.memory_cols = 6;
  return cfg;
}

data::SeqTaskOptions small_copy_task() {
  data::SeqTaskOptions t = data::SeqTaskOptions::defaults(data::SeqTask::Copy);
  t.width = 4;
  t.max_len = 3;
  return t;
}

}  // namespace

TEST_CASE("ntm_train: options are checked, the optimiser is the one named") {
  NtmTrainOptions o;
  CHECK_NOTHROW(o.validate());
  CHECK(o.lr == 3e-4);  // the recipe that learns copy (the paper's 1e-4 is several times slower)
  o.batch = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "batch-size must be >= 1", UsageError);
  o = NtmTrainOptions();
  o.lr = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "lr must be > 0", UsageError);
  o = NtmTrainOptions();
  o.clip_norm = -1;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o = NtmTrainOptions();
  o.optimizer = "sgd";
  CHECK_THROWS_WITH_AS(o.validate(), "optimizer: unknown optimiser 'sgd' (rmsprop, adam)",
                       UsageError);
  nn::ParamStore ps;
  Rng rng(1);
  Ntm ntm(ps, small_copy_config(), rng);
  o = NtmTrainOptions();
  CHECK(dynamic_cast<nn::RMSProp*>(make_ntm_optimizer(ntm, o).get()) != nullptr);
  o.optimizer = "adam";
  CHECK(dynamic_cast<nn::Adam*>(make_ntm_optimizer(ntm, o).get()) != nullptr);
}

namespace {
// Steps of the training layer on a module, as train::run makes them (without the files).
std::vector<double> run_steps(NtmTraining& m, int steps, nn::TrainState& s, train::Tapes& tapes) {
  std::vector<double> bits;
  for (const test::StepResult& r : test::train_steps(m, steps, s, tapes, 5, 0.0)) {
    REQUIRE(r.out.loss > 0);
    REQUIRE(r.out.grad_norm > 0);
    REQUIRE(r.end.metrics.size() == 1);
    CHECK(r.end.metrics[0].first == "bits_per_seq");
    bits.push_back(r.end.metrics[0].second);
  }
  return bits;
}

NtmSource fresh_copy() {
  NtmSource src;
  src.task = small_copy_task();
  return src;
}
}  // namespace

TEST_CASE("ntm_train: training steps with a batch of 2 reduce the bits per sequence") {
  NtmTrainOptions o;
  o.batch = 2;
  o.optimizer = "adam";
  o.lr = 3e-3;
  o.eps = 1e-8;
  NtmConfig cfg = small_copy_config();
  NtmTraining m(cfg, o, fresh_copy(), 500, 3);
  CHECK(m.config().input == 5);
  CHECK(m.slices() == 2);  // one episode a slice
  const data::SeqTaskOptions task = small_copy_task();
  auto eval = [&] {
    ad::Tape t;
    t.set_recording(false);
    Rng er(99);
    LengthReport r;
    for (int64_t len = 1; len <= 3; ++len)
      for (int k = 0; k < 30; ++k) r.add(m.ntm(), t, data::make_episode(task, er, len));
    CHECK(r.all.sequences == 90);
    CHECK(r.by_length.size() == 3);
    return r.all.bits_per_sequence();
  };
  const double before = eval();
  nn::TrainState s;
  train::Tapes tapes;
  run_steps(m, 500, s, tapes);
  CHECK(s.epoch == 0);  // fresh episodes: no epochs
  const double after = eval();
  MESSAGE("copy bits per sequence: " << before << " before, " << after << " after");
  CHECK(before > 2.0);
  CHECK(after < 0.6 * before);
}

TEST_CASE("ntm_train: a batch's episodes are slices: the same model at any thread count") {
  NtmTrainOptions o;
  o.batch = 3;
  auto train_with = [&](int threads) {
    set_max_threads(threads);
    NtmTraining m(small_copy_config(), o, fresh_copy(), 20, 4);
    nn::TrainState s;
    train::Tapes tapes;
    run_steps(m, 20, s, tapes);
    std::vector<float> all;
    for (ad::Parameter* p : m.params().params())
      all.insert(all.end(), p->value.values().begin(), p->value.values().end());
    return all;
  };
  const auto one = train_with(1), two = train_with(3);
  set_max_threads(0);
  CHECK(one == two);
}

TEST_CASE("ntm_train: a data set is read in epochs, each episode once per epoch") {
  // 5 episodes of 1 step and 1 input; episode i holds the value i.
  auto make_src = [] {
    NtmSource src;
    src.fresh = false;
    NtmDataset& ds = src.data;
    ds.inputs = Tensor({5, 2, 1});
    ds.targets = Tensor({5, 2, 1});
    ds.mask = Tensor({5, 2});
    ds.steps = Tensor({5});
    ds.lengths = Tensor({5});
    for (int i = 0; i < 5; ++i) {
      ds.inputs.at(i, 0, 0) = static_cast<float>(i);
      ds.steps[i] = 1;
      ds.lengths[i] = static_cast<float>(i + 1);
    }
    return src;
  };
  NtmConfig cfg = small_copy_config();
  NtmTrainOptions o;
  o.batch = 2;
  NtmTraining m(cfg, o, make_src(), 10, 11);
  CHECK(m.config().input == 1);
  REQUIRE(m.batches_per_epoch() == 3);  // 2 + 2 + 1
  // Two epochs: each episode once per epoch, in nn::epoch_order's order for (seed, epoch).
  nn::TrainState s;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int> seen;
    for (int k = 0; k < 3; ++k) {
      CHECK(m.begin_batch(s) == (k < 2 ? 2 : 1));
      for (const data::Episode& e : m.batch()) {
        CHECK(e.len == static_cast<int64_t>(e.input[0]) + 1);
        seen.push_back(static_cast<int>(e.input[0]));
      }
      s.advance(m.batches_per_epoch());
    }
    CHECK(s.epoch == epoch + 1);
    CHECK(s.position == 0);
    const std::vector<int64_t> order = nn::epoch_order(11, epoch, 5);
    CHECK(std::vector<int64_t>(seen.begin(), seen.end()) == order);
  }
  // A module resumed at epoch 1 continues the same way.
  NtmTraining again(cfg, o, make_src(), 10, 11);
  nn::TrainState r;
  r.epoch = 1;
  again.begin_batch(r);
  CHECK(static_cast<int64_t>(again.batch()[0].input[0]) == nn::epoch_order(11, 1, 5)[0]);
}

TEST_CASE("ntm_train: --lengths parsing") {
  CHECK(parse_lengths("3,10,120") == std::vector<int64_t>{3, 10, 120});
  CHECK_THROWS_WITH_AS(parse_lengths("3,x"), "--lengths: 'x' is not a whole number in [1, 100000]",
                       UsageError);
  CHECK_THROWS_AS(parse_lengths("0"), UsageError);
  CHECK_THROWS_AS(parse_lengths("3,,4"), UsageError);
  CHECK_THROWS_WITH_AS(parse_lengths(""), "--lengths: no lengths given", UsageError);
}

TEST_CASE("ntm_train: the length report counts wrong bits by length") {
  LengthReport r;
  r.by_length[2] = {2, 4, 3, 40};
  r.by_length[10] = {10, 1, 0, 80};
  r.all = {0, 5, 3, 120};
  CHECK(r.tsv() ==
        "length\tsequences\tbits_per_seq\twrong_fraction\n"
        "2\t4\t0.75\t0.075\n10\t1\t0\t0\nall\t5\t0.6\t0.025\n");
}

TEST_CASE("ntm_train: output probabilities, trace arrays, data-set detection, model loading") {
  Tensor y({1, 3});
  y[0] = 0, y[1] = 100, y[2] = -100;
  const Tensor p = output_probabilities(y);
  CHECK(p[0] == doctest::Approx(0.5));
  CHECK(p[1] == doctest::Approx(1.0));
  CHECK(p[2] == doctest::Approx(0.0));

  NtmConfig cfg = small_copy_config();
  nn::ParamStore ps;
  Rng rng(5);
  Ntm ntm(ps, cfg, rng);
  Rng er(1);
  const data::Episode e = data::make_episode(small_copy_task(), er, 3);  // 7 steps
  ad::Tape t;
  t.set_recording(false);
  NtmTrace trace;
  const Tensor out = output_probabilities(ntm.forward(t, e.input, &trace).value());
  const auto arrays = trace_arrays(trace, cfg, e.input.clone(), out.clone());
  std::vector<std::string> names;
  for (const auto& [n, a] : arrays) names.push_back(n);
  CHECK(names == std::vector<std::string>{"read0", "reads0", "write0", "erase0", "add0", "memory",
                                          "inputs", "outputs"});
  CHECK(arrays[0].second.shape() == Shape{7, 12});
  CHECK(arrays[1].second.shape() == Shape{7, 6});
  CHECK(arrays[5].second.shape() == Shape{7, 12, 6});
  for (int64_t s = 0; s < 7; ++s) {  // the write weighting of each step is the trace's
    double sum = 0;
    for (int64_t i = 0; i < 12; ++i) {
      CHECK(arrays[2].second.at(s, i) == trace.write_w[static_cast<size_t>(s)].at(0, i));
      sum += arrays[2].second.at(s, i);
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
  }

  test::TempDir d;
  const Tensor one({2, 2}), steps({2});
  io::write_npz(d.path + "/ds.npz", {{"inputs", &one}, {"steps", &steps}});
  io::write_npz(d.path + "/other.npz", {{"inputs", &one}});
  io::write_tensor(d.path + "/x.npy", one);
  CHECK(is_ntm_dataset(d.path + "/ds.npz"));
  CHECK_FALSE(is_ntm_dataset(d.path + "/other.npz"));
  CHECK_FALSE(is_ntm_dataset(d.path + "/ds.npz:inputs"));
  CHECK_FALSE(is_ntm_dataset(d.path + "/x.npy"));
  CHECK_FALSE(is_ntm_dataset("-"));

  // A model file as ntm-train writes it: the configuration, sizes and parameters.
  nn::ModelFile mf;
  mf.kind = "ntm";
  mf.config_yaml =
      "controller: lstm\ncontroller-size: 24\ncontroller-layers: 1\nread-heads: 1\n"
      "write-heads: 1\nmemory-rows: 12\nmemory-cols: 6\nshift-range: 1\nmemory-init: constant\n"
      "weight-init: learned\nadd-activation: tanh\ntask: copy\nwidth: 4\nmax-len: 3\n";
  mf.set_arch("input", 5);
  mf.set_arch("output", 4);
  nn::put_params(mf, ps);
  nn::save_model_file(d.path + "/m.akm", mf);
  const LoadedNtm m = load_ntm(d.path + "/m.akm");
  CHECK(m.input == 5);
  CHECK(m.output == 4);
  CHECK(m.config.memory_rows == 12);
  ad::Tape t2;
  t2.set_recording(false);
  test::check_close(output_probabilities(m.model->forward(t2, e.input).value()), out);
  CHECK_THROWS_AS(load_ntm(d.path + "/x.npy"), Error);
}

}  // namespace attnkit_unit_ntm_train_test
