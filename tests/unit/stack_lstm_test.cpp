// The models of exercise 8-4 (memory/stackmem/model.h): the Stack-, Queue- and DeQue-LSTM in the
// paper's form and with the read out, and Joulin & Mikolov's stack RNN, whose stack update
// (memory/stackmem/memory.h: stack_rnn_update) is checked by hand, by finite differences and for
// its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/stackmem/memory.h"
#include "attnkit/memory/stackmem/model.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_stack_lstm_test {

using namespace attnkit;

namespace {

Tensor rows(const std::vector<std::vector<float>>& r) {
  Tensor t({static_cast<int64_t>(r.size()), static_cast<int64_t>(r[0].size())});
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = 0; j < r[i].size(); ++j)
      t.at(static_cast<int64_t>(i), static_cast<int64_t>(j)) = r[i][j];
  return t;
}

// Two short pairs and a tiny leaves-only tree of two controllers (soft or hard descent): the
// setup the tree's option cases share.
const std::vector<memory::TransduceExample> kTreePairs = {{{5, 6, 7, 5, 6}, {5, 5, 6, 6, 7}},
                                                          {{6, 5, 7}, {5, 6, 7}}};
memory::StackLstmConfig tiny_tree(const char* attention) {
  memory::StackLstmConfig c;
  c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = 3, c.memory = "tree";
  c.attention = attention, c.two_controllers = true, c.read_out = true, c.leaves_only = true;
  return c;
}

}  // namespace

TEST_CASE("stack RNN: hard PUSH, POP and NO-OP move the values as a stack") {
  ad::Tape t(0);
  t.set_recording(false);
  auto push = [] { return rows({{1, 0, 0}}); };
  auto pop = [] { return rows({{0, 1, 0}}); };
  auto noop = [] { return rows({{0, 0, 1}}); };
  ad::Var s = t.constant(Tensor({1, 2}, 0.0f));
  s = memory::stack_rnn_update(t, s, t.constant(push()), t.constant(rows({{0.25f}})));
  s = memory::stack_rnn_update(t, s, t.constant(push()), t.constant(rows({{0.75f}})));
  s = memory::stack_rnn_update(t, s, t.constant(noop()), t.constant(rows({{0.5f}})));
  REQUIRE(s.value().shape() == Shape{1, 5});
  CHECK(s.value().at(0, 0) == 0.75f);  // the newest on top, exactly
  CHECK(s.value().at(0, 1) == 0.25f);
  s = memory::stack_rnn_update(t, s, t.constant(pop()), t.constant(rows({{0.5f}})));
  CHECK(s.value().at(0, 0) == 0.25f);  // popped: the older value comes back exactly
  s = memory::stack_rnn_update(t, s, t.constant(pop()), t.constant(rows({{0.5f}})));
  CHECK(s.value().at(0, 0) == 0.0f);  // empty: zeros come up from below
  for (int64_t i = 0; i < s.value().size(); ++i) CHECK(s.value()[i] == 0.0f);
}

TEST_CASE("stack RNN: a soft action mixes the three outcomes") {
  ad::Tape t(0);
  t.set_recording(false);
  ad::Var s = t.constant(rows({{0.2f, 0.4f, 0.6f}}));
  s = memory::stack_rnn_update(t, s, t.constant(rows({{0.5f, 0.3f, 0.2f}})),
                               t.constant(rows({{0.9f}})));
  // top: 0.5 · 0.9 + 0.3 · 0.4 + 0.2 · 0.2; then 0.5 · 0.2 + 0.3 · 0.6 + 0.2 · 0.4, ...
  const std::vector<float> want = {0.45f + 0.12f + 0.04f, 0.1f + 0.18f + 0.08f, 0.2f + 0.0f + 0.12f,
                                   0.3f};
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(s.value().at(0, static_cast<int64_t>(i)) == doctest::Approx(want[i]).epsilon(1e-6));
}

