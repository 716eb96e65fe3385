#include "attnkit/models/ram/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/load.h"
#include "attnkit/vision/cnn.h"

namespace attnkit::models {

using ad::Tape;
using ad::Var;

void RamConfig::validate() const {
  glimpse.validate();
  if (glimpses < 1 || glimpses > 64) throw UsageError("glimpses must be from 1 to 64");
  if (glimpse_hidden < 1 || hidden < 1) throw UsageError("glimpse-hidden and hidden must be >= 1");
  if (core != "rnn" && core != "lstm") throw ChoiceError("core", core, {"rnn", "lstm"});
  if (glimpse_net != "fc" && glimpse_net != "conv")
    throw ChoiceError("glimpse-net", glimpse_net, {"fc", "conv"});
  if (glimpse_net == "conv") {
    if (glimpse_channels.empty() || glimpse_channels.size() > 4)
      throw UsageError("glimpse-channels must name 1 to 4 conv blocks");
    for (int64_t ch : glimpse_channels)
      if (ch < 1 || ch > 1024) throw UsageError("glimpse-channels must be from 1 to 1024 each");
    if ((glimpse.size >> glimpse_channels.size()) < 1)
      throw UsageError("glimpse-size " + std::to_string(glimpse.size) + " is too small for " +
                       std::to_string(glimpse_channels.size()) +
                       " conv blocks (each halves it; needs at least " +
                       std::to_string(int64_t{1} << glimpse_channels.size()) + ")");
  }
  if (!(loc_std > 0 && loc_std <= 10)) throw UsageError("loc-std must be in (0, 10]");
  if (height < 1 || width < 1 || height > 4096 || width > 4096)
    throw UsageError("images must be from 1 x 1 to 4096 x 4096 pixels");
  if (classes < 2 || classes > 1000) throw UsageError("classes must be from 2 to 1000");
}

int64_t RamConfig::what_features() const {
  if (glimpse_net != "conv") return glimpse.features();
  const int64_t side = glimpse.size >> glimpse_channels.size();
  return glimpse.scales * glimpse_channels.back() * side * side;
}

void RamPolicyOptions::validate() const {
  if (samples < 1 || samples > 64) throw UsageError("loc-samples must be from 1 to 64");
  if (reward != "correct" && reward != "prob")
    throw ChoiceError("reward", reward, {"correct", "prob"});
}

void RamTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  if (!(loc_lr >= 0) || !std::isfinite(loc_lr)) throw UsageError("loc-lr must be >= 0");
  policy.validate();
  if (eval_samples < 1 || eval_samples > 1000)
    throw UsageError("eval-samples must be from 1 to 1000");
}

namespace {

std::vector<Ram::ConvBlock> make_gconv(nn::ParamStore& ps, const RamConfig& c, Rng& rng) {
  std::vector<Ram::ConvBlock> blocks;
  if (c.glimpse_net != "conv") return blocks;
  int64_t in = 1;
  for (size_t i = 0; i < c.glimpse_channels.size(); ++i) {
    const int64_t out = c.glimpse_channels[i];
    const std::string p = "ram.gconv.b" + std::to_string(i);
    const float bound = 1.0f / std::sqrt(static_cast<float>(in * 9));  // PyTorch's
    Tensor w({out, in, 3, 3}), b({out});
    nn::init_uniform(w, rng, bound);
    nn::init_uniform(b, rng, bound);
    blocks.push_back({&ps.add(p + ".weight", std::move(w)), &ps.add(p + ".bias", std::move(b))});
    in = out;
  }
  return blocks;
}

}  // namespace

