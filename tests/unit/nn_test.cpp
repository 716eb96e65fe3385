// lib/attnkit/nn: layer gradients (finite differences through ad::check_gradients), PyTorch
// goldens for the cells and the loss (testdata/make_nn_golden.py), the attention layer
// against lib/attnkit/attention, optimisers on a convex problem, the registry, and a small
// end-to-end learning run.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/attn2d.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/rnn.h"
#include "attnkit/nn/transformer.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_nn_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;

namespace {

Tensor rnd(Shape s, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

void grads_ok(const std::string& what, const std::function<Var(Tape&)>& f,
              std::vector<ad::Parameter*> params, ad::GradCheckOptions opt = {}) {
  const ad::GradCheckResult r = ad::check_gradients(f, params, opt);
  INFO(what << ": worst " << r.worst << " at " << r.where << " (" << r.checked << " checked)");
  CHECK(r.checked > 0);
  CHECK(r.ok);
}

std::map<std::string, Tensor>& golden() {
  static std::map<std::string, Tensor> g = io::read_npz(test::testdata("nn/cells.npz"));
  return g;
}

// A matrix [rows, cols] of a rank-3 tensor's item b.
Tensor item(const Tensor& t, int64_t b) {
  Tensor r({t.dim(1), t.dim(2)});
  std::copy(t.data() + b * r.size(), t.data() + (b + 1) * r.size(), r.data());
  return r;
}

}  // namespace

TEST_CASE("nn: Linear, Embedding, LayerNorm, FeedForward gradients") {
  nn::ParamStore ps;
  Rng rng(1);
  nn::Linear lin(ps, "lin", 4, 3, rng);
  nn::Embedding emb(ps, "emb", 6, 4, rng);
  nn::LayerNorm ln(ps, "ln", 3);
  nn::FeedForward ff(ps, "ff", 3, 5, rng);
  ad::Parameter x("x", rnd({2, 3, 4}, 2));
  grads_ok("linear + layer norm + ff + embedding",
           [&](Tape& t) {
             Var h = ln(t, lin(t, t.param(x)));
             Var e = lin(t, emb(t, {1, 5, 1, 0, 2, 3}, {2, 3}));
             return ff(t, h) * e;
           },
           {ps.params()[0], ps.params()[1], ps.params()[2], ps.params()[3], ps.params()[4],
            ps.params()[5], ps.params()[6], ps.params()[7], ps.params()[8], &x});
  CHECK(ps.count("lin") == 4 * 3 + 3);
  CHECK(ps.count("ff") == 3 * 5 + 5 + 5 * 3 + 3);
}

TEST_CASE("nn: RNN, GRU and LSTM cells match PyTorch (3 steps, values and gradients)") {
  auto& g = golden();
  const Tensor& x = g.at("x");
  const Tensor& r = g.at("r");
  for (const char* name : {"rnn", "gru", "lstm"}) {
    const std::string n = name;
    nn::ParamStore ps;
    Rng rng(1);
    nn::RecurrentCell cell(ps, n, nn::parse_cell_kind(n), 3, 4, rng);
    cell.load_pytorch(g.at(n + "_weight_ih"), g.at(n + "_weight_hh"), g.at(n + "_bias_ih"),
                      g.at(n + "_bias_hh"));
    Tape t;
    Var xs = t.input(x.clone());
    nn::State s = cell.zero_state(t, 2);
    std::vector<Var> hs;
    for (int64_t k = 0; k < 3; ++k) {
      s = cell(t, ad::index(xs, k), s);
      hs.push_back(s.h);
    }
    INFO(n);
    for (int64_t k = 0; k < 3; ++k)
      test::check_close(hs[static_cast<size_t>(k)].value(), item(g.at(n + "_h"), k), 1e-5, 1e-4);
    if (n == "lstm") test::check_close(s.c.value(), item(g.at("lstm_c"), 2), 1e-5, 1e-4);
    t.backward(ad::sum(s.h * t.constant(r.clone())));
    test::check_close(cell.W_ih->grad, g.at(n + "_grad_weight_ih"), 1e-5, 1e-4);
    test::check_close(xs.grad(), g.at(n + "_grad_x"), 1e-5, 1e-4);
  }
}

TEST_CASE("nn: GRU and LSTM over 3 steps pass the gradient check; parameter counts") {
  for (nn::CellKind kind : {nn::CellKind::RNN, nn::CellKind::GRU, nn::CellKind::LSTM}) {
    nn::ParamStore ps;
    Rng rng(3);
    const int64_t n = 3, m = 4;
    nn::RecurrentCell cell(ps, "cell", kind, n, m, rng);
    const int64_t expect = kind == nn::CellKind::LSTM  ? 4 * m * (n + m + 1)
                           : kind == nn::CellKind::GRU ? 3 * m * (n + m + 2)
                                                       : m * (n + m + 1);
    CHECK(ps.count() == expect);
    ad::Parameter x("x", rnd({3, 2, n}, 4));
    std::vector<ad::Parameter*> params = ps.params();
    params.push_back(&x);
    grads_ok(
        "cell over 3 steps",
        [&](Tape& t) {
          nn::State s = cell.zero_state(t, 2);
          Var xs = t.param(x);
          for (int64_t k = 0; k < 3; ++k) s = cell(t, ad::index(xs, k), s);
          return kind == nn::CellKind::LSTM ? ad::concat({s.h, s.c}, -1) : s.h;
        },
        params);
  }
}

TEST_CASE("nn: an LSTM's single bias trains as PyTorch's pair b_ih + b_hh (copies 2)") {
  // PyTorch's LSTM has two bias vectors with the same gradient; Adam steps each, so their sum
  // moves twice as far as one vector would, and the clipping norm counts the gradient twice.
  // The cell keeps one bias with copies = 2: Adam + clipping must follow the pair exactly.
  const int64_t n = 3, m = 4, B = 2, T = 3;
  const Tensor x = rnd({T, B, n}, 11), r = rnd({B, m}, 12);
  for (int copies : {2, 1}) {
    nn::ParamStore ps;
    Rng rng(5);
    nn::RecurrentCell cell(ps, "cell", nn::CellKind::LSTM, n, m, rng);
    CHECK(cell.b->copies == 2);
    cell.set_bias_copies(copies);
    // The pair: b_hh drawn, b_ih = b - b_hh; the weights copied.
    ad::Parameter wih("W_ih", cell.W_ih->value.clone()), whh("W_hh", cell.W_hh->value.clone());
    ad::Parameter bhh("b_hh", rnd({4 * m}, 13, 0.3)), bih("b_ih", cell.b->value.clone());
    for (int64_t i = 0; i < 4 * m; ++i) bih.value[i] -= bhh.value[i];
    nn::Adam one(ps.params(), 0.05, 0.9, 0.98, 1e-9);
    nn::Adam pair({&wih, &whh, &bih, &bhh}, 0.05, 0.9, 0.98, 1e-9);
    double worst = 0.0;
    for (int step = 0; step < 6; ++step) {
      one.zero_grad();
      pair.zero_grad();
      Tape t;
      nn::State s = cell.zero_state(t, B);
      Var xs = t.constant(x.clone());
      for (int64_t k = 0; k < T; ++k) s = cell(t, ad::index(xs, k), s);
      t.backward(ad::sum(s.h * t.constant(r.clone())));
      Tape u;
      Var h = u.constant(Tensor({B, m})), c = u.constant(Tensor({B, m}));
      Var us = u.constant(x.clone());
      for (int64_t k = 0; k < T; ++k) {
        Var xp = ad::add(ad::linear(ad::index(us, k), u.param(wih), u.param(bih)), u.param(bhh));
        Var a = ad::lstm_gates(ad::addmm(xp, h, u.param(whh), false, true));
        c = ad::lstm_cell_c(a, c);
        h = ad::lstm_cell_h(a, c);
      }
      u.backward(ad::sum(h * u.constant(r.clone())));
      const double n1 = nn::clip_grad_norm(ps.params(), 0.05),
                   n2 = nn::clip_grad_norm({&wih, &whh, &bih, &bhh}, 0.05);
      if (copies == 2) CHECK(n1 == doctest::Approx(n2).epsilon(1e-6));
      one.step();
      pair.step();
      for (int64_t i = 0; i < 4 * m; ++i)
        worst = std::max(
            worst, static_cast<double>(std::abs(cell.b->value[i] - (bih.value[i] + bhh.value[i]))));
      for (int64_t i = 0; i < cell.W_hh->value.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(cell.W_hh->value[i] - whh.value[i])));
    }
    INFO("copies " << copies << ": worst difference " << worst);
    if (copies == 2)
      CHECK(worst < 1e-5);
    else
      CHECK(worst > 1e-2);  // one vector trains differently: the test would catch it
  }
  nn::ParamStore ps;
  Rng rng(5);
  nn::RecurrentCell gru(ps, "gru", nn::CellKind::GRU, n, m, rng);
  CHECK(gru.b->copies == 1);
  CHECK(gru.b_hh->copies == 1);
  CHECK_THROWS_AS(gru.set_bias_copies(0), UsageError);
}