TEST_CASE("stack RNN: gradients of the update by finite differences, over several steps") {
  Rng rng(7);
  const int64_t N = 3, steps = 3;
  std::vector<Tensor> in;
  Tensor s0({N, 2});
  for (int64_t i = 0; i < s0.size(); ++i) s0[i] = static_cast<float>(rng.uniform());
  in.push_back(std::move(s0));
  for (int64_t k = 0; k < steps; ++k) {
    Tensor logits({N, 3}), v({N, 1});
    for (int64_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(rng.normal());
    for (int64_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rng.uniform());
    in.push_back(std::move(logits));
    in.push_back(std::move(v));
  }
  ad::GradCheckOptions opt;
  opt.eps = 1e-3;
  const auto r = ad::check_gradients(
      [&](ad::Tape& t, const std::vector<ad::Var>& x) {
        ad::Var s = x[0];
        for (int64_t k = 0; k < steps; ++k)
          s = memory::stack_rnn_update(t, s, ad::softmax(x[1 + 2 * k]), x[2 + 2 * k]);
        return s;
      },
      in, opt);
  CHECK_MESSAGE(r.ok, r.where);
}

TEST_CASE("stack RNN: shape errors") {
  ad::Tape t(0);
  ad::Var s = t.constant(Tensor({2, 3}, 0.0f));
  CHECK_THROWS_AS(memory::stack_rnn_update(t, s, t.constant(Tensor({2, 2}, 0.0f)),
                                           t.constant(Tensor({2, 1}, 0.0f))),
                  ShapeError);
  CHECK_THROWS_AS(memory::stack_rnn_update(t, s, t.constant(Tensor({2, 3}, 0.0f)),
                                           t.constant(Tensor({1, 1}, 0.0f))),
                  ShapeError);
  CHECK_THROWS_AS(
      memory::stack_rnn_update(t, t.constant(Tensor({2}, 0.0f)), t.constant(Tensor({2, 3}, 0.0f)),
                               t.constant(Tensor({2, 1}, 0.0f))),
      ShapeError);
}

TEST_CASE("stack LSTM and stack RNN: the loss's gradients by finite differences") {
  std::vector<memory::TransduceExample> data = {{{5, 6, 7}, {7, 6, 5}}, {{6, 5}, {5, 6}}};
  std::vector<const memory::TransduceExample*> items = {&data[0], &data[1]};
  auto check = [&](memory::StackLstmConfig c) {
    c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = 3, c.stacks = 2;
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    ad::GradCheckOptions opt;
    opt.eps = 1e-3;
    opt.max_per_tensor = 12;
    const auto r = ad::check_gradients([&](ad::Tape& t) { return m.loss(t, items, nullptr); },
                                       ps.params(), opt);
    CHECK_MESSAGE(r.ok, c.memory << (c.stack_rnn ? " (stack RNN)" : "") << ": " << r.where);
  };
  for (const char* mem : {"stack", "queue", "deque", "none"}) {
    memory::StackLstmConfig c;
    c.memory = mem;
    check(c);
    c.read_out = true;
    if (c.memory != "none") check(c);
    c.read_out = false, c.two_controllers = true;  // the phases switch at different steps
    check(c);
    if (c.memory == "none") continue;
    c.depth_input = true;  // through tanh of the total strength
    check(c);
    c.depth_input = false, c.input_control = true, c.pop_bias = -3;  // control from the input
    check(c);
    c.op_cost = 0.05;  // the memory's traffic in the loss, the padded steps left out
    check(c);
  }
  memory::StackLstmConfig c;
  c.stack_rnn = true;
  check(c);
}

TEST_CASE("stack LSTM: op_cost adds its cost per unit of push and pop strength") {
  // Pairs of different lengths: in a batch the shorter one steps on padding after its end,
  // which costs nothing, so a batch's cost is the sum of its pairs' alone; and the cost is
  // linear in op_cost.
  std::vector<memory::TransduceExample> data = {{{5, 6, 7, 5}, {5, 7, 6, 5}}, {{6, 5}, {5, 6}}};
  auto loss = [&](double cost, std::vector<const memory::TransduceExample*> items) {
    memory::StackLstmConfig c;
    c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = 3, c.memory = "deque";
    c.two_controllers = true, c.op_cost = cost;
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    ad::Tape t(0);
    return static_cast<double>(m.loss(t, items, nullptr).value()[0]);
  };
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]}, a = {&data[0]},
                                                     b = {&data[1]};
  const double ab = loss(0.1, both) - loss(0, both);
  const double alone = loss(0.1, a) - loss(0, a) + loss(0.1, b) - loss(0, b);
  CHECK(ab > 0);  // 14 real steps (4 + 1 + 4 and 2 + 1 + 2), 4 strengths each, all < 1
  CHECK(ab < 0.1 * 14 * 4);
  CHECK(ab == doctest::Approx(alone).epsilon(1e-4));
  CHECK(loss(0.2, both) - loss(0, both) == doctest::Approx(2 * ab).epsilon(1e-4));
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "deque", c.op_cost = -1;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.op_cost = 0.1, c.memory = "none";
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("stack LSTM: the memory controls' initial biases") {
  // A deque's control layer: [push top, push bottom, pop top, pop bottom, values...].
  memory::StackLstmConfig c;
  c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = 3, c.memory = "deque";
  c.two_controllers = true, c.pop_bias = -3, c.bottom_push_bias = -6, c.push_bias = 3;
  c.decoder_push_bias = -2, c.decoder_bottom_pop_bias = -7;
  nn::ParamStore ps;
  Rng rng(3);
  memory::StackLstm m(ps, c, rng);
  const Tensor& enc = ps.get("memory_control.b").value;
  const Tensor& dec = ps.get("decoder_memory_control.b").value;
  CHECK(enc[0] == 3.0f);   // the encoder: its top push at push_bias
  CHECK(enc[1] == -6.0f);  // its bottom push, both pops at pop_bias
  CHECK(enc[2] == -3.0f);
  CHECK(enc[3] == -3.0f);
  CHECK(dec[0] == -2.0f);  // the decoder: both pushes at decoder_push_bias
  CHECK(dec[1] == -2.0f);
  CHECK(dec[2] == -3.0f);
  CHECK(dec[3] == -7.0f);         // its bottom pop alone at decoder_bottom_pop_bias
  c.decoder_bottom_pop_bias = 0;  // 0: the pop bias, as the top's
  nn::ParamStore ps0;
  Rng rng0(3);
  memory::StackLstm m0(ps0, c, rng0);
  CHECK(ps0.get("decoder_memory_control.b").value[3] == -3.0f);
  c.memory = "queue", c.bottom_push_bias = 0, c.push_bias = 2;  // one end
  nn::ParamStore ps1;
  Rng rng1(3);
  memory::StackLstm m1(ps1, c, rng1);
  CHECK(ps1.get("memory_control.b").value[0] == 2.0f);
  CHECK(ps1.get("memory_control.b").value[1] == -3.0f);
  CHECK(ps1.get("decoder_memory_control.b").value[0] == -2.0f);
  c.memory = "deque", c.pop_bias = -1, c.encoder_pop_bias = -3, c.decoder_bottom_pop_bias = 0;
  nn::ParamStore ps2;  // the encoder's pops at encoder_pop_bias, the decoder's at pop_bias
  Rng rng2(3);
  memory::StackLstm m2(ps2, c, rng2);
  CHECK(ps2.get("memory_control.b").value[2] == -3.0f);
  CHECK(ps2.get("memory_control.b").value[3] == -3.0f);
  CHECK(ps2.get("decoder_memory_control.b").value[2] == -1.0f);
  CHECK(ps2.get("decoder_memory_control.b").value[3] == -1.0f);
}