Ram::Ram(nn::ParamStore& ps, const RamConfig& c, Rng& rng)
    : c_((c.validate(), c)),
      kind_(c.core == "lstm" ? nn::CellKind::LSTM : nn::CellKind::RNN),
      gconv_(make_gconv(ps, c, rng)),
      glimpse_in_(ps, "ram.glimpse", c.what_features(), c.glimpse_hidden, rng),
      loc_in_(ps, "ram.where", 2, c.glimpse_hidden, rng),
      g_from_glimpse_(ps, "ram.what_g", c.glimpse_hidden, c.hidden, rng),
      g_from_loc_(ps, "ram.where_g", c.glimpse_hidden, c.hidden, rng),
      core_in_(ps, "ram.core_in", c.hidden, c.hidden, rng),
      core_rec_(ps, "ram.core_rec", c.hidden, c.hidden, rng),
      loc_(ps, "ram.locator", c.hidden, 2, rng),
      baseline_(ps, "ram.baseline", c.hidden, 1, rng),
      action_(ps, "ram.action", c.hidden, c.classes, rng) {
  if (kind_ == nn::CellKind::LSTM)
    lstm_ = std::make_unique<nn::RecurrentCell>(ps, "ram.lstm", nn::CellKind::LSTM, c.hidden,
                                                c.hidden, rng);
}

Var Ram::glimpse_net(Tape& t, Var patches, Var locations) const {
  if (!gconv_.empty()) {
    // Each of the k patches a one-channel image through the shared conv blocks.
    const int64_t b = patches.dim(0), g = c_.glimpse.size;
    Var x = ad::reshape(patches, {b * c_.glimpse.scales, 1, g, g});
    ad::Conv2dOptions same;
    same.pad_h = same.pad_w = 1;
    for (const ConvBlock& blk : gconv_)
      x = ad::max_pool2d(ad::relu(ad::conv2d(x, t.param(*blk.w), t.param(*blk.b), same)), 2);
    patches = ad::reshape(x, {b, c_.what_features()});
  }
  Var hg = ad::relu(glimpse_in_(t, patches));
  Var hl = ad::relu(loc_in_(t, locations));
  return ad::relu(ad::add(g_from_glimpse_(t, hg), g_from_loc_(t, hl)));
}

namespace {

Tensor uniform_locations(int64_t b, Rng& rng) {
  Tensor l({b, 2});
  for (int64_t i = 0; i < l.size(); ++i)
    l[i] = static_cast<float>(2.0 * rng.uniform_double() - 1.0);
  return l;
}

}  // namespace

Ram::Out Ram::run(Tape& t, const Tensor& images, Rng& rng, const std::vector<Tensor>* fixed,
                  RamTrace* trace, bool keep_patches) const {
  if (images.rank() != 3 || images.dim(1) != c_.height || images.dim(2) != c_.width)
    throw ShapeError("the model reads images of " + std::to_string(c_.height) + " x " +
                     std::to_string(c_.width) + " pixels, not " + shape_str(images.shape()));
  const int64_t b = images.dim(0), T = c_.glimpses;
  if (fixed && static_cast<int64_t>(fixed->size()) != T)
    throw ShapeError("run: " + std::to_string(fixed->size()) + " fixed locations for " +
                     std::to_string(T) + " glimpses");
  Out out;
  nn::State s;
  if (kind_ == nn::CellKind::LSTM) {
    s = lstm_->zero_state(t, b);
  } else {
    s.h = t.constant(Tensor({b, c_.hidden}, 0.0f));
  }
  Tensor l = fixed ? (*fixed)[0].clone() : uniform_locations(b, rng);
  for (int64_t step = 0; step < T; ++step) {
    Tensor rho = vision::glimpse(images, l, c_.glimpse);
    if (trace) {
      trace->locations.push_back(l.clone());
      if (keep_patches) trace->patches.push_back(rho.clone());
    }
    rho.reshape({b, c_.glimpse.features()});
    Var g = glimpse_net(t, t.constant(std::move(rho)), t.constant(l.clone()));
    if (kind_ == nn::CellKind::LSTM) {
      s = (*lstm_)(t, g, s);
    } else {
      s.h = ad::relu(ad::add(core_in_(t, g), core_rec_(t, s.h)));
    }
    if (step + 1 == T) break;
    if (c_.random_glimpses) {
      l = fixed ? (*fixed)[static_cast<size_t>(step + 1)].clone() : uniform_locations(b, rng);
      continue;
    }
    Var h = t.constant(s.h.value().clone());  // the policy and the baseline do not train the core
    Var mu = ad::tanh(loc_(t, h));
    out.means.push_back(mu.value().clone());
    Tensor sample = fixed ? (*fixed)[static_cast<size_t>(step + 1)].clone()
                          : rl::sample_gaussian(mu.value(), static_cast<float>(c_.loc_std), rng);
    out.log_probs.push_back(rl::gaussian_log_prob(mu, sample, static_cast<float>(c_.loc_std)));
    out.baselines.push_back(baseline_(t, h));
    for (int64_t i = 0; i < sample.size(); ++i) sample[i] = std::clamp(sample[i], -1.0f, 1.0f);
    l = std::move(sample);
  }
  out.logits = action_(t, s.h);
  return out;
}