TEST_CASE("nn: bi-directional 2-layer encoder over a padded batch") {
  nn::ParamStore ps;
  Rng rng(5);
  nn::EncoderOptions o;
  o.kind = nn::CellKind::LSTM;
  o.input = 3;
  o.hidden = 4;
  o.layers = 2;
  o.bidirectional = true;
  nn::RecurrentEncoder enc(ps, "enc", o, rng);
  CHECK(ps.count() == 2 * 4 * 4 * (3 + 4 + 1) + 2 * 4 * 4 * (8 + 4 + 1));
  CHECK(ps.contains("enc.l1_reverse.W_ih"));
  ad::Parameter x("x", rnd({3, 5, 3}, 6));
  const std::vector<int64_t> lengths = {5, 2, 4};
  std::vector<ad::Parameter*> params = ps.params();
  params.push_back(&x);
  ad::GradCheckOptions opt;
  opt.max_per_tensor = 24;
  grads_ok(
      "encoder",
      [&](Tape& t) {
        auto out = enc(t, t.param(x), lengths);
        return ad::concat({ad::reshape(out.outputs, {3, 40}), out.final[2].h, out.final[3].c}, -1);
      },
      params, opt);

  // Each item's outputs equal those of the item run alone, unpadded; padding gives zeros.
  Tape t;
  auto full = enc(t, t.constant(x.value.clone()), lengths);
  CHECK(full.outputs.shape() == Shape{3, 5, 8});
  for (int64_t b = 0; b < 3; ++b) {
    const int64_t L = lengths[static_cast<size_t>(b)];
    Tensor xb({1, L, 3});
    for (int64_t s = 0; s < L; ++s)
      for (int64_t j = 0; j < 3; ++j) xb.at(0, s, j) = x.value.at(b, s, j);
    auto alone = enc(t, t.constant(std::move(xb)), {L});
    for (int64_t s = 0; s < 5; ++s)
      for (int64_t j = 0; j < 8; ++j) {
        const float want = s < L ? alone.outputs.value().at(0, s, j) : 0.0f;
        CHECK(full.outputs.value().at(b, s, j) == doctest::Approx(want).epsilon(1e-5));
      }
    for (size_t k = 0; k < 4; ++k)
      for (int64_t j = 0; j < 4; ++j)
        CHECK(full.final[k].h.value().at(b, j) ==
              doctest::Approx(alone.final[k].h.value().at(0, j)).epsilon(1e-5));
  }
  CHECK_THROWS_AS(enc(t, t.constant(x.value.clone()), {5, 0, 4}), DataError);
  CHECK_THROWS_AS(enc(t, t.constant(x.value.clone()), {5, 6, 4}), DataError);
}