TEST_CASE("stack LSTM config: errors") {
  memory::StackLstmConfig c;
  c.vocab = 8;
  c.memory = "heap";
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "stack";
  c.stack_rnn = true;
  c.stacks = 0;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.stacks = 2, c.stack_top = 0;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.stack_top = 2, c.two_controllers = true;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.two_controllers = false, c.depth_input = true;  // not for the stack RNN
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.stack_rnn = false, c.memory = "none";  // nor the plain LSTM
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "stack";
  CHECK_NOTHROW(c.validate());
  c.bottom_push_bias = -2;  // a deque's only
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "deque";
  CHECK_NOTHROW(c.validate());
  c.input_control = true;  // needs two controllers
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.two_controllers = true;
  CHECK_NOTHROW(c.validate());
  c.memory = "none", c.bottom_push_bias = 0, c.depth_input = false;  // and a memory
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.input_control = false, c.pop_bias = -3;  // so does pop_bias
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "queue";
  CHECK_NOTHROW(c.validate());
  c.decoder_push_bias = -3;  // two controllers only
  CHECK_NOTHROW(c.validate());
  c.two_controllers = false;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.decoder_push_bias = 0, c.pop_bias = -1, c.memory = "stack", c.push_bias = 3;  // a memory
  CHECK_NOTHROW(c.validate());
  c.memory = "none";
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "stack", c.push_bias = 0, c.decoder_bottom_pop_bias = -6;  // two controllers, a deque
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.two_controllers = true;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "deque";
  CHECK_NOTHROW(c.validate());
  c.two_controllers = false;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.decoder_bottom_pop_bias = 0, c.encoder_pop_bias = -3;  // two controllers and a memory
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.two_controllers = true;
  CHECK_NOTHROW(c.validate());
  c.memory = "none";
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("stack LSTM training: the learning-rate schedule and its errors") {
  data::Vocab vocab = data::Vocab::build({{"a", 1}, {"b", 1}, {"c", 1}});
  std::vector<memory::TransduceExample> train = {{{4, 5, 6}, {6, 5, 4}}, {{5, 6}, {6, 5}}};
  memory::StackLstmConfig c;
  c.embed = 4, c.hidden = 5, c.width = 3;
  memory::StackTrainOptions o;
  o.batch = 2, o.lr = 0.002;
  {
    memory::StackTraining m(c, o, vocab, train, {}, 10, 0, 1, "");
    CHECK(m.optimizer().current_lr() == doctest::Approx(0.002));  // constant
  }
  o.schedule = "cosine";  // from the rate at the start to 0 at the last of 10 steps
  {
    memory::StackTraining m(c, o, vocab, train, {}, 10, 0, 1, "");
    CHECK(m.optimizer().current_lr() == doctest::Approx(0.002 * (1 + std::cos(M_PI / 10)) / 2));
  }
  o.warmup = 4;  // a linear warm-up first: step 1 of 4
  {
    memory::StackTraining m(c, o, vocab, train, {}, 10, 0, 1, "");
    CHECK(m.optimizer().current_lr() == doctest::Approx(0.002 / 4));
  }
  o.warmup = -1;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o.warmup = 0, o.schedule = "linear";
  CHECK_THROWS_AS(o.validate(), UsageError);
  CHECK_THROWS_AS(memory::StackTraining(c, o, vocab, train, {}, 10, 0, 1, ""), UsageError);
}

TEST_CASE("stack LSTM: a trace is bounded; the decoding is the same with and without one") {
  memory::StackLstmConfig c;
  c.vocab = 8, c.embed = 4, c.hidden = 5, c.width = 3;
  nn::ParamStore ps;
  Rng rng(3);
  const memory::StackLstm m(ps, c, rng);
  std::vector<int32_t> source;
  for (int i = 0; i < 200; ++i) source.push_back(4 + i % 4);
  const std::vector<int32_t> plain = m.decode(source, 20);
  memory::StackTrace whole;
  CHECK(m.decode(source, 20, &whole) == plain);
  // The strengths grow a slot a step: their sum over the steps is quadratic.
  const int64_t steps = static_cast<int64_t>(whole.strengths.size());
  REQUIRE(steps > 200);
  CHECK(whole.floats() > steps * (steps - 1) / 2);
  memory::StackTrace bounded;
  bounded.max_floats = whole.floats() / 4;
  CHECK_THROWS_WITH_AS(m.decode(source, 20, &bounded),
                       doctest::Contains("--trace: the traced pair's memory strengths reached"),
                       DataError);
  CHECK(bounded.floats() <= whole.floats() / 4 + 2 * steps + 64);  // stopped at the bound
  memory::StackTrace enough;
  enough.max_floats = whole.floats();
  CHECK(m.decode(source, 20, &enough) == plain);
}

TEST_CASE("hard tree: the REINFORCE advantages by hand, raw") {
  // 3 rows, 5 steps; accesses at steps 1, 2 and 4, counting rows {0, 1, 2}, {0, 2}, {1}.
  const std::vector<std::vector<double>> ll = {
      {0, 0, 0}, {-1, -2, -0.5}, {-0.25, -3, -1}, {-2, -0.5, 0}, {-1.5, -1, -4}};
  const std::vector<int64_t> steps = {1, 2, 4};
  const std::vector<std::vector<uint8_t>> rows = {{1, 1, 1}, {1, 0, 1}, {0, 1, 0}};
  // Returns to go: from step 1 (-4.75, -6.5, -5.5), from 2 (-3.75, -4.5, -5), from 4 (-1.5,
  // -1, -4); baselines the mean of the other counted rows (none: 0). Not normalised: that is
  // rl::reinforce_loss's (rl_test's "normalised advantages").
  const std::vector<double> want = {-4.75 - (-6.5 - 5.5) / 2, -6.5 - (-4.75 - 5.5) / 2,
                                    -5.5 - (-4.75 - 6.5) / 2, -3.75 - (-5.0),
                                    -5.0 - (-3.75),           -1.0};
  const auto a = memory::tree_advantages(ll, steps, rows);
  REQUIRE(a.size() == want.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(want[i]).epsilon(1e-7));
  // Discounted (γ = 0.5) and each step's own (γ = 0), against the sums written out.
  for (double g : {0.5, 0.0}) {
    std::vector<double> G;  // per access and counted row, Σ_t γ^(t − t_k) ll[t][b]
    for (size_t k = 0; k < steps.size(); ++k)
      for (size_t b = 0; b < 3; ++b) {
        if (!rows[k][b]) continue;
        double r = 0, w = 1;
        for (size_t t = static_cast<size_t>(steps[k]); t < ll.size(); ++t, w *= g)
          r += w * ll[t][b];
        G.push_back(r);
      }
    const std::vector<double> wg = {G[0] - (G[1] + G[2]) / 2,
                                    G[1] - (G[0] + G[2]) / 2,
                                    G[2] - (G[0] + G[1]) / 2,
                                    G[3] - G[4],
                                    G[4] - G[3],
                                    G[5]};
    const auto ag = memory::tree_advantages(ll, steps, rows, g);
    REQUIRE(ag.size() == wg.size());
    for (size_t i = 0; i < ag.size(); ++i) CHECK(ag[i] == doctest::Approx(wg[i]).epsilon(1e-7));
    if (g == 0.0) CHECK(ag[5] == -1.0f);  // the access at step 4 counts row 1's step 4 alone
  }
  // A row alone at its access has no baseline; an access past the last step is refused.
  CHECK(memory::tree_advantages(ll, {4}, {{0, 1, 0}}) == std::vector<float>{-1.0f});
  CHECK_THROWS_AS(memory::tree_advantages(ll, {5}, {{0, 1, 0}}), ShapeError);
  // Without the leave-one-out baseline (--value-baseline learns one): the returns themselves.
  const std::vector<float> G = {-4.75f, -6.5f, -5.5f, -3.75f, -5.0f, -1.0f};
  const auto raw = memory::tree_advantages(ll, steps, rows, 1.0, false);
  REQUIRE(raw.size() == G.size());
  for (size_t i = 0; i < raw.size(); ++i) CHECK(raw[i] == doctest::Approx(G[i]).epsilon(1e-7));
}

TEST_CASE("hard tree: a learned value baseline (--value-baseline)") {
  // The head is drawn last (every other weight as without it) and is not used in decoding; its
  // squared error is added to the loss; its regression reaches neither the controller nor the
  // tree (the state enters as a constant), and the policy term uses its prediction as a
  // constant (the head's gradient is the same whatever the REINFORCE weight).
  const auto& data = kTreePairs;
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]};
  struct Run {
    float loss;
    std::map<std::string, Tensor> grads;
    std::vector<int32_t> decoded;
  };
  auto run = [&](bool value, double reinforce) {
    memory::StackLstmConfig c = tiny_tree("hard");
    c.entropy = 0.1, c.reinforce = reinforce, c.value_baseline = value;
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    CHECK(ps.params("tree_value").size() == (value ? 2u : 0u));
    if (value) CHECK(ps.params("tree_value")[0]->value.shape() == Shape{1, 5});
    ad::Tape t(7);
    ad::Var l = m.loss(t, both, nullptr);
    t.backward(l);
    Run r{l.value()[0], {}, m.decode(data[0].source, 20)};
    for (ad::Parameter* p : ps.params()) r.grads[p->name] = p->grad.clone();
    return r;
  };
  const Run plain0 = run(false, 0), value0 = run(true, 0), plain1 = run(false, 1),
            value1 = run(true, 1);
  CHECK(value0.decoded == plain0.decoded);
  CHECK(value1.loss != plain1.loss);
  // REINFORCE weight 0: the value term alone differs, 1/2 Σ (b − G)² > 0.
  CHECK(value0.loss > plain0.loss);
  auto max_abs = [](const Tensor& x) {
    float m = 0;
    for (int64_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i]));
    return m;
  };
  for (const auto& [name, g] : plain0.grads) {
    REQUIRE(value0.grads.count(name));
    const Tensor& h = value0.grads.at(name);
    REQUIRE(h.shape() == g.shape());
    for (int64_t i = 0; i < g.size(); ++i) CHECK(h[i] == doctest::Approx(g[i]).epsilon(1e-5));
  }
  for (const char* head : {"tree_value.W", "tree_value.b"}) {
    REQUIRE(value0.grads.count(head));
    CHECK(max_abs(value0.grads.at(head)) > 1e-3f);
    const Tensor &g0 = value0.grads.at(head), &g1 = value1.grads.at(head);
    for (int64_t i = 0; i < g0.size(); ++i) CHECK(g1[i] == doctest::Approx(g0[i]).epsilon(1e-5));
  }
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "tree", c.value_baseline = true;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.attention = "hard";
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("hard tree: the entropy bonus lowers the loss in proportion to its weight") {
  // The same tape seed samples the same descents whatever the bonus, which only adds
  // −β Σ H (H > 0: SEARCH starts undecided): the loss falls linearly in β. Normalising the
  // advantages changes the REINFORCE term alone; neither option fits a soft tree.
  const auto& data = kTreePairs;
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]};
  auto loss = [&](double beta, bool norm, double reinforce) {
    memory::StackLstmConfig c = tiny_tree("hard");
    c.leaves_only = false;
    c.entropy = beta, c.normalize_advantage = norm, c.reinforce = reinforce;
    c.validate();
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    ad::Tape t(7);
    return static_cast<double>(m.loss(t, both, nullptr).value()[0]);
  };
  const double base = loss(0, false, 1), l1 = loss(0.1, false, 1), l2 = loss(0.2, false, 1);
  CHECK(l1 < base);
  CHECK(base - l2 == doctest::Approx(2 * (base - l1)).epsilon(1e-4));
  // 6 accesses + 4 accesses (the separator's and each target symbol's but the last <eos>'s
  // prediction... at most (S + 1 + T) steps), 2 decisions each (a tree of 8 leaves: 3), so Σ H
  // is at most 10 · 3 · ln 2.
  CHECK((base - l1) / 0.1 <= 10 * 3 * std::log(2.0) + 1e-4);
  CHECK(loss(0.1, false, 0) - loss(0, false, 0) == doctest::Approx(l1 - base).epsilon(1e-4));
  CHECK(loss(0, true, 1) != base);
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "tree", c.entropy = 0.1;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.entropy = 0, c.normalize_advantage = true;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.attention = "hard";
  CHECK_NOTHROW(c.validate());
  c.entropy = -1;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.entropy = 0, c.discount = 1.5;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.discount = 0;
  CHECK_NOTHROW(c.validate());
  c.attention = "soft";
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.discount = 1, c.curriculum = -1;
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("curriculum: the batches keep to the rising length bound, seeded by the step") {
  // Lengths 2..9, each 10 times, in a scrambled order.
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < 80; ++i) lengths.push_back(2 + (i * 37) % 8);
  std::vector<int64_t> by(lengths.size());
  for (size_t i = 0; i < by.size(); ++i) by[i] = static_cast<int64_t>(i);
  std::stable_sort(by.begin(), by.end(), [&](int64_t a, int64_t b) {
    return lengths[static_cast<size_t>(a)] < lengths[static_cast<size_t>(b)];
  });
  const int64_t steps = 70;
  std::vector<int64_t> longest(static_cast<size_t>(steps + 1), 0);
  for (int64_t step = 0; step <= steps; ++step) {
    const auto b = memory::curriculum_batch(lengths, by, step, steps, 64, 5);
    REQUIRE(b.size() == 64);
    const int64_t bound = 2 + 7 * step / steps;
    for (int64_t i : b) {
      CHECK(lengths[static_cast<size_t>(i)] <= bound);
      longest[static_cast<size_t>(step)] =
          std::max(longest[static_cast<size_t>(step)], lengths[static_cast<size_t>(i)]);
    }
    CHECK(b == memory::curriculum_batch(lengths, by, step, steps, 64, 5));  // the step alone
  }
  CHECK(longest[0] == 2);  // the shortest only, at first; every length by the end
  CHECK(longest[static_cast<size_t>(steps)] == 9);
  CHECK(memory::curriculum_batch(lengths, by, 3, steps, 64, 5) !=
        memory::curriculum_batch(lengths, by, 4, steps, 64, 5));
  CHECK_THROWS_AS(memory::curriculum_batch({}, {}, 0, steps, 4, 5), ShapeError);
}