Var Ram::loss(Tape& t, const Tensor& images, const std::vector<int32_t>& labels, Rng& rng,
              const RamPolicyOptions& policy, RamLossStats* stats,
              const std::vector<Tensor>* fixed) const {
  policy.validate();
  const int64_t b = images.rank() == 3 ? images.dim(0) : 0;
  if (static_cast<int64_t>(labels.size()) != b)
    throw ShapeError("loss: " + std::to_string(labels.size()) + " labels for images " +
                     shape_str(images.shape()));
  // M paths per image: image i's m-th at row i · M + m.
  const int64_t M = policy.samples, n = b * M;
  Tensor copies;  // the images repeated, when M > 1
  std::vector<int32_t> y = labels;
  if (M > 1) {
    const int64_t per = images.dim(1) * images.dim(2);
    copies = Tensor({n, images.dim(1), images.dim(2)});
    y.clear();
    for (int64_t i = 0; i < b; ++i)
      for (int64_t m = 0; m < M; ++m) {
        std::copy(images.data() + i * per, images.data() + (i + 1) * per,
                  copies.data() + (i * M + m) * per);
        y.push_back(labels[static_cast<size_t>(i)]);
      }
  }
  Out o = run(t, M > 1 ? copies : images, rng, fixed);
  Var ce = nn::cross_entropy(o.logits, y);
  const std::vector<int32_t> pred = rl::argmax_rows(o.logits.value());
  std::vector<float> reward(static_cast<size_t>(n));
  int64_t right = 0;
  const int64_t k = o.logits.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const size_t u = static_cast<size_t>(i);
    right += pred[u] == y[u];
    reward[u] = static_cast<float>(pred[u] == y[u]);
    if (policy.reward == "prob") {  // softmax of the row, at the label
      const float* row = o.logits.value().data() + i * k;
      const double mx = row[pred[u]];
      double z = 0.0;
      for (int64_t j = 0; j < k; ++j) z += std::exp(static_cast<double>(row[j]) - mx);
      reward[u] = static_cast<float>(std::exp(static_cast<double>(row[y[u]]) - mx) / z);
    }
  }
  if (stats) {
    stats->paths = n, stats->correct = right, stats->means = 0, stats->saturated = 0;
    for (const Tensor& mu : o.means) {
      stats->means += mu.size();
      for (int64_t i = 0; i < mu.size(); ++i) stats->saturated += std::fabs(mu[i]) > 0.9f;
    }
  }
  if (o.log_probs.empty()) return ce;
  const int64_t steps = static_cast<int64_t>(o.log_probs.size());
  // Rows step-major: step s of path r is row s·n + r.
  Var lp = ad::concat(o.log_probs, 0);
  std::vector<float> returns;
  returns.reserve(static_cast<size_t>(steps * n));
  for (int64_t s = 0; s < steps; ++s) returns.insert(returns.end(), reward.begin(), reward.end());
  rl::ReinforceOptions ro;
  ro.normalize_advantage = policy.normalize_advantage;
  Var policy_term, value_term;
  if (M > 1) {
    const std::vector<float> loo = rl::leave_one_out_baseline(reward, M);
    std::vector<float> base;
    base.reserve(returns.size());
    for (int64_t s = 0; s < steps; ++s) base.insert(base.end(), loo.begin(), loo.end());
    policy_term = rl::reinforce_loss(t, lp, returns, Var(), ro, Var(), base).policy;
  } else {
    const rl::PolicyLoss L = rl::reinforce_loss(t, lp, returns, ad::concat(o.baselines, 0), ro);
    policy_term = L.policy, value_term = L.value;
  }
  // The policy term is a mean over steps x paths: times the steps, a sum over the steps.
  Var total = ad::add(ce, ad::mul(policy_term, static_cast<float>(steps)));
  return value_term.valid() ? ad::add(total, value_term) : total;
}

