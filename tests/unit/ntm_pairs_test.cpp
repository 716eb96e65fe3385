// The NTM on symbol pairs (transduce-gen's SOURCE<TAB>TARGET lines): the reader and its
// errors, the episodes' layout, the categorical loss against its definition, the answers, and
// the coarse/fine metrics the NTM shares with stackmem-run (data/transduce.h).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/data/transduce.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm/train.h"
#include "attnkit/train/module.h"
#include "test_util.h"
#include "train_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ntm_pairs_test {

using namespace attnkit;
using namespace attnkit::memory;

namespace {

// The DataError `f` throws as a tool prints it, FILE[:LINE]: WHAT ("" when it throws none).
template <class F>
std::string data_error(F f) {
  try {
    f();
  } catch (const DataError& e) {
    std::string s = e.file();
    if (e.line()) s += ":" + std::to_string(e.line());
    return s + (s.empty() ? "" : ": ") + e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

NtmConfig small(int64_t width) {
  NtmConfig c;
  c.input = c.output = width;
  c.controller_size = 16;
  c.memory_rows = 8;
  c.memory_cols = 5;
  return c;
}

}  // namespace

TEST_CASE("ntm pairs: the file's symbols make the vocabulary; episodes are one-hot") {
  test::TempDir d;
  const std::string f = d.file("p.tsv", "a b c\tc b a\nb b\tb b\n");
  const NtmPairs p = read_ntm_pairs(f);
  REQUIRE(p.count() == 2);
  CHECK(p.width() == 4 + 3);  // reserved, then a, b, c
  const int32_t a = p.vocab.id("a"), b = p.vocab.id("b"), c = p.vocab.id("c");
  CHECK(p.sources[0] == std::vector<int32_t>{a, b, c});
  CHECK(p.targets[0] == std::vector<int32_t>{c, b, a});

  // 3 source steps, the delimiter, 3 target steps and <eos>.
  const data::Episode e = p.episode(0);
  CHECK(e.len == 3);
  REQUIRE(e.input.shape() == Shape{8, 7});
  REQUIRE(e.target.shape() == Shape{8, 7});
  for (int64_t s = 0; s < 8; ++s) {
    double in = 0, out = 0;
    for (int64_t v = 0; v < 7; ++v) in += e.input.at(s, v), out += e.target.at(s, v);
    CHECK(in == (s <= 3 ? 1.0 : 0.0));   // one symbol a step, then zero input
    CHECK(out == (s >= 4 ? 1.0 : 0.0));  // targets only where scored
    CHECK(e.mask[s] == (s >= 4 ? 1.0f : 0.0f));
  }
  CHECK(e.input.at(0, a) == 1.0f);
  CHECK(e.input.at(2, c) == 1.0f);
  CHECK(e.input.at(3, data::Vocab::kBos) == 1.0f);
  CHECK(e.target.at(4, c) == 1.0f);
  CHECK(e.target.at(6, a) == 1.0f);
  CHECK(e.target.at(7, data::Vocab::kEos) == 1.0f);
  CHECK(symbol_target(e) == p.targets[0]);

  // Another file read with this vocabulary keeps its ids.
  const NtmPairs q = read_ntm_pairs(d.file("q.tsv", "c\ta\n"), p.vocab);
  CHECK(q.width() == 7);
  CHECK(q.sources[0] == std::vector<int32_t>{c});
  CHECK(q.targets[0] == std::vector<int32_t>{a});
}

TEST_CASE("ntm pairs: bad lines, reserved tokens and unknown symbols name the file and line") {
  test::TempDir d;
  const std::string notab = d.file("notab.tsv", "a b\tb a\na b\n");
  CHECK(contains(data_error([&] { read_ntm_pairs(notab); }), "notab.tsv:2: no tab"));
  const std::string empty_side = d.file("side.tsv", "a\tb\n \tb\n");
  CHECK(contains(data_error([&] { read_ntm_pairs(empty_side); }), "side.tsv:2: empty source"));
  const std::string blank = d.file("blank.tsv", "a\tb\n\nb\ta\n");
  CHECK(contains(data_error([&] { read_ntm_pairs(blank); }), "blank.tsv:2: empty line"));
  const std::string none = d.file("none.tsv", "");
  CHECK(contains(data_error([&] { read_ntm_pairs(none); }), "none.tsv: no SOURCE<TAB>TARGET"));
  const std::string reserved = d.file("res.tsv", "a\tb\na <eos>\tb\n");
  CHECK(contains(data_error([&] { read_ntm_pairs(reserved); }),
                 "res.tsv:2: '<eos>' is a reserved token"));
  // A symbol the model never saw: out of its vocabulary's range.
  const NtmPairs p = read_ntm_pairs(d.file("ok.tsv", "a b\tb a\n"));
  const std::string other = d.file("other.tsv", "a b\tb a\nb a\tz a\n");
  CHECK(contains(data_error([&] { read_ntm_pairs(other, p.vocab); }),
                 "other.tsv:2: symbol 'z' is not in the model's vocabulary (its 2 symbols)"));
  // Ids outside [4, width) cannot make an episode.
  CHECK(contains(data_error([] {
                   symbol_episode({4, 9}, {4}, 6);
                 }),
                 "symbol id 9 is outside [4, 6)"));
  CHECK(contains(data_error([] { symbol_episode({4}, {data::Vocab::kEos}, 6); }),
                 "symbol id 2 is outside"));
}

TEST_CASE("ntm pairs: a source is a data set or pairs by content, not by name") {
  test::TempDir d;
  const std::string pairs = d.file("x.npz", "a b\tb a\n");  // text despite the name
  NtmSource s = read_ntm_source(pairs);
  CHECK_FALSE(s.fresh);
  CHECK(s.symbols);
  CHECK(s.count() == 1);
  CHECK(s.input_width() == 6);
  CHECK(s.output_width() == 6);
  Tensor in({1, 2, 3}, 0.0f), tg({1, 2, 2}, 0.0f), mask({1, 2}, 1.0f), steps({1}, 2.0f),
      len({1}, 1.0f);
  const std::string ds = d.path + "/d.tsv";  // an archive despite the name
  io::write_npz(
      ds,
      {{"inputs", &in}, {"targets", &tg}, {"mask", &mask}, {"steps", &steps}, {"lengths", &len}});
  s = read_ntm_source(ds);
  CHECK_FALSE(s.symbols);
  CHECK(s.input_width() == 3);
  CHECK(s.output_width() == 2);
}

TEST_CASE("ntm pairs: the loss is the cross-entropy summed over the scored steps") {
  const data::Episode e = symbol_episode({4, 5}, {5, 4}, 6);
  nn::ParamStore ps;
  Rng rng(3);
  Ntm ntm(ps, small(6), rng);
  ad::Tape t;
  EpisodeResult r = run_symbol_episode(ntm, t, e);
  const Tensor y = ntm.forward(t, e.input).value().clone();
  // -Σ over the scored steps of log softmax(y_s)[target_s], in double, from the logits.
  double want = 0;
  int64_t wrong = 0;
  const int32_t targets[3] = {5, 4, data::Vocab::kEos};
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t s = 3 + k;
    double top = y.at(s, 0), z = 0;
    for (int64_t v = 0; v < 6; ++v) top = std::max<double>(top, y.at(s, v));
    for (int64_t v = 0; v < 6; ++v) z += std::exp(y.at(s, v) - top);
    want -= y.at(s, targets[k]) - top - std::log(z);
    int64_t best = data::Vocab::kEos;
    for (int64_t v : {2, 4, 5})
      if (y.at(s, v) > y.at(s, best)) best = v;
    wrong += best != targets[k];
  }
  CHECK(r.scored_bits == 3);
  CHECK(r.wrong_bits == wrong);
  CHECK(r.loss.value()[0] == doctest::Approx(want).epsilon(1e-5));
  CHECK(r.objective.value()[0] == r.loss.value()[0]);
}

TEST_CASE("ntm pairs: the answer is the likeliest symbol of each output step up to <eos>") {
  const data::Episode e = symbol_episode({4, 5, 6}, {6, 5, 4}, 7);
  Tensor y({8, 7}, 0.0f);
  // Step 4: symbol 6 (the reserved channels pad, bos, unk never win, however large).
  y.at(4, 6) = 2, y.at(4, data::Vocab::kPad) = 9, y.at(4, data::Vocab::kBos) = 9,
          y.at(4, data::Vocab::kUnk) = 9;
  y.at(5, 5) = 1;
  y.at(6, 4) = 1;
  y.at(7, data::Vocab::kEos) = 1;
  y.at(2, 5) = 50;  // unscored steps do not count
  CHECK(symbol_answer(y, e) == std::vector<int32_t>{6, 5, 4});
  CHECK(data::score_transduction(symbol_target(e), symbol_answer(y, e)).coarse == 1.0);
  // An early <eos> ends the answer; a missing one leaves a symbol too many.
  y.at(5, data::Vocab::kEos) = 3;
  CHECK(symbol_answer(y, e) == std::vector<int32_t>{6});
  y.at(5, data::Vocab::kEos) = 0, y.at(7, data::Vocab::kEos) = 0, y.at(7, 5) = 1;
  CHECK(symbol_answer(y, e) == std::vector<int32_t>{6, 5, 4, 5});
  // All-zero logits: ties go to <eos> (the first candidate), an empty answer.
  CHECK(symbol_answer(Tensor({8, 7}, 0.0f), e).empty());
  const Tensor p = symbol_probabilities(y);
  for (int64_t s = 0; s < 8; ++s) {
    double sum = 0;
    for (int64_t v = 0; v < 7; ++v) sum += p.at(s, v);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("transduce metrics: coarse and fine of one answer, means by length bucket") {
  using data::score_transduction;
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 3, 4}).coarse == 1.0);
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 3, 4}).fine == 1.0);
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 9, 4}).coarse == 0.0);
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 9, 4}).fine == 0.5);       // before the first error
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 3}).fine == 0.75);         // stopped early
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 3, 4, 5}).coarse == 0.0);  // too long
  CHECK(score_transduction({1, 2, 3, 4}, {1, 2, 3, 4, 5}).fine == 1.0);
  CHECK(score_transduction({1, 2}, {}).fine == 0.0);

  const auto a = data::accuracy_by_length({3, 8, 9, 16}, {{1, 1}, {0, 0.5}, {1, 1}, {0, 0}}, 8);
  REQUIRE(a.size() == 3);  // 1-8, 9-16, all
  CHECK(a.at(0).sequences == 2);
  CHECK(a.at(0).coarse == 0.5);
  CHECK(a.at(0).fine == 0.75);
  CHECK(a.at(1).fine == 0.5);
  CHECK(a.at(-1).sequences == 4);
  CHECK(a.at(-1).coarse == 0.5);
  CHECK(data::accuracy_tsv(a, 8) ==
        "lengths\tsequences\tcoarse\tfine\n1-8\t2\t0.5000\t0.7500\n9-16\t2\t0.5000\t0.5000\n"
        "all\t4\t0.5000\t0.6250\n");
  CHECK_THROWS_AS(data::accuracy_by_length({1}, {{1, 1}}, 0), UsageError);
  CHECK_THROWS_AS(data::accuracy_by_length({1, 2}, {{1, 1}}, 8), UsageError);
}

