#include "attnkit/rl/reinforce.h"

#include <cmath>
#include <string>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"

namespace attnkit::rl {

namespace {

// [rows, cols] of a rank-1 (one row) or rank-2 tensor.
std::pair<int64_t, int64_t> rows_cols(const Shape& s, const char* what) {
  if (s.size() == 1) return {1, s[0]};
  if (s.size() == 2) return {s[0], s[1]};
  throw ShapeError(std::string(what) + " must be [N, K] (or [K]), not " + shape_str(s));
}

}  // namespace

std::vector<int32_t> sample_categorical(const Tensor& logits, Rng& rng) {
  const auto [n, k] = rows_cols(logits.shape(), "logits");
  if (k < 1) throw ShapeError("logits need at least one column");
  std::vector<int32_t> out(static_cast<size_t>(n));
  std::vector<double> p(static_cast<size_t>(k));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * k;
    double mx = row[0];
    for (int64_t j = 1; j < k; ++j) mx = std::max(mx, static_cast<double>(row[j]));
    double z = 0.0;
    for (int64_t j = 0; j < k; ++j) z += (p[j] = std::exp(row[j] - mx));
    const double u = rng.uniform_double() * z;
    double c = 0.0;
    int64_t a = k - 1;  // u < z always; the last index absorbs rounding
    for (int64_t j = 0; j < k; ++j) {
      c += p[j];
      if (u < c) {
        a = j;
        break;
      }
    }
    out[static_cast<size_t>(i)] = static_cast<int32_t>(a);
  }
  return out;
}

std::vector<int32_t> argmax_rows(const Tensor& logits) {
  const auto [n, k] = rows_cols(logits.shape(), "logits");
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * k;
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (row[j] > row[best]) best = j;
    out[static_cast<size_t>(i)] = static_cast<int32_t>(best);
  }
  return out;
}

Var categorical_log_prob(Var logits, const std::vector<int32_t>& actions) {
  const auto [n, k] = rows_cols(logits.shape(), "logits");
  if (static_cast<int64_t>(actions.size()) != n)
    throw ShapeError("categorical_log_prob: " + std::to_string(actions.size()) + " actions for " +
                     std::to_string(n) + " rows");
  Tensor onehot({n, k}, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t a = actions[static_cast<size_t>(i)];
    if (a < 0 || a >= k)
      throw UsageError("action " + std::to_string(a) + " is out of range [0, " + std::to_string(k) +
                       ")");
    onehot.at(i, a) = 1.0f;
  }
  Tape& t = logits.tape();
  Var lp = ad::log_softmax(ad::reshape(logits, {n, k}));
  return ad::sum_last(ad::mul(lp, t.constant(std::move(onehot))));
}

Var categorical_entropy(Var logits) {
  const auto [n, k] = rows_cols(logits.shape(), "logits");
  Var x = ad::reshape(logits, {n, k});
  return ad::neg(ad::sum_last(ad::mul(ad::softmax(x), ad::log_softmax(x))));
}

Var gaussian_log_prob(Var mean, const Tensor& actions, float stddev) {
  if (!(stddev > 0.0f)) throw UsageError("the policy's standard deviation must be > 0");
  if (actions.shape() != mean.shape())
    throw ShapeError("gaussian_log_prob: actions " + shape_str(actions.shape()) + " vs mean " +
                     shape_str(mean.shape()));
  const auto [n, d] = rows_cols(mean.shape(), "mean");
  Tape& t = mean.tape();
  Tensor a = actions.clone();
  a.reshape({n, d});
  Var diff = ad::sub(ad::reshape(mean, {n, d}), t.constant(std::move(a)));
  const double c =
      static_cast<double>(d) * (std::log(static_cast<double>(stddev)) + 0.5 * std::log(2.0 * M_PI));
  Var q = ad::mul(ad::sum_last(ad::square(diff)), -0.5f / (stddev * stddev));
  return ad::add(q, static_cast<float>(-c));
}