TEST_CASE("tree, leaves only: the controller never reads the source") {
  // The source is in the leaves alone: the encoder's LSTM never runs, so scrambling its
  // weights changes neither the loss (soft and hard) nor the decoding, whose trace has a row
  // per output step and none for the source's.
  const auto& data = kTreePairs;
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]};
  for (const char* attention : {"soft", "hard"}) {
    memory::StackLstmConfig c = tiny_tree(attention);
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    auto loss = [&] {
      ad::Tape t(7);
      return m.loss(t, both, nullptr).value()[0];
    };
    const float before = loss();
    memory::StackTrace trace;
    const auto out = m.decode(data[0].source, 20, &trace);
    CHECK(trace.weights.size() == out.size() + 1);
    REQUIRE(!ps.params("controller").empty());
    Rng noise(9);
    for (ad::Parameter* p : ps.params("controller"))
      for (int64_t i = 0; i < p->value.size(); ++i)
        p->value[i] = static_cast<float>(noise.normal());
    CHECK(loss() == before);
    CHECK(m.decode(data[0].source, 20) == out);
  }
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "set", c.leaves_only = true;
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("tree: JOIN and SEARCH as MLPs (--join-hidden, --search-hidden)") {
  // Without them the tree has no hidden layers (its weights drawn as before); with them both
  // hidden layers are in the model, of their shapes, and the loss (soft and hard) depends on
  // each.
  const auto& data = kTreePairs;
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]};
  for (const char* attention : {"soft", "hard"}) {
    memory::StackLstmConfig c = tiny_tree(attention);
    {
      nn::ParamStore ps;
      Rng rng(3);
      memory::StackLstm m(ps, c, rng);
      CHECK(ps.params("tree_join_hidden").empty());
      CHECK(ps.params("tree_search_hidden").empty());
    }
    c.join_hidden = 6, c.search_hidden = 7;
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    auto loss = [&] {
      ad::Tape t(7);
      return m.loss(t, both, nullptr).value()[0];
    };
    const float before = loss();
    CHECK(std::isfinite(before));
    const auto out = m.decode(data[0].source, 20);
    REQUIRE(ps.params("tree_join_hidden").size() == 2);
    REQUIRE(ps.params("tree_search_hidden").size() == 2);
    CHECK(ps.params("tree_join_hidden")[0]->value.shape() == Shape{6, 6});
    CHECK(ps.params("tree_search_hidden")[0]->value.shape() == Shape{7, 3 + 5});
    CHECK(ps.params("tree_search")[0]->value.shape() == Shape{1, 7});
    Rng noise(9);
    for (const char* layer : {"tree_join_hidden", "tree_search_hidden"}) {
      const float at = loss();
      for (ad::Parameter* p : ps.params(layer))
        for (int64_t i = 0; i < p->value.size(); ++i)
          p->value[i] = static_cast<float>(2 * noise.normal());
      CHECK(loss() != at);
    }
    CHECK(!out.empty());
  }
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "stack", c.join_hidden = 4;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c.memory = "tree", c.join_hidden = -1;
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("tree: the symbols' order in the leaves' input (--order-bits)") {
  // With order_bits the leaves' input holds each symbol's value in bits from the vocabulary:
  // until set_symbols every symbol's bits are 0; after it the loss (soft and hard) changes
  // where the tokens are integers in range, and not where none is (a word, 16 with 4 bits).
  const auto& data = kTreePairs;
  const std::vector<const memory::TransduceExample*> both = {&data[0], &data[1]};
  auto vocab = [](std::vector<std::string> toks) {
    data::TokenCounts counts;
    for (size_t i = 0; i < toks.size(); ++i)
      counts[toks[i]] = static_cast<int64_t>(10 - i);  // ids 4, 5, ... in this order
    return data::Vocab::build(counts);
  };
  const auto numbers = vocab({"9", "3", "12", "5"}), words = vocab({"9", "x", "16", "-2"});
  REQUIRE(numbers.token(5) == "3");
  for (const char* attention : {"soft", "hard"}) {
    memory::StackLstmConfig c = tiny_tree(attention);
    c.order_bits = 4;
    nn::ParamStore ps;
    Rng rng(3);
    memory::StackLstm m(ps, c, rng);
    CHECK(ps.params("tree_embed")[0]->value.shape() == Shape{3, 4 + 4});
    auto loss = [&] {
      ad::Tape t(7);
      return m.loss(t, both, nullptr).value()[0];
    };
    const float zeros = loss();
    m.set_symbols(words);  // the sources' ids 5, 6, 7: "x", "16", "-2": no bits
    CHECK(loss() == zeros);
    m.set_symbols(numbers);
    CHECK(loss() != zeros);
    CHECK_THROWS_AS(m.set_symbols(vocab({"1"})), ShapeError);
  }
  memory::StackLstmConfig c;
  c.vocab = 8, c.memory = "set", c.order_bits = 4;
  CHECK_THROWS_AS(c.validate(), UsageError);
}

}  // namespace attnkit_unit_stack_lstm_test