Tensor ram_predict(const Ram& m, const Tensor& images, int64_t samples, uint64_t seed, int threads,
                   RamTrace* trace, bool keep_patches) {
  if (samples < 1) throw UsageError("samples must be >= 1");
  const RamConfig& c = m.config();
  if (images.rank() != 3 || images.dim(1) != c.height || images.dim(2) != c.width)
    throw ShapeError("the model reads images of " + std::to_string(c.height) + " x " +
                     std::to_string(c.width) + " pixels, not " + shape_str(images.shape()));
  const int64_t n = images.dim(0), per = c.height * c.width, k = c.classes;
  constexpr int64_t kBatch = 100;
  const int64_t nb = (n + kBatch - 1) / kBatch;
  Tensor probs({n, k}, 0.0f);
  std::vector<RamTrace> traces(static_cast<size_t>(trace ? nb : 0));
  parallel_for(
      nb,
      [&](int64_t b0, int64_t b1) {
        Tape t;
        t.set_recording(false);  // inference: no backward closures
        for (int64_t bi = b0; bi < b1; ++bi) {
          const int64_t lo = bi * kBatch, hi = std::min(n, lo + kBatch), rows = hi - lo;
          Tensor x({rows, c.height, c.width});
          std::copy(images.data() + lo * per, images.data() + hi * per, x.data());
          Rng rng(seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(bi + 1)));
          for (int64_t s = 0; s < samples; ++s) {
            t.clear();
            RamTrace* tr = trace && s == 0 ? &traces[static_cast<size_t>(bi)] : nullptr;
            const Var p = ad::softmax(m.run(t, x, rng, nullptr, tr, keep_patches).logits);
            const float* pv = p.value().data();
            float* o = probs.data() + lo * k;
            for (int64_t i = 0; i < rows * k; ++i) o[i] += pv[i] / static_cast<float>(samples);
          }
        }
      },
      threads);
  if (trace) {
    trace->locations.clear(), trace->patches.clear();
    for (int64_t g = 0; g < c.glimpses; ++g) {
      Tensor l({n, 2});
      Tensor p;
      if (keep_patches) p = Tensor({n, c.glimpse.scales, c.glimpse.size, c.glimpse.size});
      const int64_t pp = c.glimpse.features();
      for (int64_t bi = 0; bi < nb; ++bi) {
        const int64_t lo = bi * kBatch;
        const RamTrace& tr = traces[static_cast<size_t>(bi)];
        const Tensor& src = tr.locations[static_cast<size_t>(g)];
        std::copy(src.data(), src.data() + src.size(), l.data() + lo * 2);
        if (keep_patches) {
          const Tensor& ps = tr.patches[static_cast<size_t>(g)];
          std::copy(ps.data(), ps.data() + ps.size(), p.data() + lo * pp);
        }
      }
      trace->locations.push_back(std::move(l));
      if (keep_patches) trace->patches.push_back(std::move(p));
    }
  }
  return probs;
}