TEST_CASE("nn: a GRU encoder on a tape not recording gives the recorded steps' values") {
  // Inference runs each GRU layer in ad::gru_layer_forward (no nodes); its outputs and final
  // states must be the recorded composition's: 2 layers, both directions, a padded batch (and
  // one without padding). The same arithmetic, but the input projections' rows stand in
  // another order in their product (batch-major, not time-major), and some BLAS kernels sum a
  // row by its place in the tile (OpenBLAS's Haswell family does): equal bits on some, within
  // rounding on all.
  nn::ParamStore ps;
  Rng rng(8);
  nn::EncoderOptions o;
  o.kind = nn::CellKind::GRU, o.input = 5, o.hidden = 7, o.layers = 2, o.bidirectional = true;
  nn::RecurrentEncoder enc(ps, "enc", o, rng);
  const Tensor x = rnd({4, 6, 5}, 9);
  for (const std::vector<int64_t>& lengths :
       {std::vector<int64_t>{6, 2, 5, 1}, std::vector<int64_t>{6, 6, 6, 6}}) {
    Tape rec, inf;
    rec.set_training(false), inf.set_training(false), inf.set_recording(false);
    auto a = enc(rec, rec.constant(x.clone()), lengths);
    auto b = enc(inf, inf.constant(x.clone()), lengths);
    CHECK(rec.size() > inf.size() + 40);  // the steps recorded no nodes
    test::check_close(b.outputs.value(), a.outputs.value(), 1e-6, 1e-5);
    REQUIRE(a.final.size() == b.final.size());
    for (size_t k = 0; k < a.final.size(); ++k)
      test::check_close(b.final[k].h.value(), a.final[k].h.value(), 1e-6, 1e-5);
  }
  Tape rec;  // the forward-only kernel refuses a recording tape
  Tensor h({4, 7}, 0.0f), y({4, 6, 7});
  CHECK_THROWS_AS(
      ad::gru_layer_forward(rec, Tensor({4, 6, 21}, 0.0f), 0, enc.cell(0, 0).W_hh->value,
                            enc.cell(0, 0).b_hh->value, {}, false, h, y.data(), 7),
      Error);
}

TEST_CASE("nn: multi-head attention equals the attention library; causal-mask gradients") {
  nn::ParamStore ps;
  Rng rng(7);
  const int64_t d = 6;
  nn::MultiHeadAttention mha1(ps, "one", d, 1, rng);
  // Identity projections, zero biases: one head is plain scaled-dot attention.
  for (nn::Linear* l : {&mha1.wq, &mha1.wk, &mha1.wv, &mha1.wo}) {
    l->W->value = Tensor({d, d});
    for (int64_t i = 0; i < d; ++i) l->W->value.at(i, i) = 1.0f;
    l->b->value = Tensor({d});
  }
  Tensor q = rnd({2, 3, d}, 8), k = rnd({2, 5, d}, 9);
  Tensor mask({2, 3, 5}, 1.0f);
  for (int64_t j = 0; j < 5; ++j) mask.at(1, 2, j) = 0.0f;  // a query with every key masked
  mask.at(0, 1, 3) = 0.0f;
  Tape t;
  Tensor w;
  Var y = mha1(t, t.constant(q.clone()), t.constant(k.clone()), &mask, false, &w);
  attention::Scorer sc;
  sc.kind = attention::ScoreKind::ScaledDot;
  attention::Options ao;
  ao.mask = &mask;
  Tensor ref = attention::attend(sc, q, k, &k, ao);
  test::check_close(y.value(), ref, 1e-5, 1e-4);
  for (int64_t j = 0; j < d; ++j) CHECK(y.value().at(1, 2, j) == 0.0f);
  CHECK(w.shape() == Shape{2, 1, 3, 5});
  CHECK(w[(0 * 3 + 1) * 5 + 3] == 0.0f);
  // Causal, as the library's mask_causal.
  ao.mask = nullptr;
  ao.causal = true;
  Var yc = mha1(t, t.constant(q.clone()), t.constant(q.clone()), nullptr, true);
  test::check_close(yc.value(), attention::attend(sc, q, q, &q, ao), 1e-5, 1e-4);

  nn::MultiHeadAttention mha(ps, "mha", d, 2, rng);
  ad::Parameter x("x", rnd({2, 4, d}, 10));
  std::vector<ad::Parameter*> params = ps.params("mha");
  params.push_back(&x);
  grads_ok(
      "mha causal",
      [&](Tape& t) {
        Var v = t.param(x);
        return mha(t, v, v, nullptr, true);
      },
      params);
  CHECK_THROWS_AS(nn::MultiHeadAttention(ps, "bad", 6, 4, rng), UsageError);
}

