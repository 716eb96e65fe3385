#include "attnkit/memory/ntm/model.h"

#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/memory/ntm/address.h"
#include "attnkit/memory/ntm/ops.h"

namespace attnkit::memory {

using ad::Tape;
using ad::Var;

void NtmConfig::validate() const {
  auto bad = [](const std::string& what) { throw UsageError(what); };
  if (input < 1) bad("input size must be >= 1");
  if (output < 1) bad("output size must be >= 1");
  if (controller != "lstm" && controller != "feedforward")
    bad("controller: unknown kind '" + controller + "' (lstm, feedforward)");
  if (controller_size < 1) bad("hidden (the controller's units) must be >= 1");
  if (controller_layers < 1) bad("layers (the controller's) must be >= 1");
  if (read_heads < 1) bad("read-heads must be >= 1");
  if (write_heads < 0) bad("write-heads must be >= 0");
  if (memory_rows < 1 || memory_cols < 1 || memory_rows > 4096 || memory_cols > 1024)
    bad("memory must be between 1 x 1 and 4096 x 1024");
  if (shift_range < 0 || shifts() > memory_rows)
    bad("shift-range must be >= 0 with 2R+1 <= memory rows");
  if (memory_init != "constant" && memory_init != "random" && memory_init != "learned")
    bad("memory-init: unknown kind '" + memory_init + "' (constant, random, learned)");
  if (weight_init != "learned" && weight_init != "uniform")
    bad("weight-init: unknown kind '" + weight_init + "' (learned, uniform)");
  if (add_activation != "tanh" && add_activation != "linear")
    bad("add-activation: unknown kind '" + add_activation + "' (tanh, linear)");
}

Ntm::Ntm(nn::ParamStore& ps, const NtmConfig& cfg, Rng& rng) : cfg_(cfg) {
  cfg_.validate();
  const int64_t n = cfg.memory_rows, m = cfg.memory_cols, hsz = cfg.controller_size;
  const int64_t cin = cfg.input + cfg.read_heads * m;
  for (int l = 0; l < cfg.controller_layers; ++l) {
    const std::string name = "ntm.controller.l" + std::to_string(l);
    const int64_t in = l == 0 ? cin : hsz;
    if (cfg.controller == "lstm") {
      lstm_.emplace_back(ps, name, nn::CellKind::LSTM, in, hsz, rng);
      // One bias vector in training (nn/rnn.h): the NTM's recipes and results were made so;
      // PyTorch's pair (copies 2) is not yet tried here.
      lstm_.back().set_bias_copies(1);
    } else
      ff_.emplace_back(ps, name, in, hsz, rng);
  }
  for (int k = 0; k < cfg.read_heads; ++k)
    heads_.emplace_back(ps, "ntm.read" + std::to_string(k), hsz, cfg.read_head_size(), rng);
  for (int k = 0; k < cfg.write_heads; ++k)
    heads_.emplace_back(ps, "ntm.write" + std::to_string(k), hsz, cfg.write_head_size(), rng);
  out_.emplace_back(ps, "ntm.out", hsz + cfg.read_heads * m, cfg.output, rng);

  Tensor r0({cfg.read_heads, m});
  nn::init_normal(r0, rng, 0.01f);
  read0_ = &ps.add("ntm.init.reads", std::move(r0));
  if (cfg.weight_init == "learned") {
    Tensor w0({cfg.read_heads + cfg.write_heads, n});
    nn::init_normal(w0, rng, 1.0f);
    weight0_ = &ps.add("ntm.init.weights", std::move(w0));
  }
  if (cfg.memory_init != "constant") {
    Tensor m0({n, m});
    nn::init_uniform(m0, rng, static_cast<float>(1.0 / std::sqrt(static_cast<double>(n + m))));
    memory0_ = &ps.add("ntm.init.memory", std::move(m0));
  }
  for (ad::Parameter* p : ps.params("ntm"))
    if (p != memory0_ || cfg.memory_init == "learned") trainable_.push_back(p);
}

Var Ntm::address(Var memory, Var key, Var beta, Var gate, Var shift, Var gamma, Var prev,
                 std::vector<Var>* stages) {
  Var wc = ad::softmax(ad::mul(ad::cosine(key, memory, static_cast<float>(kNtmCosineEps)), beta));
  Var wg = ad::add(ad::mul(gate, wc), ad::mul(1.0f - gate, prev));
  Var ws = ad::circular_conv(wg, shift);
  Var w = ad::softmax(ad::mul(ad::log(ad::add(ws, static_cast<float>(kNtmSharpenFloor))), gamma));
  if (stages) *stages = {wc, wg, ws};
  return w;
}

Var Ntm::forward(Tape& t, const Tensor& inputs, NtmTrace* trace, Var* write_change) const {
  const int64_t n = cfg_.memory_rows, m = cfg_.memory_cols, k = cfg_.shifts();
  const int nr = cfg_.read_heads, nw = cfg_.write_heads;
  if (inputs.rank() != 2 || inputs.dim(1) != cfg_.input)
    throw ShapeError("NTM input is " + shape_str(inputs.shape()) + ", expected [steps, " +
                     std::to_string(cfg_.input) + "]");
  const int64_t steps = inputs.dim(0);
  Var x = t.constant(inputs.clone());

  Var mem = memory0_ ? t.param(*memory0_) : t.constant(Tensor({n, m}, 1e-6f));
  std::vector<Var> w(static_cast<size_t>(nr + nw)), r(static_cast<size_t>(nr));
  Var w0;
  if (weight0_) w0 = ad::softmax(t.param(*weight0_));
  for (int h = 0; h < nr + nw; ++h)
    w[static_cast<size_t>(h)] = weight0_ ? ad::slice(w0, 0, h, h + 1)
                                         : t.constant(Tensor({1, n}, 1.0f / static_cast<float>(n)));
  Var r0 = t.param(*read0_);
  for (int h = 0; h < nr; ++h) r[static_cast<size_t>(h)] = ad::slice(r0, 0, h, h + 1);
  std::vector<nn::State> st;
  for (const auto& cell : lstm_) st.push_back(cell.zero_state(t, 1));

  std::vector<Var> outs, changes;
  outs.reserve(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<Var> cin{ad::slice(x, 0, s, s + 1)};
    cin.insert(cin.end(), r.begin(), r.end());
    Var h = ad::concat(cin, 1);
    for (size_t l = 0; l < lstm_.size(); ++l) {
      st[l] = lstm_[l](t, h, st[l]);
      h = st[l].h;
    }
    for (const auto& layer : ff_) h = ad::tanh(layer(t, h));

    std::vector<Var> erase, add;
    for (int hd = 0; hd < nr + nw; ++hd) {
      Var p = heads_[static_cast<size_t>(hd)](t, h);
      Var& wh = w[static_cast<size_t>(hd)];
      const int64_t o = m + 3 + k;
      if (fused_) {
        wh = ntm_address_fused(mem, p, 0, cfg_.shift_range, wh);
      } else {
        Var key = ad::slice(p, 1, 0, m);
        Var beta = ad::softplus(ad::slice(p, 1, m, m + 1));
        Var gate = ad::sigmoid(ad::slice(p, 1, m + 1, m + 2));
        Var shift = ad::softmax(ad::slice(p, 1, m + 2, m + 2 + k));
        Var gamma = ad::add(ad::softplus(ad::slice(p, 1, m + 2 + k, m + 3 + k)), 1.0f);
        wh = address(mem, key, beta, gate, shift, gamma, wh);
      }
      if (hd < nr) {
        r[static_cast<size_t>(hd)] = ad::matmul(wh, mem);
        continue;
      }
      const Var before = mem;
      if (fused_) {
        mem = ntm_write_fused(mem, wh, p, o, cfg_.add_activation == "tanh");
      } else {
        Var e = ad::sigmoid(ad::slice(p, 1, o, o + m));
        Var a = ad::slice(p, 1, o + m, o + 2 * m);
        if (cfg_.add_activation == "tanh") a = ad::tanh(a);
        mem = ad::mul(mem, 1.0f - ad::matmul(wh, e, true, false));
        mem = ad::add(mem, ad::matmul(wh, a, true, false));
      }
      if (write_change) {  // Σ_ij |M_ij| |ΔM_ij|, each |x| as √(x² + ε²) − ε
        const float eps = kNtmWriteChangeEps;
        auto smooth_abs = [eps](Var v) {
          return ad::add(ad::sqrt(ad::add(ad::square(v), eps * eps)), -eps);
        };
        changes.push_back(ad::sum(ad::mul(smooth_abs(before), smooth_abs(ad::sub(mem, before)))));
      }
      if (trace) {
        Tensor ev({1, m}), av({1, m});
        for (int64_t j = 0; j < m; ++j) {
          ev[j] =
              static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(p.value()[o + j]))));
          const float x = p.value()[o + m + j];
          av[j] = cfg_.add_activation == "tanh" ? std::tanh(x) : x;
        }
        erase.push_back(t.constant(std::move(ev)));
        add.push_back(t.constant(std::move(av)));
      }
    }
    std::vector<Var> oin{h};
    oin.insert(oin.end(), r.begin(), r.end());
    outs.push_back(out_[0](t, ad::concat(oin, 1)));

    if (trace) {
      auto rows = [](const std::vector<Var>& vs, size_t from, size_t to, int64_t cols) {
        Tensor out({static_cast<int64_t>(to - from), cols});
        for (size_t i = from; i < to; ++i)
          for (int64_t j = 0; j < cols; ++j)
            out.at(static_cast<int64_t>(i - from), j) = vs[i].value()[j];
        return out;
      };
      trace->read_w.push_back(rows(w, 0, static_cast<size_t>(nr), n));
      trace->write_w.push_back(rows(w, static_cast<size_t>(nr), w.size(), n));
      trace->erase.push_back(rows(erase, 0, erase.size(), m));
      trace->add.push_back(rows(add, 0, add.size(), m));
      trace->reads.push_back(rows(r, 0, r.size(), m));
      trace->memory.push_back(mem.value().clone());
    }
  }
  if (write_change)
    *write_change =
        changes.empty() ? t.constant(Tensor::scalar(0.0f)) : ad::sum(ad::stack(changes, 0));
  return ad::concat(outs, 0);
}

int64_t wrong_bits(const Tensor& logits, const Tensor& target, const Tensor* mask) {
  if (logits.shape() != target.shape())
    throw ShapeError("outputs " + shape_str(logits.shape()) + " and targets " +
                     shape_str(target.shape()) + " differ");
  const int64_t cols = logits.rank() >= 1 ? logits.dim(-1) : 1;
  const bool per_step =
      mask && mask->size() * cols == logits.size() && mask->size() != logits.size();
  if (mask && !per_step && mask->size() != logits.size())
    throw ShapeError("mask " + shape_str(mask->shape()) + " fits neither outputs " +
                     shape_str(logits.shape()) + " nor their steps");
  int64_t wrong = 0;
  for (int64_t i = 0; i < logits.size(); ++i) {
    if (mask && (*mask)[per_step ? i / cols : i] == 0.0f) continue;
    wrong += (logits[i] > 0.0f) != (target[i] > 0.5f);
  }
  return wrong;
}

}  // namespace attnkit::memory