double ram_error(const Tensor& probs, const std::vector<int32_t>& labels) {
  if (probs.rank() != 2 || probs.dim(0) != static_cast<int64_t>(labels.size()))
    throw ShapeError("ram_error: probabilities " + shape_str(probs.shape()) + " for " +
                     std::to_string(labels.size()) + " labels");
  if (labels.empty()) return 0.0;
  const std::vector<int32_t> pred = rl::argmax_rows(probs);
  int64_t wrong = 0;
  for (size_t i = 0; i < labels.size(); ++i) wrong += pred[i] != labels[i];
  return static_cast<double>(wrong) / static_cast<double>(labels.size());
}

// ---- training

RamTraining::RamTraining(RamConfig config, RamTrainOptions o, ImageSet train, ImageSet valid,
                         int64_t steps_or_0, int64_t epochs, uint64_t seed, std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      cfg_(std::move(config)),
      o_(std::move(o)),
      train_(std::move(train)),
      valid_(std::move(valid)) {
  if (train_.size() < 1) throw DataError("no training images");
  cfg_.height = train_.images.dim(1), cfg_.width = train_.images.dim(2);
  int32_t top = 0;
  for (int32_t y : train_.labels) top = std::max(top, y);
  for (int32_t y : valid_.labels) top = std::max(top, y);
  cfg_.classes = std::max<int64_t>(2, top + 1);
  if (valid_.size() > 0 &&
      (valid_.images.dim(1) != cfg_.height || valid_.images.dim(2) != cfg_.width))
    throw DataError("the validation images are " + shape_str(valid_.images.shape()) +
                    ", the training images " + shape_str(train_.images.shape()));
  cfg_.validate();
  o_.validate();
  set_run(train_.size(), steps_or_0, epochs);
  Rng init(seed);
  model_ = std::make_unique<Ram>(ps_, cfg_, init);
  use_adam(o_.lr, o_.schedule, o_.warmup);
  if (o_.loc_lr > 0)
    for (const char* p : {"ram.locator.W", "ram.locator.b"})
      opt_->set_lr_scale(&ps_.get(p), o_.loc_lr / o_.lr);
}

void RamTraining::describe(nn::ModelFile& f) const {
  DatasetModule::describe(f);
  f.set_arch("height", cfg_.height);
  f.set_arch("width", cfg_.width);
  f.set_arch("classes", cfg_.classes);
}

void RamTraining::check_resume(const nn::ModelFile& ck) const {
  if (ck.arch("height", 1, 4096, "ram/height") != cfg_.height ||
      ck.arch("width", 1, 4096, "ram/width") != cfg_.width ||
      ck.arch("classes", 2, 1000, "ram/classes") != cfg_.classes)
    throw DataError("the checkpoint was trained on images of another size or class count", ck.file);
}

train::Slice RamTraining::forward(Tape& t, int64_t begin, int64_t end, int) const {
  const int64_t per = cfg_.height * cfg_.width, rows = end - begin;
  Tensor x({rows, cfg_.height, cfg_.width});
  std::vector<int32_t> y;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = batch()[static_cast<size_t>(begin + i)];
    std::copy(train_.images.data() + j * per, train_.images.data() + (j + 1) * per,
              x.data() + i * per);
    y.push_back(train_.labels[static_cast<size_t>(j)]);
  }
  RamLossStats st;
  train::Slice s;
  s.loss = model_->loss(t, x, y, t.rng(), o_.policy, &st);
  s.weight = static_cast<double>(rows);
  s.sums = {static_cast<double>(st.correct), static_cast<double>(st.paths),
            static_cast<double>(st.saturated), static_cast<double>(st.means)};
  return s;
}