TEST_CASE("ntm pairs: training on copy pairs lowers the loss; the vocabulary is in the file") {
  test::TempDir d;
  std::string text;
  Rng rng(5);
  for (int i = 0; i < 40; ++i) {
    std::string s;
    const int n = 2 + static_cast<int>(rng.below(2));
    for (int k = 0; k < n; ++k) s += (k ? " " : "") + std::string(1, "abc"[rng.below(3)]);
    text += s + "\t" + s + "\n";
  }
  NtmSource src = read_ntm_source(d.file("copy.tsv", text));
  NtmTrainOptions o;
  o.optimizer = "adam", o.lr = 1e-2, o.eps = 1e-8, o.batch = 4;
  NtmTraining m(small(7), o, std::move(src), 60, 2);
  CHECK(m.step_metrics() == std::vector<std::string>{"symbols_per_seq"});
  nn::ModelFile f;
  m.describe(f);
  REQUIRE(f.texts.count("vocab"));
  CHECK(data::Vocab::parse(f.texts.at("vocab"), "x").size() == 7);
  // The mean loss of the first and of the last 10 steps (the training layer's step).
  nn::TrainState s;
  train::Tapes tapes;
  double first = 0, last = 0;
  const auto steps = test::train_steps(m, 60, s, tapes, 5, 0.0);
  for (size_t step = 0; step < steps.size(); ++step) {
    const test::StepResult& r = steps[step];
    REQUIRE(r.end.metrics.size() == 1);
    CHECK(r.end.metrics[0].first == "symbols_per_seq");
    if (step < 10) first += r.out.loss;
    if (step >= 50) last += r.out.loss;
  }
  MESSAGE("copy pairs, loss per sequence: " << first / 10 << " first, " << last / 10 << " last");
  CHECK(last < 0.7 * first);
}

}  // namespace attnkit_unit_ntm_pairs_test