TEST_CASE("nn: Transformer encoder (post-norm) and decoder (pre-norm) layer gradients") {
  nn::ParamStore ps;
  Rng rng(11);
  nn::TransformerOptions o;
  o.dim = 4;
  o.heads = 2;
  o.ff = 6;
  o.dropout = 0.1f;
  nn::TransformerEncoderLayer enc(ps, "enc", o, rng);
  o.pre_norm = true;
  nn::TransformerDecoderLayer dec(ps, "dec", o, rng);
  ad::Parameter x("x", rnd({2, 3, 4}, 12)), y("y", rnd({2, 2, 4}, 13));
  Tensor pad = nn::padding_mask({3, 2}, 3, 3), mpad = nn::padding_mask({3, 2}, 2, 3);
  std::vector<ad::Parameter*> params = ps.params();
  params.push_back(&x);
  params.push_back(&y);
  ad::GradCheckOptions opt;
  opt.max_per_tensor = 12;
  grads_ok(
      "transformer layers (dropout on, reseeded per evaluation)",
      [&](Tape& t) {
        Var m = enc(t, t.param(x), &pad);
        return dec(t, t.param(y), m, nullptr, &mpad);
      },
      params, opt);
  CHECK(ps.count("enc") == 4 * (4 * 4 + 4) + (4 * 6 + 6 + 6 * 4 + 4) + 2 * 8);
}

TEST_CASE("nn: cross-entropy (PyTorch golden, label smoothing, ignore) and BCE with logits") {
  auto& g = golden();
  std::vector<int32_t> targets;
  for (float v : g.at("ce_targets").values()) targets.push_back(static_cast<int32_t>(v));
  Tape t;
  Var logits = t.input(g.at("ce_logits").clone());
  nn::CrossEntropyOptions o;
  o.ignore_index = 0;
  o.label_smoothing = 0.1f;
  Var loss = nn::cross_entropy(logits, targets, o);
  CHECK(loss.value()[0] == doctest::Approx(g.at("ce_loss")[0]).epsilon(1e-5));
  t.backward(loss);
  test::check_close(logits.grad(), g.at("ce_grad"), 1e-6, 1e-4);
  std::vector<Tensor> in;
  in.push_back(rnd({2, 3, 5}, 14));
  const auto r = ad::check_gradients(
      [&](Tape&, const std::vector<Var>& v) {
        return nn::cross_entropy(v[0], {1, 4, -1, 0, 2, 2}, {-1, 0.2f});
      },
      in);
  CHECK(r.ok);
  CHECK_THROWS_AS(nn::cross_entropy(logits, {3, 0, 7, 0, 2}, o), DataError);
  CHECK(nn::cross_entropy(logits, {0, 0, 0, 0, 0}, o).value()[0] == 0.0f);

  Tensor tg({2, 3}, {1, 0, 1, 0, 0.5f, 1});
  Tensor mk({2, 3}, {1, 1, 1, 1, 0, 1});
  std::vector<Tensor> in2;
  in2.push_back(rnd({2, 3}, 15, 2.0));
  CHECK(
      ad::check_gradients(
          [&](Tape&, const std::vector<Var>& v) { return nn::bce_with_logits(v[0], tg, &mk); }, in2)
          .ok);
  Var big =
      nn::bce_with_logits(t.constant(Tensor({2}, {100.0f, -100.0f})), Tensor({2}, {1.0f, 1.0f}));
  CHECK(big.value()[0] == doctest::Approx(50.0).epsilon(1e-6));  // (0 + 100) / 2, no overflow
}

