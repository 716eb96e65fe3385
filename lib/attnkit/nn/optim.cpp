#include "attnkit/nn/optim.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"
#include "attnkit/core/parallel.h"
#include "attnkit/nn/params.h"

namespace attnkit::nn {

double Schedule::factor(int64_t step) const {
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  if (warmup > 0 && step < warmup) return s / static_cast<double>(warmup);
  switch (kind) {
    case Kind::Constant:
      return 1.0;
    case Kind::InverseSqrt:
      return warmup > 0 ? std::sqrt(static_cast<double>(warmup) / s) : 1.0 / std::sqrt(s);
    case Kind::Step:
      return std::pow(gamma, std::floor(s / static_cast<double>(std::max<int64_t>(step_size, 1))));
    case Kind::Cosine: {
      const double span = static_cast<double>(std::max<int64_t>(total - warmup, 1));
      const double p = std::clamp((s - static_cast<double>(warmup)) / span, 0.0, 1.0);
      return 0.5 * (1.0 + std::cos(3.14159265358979323846 * p));
    }
  }
  return 1.0;
}

void check_schedule_name(const std::string& name) {
  if (name != "constant" && name != "inverse-sqrt" && name != "cosine")
    throw ChoiceError("schedule", name, {"constant", "inverse-sqrt", "cosine"});
}

Schedule parse_schedule(const std::string& name, int64_t warmup, int64_t total) {
  check_schedule_name(name);
  if (warmup < 0) throw UsageError("warmup must be >= 0");
  Schedule s;
  s.warmup = warmup;
  s.total = total;
  s.kind = name == "inverse-sqrt" ? Schedule::Kind::InverseSqrt
           : name == "cosine"     ? Schedule::Kind::Cosine
                                  : Schedule::Kind::Constant;
  return s;
}

Optimizer::Optimizer(std::vector<ad::Parameter*> params, double lr, Schedule schedule)
    : params_(std::move(params)), lr_(lr), schedule_(schedule), lr_scale_(params_.size(), 1.0) {
  if (!(lr >= 0.0) || !std::isfinite(lr)) throw UsageError("learning rate must be >= 0");
}

void Optimizer::set_lr_scale(const ad::Parameter* p, double scale) {
  if (!(scale >= 0.0) || !std::isfinite(scale))
    throw UsageError("a learning-rate scale must be >= 0 and finite");
  for (size_t k = 0; k < params_.size(); ++k)
    if (params_[k] == p) {
      lr_scale_[k] = scale;
      return;
    }
  throw UsageError("set_lr_scale: '" + (p ? p->name : std::string("null")) +
                   "' is not a parameter of this optimiser");
}

void Optimizer::init_state(std::vector<std::string> slots) {
  slots_ = std::move(slots);
  state_.clear();
  state_.resize(params_.size());
  for (size_t k = 0; k < params_.size(); ++k)
    for (size_t i = 0; i < slots_.size(); ++i) state_[k].emplace_back(params_[k]->value.shape());
}

void Optimizer::init_state(int n) {
  std::vector<std::string> slots;
  for (int i = 0; i < n; ++i) slots.push_back(std::to_string(i));
  init_state(std::move(slots));
}

OptimizerState Optimizer::state() const {
  OptimizerState s;
  s.steps = steps_;
  s.lr = lr_;
  for (size_t k = 0; k < state_.size(); ++k)
    for (size_t i = 0; i < slots_.size(); ++i) {
      const std::string key = params_[k]->name + "/" + slots_[i];
      if (!s.buffers.emplace(key, state_[k][i].clone()).second)
        throw Error("two optimised parameters are both named '" + params_[k]->name + "'");
    }
  return s;
}

void Optimizer::load_state(const OptimizerState& s) {
  if (s.steps < 0) throw DataError("optimiser state has a negative step count");
  if (!(s.lr >= 0.0) || !std::isfinite(s.lr))
    throw DataError("optimiser state has a bad learning rate");
  size_t expected = 0;
  for (size_t k = 0; k < state_.size(); ++k)
    for (size_t i = 0; i < slots_.size(); ++i, ++expected) {
      const std::string key = params_[k]->name + "/" + slots_[i];
      auto it = s.buffers.find(key);
      if (it == s.buffers.end()) throw DataError("optimiser state has no buffer '" + key + "'");
      if (it->second.shape() != state_[k][i].shape())
        throw DataError("optimiser buffer '" + key + "' has shape " +
                        shape_str(it->second.shape()) + " but its parameter has " +
                        shape_str(state_[k][i].shape()));
    }
  if (s.buffers.size() != expected) {
    for (const auto& [key, t] : s.buffers) {
      bool known = false;
      for (size_t k = 0; k < state_.size() && !known; ++k)
        for (size_t i = 0; i < slots_.size() && !known; ++i)
          known = key == params_[k]->name + "/" + slots_[i];
      if (!known)
        throw DataError("optimiser state has a buffer '" + key +
                        "' that this optimiser does not use");
    }
  }
  for (size_t k = 0; k < state_.size(); ++k)
    for (size_t i = 0; i < slots_.size(); ++i)
      state_[k][i] = s.buffers.at(params_[k]->name + "/" + slots_[i]).clone();
  steps_ = s.steps;
  lr_ = s.lr;
}

void Optimizer::step() {
  for (const ad::Parameter* p : params_)
    if (p->grad.shape() != p->value.shape())
      throw ShapeError("parameter '" + p->name + "' has gradient " + shape_str(p->grad.shape()) +
                       " for value " + shape_str(p->value.shape()));
  ++steps_;
  const double lr = lr_ * schedule_.factor(steps_);
  for_param_blocks(params_, [&](size_t k, int64_t begin, int64_t end) {
    // copies: see ad::Parameter
    update(k, lr * params_[k]->copies * lr_scale_[k], steps_, begin, end);
  });
}

void Optimizer::zero_grad() {
  for (ad::Parameter* p : params_)  // a value replaced by one of another shape: a new gradient
    if (p->grad.shape() != p->value.shape()) p->grad = Tensor(p->value.shape());
  for_param_blocks(params_, [&](size_t k, int64_t begin, int64_t end) {
    float* g = params_[k]->grad.data();
    std::fill(g + begin, g + end, 0.0f);
  });
}

SGD::SGD(std::vector<ad::Parameter*> params, double lr, double momentum, bool nesterov,
         double weight_decay, Schedule schedule)
    : Optimizer(std::move(params), lr, schedule),
      momentum_(momentum),
      weight_decay_(weight_decay),
      nesterov_(nesterov) {
  if (momentum_ != 0.0) init_state({"momentum"});
}

void SGD::update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) {
  ad::Parameter& p = *params_[k];
  const int64_t n = end - begin;
  float* w = p.value.data() + begin;
  const float* g = p.grad.data() + begin;
  const float flr = static_cast<float>(lr), wd = static_cast<float>(weight_decay_);
  if (momentum_ == 0.0) {
    for (int64_t i = 0; i < n; ++i) w[i] -= flr * (g[i] + wd * w[i]);
    return;
  }
  float* v = state_[k][0].data() + begin;
  const float mu = static_cast<float>(momentum_);
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    v[i] = step == 1 ? gi : mu * v[i] + gi;  // PyTorch: the first step sets v = g
    w[i] -= flr * (nesterov_ ? gi + mu * v[i] : v[i]);
  }
}