train::StepEnd RamTraining::end_step(const nn::TrainState& s, double, const train::Metrics& sums) {
  epoch_end_ = s.position + 1 >= batches_per_epoch();  // s is the step's, before it advances
  train::StepEnd e;
  const Tensor& w = ps_.get("ram.locator.W").value;
  double ss = 0.0;
  for (int64_t i = 0; i < w.size(); ++i) ss += static_cast<double>(w[i]) * w[i];
  e.metrics = {{"reward", sums[0].second / std::max(sums[1].second, 1.0)},
               {"saturated", sums[2].second / std::max(sums[3].second, 1.0)},
               {"loc_norm", std::sqrt(ss)}};
  return e;
}

std::vector<std::string> RamTraining::eval_metrics() const {
  if (valid_.size() == 0) return {};
  return {"valid_error"};
}

train::Metrics RamTraining::evaluate() {
  if (valid_.size() == 0) return {};
  const double error =
      ram_error(ram_predict(*model_, valid_.images, o_.eval_samples, 0xE7A1ULL, 0), valid_.labels);
  last_error_ = error;
  have_eval_ = true;
  // A candidate at an epoch's end (the last step is weighed in finish(), not kept here: a
  // run stopped there and resumed must end as the run never stopped).
  if (epoch_end_) best_.offer(error, ps_);
  return evaluated({{"valid_error", error}}, error);
}

double RamTraining::score() {
  if (valid_.size() == 0) return 0.0;
  if (!have_eval_) evaluate();
  return best_.better(last_error_);
}

void RamTraining::finish(nn::ModelFile& f) {
  if (valid_.size() == 0) return;
  if (!have_eval_) evaluate();
  best_.finish(f, last_error_);
}

void RamTraining::save_state(nn::ModelFile& f) const { best_.save_state(f); }

void RamTraining::load_state(const nn::ModelFile& f) { best_.load_state(f, ps_); }

LoadedRam load_ram(const std::string& path) {
  LoadedRam m;
  m.file = nn::load_model_file(path, "ram");
  train::in_file(path, [&] {
    RamConfig& r = m.config;
    train::read_config(m.file, r);
    r.height = m.file.arch("height", 1, 4096, "ram/height");
    r.width = m.file.arch("width", 1, 4096, "ram/width");
    r.classes = m.file.arch("classes", 2, 1000, "ram/classes");
    io::check_stored([&] { r.validate(); }, path);
    m.model = train::build<Ram>(m.file, m.params, m.config);
  });
  return m;
}

std::string ram_trace_tsv(const RamConfig& c, const RamTrace& trace) {
  std::string s = "image\tglimpse\tx\ty";
  for (int64_t j = 0; j < c.glimpse.scales; ++j) {
    const std::string n = std::to_string(j + 1);
    s += "\ttop" + n + "\tleft" + n + "\tside" + n;
  }
  s += "\n";
  if (trace.locations.empty()) return s;
  const int64_t n = trace.locations[0].dim(0);
  char buf[96];
  for (int64_t i = 0; i < n; ++i)
    for (size_t g = 0; g < trace.locations.size(); ++g) {
      const float x = trace.locations[g][2 * i], y = trace.locations[g][2 * i + 1];
      std::snprintf(buf, sizeof buf, "%lld\t%zu\t%.4f\t%.4f", static_cast<long long>(i + 1), g + 1,
                    static_cast<double>(x), static_cast<double>(y));
      s += buf;
      for (int64_t j = 0; j < c.glimpse.scales; ++j) {
        const vision::PatchBox b = vision::glimpse_box(x, y, c.height, c.width, c.glimpse, j);
        std::snprintf(buf, sizeof buf, "\t%lld\t%lld\t%lld", static_cast<long long>(b.top),
                      static_cast<long long>(b.left), static_cast<long long>(b.side));
        s += buf;
      }
      s += "\n";
    }
  return s;
}

}  // namespace attnkit::models