TEST_CASE("nn: optimisers converge on a convex quadratic; schedules; clipping") {
  // f(θ) = Σ_i a_i (θ_i - c_i)², minimum at c.
  const Tensor a({4}, {1.0f, 3.0f, 0.5f, 2.0f}), c({4}, {1.0f, -2.0f, 0.5f, 3.0f});
  auto run = [&](auto make, int steps) {
    ad::Parameter th("theta", Tensor({4}));
    auto opt = make(std::vector<ad::Parameter*>{&th});
    Tape t;
    for (int s = 0; s < steps; ++s) {
      opt.zero_grad();
      Var d = t.param(th) - t.constant(c.clone());
      t.backward(ad::sum(t.constant(a.clone()) * d * d));
      opt.step();
      t.clear();
    }
    double err = 0;
    for (int i = 0; i < 4; ++i)
      err = std::max(err, static_cast<double>(std::fabs(th.value[i] - c[i])));
    return err;
  };
  CHECK(run([](auto p) { return nn::SGD(p, 0.05, 0.9); }, 300) < 1e-3);
  CHECK(run([](auto p) { return nn::SGD(p, 0.05, 0.9, true); }, 300) < 1e-3);
  CHECK(run([](auto p) { return nn::Adam(p, 0.1); }, 600) < 1e-2);
  CHECK(run([](auto p) { return nn::RMSProp(p, 1e-2); }, 800) < 2e-2);
  CHECK(run([](auto p) { return nn::RMSProp(p, 1e-2, 0.95, 0.9, 1e-4, false); }, 800) < 2e-2);

  // One RMSProp step by hand (centred, ε inside the root): n = 0.05 g², ḡ = 0.05 g,
  // Δ = -lr g / √(n - ḡ² + ε).
  ad::Parameter p("p", Tensor({1}, 0.0f));
  nn::RMSProp rms({&p}, 0.1);
  p.grad[0] = 2.0f;
  rms.step();
  const double n = 0.05 * 4, gb = 0.05 * 2;
  CHECK(p.value[0] == doctest::Approx(-0.1 * 2 / std::sqrt(n - gb * gb + 1e-4)).epsilon(1e-5));

  nn::Schedule s;
  s.kind = nn::Schedule::Kind::InverseSqrt;
  s.warmup = 4;
  CHECK(s.factor(1) == doctest::Approx(0.25));
  CHECK(s.factor(4) == doctest::Approx(1.0));
  CHECK(s.factor(16) == doctest::Approx(0.5));
  s.kind = nn::Schedule::Kind::Step;
  s.warmup = 0;
  s.step_size = 10;
  s.gamma = 0.5;
  CHECK(s.factor(9) == doctest::Approx(1.0));
  CHECK(s.factor(25) == doctest::Approx(0.25));
  // Cosine: the warm-up ramp, 1 after it, 1/2 half-way through the rest, 0 at the last step
  // and after it; the trainers' names parse to the kinds, anything else lists them.
  s = nn::parse_schedule("cosine", 10, 110);
  CHECK(s.kind == nn::Schedule::Kind::Cosine);
  CHECK(s.factor(5) == doctest::Approx(0.5));
  CHECK(s.factor(10) == doctest::Approx(1.0));
  CHECK(s.factor(60) == doctest::Approx(0.5));
  CHECK(s.factor(35) == doctest::Approx((1 + std::cos(M_PI / 4)) / 2));
  CHECK(s.factor(110) == doctest::Approx(0.0));
  CHECK(s.factor(200) == doctest::Approx(0.0));
  CHECK(nn::parse_schedule("cosine", 0, 1).factor(1) == doctest::Approx(0.0));
  CHECK(nn::parse_schedule("inverse-sqrt", 4, 0).kind == nn::Schedule::Kind::InverseSqrt);
  CHECK(nn::parse_schedule("constant", 0, 0).factor(1000) == 1.0);
  CHECK_THROWS_WITH_AS(nn::parse_schedule("linear", 0, 10),
                       "unknown schedule 'linear' (choose constant, inverse-sqrt or cosine)",
                       UsageError);
  CHECK_THROWS_AS(nn::parse_schedule("cosine", -1, 10), UsageError);

  ad::Parameter g1("g1", Tensor({2})), g2("g2", Tensor({1}));
  g1.grad = Tensor({2}, {3.0f, 0.0f});
  g2.grad = Tensor({1}, 4.0f);
  CHECK(nn::clip_grad_norm({&g1, &g2}, 1.0) == doctest::Approx(5.0));
  CHECK(g1.grad[0] == doctest::Approx(0.6));
  CHECK(g2.grad[0] == doctest::Approx(0.8));
  CHECK(nn::clip_grad_norm({&g1, &g2}, 10.0) == doctest::Approx(1.0));
  CHECK(g2.grad[0] == doctest::Approx(0.8));
  nn::clip_grad_value({&g1, &g2}, 0.7);
  CHECK(g2.grad[0] == doctest::Approx(0.7));
  CHECK(g1.grad[0] == doctest::Approx(0.6));
}

TEST_CASE(
    "nn: parameter blocks cover every element once; optimiser steps do not depend on threads") {
  nn::ParamStore ps;
  Rng rng(5);
  for (int64_t n : {int64_t{3}, int64_t{70000}, int64_t{1} << 18, int64_t{1}}) {
    Tensor v({n});
    nn::init_uniform(v, rng, 1.0f);
    ps.add("p" + std::to_string(n), std::move(v));
  }
  std::vector<int> seen;
  for (ad::Parameter* p : ps.params()) seen.resize(seen.size() + static_cast<size_t>(p->size()));
  int64_t blocks = 0;
  for (const nn::ParamBlock& b : nn::param_blocks(ps.params(), 1000)) {
    CHECK(b.end - b.begin <= 1000);
    CHECK(b.begin < b.end);
    int64_t off = 0;
    for (size_t k = 0; k < b.k; ++k) off += ps.params()[k]->size();
    for (int64_t i = b.begin; i < b.end; ++i) ++seen[static_cast<size_t>(off + i)];
    ++blocks;
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(seen.size()));
  CHECK(blocks == 1 + 70 + 263 + 1);
  CHECK_THROWS_AS(nn::param_blocks(ps.params(), 0), UsageError);
  // Adam and centred RMSProp, 3 steps at 1 and at 2 threads: the same bits.
  auto run = [&](int threads, bool adam) {
    std::vector<Tensor> start;
    for (ad::Parameter* p : ps.params()) start.push_back(p->value.clone());
    set_max_threads(threads);
    std::unique_ptr<nn::Optimizer> o;
    if (adam)
      o = std::make_unique<nn::Adam>(ps.params(), 1e-2);
    else
      o = std::make_unique<nn::RMSProp>(ps.params(), 1e-2, 0.95, 0.9, 1e-4, true);
    Rng g(9);
    for (int s = 0; s < 3; ++s) {
      o->zero_grad();
      for (ad::Parameter* p : ps.params()) nn::init_uniform(p->grad, g, 1.0f);
      o->step();
    }
    std::vector<Tensor> out;
    for (size_t k = 0; k < ps.params().size(); ++k) {
      out.push_back(ps.params()[k]->value.clone());
      ps.params()[k]->value = start[k].clone();
    }
    set_max_threads(0);
    return out;
  };
  // One step from zero state at 2 threads moves every element as the formula says (an
  // optimiser that mixed up a block's offset would move the wrong elements).
  for (int kind = 0; kind < 3; ++kind) {
    set_max_threads(2);
    std::unique_ptr<nn::Optimizer> o;
    if (kind == 0) o = std::make_unique<nn::Adam>(ps.params(), 1e-2, 0.9, 0.999, 1e-3);
    if (kind == 1) o = std::make_unique<nn::SGD>(ps.params(), 1e-2, 0.9);
    if (kind == 2) o = std::make_unique<nn::RMSProp>(ps.params(), 1e-2, 0.95, 0.9, 1e-3, true);
    auto expected = [kind](float g) {
      if (kind == 0) return -1e-2f * g / (std::abs(g) + 1e-3f);      // m̂ = g, √v̂ = |g|
      if (kind == 1) return -1e-2f * g;                              // v = g
      return -1e-2f * g / std::sqrt(0.95f * 0.05f * g * g + 1e-3f);  // centred: ρ(1-ρ)g²
    };
    Rng g(9);
    for (ad::Parameter* p : ps.params()) nn::init_uniform(p->grad, g, 1.0f);
    std::vector<Tensor> before;
    for (ad::Parameter* p : ps.params()) before.push_back(p->value.clone());
    o->step();
    bool all = true;
    for (size_t k = 0; k < before.size(); ++k) {
      const ad::Parameter& p = *ps.params()[k];
      for (int64_t i = 0; i < p.size(); ++i)
        all = all && std::abs(p.value[i] - before[k][i] - expected(p.grad[i])) < 1e-6f;
      ps.params()[k]->value = before[k].clone();
    }
    CHECK_MESSAGE(all, "optimiser ", kind);
    set_max_threads(0);
  }
  for (bool adam : {true, false}) {
    auto a = run(1, adam), b = run(2, adam);
    bool same = true, moved = false;
    for (size_t k = 0; k < a.size(); ++k)
      for (int64_t i = 0; i < a[k].size(); ++i) {
        same = same && a[k][i] == b[k][i];
        moved = moved || a[k][i] != ps.params()[k]->value[i];
      }
    CHECK(same);
    CHECK(moved);
  }
}