namespace {
// The Adam update of n weights. v >= 0, so the square root never sets errno: telling the
// compiler so lets it vectorise the loop (with errno semantics it calls sqrtf per element).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-math-errno")))
#endif
void adam_loop(int64_t n, float* __restrict w, const float* __restrict g, float* __restrict m,
               float* __restrict v, float b1, float b2, float step_size, float inv_sqrt_c2,
               float eps, float wd) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    m[i] = b1 * m[i] + (1.0f - b1) * gi;
    v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    // the builtin, not std::sqrt: an inline function from <cmath> would not inherit the
    // attribute (GCC does not inline across different optimisation options)
    w[i] -= step_size * m[i] / (__builtin_sqrtf(v[i]) * inv_sqrt_c2 + eps);
  }
}

}  // namespace

Adam::Adam(std::vector<ad::Parameter*> params, double lr, double beta1, double beta2, double eps,
           double weight_decay, Schedule schedule)
    : Optimizer(std::move(params), lr, schedule),
      b1_(beta1),
      b2_(beta2),
      eps_(eps),
      wd_(weight_decay) {
  init_state({"m", "v"});
}

void Adam::update(size_t k, double lr, int64_t step, int64_t begin, int64_t end) {
  ad::Parameter& p = *params_[k];
  const int64_t n = end - begin;
  float* w = p.value.data() + begin;
  const float* g = p.grad.data() + begin;
  float* m = state_[k][0].data() + begin;
  float* v = state_[k][1].data() + begin;
  const float b1 = static_cast<float>(b1_), b2 = static_cast<float>(b2_);
  const double c1 = 1.0 - std::pow(b1_, static_cast<double>(step));
  const double c2 = 1.0 - std::pow(b2_, static_cast<double>(step));
  const float step_size = static_cast<float>(lr / c1);
  const float inv_sqrt_c2 = static_cast<float>(1.0 / std::sqrt(c2));
  const float eps = static_cast<float>(eps_), wd = static_cast<float>(wd_);
  adam_loop(n, w, g, m, v, b1, b2, step_size, inv_sqrt_c2, eps, wd);
}