Tensor sample_gaussian(const Tensor& mean, float stddev, Rng& rng) {
  Tensor out = mean.clone();
  for (int64_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(out[i] + static_cast<double>(stddev) * rng.normal());
  return out;
}

PolicyLoss reinforce_loss(Tape& t, Var log_probs, const std::vector<float>& returns, Var value,
                          const ReinforceOptions& options, Var entropy,
                          const std::vector<float>& fixed_baseline) {
  const int64_t n = log_probs.size();
  if (static_cast<int64_t>(returns.size()) != n)
    throw ShapeError("reinforce_loss: " + std::to_string(returns.size()) + " returns for " +
                     std::to_string(n) + " log-probabilities");
  if (value.valid() && value.size() != n)
    throw ShapeError("reinforce_loss: the value head gives " + std::to_string(value.size()) +
                     " predictions for " + std::to_string(n) + " rows");
  if (!value.valid() && !fixed_baseline.empty() && static_cast<int64_t>(fixed_baseline.size()) != n)
    throw ShapeError("reinforce_loss: " + std::to_string(fixed_baseline.size()) +
                     " baseline values for " + std::to_string(n) + " rows");
  PolicyLoss out;
  Tensor adv({n, 1});
  double sum_adv = 0.0, sum_ret = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double b = value.valid()            ? value.value()[i]
                     : fixed_baseline.empty() ? 0.0
                                              : fixed_baseline[i];
    adv[i] = static_cast<float>(returns[i] - b);
    sum_adv += adv[i];
    sum_ret += returns[i];
  }
  out.mean_advantage = n ? sum_adv / n : 0.0;
  out.mean_return = n ? sum_ret / n : 0.0;
  if (options.normalize_advantage && n > 1) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i)
      ss += (adv[i] - out.mean_advantage) * (adv[i] - out.mean_advantage);
    const double sd = std::sqrt(ss / n);
    for (int64_t i = 0; i < n; ++i)
      adv[i] = static_cast<float>((adv[i] - out.mean_advantage) / (sd + 1e-8));
  }
  const auto reduce = [&](Var x) {
    return options.rows == RowReduction::sum ? ad::sum(x) : ad::mean(x);
  };
  Var lp = ad::reshape(log_probs, {n, 1});
  out.policy = ad::neg(reduce(ad::mul(lp, t.constant(std::move(adv)))));
  out.total = options.policy_weight == 1.0
                  ? out.policy
                  : ad::mul(out.policy, static_cast<float>(options.policy_weight));
  if (value.valid()) {
    Tensor g({n, 1});
    for (int64_t i = 0; i < n; ++i) g[i] = returns[i];
    out.value = reduce(ad::square(ad::sub(ad::reshape(value, {n, 1}), t.constant(std::move(g)))));
    out.total = ad::add(out.total, ad::mul(out.value, static_cast<float>(options.value_weight)));
  }
  if (options.entropy != 0.0) {
    if (!entropy.valid()) throw UsageError("reinforce_loss: an entropy bonus needs the entropy");
    if (entropy.size() != n)
      throw ShapeError("reinforce_loss: " + std::to_string(entropy.size()) + " entropies for " +
                       std::to_string(n) + " rows");
    out.total = ad::sub(out.total, ad::mul(reduce(entropy), static_cast<float>(options.entropy)));
  }
  return out;
}

std::vector<float> leave_one_out_baseline(const std::vector<float>& returns, int64_t group) {
  if (group < 2) throw UsageError("a leave-one-out baseline needs groups of 2 or more samples");
  const int64_t n = static_cast<int64_t>(returns.size());
  if (n % group != 0)
    throw ShapeError("leave_one_out_baseline: " + std::to_string(n) +
                     " returns are not whole groups of " + std::to_string(group));
  std::vector<float> b(returns.size());
  for (int64_t g0 = 0; g0 < n; g0 += group) {
    double sum = 0.0;
    for (int64_t i = g0; i < g0 + group; ++i) sum += returns[static_cast<size_t>(i)];
    for (int64_t i = g0; i < g0 + group; ++i)
      b[static_cast<size_t>(i)] = static_cast<float>((sum - returns[static_cast<size_t>(i)]) /
                                                     static_cast<double>(group - 1));
  }
  return b;
}

void MovingAverageBaseline::update(double mean_return) {
  if (!started_) {
    value_ = mean_return;
    started_ = true;
  } else {
    value_ = decay_ * value_ + (1.0 - decay_) * mean_return;
  }
}

}  // namespace attnkit::rl