TEST_CASE("nn: a per-parameter learning-rate scale applies to that parameter only") {
  // Two parameters with the same gradient (2 each element); the second steps at 0.1 x lr.
  for (int adam = 0; adam < 2; ++adam) {
    CAPTURE(adam);
    ad::Parameter a("a", Tensor({3}, 1.0f)), b("b", Tensor({3}, 1.0f));
    std::vector<ad::Parameter*> ps = {&a, &b};
    std::unique_ptr<nn::Optimizer> opt;
    if (adam)
      opt = std::make_unique<nn::Adam>(ps, 0.01);
    else
      opt = std::make_unique<nn::SGD>(ps, 0.01);
    opt->set_lr_scale(&b, 0.1);
    CHECK(opt->lr_scale(0) == 1.0);
    CHECK(opt->lr_scale(1) == 0.1);
    for (ad::Parameter* p : ps) p->grad = Tensor({3}, 2.0f);
    opt->step();
    // SGD: 1 - 0.01 * 2 and 1 - 0.001 * 2; Adam's first step is lr · sign(g).
    const double da = adam ? 0.01 : 0.02, db = da / 10;
    for (int64_t i = 0; i < 3; ++i) {
      CHECK(a.value[i] == doctest::Approx(1.0 - da).epsilon(1e-6));
      CHECK(b.value[i] == doctest::Approx(1.0 - db).epsilon(1e-6));
    }
    ad::Parameter other("other", Tensor({1}));
    CHECK_THROWS_WITH_AS(opt->set_lr_scale(&other, 0.5),
                         doctest::Contains("'other' is not a parameter"), UsageError);
    CHECK_THROWS_AS(opt->set_lr_scale(&a, -1.0), UsageError);
  }
}

TEST_CASE("nn: spectral-norm clipping of stacked gradients, against the singular values") {
  // [[3, 0], [0, 4]] stacked from two weights: σ = 4 (the L2 norm would be 5)
  ad::Parameter e("E", Tensor({1, 2})), t("T", Tensor({1, 2}));
  e.grad = Tensor({1, 2}, {3.0f, 0.0f});
  t.grad = Tensor({1, 2}, {0.0f, 4.0f});
  CHECK(nn::clip_grad_spectral({&e, &t}, 10.0) == doctest::Approx(4.0));
  CHECK(e.grad[0] == 3.0f);  // below the bound: untouched
  CHECK(nn::clip_grad_spectral({&e, &t}, 2.0) == doctest::Approx(4.0));
  CHECK(e.grad[0] == doctest::Approx(1.5));
  CHECK(t.grad[1] == doctest::Approx(2.0));
  // a rank-one gradient u vᵀ: σ = |u| |v| = its L2 norm
  ad::Parameter r("R", Tensor({3, 2}));
  r.grad = Tensor({3, 2}, {1, 2, 2, 4, -2, -4});  // (1, 2, -2)ᵀ (1, 2)
  CHECK(nn::clip_grad_spectral({&r}, 100.0) == doctest::Approx(3.0 * std::sqrt(5.0)));
  // [[2, 1], [1, 2]]: singular values 3 and 1, top eigenvector orthogonal to neither start
  ad::Parameter s("S", Tensor({2, 2}));
  s.grad = Tensor({2, 2}, {2, 1, 1, 2});
  CHECK(nn::clip_grad_spectral({&s}, 100.0) == doctest::Approx(3.0));
  // [[1, 1], [1, -1]] / √2 · 5, orthogonal: both singular values 5
  s.grad = Tensor({2, 2}, {1, 1, 1, -1});
  for (float& x : s.grad.values()) x *= static_cast<float>(5.0 / std::sqrt(2.0));
  CHECK(nn::clip_grad_spectral({&s}, 1.0) == doctest::Approx(5.0));
  CHECK(s.grad[0] == doctest::Approx(1.0 / std::sqrt(2.0)));
  // zero gradients: σ = 0, nothing changes; mismatched columns are an error
  ad::Parameter z("Z", Tensor({2, 3}));
  CHECK(nn::clip_grad_spectral({&z}, 1.0) == 0.0);
  CHECK_THROWS_AS(nn::clip_grad_spectral({&z, &s}, 1.0), ShapeError);
}