RMSProp::RMSProp(std::vector<ad::Parameter*> params, double lr, double decay, double momentum,
                 double eps, bool centered, Schedule schedule)
    : Optimizer(std::move(params), lr, schedule),
      rho_(decay),
      mu_(momentum),
      eps_(eps),
      centered_(centered) {
  init_state({"n", "g", "delta"});  // n, ḡ, Δ
}

void RMSProp::update(size_t k, double lr, int64_t, int64_t begin, int64_t end) {
  ad::Parameter& p = *params_[k];
  const int64_t n = end - begin;
  float* w = p.value.data() + begin;
  const float* g = p.grad.data() + begin;
  float* sq = state_[k][0].data() + begin;
  float* mg = state_[k][1].data() + begin;
  float* d = state_[k][2].data() + begin;
  const float rho = static_cast<float>(rho_), mu = static_cast<float>(mu_);
  const float eps = static_cast<float>(eps_), flr = static_cast<float>(lr);
  for (int64_t i = 0; i < n; ++i) {
    sq[i] = rho * sq[i] + (1.0f - rho) * g[i] * g[i];
    float var = sq[i];
    if (centered_) {
      mg[i] = rho * mg[i] + (1.0f - rho) * g[i];
      var -= mg[i] * mg[i];
    }
    d[i] = mu * d[i] - flr * g[i] / std::sqrt(std::max(var, 0.0f) + eps);
    w[i] += d[i];
  }
}

double grad_norm(const std::vector<ad::Parameter*>& params) {
  // Each parameter's sum of squares whole (on up to max_threads() threads for a large model,
  // as for_param_blocks), then added in parameter order: the same bits for any thread count.
  std::vector<double> dots(params.size());
  int64_t total = 0;
  for (const ad::Parameter* p : params) total += p->grad.size();
  parallel_for(
      static_cast<int64_t>(params.size()),
      [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          const ad::Parameter* p = params[static_cast<size_t>(k)];
          dots[static_cast<size_t>(k)] =
              fastmath::lane_dot_double(p->grad.data(), p->grad.data(), p->grad.size());
        }
      },
      total >= kParallelParams ? 0 : 1);
  double s = 0.0;
  for (size_t k = 0; k < params.size(); ++k) s += params[k]->copies * dots[k];
  return std::sqrt(s);
}

