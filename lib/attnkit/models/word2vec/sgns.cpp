#include "attnkit/models/word2vec/sgns.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"

namespace attnkit::models::word2vec {

namespace {

// log σ(x), without overflow for large |x|.
double log_sigmoid(double x) {
  return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

float dot(const float* a, const float* b, int64_t D) {
  float s = 0.0f;
  for (int64_t i = 0; i < D; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

void Word2VecConfig::validate() const {
  if (embed < 1) throw UsageError("--embed must be at least 1");
  if (window < 1) throw UsageError("--window must be at least 1");
  if (negative < 1) throw UsageError("--negative must be at least 1");
  if (min_freq < 1) throw UsageError("--min-freq must be at least 1");
  if (epochs < 1) throw UsageError("--epochs must be at least 1");
  if (!(lr > 0) || !std::isfinite(lr)) throw UsageError("--lr must be a positive number");
  if (!(subsample >= 0) || !std::isfinite(subsample))
    throw UsageError("--subsample must be 0 or a positive number");
}

double sgns_loss(const float* in, const float* const* rows, int64_t n, int64_t D, float* g_in,
                 float* g_rows) {
  double loss = 0.0;
  if (g_in) std::fill(g_in, g_in + D, 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    const double x = dot(in, rows[j], D);
    const double y = j == 0 ? 1.0 : 0.0;
    loss -= j == 0 ? log_sigmoid(x) : log_sigmoid(-x);
    const auto g = static_cast<float>(sigmoid(x) - y);  // dL/dx
    if (g_in)
      for (int64_t i = 0; i < D; ++i) g_in[i] += g * rows[j][i];
    if (g_rows)
      for (int64_t i = 0; i < D; ++i) g_rows[j * D + i] = g * in[i];
  }
  return loss;
}

double sgns_step(float* in, float* const* rows, int64_t n, int64_t D, float lr, float* scratch) {
  double loss = 0.0;
  std::fill(scratch, scratch + D, 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    float* r = rows[j];
    const double x = dot(in, r, D);
    loss -= j == 0 ? log_sigmoid(x) : log_sigmoid(-x);
    const auto g = static_cast<float>(sigmoid(x) - (j == 0 ? 1.0 : 0.0));
    for (int64_t i = 0; i < D; ++i) scratch[i] += g * r[i];
    for (int64_t i = 0; i < D; ++i) r[i] -= lr * (g * in[i]);
  }
  for (int64_t i = 0; i < D; ++i) in[i] -= lr * scratch[i];
  return loss;
}

Vectors train(const Word2VecConfig& c, const std::vector<std::vector<std::string>>& sentences,
              uint64_t seed, const Progress& progress) {
  c.validate();
  // The vocabulary: words seen min_freq times or more, by descending count, ties in bytes.
  std::map<std::string, int64_t> counts;
  for (const auto& s : sentences)
    for (const auto& w : s) ++counts[w];
  std::vector<std::pair<std::string, int64_t>> kept;
  for (auto& [w, n] : counts)
    if (n >= c.min_freq) kept.emplace_back(w, n);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (kept.size() < 2)
    throw UsageError("the text has " + std::to_string(kept.size()) +
                     " distinct words seen --min-freq times or more: at least 2 are needed");
  Vectors v;
  v.dim = c.embed;
  std::map<std::string, int32_t> id;
  for (const auto& [w, n] : kept) {
    id.emplace(w, static_cast<int32_t>(v.words.size()));
    v.words.push_back(w), v.counts.push_back(n);
  }
  const auto V = static_cast<int64_t>(v.words.size());
  const int64_t D = c.embed;
  // The text as ids, words outside the vocabulary dropped; empty sentences left out.
  std::vector<std::vector<int32_t>> text;
  int64_t tokens = 0;
  for (const auto& s : sentences) {
    std::vector<int32_t> ids;
    for (const auto& w : s) {
      auto it = id.find(w);
      if (it != id.end()) ids.push_back(it->second);
    }
    tokens += static_cast<int64_t>(ids.size());
    if (!ids.empty()) text.push_back(std::move(ids));
  }
  // Keep probabilities (word2vec.c's formula) and the noise distribution's cumulative weights.
  std::vector<double> keep(static_cast<size_t>(V), 1.0), cumulative(static_cast<size_t>(V));
  double acc = 0.0;
  for (int64_t w = 0; w < V; ++w) {
    const auto n = static_cast<double>(v.counts[static_cast<size_t>(w)]);
    if (c.subsample > 0) {
      const double t = c.subsample * static_cast<double>(tokens);
      keep[static_cast<size_t>(w)] = std::min(1.0, (std::sqrt(n / t) + 1.0) * t / n);
    }
    acc += std::pow(n, 0.75);
    cumulative[static_cast<size_t>(w)] = acc;
  }
  Rng rng(seed);
  v.input.resize(static_cast<size_t>(V * D));
  for (auto& x : v.input) x = (rng.uniform() - 0.5f) / static_cast<float>(D);
  std::vector<float> output(static_cast<size_t>(V * D), 0.0f), scratch(static_cast<size_t>(D));
  std::vector<float*> rows(static_cast<size_t>(c.negative + 1));
  const int64_t total = tokens * c.epochs;
  int64_t done = 0, pairs = 0;
  double loss_sum = 0.0;
  std::vector<int32_t> sent;
  for (int64_t epoch = 0; epoch < c.epochs; ++epoch) {
    for (const auto& s : text) {
      sent.clear();
      for (int32_t w : s)
        if (keep[static_cast<size_t>(w)] >= 1.0 ||
            rng.uniform_double() < keep[static_cast<size_t>(w)])
          sent.push_back(w);
      const double rate =
          c.lr * std::max(1e-4, 1.0 - static_cast<double>(done) / static_cast<double>(total + 1));
      const auto lr = static_cast<float>(rate);
      const auto len = static_cast<int64_t>(sent.size());
      for (int64_t p = 0; p < len; ++p) {
        const int32_t centre = sent[static_cast<size_t>(p)];
        const auto b = static_cast<int64_t>(1 + rng.below(static_cast<uint64_t>(c.window)));
        for (int64_t q = std::max<int64_t>(0, p - b); q <= std::min(len - 1, p + b); ++q) {
          if (q == p) continue;
          const int32_t ctx = sent[static_cast<size_t>(q)];
          int64_t n = 0;
          rows[static_cast<size_t>(n++)] = output.data() + static_cast<int64_t>(centre) * D;
          for (int64_t k = 0; k < c.negative; ++k) {
            const double u = rng.uniform_double() * acc;
            auto w = static_cast<int32_t>(
                std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
            w = std::min<int32_t>(w, static_cast<int32_t>(V - 1));
            if (w == centre) continue;  // as word2vec.c: the pair loses that negative
            rows[static_cast<size_t>(n++)] = output.data() + static_cast<int64_t>(w) * D;
          }
          loss_sum += sgns_step(v.input.data() + static_cast<int64_t>(ctx) * D, rows.data(), n, D,
                                lr, scratch.data());
          ++pairs;
        }
      }
      done += static_cast<int64_t>(s.size());
      if (progress && (pairs >= 20000 || done == total)) {
        progress(done, total, pairs ? loss_sum / static_cast<double>(pairs) : 0.0);
        loss_sum = 0.0, pairs = 0;
      }
    }
  }
  if (progress && pairs) progress(done, total, loss_sum / static_cast<double>(pairs));
  return v;
}

std::string format_vectors(const Vectors& v) {
  std::string out = std::to_string(v.words.size()) + " " + std::to_string(v.dim) + "\n";
  char buf[32];
  for (size_t w = 0; w < v.words.size(); ++w) {
    out += v.words[w];
    for (int64_t i = 0; i < v.dim; ++i) {
      std::snprintf(buf, sizeof buf, " %.6g", static_cast<double>(v.input[w * v.dim + i]));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

std::vector<std::string> nearest(const Vectors& v, const std::string& word, int64_t k) {
  const auto it = std::find(v.words.begin(), v.words.end(), word);
  if (it == v.words.end()) return {};
  const auto W = static_cast<int64_t>(v.words.size());
  const int64_t a = it - v.words.begin(), D = v.dim;
  auto norm = [&](int64_t w) {
    const float* x = v.input.data() + w * D;
    return std::sqrt(static_cast<double>(dot(x, x, D)));
  };
  std::vector<std::pair<double, int64_t>> sims;
  const double na = norm(a);
  for (int64_t w = 0; w < W; ++w) {
    if (w == a) continue;
    const double d = dot(v.input.data() + a * D, v.input.data() + w * D, D);
    sims.emplace_back(-d / (na * norm(w) + 1e-30), w);
  }
  const auto m = static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(sims.size())));
  std::partial_sort(sims.begin(), sims.begin() + static_cast<std::ptrdiff_t>(m), sims.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < m; ++i) out.push_back(v.words[static_cast<size_t>(sims[i].second)]);
  return out;
}

}  // namespace attnkit::models::word2vec