TEST_CASE("nn: parameter registry — names, counts per layer, save and load") {
  nn::ParamStore ps;
  Rng rng(17);
  nn::Linear a(ps, "model.a", 3, 2, rng);
  nn::RecurrentCell c(ps, "model.cell", nn::CellKind::LSTM, 2, 3, rng);
  CHECK_THROWS_AS(nn::Linear(ps, "model.a", 3, 2, rng), Error);
  auto lc = ps.layer_counts();
  REQUIRE(lc.size() == 2);
  CHECK(lc[0] == std::make_pair(std::string("model.a"), int64_t{8}));
  CHECK(lc[1].second == 4 * 3 * (2 + 3 + 1));
  CHECK(ps.count("model") == ps.count());
  CHECK(ps.count("model.c") == 0);  // prefixes end at a '.'
  const std::string path = "/tmp/attnkit-nn-test-params-" + std::to_string(getpid()) + ".npz";
  ps.save(path);
  nn::ParamStore ps2;
  Rng rng2(99);
  nn::Linear a2(ps2, "model.a", 3, 2, rng2);
  nn::RecurrentCell c2(ps2, "model.cell", nn::CellKind::LSTM, 2, 3, rng2);
  ps2.load(path);
  test::check_close(c2.W_hh->value, c.W_hh->value, 0, 0);
  test::check_close(a2.b->value, a.b->value, 0, 0);
  nn::ParamStore ps3;
  nn::Linear a3(ps3, "model.a", 3, 4, rng2);
  CHECK_THROWS_WITH_AS(ps3.load(path), doctest::Contains("model.a.W"), DataError);
  std::remove(path.c_str());
}

TEST_CASE("nn: end to end — a bi-LSTM learns to reverse sequences of 4 symbols") {
  nn::ParamStore ps;
  Rng rng(21);
  const int64_t V = 4, T = 4, B = 32, H = 24;
  nn::Embedding emb(ps, "emb", V, 8, rng);
  nn::EncoderOptions o;
  o.input = 8;
  o.hidden = H;
  o.bidirectional = true;
  nn::RecurrentEncoder enc(ps, "enc", o, rng);
  nn::Linear out(ps, "out", 2 * H, V, rng);
  nn::Adam adam(ps.params(), 0.02);
  Rng data(22);
  Tape t(23);
  auto batch = [&](std::vector<int32_t>& x, std::vector<int32_t>& y) {
    x.resize(B * T);
    y.resize(B * T);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < T; ++s)
        x[static_cast<size_t>(b * T + s)] = static_cast<int32_t>(data.below(V));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < T; ++s)
        y[static_cast<size_t>(b * T + s)] = x[static_cast<size_t>(b * T + T - 1 - s)];
  };
  std::vector<int32_t> x, y;
  const std::vector<int64_t> lengths(B, T);
  double acc = 0;
  int perfect = 0;
  for (int step = 0; step < 1500; ++step) {
    batch(x, y);
    adam.zero_grad();
    Var logits = out(t, enc(t, emb(t, x, {B, T}), lengths).outputs);
    Var loss = nn::cross_entropy(logits, y);
    t.backward(loss);
    nn::clip_grad_norm(ps.params(), 5.0);
    adam.step();
    int64_t right = 0;
    for (int64_t r = 0; r < B * T; ++r) {
      const float* row = logits.value().data() + r * V;
      right += std::max_element(row, row + V) - row == y[static_cast<size_t>(r)];
    }
    acc = static_cast<double>(right) / (B * T);
    t.clear();
    perfect = acc == 1.0 ? perfect + 1 : 0;
    if (perfect == 10) {
      MESSAGE("learnt after " << step + 1 << " steps");
      break;
    }  // ten perfect batches in a row
  }
  // Held-out batch, evaluation mode.
  batch(x, y);
  t.set_training(false);
  t.set_recording(false);
  Var logits = out(t, enc(t, emb(t, x, {B, T}), lengths).outputs);
  int64_t right = 0;
  for (int64_t r = 0; r < B * T; ++r) {
    const float* row = logits.value().data() + r * V;
    right += std::max_element(row, row + V) - row == y[static_cast<size_t>(r)];
  }
  CHECK(perfect == 10);
  CHECK(static_cast<double>(right) / (B * T) >= 0.99);
}

// ---- 2-D attention blocks (nn/attn2d.h)

TEST_CASE("attn2d: SAGAN, BigGAN and the non-local blocks equal PyTorch's (golden files)") {
  // testdata/make_attn2d_golden.py: modules after each paper's released code, random weights,
  // gamma != 0; the state_dict under PyTorch's names.
  for (const char* kind :
       {"sagan", "biggan", "nonlocal-gaussian", "nonlocal-dot", "nonlocal-concat"}) {
    CAPTURE(kind);
    std::map<std::string, Tensor> p =
        io::read_npz(test::testdata(std::string("attn2d/") + kind + ".npz"));
    ad::Tape t;
    const nn::Attn2dOutput r =
        nn::attn2d(nn::parse_attn2d_kind(kind), p, t.constant(p.at("x").clone()));
    test::check_close(r.y.value(), p.at("y"), 1e-5, 1e-4);
    test::check_close(r.attention.value(), p.at("attention"), 1e-6, 1e-4);
  }
}