double clip_grad_norm(const std::vector<ad::Parameter*>& params, double max_norm) {
  const double norm = grad_norm(params);
  if (norm > max_norm && norm > 0.0) {
    const float scale = static_cast<float>(max_norm / norm);
    for_param_blocks(params, [&](size_t k, int64_t begin, int64_t end) {
      float* g = params[k]->grad.data();
      for (int64_t i = begin; i < end; ++i) g[i] *= scale;
    });
  }
  return norm;
}

double clip_grad_spectral(const std::vector<ad::Parameter*>& params, double max_norm) {
  if (params.empty()) return 0.0;
  auto cols_of = [](const ad::Parameter* p) {
    const Tensor& g = p->grad;
    return g.rank() == 0 ? int64_t{1} : g.dim(g.rank() - 1);
  };
  const int64_t n = cols_of(params[0]);
  // S = Σ Gᵀ G (n x n); σ² is its largest eigenvalue
  std::vector<double> S(static_cast<size_t>(n * n), 0.0);
  for (const ad::Parameter* p : params) {
    if (cols_of(p) != n)
      throw ShapeError("clip_grad_spectral: " + p->name + " has " + std::to_string(cols_of(p)) +
                       " columns, expected " + std::to_string(n));
    const float* g = p->grad.data();
    const int64_t rows = p->grad.size() / std::max<int64_t>(n, 1);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = g + r * n;
      for (int64_t i = 0; i < n; ++i) {
        const double gi = row[i];
        if (gi == 0.0) continue;
        double* si = S.data() + i * n;
        for (int64_t j = i; j < n; ++j) si[j] += gi * row[j];  // the upper triangle
      }
    }
  }
  for (int64_t i = 0; i < n; ++i)  // the same products in the same order: S is symmetric
    for (int64_t j = 0; j < i; ++j)
      S[static_cast<size_t>(i * n + j)] = S[static_cast<size_t>(j * n + i)];
  // power iteration from a fixed start; the Rayleigh quotient converges as (λ2/λ1)^(2k)
  double trace = 0.0;
  for (int64_t i = 0; i < n; ++i) trace += S[static_cast<size_t>(i * n + i)];
  if (!(trace > 0.0)) return 0.0;
  std::vector<double> v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 1.0 + 1e-3 * static_cast<double>(i);
  double lambda = 0.0;
  for (int it = 0; it < 1000; ++it) {
    double vv = 0.0, vw = 0.0, ww = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      const double* si = S.data() + i * n;
      for (int64_t j = 0; j < n; ++j) s += si[j] * v[static_cast<size_t>(j)];
      w[static_cast<size_t>(i)] = s;
      vv += v[static_cast<size_t>(i)] * v[static_cast<size_t>(i)];
      vw += v[static_cast<size_t>(i)] * s;
      ww += s * s;
    }
    const double next = vw / vv;
    if (!(ww > 0.0)) break;
    const double inv = 1.0 / std::sqrt(ww);
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = w[static_cast<size_t>(i)] * inv;
    const bool done = it > 0 && std::abs(next - lambda) <= 1e-12 * next;
    lambda = next;
    if (done) break;
  }
  const double sigma = std::sqrt(std::max(lambda, 0.0));
  if (sigma > max_norm && sigma > 0.0) {
    const float scale = static_cast<float>(max_norm / sigma);
    for (ad::Parameter* p : params)
      for (float& x : p->grad.values()) x *= scale;
  }
  return sigma;
}

void clip_grad_value(const std::vector<ad::Parameter*>& params, double value) {
  const float c = static_cast<float>(value);
  for (ad::Parameter* p : params)
    for (float& v : p->grad.values()) v = std::min(c, std::max(-c, v));
}

}  // namespace attnkit::nn
