// The NTM training and running library behind ntm-train and ntm-run (memory/ntm_train.h).
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>
#include <stdlib.h>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm_train.h"
#include "test_util.h"

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

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/attnkit-ntm-train-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

}  // namespace

TEST_CASE("ntm_train: options are checked, the optimiser is the one named") {
  NtmTrainOptions o;
  CHECK_NOTHROW(o.validate());
  o.batch = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "--batch must be >= 1", UsageError);
  o = NtmTrainOptions();
  o.lr = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "--lr must be > 0", UsageError);
  o = NtmTrainOptions();
  o.clip_norm = -1;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o = NtmTrainOptions();
  o.optimizer = "sgd";
  CHECK_THROWS_WITH_AS(o.validate(), "--optimizer: unknown optimiser 'sgd' (rmsprop, adam)", UsageError);
  nn::ParamStore ps;
  Rng rng(1);
  Ntm ntm(ps, small_copy_config(), rng);
  o = NtmTrainOptions();
  CHECK(dynamic_cast<nn::RMSProp*>(make_ntm_optimizer(ntm, o).get()) != nullptr);
  o.optimizer = "adam";
  CHECK(dynamic_cast<nn::Adam*>(make_ntm_optimizer(ntm, o).get()) != nullptr);
}

TEST_CASE("ntm_train: training steps with a batch of 2 reduce the bits per sequence") {
  nn::ParamStore ps;
  Rng rng(3);
  Ntm ntm(ps, small_copy_config(), rng);
  const data::SeqTaskOptions task = small_copy_task();
  auto eval = [&] {
    ad::Tape t;
    t.set_recording(false);
    Rng er(99);
    LengthReport r;
    for (int64_t len = 1; len <= 3; ++len)
      for (int k = 0; k < 30; ++k) r.add(ntm, t, data::make_episode(task, er, len));
    CHECK(r.all.sequences == 90);
    CHECK(r.by_length.size() == 3);
    return r.all.bits_per_sequence();
  };
  const double before = eval();
  NtmTrainOptions o;
  o.batch = 2;
  o.optimizer = "adam";
  o.lr = 3e-3;
  o.eps = 1e-8;
  auto opt = make_ntm_optimizer(ntm, o);
  Rng episodes(7);
  NtmEpisodeSource src(task, episodes);
  ad::Tape tape;
  nn::TrainState s;
  NtmLogWindow w;
  for (int step = 0; step < 500; ++step) {
    const nn::StepResult r = ntm_train_step(ntm, tape, *opt, o, src, s);
    REQUIRE(r.metrics.size() == 1);
    CHECK(r.metrics[0].first == "bits_per_seq");
    CHECK(r.loss > 0);
    CHECK(r.grad_norm > 0);
    w.add(r, o.batch);
  }
  CHECK(w.steps == 500);
  CHECK(w.sequences == 1000);
  CHECK(w.loss() > 0);
  for (ad::Parameter* p : ntm.trainable())  // the step leaves no gradient behind
    for (int64_t i = 0; i < p->grad.size(); ++i) REQUIRE(p->grad[i] == 0.0f);
  const double after = eval();
  MESSAGE("copy bits per sequence: " << before << " before, " << after << " after");
  CHECK(before > 2.0);
  CHECK(after < 0.6 * before);
}

TEST_CASE("ntm_train: a data set is read in epochs, each episode once per epoch") {
  // 5 episodes of 1 step and 1 input; episode i holds the value i.
  NtmDataset ds;
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
  NtmEpisodeSource src(ds, 11);
  nn::TrainState s;
  std::vector<int> seen;
  for (int k = 0; k < 10; ++k) {
    const data::Episode e = src.next(s);
    CHECK(e.input.shape() == Shape{1, 1});
    CHECK(e.len == static_cast<int64_t>(e.input[0]) + 1);
    seen.push_back(static_cast<int>(e.input[0]));
  }
  CHECK(s.epoch == 2);
  CHECK(s.position == 0);
  CHECK(std::set<int>(seen.begin(), seen.begin() + 5).size() == 5);
  CHECK(std::set<int>(seen.begin() + 5, seen.end()).size() == 5);
  // The order is epoch_order's: a source resumed at epoch 1 continues the same way.
  NtmEpisodeSource again(ds, 11);
  nn::TrainState r;
  r.epoch = 1;
  for (int k = 5; k < 10; ++k) CHECK(static_cast<int>(again.next(r).input[0]) == seen[static_cast<size_t>(k)]);
}

TEST_CASE("ntm_train: the log window averages per step and per sequence") {
  NtmLogWindow w;
  CHECK(w.bits_per_sequence() == 0.0);
  nn::StepResult a, b;
  a.loss = 2, a.grad_norm = 1, a.metrics = {{"bits_per_seq", 1.5}};
  b.loss = 4, b.grad_norm = 3, b.metrics = {{"bits_per_seq", 0.5}};
  w.add(a, 2);
  w.add(b, 2);
  CHECK(w.loss() == doctest::Approx(3.0));
  CHECK(w.grad_norm() == doctest::Approx(2.0));
  CHECK(w.bits_per_sequence() == doctest::Approx(1.0));  // (3 + 1) wrong bits / 4 sequences
  w.reset();
  CHECK(w.steps == 0);
}

TEST_CASE("ntm_train: --lengths parsing") {
  CHECK(parse_lengths("3,10,120") == std::vector<int64_t>{3, 10, 120});
  CHECK_THROWS_WITH_AS(parse_lengths("3,x"), "--lengths: 'x' is not a whole number in [1, 100000]", UsageError);
  CHECK_THROWS_AS(parse_lengths("0"), UsageError);
  CHECK_THROWS_AS(parse_lengths("3,,4"), UsageError);
  CHECK_THROWS_WITH_AS(parse_lengths(""), "--lengths: no lengths given", UsageError);
}

TEST_CASE("ntm_train: the length report counts wrong bits by length") {
  LengthReport r;
  r.by_length[2] = {2, 4, 3, 40};
  r.by_length[10] = {10, 1, 0, 80};
  r.all = {0, 5, 3, 120};
  CHECK(r.tsv() == "length\tsequences\tbits_per_seq\twrong_fraction\n"
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

  TempDir d;
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
  mf.numbers["ntm/input"] = 5;
  mf.numbers["ntm/output"] = 4;
  nn::put_params(mf, ps);
  nn::save_model_file(d.path + "/m.akm", mf);
  const LoadedNtm m = load_ntm(d.path + "/m.akm");
  CHECK(m.input == 5);
  CHECK(m.output == 4);
  CHECK(m.config.memory_rows == 12);
  ad::Tape t2;
  t2.set_recording(false);
  test::check_close(output_probabilities(m.ntm->forward(t2, e.input).value()), out);
  CHECK_THROWS_AS(load_ntm(d.path + "/x.npy"), Error);
}