TEST_CASE("attn2d: released modules' state_dicts as saved (0-d gamma, sub_sample, bn_layer)") {
  // testdata/make_attn2d_golden.py: BigGAN-PyTorch's Attention (gamma a 0-d tensor) and the
  // common NONLocalBlock2D with its defaults (g.0/phi.0 max-pooled 2x2, W.0 + BatchNorm2d W.1
  // in eval mode with running statistics), in their authors' code; the state_dict in its own
  // dtypes (int64 num_batches_tracked).
  for (const auto& file_kind : std::vector<std::pair<std::string, std::string>>{
           {"released-biggan", "biggan"},
           {"released-nonlocal-gaussian", "nonlocal-gaussian"},
           {"released-nonlocal-dot", "nonlocal-dot"},
           {"released-nonlocal-concat", "nonlocal-concat"}}) {
    // Named copies, not structured bindings: CAPTURE's lambda may not capture those (clang).
    const std::string& file = file_kind.first;
    const std::string& kind = file_kind.second;
    CAPTURE(file);
    std::map<std::string, Tensor> p = io::read_npz(test::testdata("attn2d/" + file + ".npz"));
    ad::Tape t;
    const nn::Attn2dOutput r =
        nn::attn2d(nn::parse_attn2d_kind(kind), p, t.constant(p.at("x").clone()));
    REQUIRE(r.attention.value().shape() == p.at("attention").shape());  // [2, 24, 6]: pooled keys
    test::check_close(r.y.value(), p.at("y"), 1e-5, 1e-4);
    test::check_close(r.attention.value(), p.at("attention"), 1e-6, 1e-4);
  }
  // The batch norm is applied: without its statistics the output differs.
  std::map<std::string, Tensor> p =
      io::read_npz(test::testdata("attn2d/released-nonlocal-gaussian.npz"));
  p.erase("W.1.running_var");
  ad::Tape t;
  CHECK_THROWS_WITH_AS(
      nn::attn2d(nn::Attn2dKind::NonLocalGaussian, p, t.constant(p.at("x").clone())),
      "missing parameter 'W.1.running_var'", DataError);
  std::map<std::string, Tensor> b = io::read_npz(test::testdata("attn2d/released-biggan.npz"));
  b.at("gamma") = Tensor({2}, std::vector<float>{1, 2});
  CHECK_THROWS_WITH_AS(nn::attn2d(nn::Attn2dKind::BigGan, b, t.constant(b.at("x").clone())),
                       "parameter 'gamma' has shape [2], expected a scalar ([] or [1])", DataError);
  CHECK_THROWS_AS(nn::attn2d(nn::Attn2dKind::NonLocalDot,
                             io::read_npz(test::testdata("attn2d/released-nonlocal-dot.npz")),
                             t.constant(Tensor({1, 16, 3, 4}))),
                  ShapeError);  // sub-sampling needs an even height
}

TEST_CASE("attn2d: gamma 0 (or a zero W) makes the block the identity; gradients; errors") {
  std::map<std::string, Tensor> p = io::read_npz(test::testdata("attn2d/sagan.npz"));
  p.at("gamma")[0] = 0.0f;
  ad::Tape t;
  const Tensor& x = p.at("x");
  test::check_close(nn::attn2d(nn::Attn2dKind::Sagan, p, t.constant(x.clone())).y.value(), x, 0, 0);
  std::map<std::string, Tensor> nl = io::read_npz(test::testdata("attn2d/nonlocal-gaussian.npz"));
  std::fill(nl.at("W.weight").values().begin(), nl.at("W.weight").values().end(), 0.0f);
  std::fill(nl.at("W.bias").values().begin(), nl.at("W.bias").values().end(), 0.0f);
  test::check_close(
      nn::attn2d(nn::Attn2dKind::NonLocalGaussian, nl, t.constant(x.clone())).y.value(), x, 0, 0);
  // The input gradient through each block, by finite differences (a small input).
  for (const char* kind : {"sagan", "biggan", "nonlocal-concat"}) {
    CAPTURE(kind);
    const std::map<std::string, Tensor> q =
        io::read_npz(test::testdata(std::string("attn2d/") + kind + ".npz"));
    Tensor small({1, 16, 2, 4});
    for (int64_t i = 0; i < small.size(); ++i) small[i] = q.at("x")[i];
    std::vector<Tensor> in;
    in.push_back(std::move(small));
    const nn::Attn2dKind k = nn::parse_attn2d_kind(kind);
    ad::GradCheckOptions o;
    o.eps = 1e-2;
    const ad::GradCheckResult res = ad::check_gradients(
        [&](ad::Tape&, const std::vector<ad::Var>& v) { return nn::attn2d(k, q, v[0]).y; }, in, o);
    INFO(res.where);
    CHECK(res.ok);
  }
  p.erase("key_conv.bias");
  CHECK_THROWS_WITH_AS(nn::attn2d(nn::Attn2dKind::Sagan, p, t.constant(x.clone())),
                       "missing parameter 'key_conv.bias'", DataError);
  CHECK_THROWS_AS(nn::attn2d(nn::Attn2dKind::Sagan, nl, t.constant(x.clone())), DataError);
  CHECK_THROWS_AS(
      nn::attn2d(nn::Attn2dKind::BigGan, io::read_npz(test::testdata("attn2d/biggan.npz")),
                 t.constant(Tensor({1, 16, 3, 4}))),
      ShapeError);  // odd height: no 2x2 pooling
  CHECK_THROWS_AS(nn::parse_attn2d_kind("sagn"), ChoiceError);
}

}  // namespace attnkit_unit_nn_test
