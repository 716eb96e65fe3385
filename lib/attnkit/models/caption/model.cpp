#include "attnkit/models/caption/model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/data/text.h"
#include "attnkit/eval/bleu.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/load.h"

namespace attnkit::models {

using ad::Var;
using data::Vocab;

CaptionAttention parse_caption_attention(const std::string& name) {
  return parse_choice<CaptionAttention>("attention", name,
                                        {{"soft", CaptionAttention::Soft},
                                         {"none", CaptionAttention::None},
                                         {"hard", CaptionAttention::Hard}});
}

CaptionReward parse_caption_reward(const std::string& name) {
  return parse_choice<CaptionReward>("reward", name,
                                     {{"caption", CaptionReward::Caption},
                                      {"to-go", CaptionReward::ToGo},
                                      {"word", CaptionReward::Word}});
}

int64_t even_grid_pad(int64_t h, int64_t w, size_t blocks) {
  if (blocks == 0 || blocks > 16) return 0;
  const int64_t q = int64_t{2} << blocks;
  for (int64_t p = 0; p < q; ++p)
    if ((h + 2 * p) % q == 0 && (w + 2 * p) % q == 0) return p;
  return 0;
}

int64_t parse_caption_pad(const std::string& text, int64_t h, int64_t w, size_t blocks) {
  if (text == "auto") return even_grid_pad(h, w, blocks);
  int64_t v = 0;
  const char* e = text.data() + text.size();
  auto r = std::from_chars(text.data(), e, v);
  if (text.empty() || r.ec != std::errc() || r.ptr != e)
    throw UsageError("expected a whole number or auto, got '" + text + "'");
  return v;
}

void CaptionConfig::validate() const {
  kind();
  reward_kind();
  vision::CnnConfig cc;
  cc.channels = channels;
  cc.validate();
  if (embed < 1 || hidden < 1 || attn < 1)
    throw UsageError("embed, hidden and attention sizes must be >= 1");
  if (!(lambda >= 0.0) || !std::isfinite(lambda)) throw UsageError("lambda must be >= 0");
  if (max_len < 1 || max_len > 1000) throw UsageError("len-max must be in 1..1000");
  if (pad < 0 || pad > 256) throw UsageError("pad must be in 0..256");
  if (!(reinforce >= 0.0) || !std::isfinite(reinforce)) throw UsageError("reinforce must be >= 0");
  if (!(entropy >= 0.0) || !std::isfinite(entropy)) throw UsageError("entropy must be >= 0");
  if (!(sample_prob >= 0.0 && sample_prob <= 1.0))
    throw UsageError("sample-prob must be in [0, 1]");
  if (!(baseline_decay >= 0.0 && baseline_decay < 1.0))
    throw UsageError("baseline-decay must be in [0, 1)");
  if (sample_warmup < 0) throw UsageError("sample-warmup must be >= 0");
}

void CaptionTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch size must be >= 1");
  if (!(lr > 0)) throw UsageError("learning rate must be > 0");
  nn::check_schedule_name(schedule);
}

// ---- data

namespace {

// The pictures of `spec` (FILE, FILE.npz:NAME, or - for standard input), its bytes read once
// (a pipe cannot be read twice): an archive gives its only array or its 'images'.
Tensor read_images_once(const std::string& spec) {
  const auto [path, member] = io::split_member(spec);
  const std::string bytes = io::read_all(path);
  if (member.empty() &&
      io::detect_format(std::string_view(bytes).substr(0, 8)) == io::Format::Npz) {
    std::vector<io::NpzMember> all = io::parse_npz(bytes, path);
    if (all.size() == 1) return std::move(all.front().tensor);
    for (io::NpzMember& a : all)
      if (a.name == "images") return std::move(a.tensor);
    throw DataError("the archive holds no 'images' array (name one as FILE.npz:NAME)", path);
  }
  return io::parse_tensor(bytes, path, member);
}

}  // namespace

Tensor read_caption_images(const std::string& images) {
  const std::string path = io::split_member(images).first;
  Tensor x = read_images_once(images);
  if (x.rank() != 3 || x.dim(0) < 1)
    throw DataError("expected images [N, H, W], got " + shape_str(x.shape()), path);
  for (int64_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) throw DataError("the images hold a non-finite value", path);
  return x;
}

Tensor read_caption_input(const std::string& spec, bool invert) {
  const std::string path = io::split_member(spec).first;
  Tensor x = read_images_once(spec);
  if (x.rank() == 2) x.reshape({1, x.dim(0), x.dim(1)});
  if (x.rank() != 3 || x.dim(0) < 1)
    throw DataError("expected images [N, H, W] or one picture [H, W], got " + shape_str(x.shape()),
                    path);
  for (int64_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) throw DataError("the images hold a non-finite value", path);
    if (invert) {
      if (x[i] < 0.0f || x[i] > 1.0f)
        throw DataError("--invert needs values in [0, 1], found " + std::to_string(x[i]), path);
      x[i] = 1.0f - x[i];
    }
  }
  return x;
}

CaptionData read_caption_data(const std::string& images, const std::string& captions) {
  CaptionData d;
  d.images = read_caption_images(images);
  const std::string text = io::read_text(captions);
  const auto lines = data::split_lines(text, captions);
  long line = 0;
  bool any_cells = false;
  for (std::string_view l : lines) {
    ++line;
    const size_t tab = l.find('\t');
    const std::string_view cap = l.substr(0, tab);
    std::vector<std::string> words;
    for (std::string_view w : data::split_whitespace(cap)) words.emplace_back(w);
    if (words.empty()) throw DataError("empty caption", captions, line);
    std::vector<int32_t> cells;
    if (tab != std::string_view::npos) {
      std::string_view rest = l.substr(tab + 1);
      const size_t tab2 = rest.find('\t');
      rest = rest.substr(0, tab2);
      for (std::string_view f : data::split_whitespace(rest)) {
        const std::string s(f);
        size_t used = 0;
        long v = -9;
        try {
          v = std::stol(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != s.size() || v < -1 || v > 3)
          throw DataError("token cell '" + s + "' is not an integer in -1..3", captions, line);
        cells.push_back(static_cast<int32_t>(v));
      }
      if (cells.size() != words.size())
        throw DataError("the caption has " + std::to_string(words.size()) + " tokens but " +
                            std::to_string(cells.size()) + " token cells",
                        captions, line);
      any_cells = true;
    }
    d.captions.push_back(std::move(words));
    d.cells.push_back(std::move(cells));
  }
  if (static_cast<int64_t>(d.captions.size()) != d.size())
    throw DataError(std::to_string(d.captions.size()) + " captions for " +
                        std::to_string(d.size()) + " images in " + images,
                    captions);
  if (!any_cells) d.cells.assign(d.captions.size(), {});
  return d;
}

Tensor region_coords(int64_t h, int64_t w) {
  Tensor p({h * w, 2});
  for (int64_t r = 0; r < h; ++r)
    for (int64_t c = 0; c < w; ++c) {
      p.at(r * w + c, 0) =
          static_cast<float>((2.0 * static_cast<double>(r) + 1.0) / static_cast<double>(h) - 1.0);
      p.at(r * w + c, 1) =
          static_cast<float>((2.0 * static_cast<double>(c) + 1.0) / static_cast<double>(w) - 1.0);
    }
  return p;
}

int cell_of_region(int64_t l, int64_t h, int64_t w) {
  const int64_t r = l / w, c = l % w;
  // Centre (r + ½)/h against ½: 2r + 1 against h.
  const int64_t vr = 2 * r + 1 - h, vc = 2 * c + 1 - w;
  if (vr == 0 || vc == 0) return -1;
  return (vr > 0 ? 2 : 0) + (vc > 0 ? 1 : 0);
}

// ---- the model

struct CaptionModel::Encoded {
  Var a;     // [B, L, D]
  Var keys;  // [B, L, A]
  Var mean;  // [B, D]
  nn::State s0;
  int64_t B = 0, L = 0, D = 0, gh = 0, gw = 0;
};

struct CaptionModel::Step {
  nn::State s;
  Var alpha;    // [B, L]
  Var weights;  // [B, L]: the context's weights (α, or one-hot for hard attention's picks)
  Var scores;   // [B, L]: the attention's logits (soft and hard)
  Var logits;   // [B, V]
};

// Hard attention's choice in one step. In: the rows that sample (the others take the expected
// context), and the generator or forced locations; without either, every row takes its argmax.
// Out: the region of each row, -1 for the expected context.
struct CaptionModel::Pick {
  Rng* rng = nullptr;
  const std::vector<uint8_t>* sampled = nullptr;
  const std::vector<int32_t>* forced = nullptr;
  std::vector<int32_t> where;
};

CaptionModel::CaptionModel(nn::ParamStore& ps, const CaptionConfig& c, Vocab vocab, Rng& rng)
    : c_(c),
      kind_(c.kind()),
      reward_(c.reward_kind()),
      vocab_(std::move(vocab)),
      cnn_(
          ps, "cnn",
          [&] {
            vision::CnnConfig cc;
            cc.channels = c.channels;
            return cc;
          }(),
          rng),
      init_h_(ps, "init_h", c.annotation_size(), c.hidden, rng),
      init_c_(ps, "init_c", c.annotation_size(), c.hidden, rng),
      embed_(ps, "embed", vocab_.size(), c.embed, rng),
      wa_(ps, "att.W_a", c.annotation_size(), c.attn, rng, false),
      wh_(ps, "att.W_h", c.hidden, c.attn, rng),
      v_(nullptr),
      f_beta_(ps, "f_beta", c.hidden, 1, rng),
      lstm_(ps, "lstm", nn::CellKind::LSTM, c.embed + c.annotation_size(), c.hidden, rng),
      l_h_(ps, "out.L_h", c.hidden, c.embed, rng),
      l_z_(ps, "out.L_z", c.annotation_size(), c.embed, rng, false),
      l_o_(ps, "out.L_o", c.embed, vocab_.size(), rng) {
  c_.validate();
  Tensor v({c.attn});
  nn::init_uniform(v, rng, 1.0f / std::sqrt(static_cast<float>(c.attn)));
  v_ = &ps.add("att.v", std::move(v));
  // Created last, so that a model without it draws the same initial weights as before.
  if (c.word_query) wy_ = std::make_unique<nn::Linear>(ps, "att.W_y", c.embed, c.attn, rng, false);
}

std::vector<int32_t> CaptionModel::encode(const std::vector<std::string>& words) const {
  return vocab_.encode(words);
}

CaptionModel::Encoded CaptionModel::encode_images(ad::Tape& t, Var images,
                                                  std::vector<double>* sums) const {
  Encoded e;
  if (c_.pad > 0) {
    const Tensor& x = images.value();  // the images are data (a constant), not trained
    const int64_t B = x.dim(0), H = x.dim(1), W = x.dim(2), P = c_.pad;
    Tensor p({B, H + 2 * P, W + 2 * P}, 0.0f);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t r = 0; r < H; ++r)
        std::copy(x.data() + (b * H + r) * W, x.data() + (b * H + r + 1) * W,
                  p.data() + (b * (H + 2 * P) + r + P) * (W + 2 * P) + P);
    images = t.constant(std::move(p));
  }
  Var maps = cnn_.features(t, images, sums);
  e.gh = maps.dim(2), e.gw = maps.dim(3);
  e.a = vision::CnnEncoder::regions(maps);
  if (c_.coords) {
    const int64_t B = e.a.dim(0), L = e.a.dim(1);
    const Tensor p = region_coords(e.gh, e.gw);
    Tensor all({B, L, 2});
    for (int64_t b = 0; b < B; ++b) std::copy(p.data(), p.data() + L * 2, all.data() + b * L * 2);
    e.a = ad::concat({e.a, t.constant(std::move(all))}, 2);
  }
  e.B = e.a.dim(0), e.L = e.a.dim(1), e.D = e.a.dim(2);
  e.mean = ad::reshape(ad::mean_last(ad::transpose(e.a)), {e.B, e.D});
  e.s0.h = ad::tanh(init_h_(t, e.mean));
  e.s0.c = ad::tanh(init_c_(t, e.mean));
  if (kind_ != CaptionAttention::None) e.keys = wa_(t, e.a);
  return e;
}

CaptionModel::Step CaptionModel::step(ad::Tape& t, const Encoded& e,
                                      const std::vector<int32_t>& prev, const nn::State& s,
                                      Pick* pick) const {
  Step out;
  Var ey = embed_(t, prev);
  Var ctx;
  if (kind_ == CaptionAttention::None) {
    out.alpha = t.constant(Tensor({e.B, e.L}, 1.0f / static_cast<float>(e.L)));
    out.weights = out.alpha;
    ctx = e.mean;
  } else {
    Var query = wh_(t, s.h);
    if (wy_) query = ad::add(query, (*wy_)(t, ey));
    out.scores = ad::additive_scores(e.keys, query, t.param(*v_));
    out.alpha = ad::softmax(out.scores);
    out.weights = out.alpha;
    if (kind_ == CaptionAttention::Hard) {
      const size_t B = static_cast<size_t>(e.B);
      std::vector<int32_t> where;
      std::vector<uint8_t> expected(B, 0);
      if (pick && (pick->rng || pick->forced)) {
        where =
            pick->forced ? *pick->forced : rl::sample_categorical(out.scores.value(), *pick->rng);
        if (where.size() != B) throw ShapeError("hard attention: forced locations for each image");
        for (size_t b = 0; b < B; ++b)
          if (!(*pick->sampled)[b]) expected[b] = 1, where[b] = -1;
      } else {
        where = rl::argmax_rows(out.scores.value());
      }
      Tensor onehot({e.B, e.L}, 0.0f);
      for (size_t b = 0; b < B; ++b) {
        if (where[b] >= e.L) throw UsageError("hard attention: a forced location is out of range");
        if (where[b] >= 0) onehot.at(static_cast<int64_t>(b), where[b]) = 1.0f;
      }
      Var hot = t.constant(std::move(onehot));
      out.weights = pick && (pick->rng || pick->forced)
                        ? ad::add(ad::mask_rows(out.alpha, expected), hot)
                        : hot;
      if (pick) pick->where = std::move(where);
    }
    ctx = ad::reshape(ad::matmul(ad::reshape(out.weights, {e.B, 1, e.L}), e.a), {e.B, e.D});
  }
  Var z = ad::mul(ctx, ad::sigmoid(f_beta_(t, s.h)));
  out.s = lstm_(t, ad::concat({ey, z}, 1), s);
  out.logits = l_o_(t, ad::add(ad::add(ey, l_h_(t, out.s.h)), l_z_(t, z)));
  return out;
}

CaptionModel::Forward CaptionModel::forward(ad::Tape& t, Var images,
                                            const std::vector<std::vector<int32_t>>& captions,
                                            std::vector<double>* bn_sums,
                                            const HardSampling* hard) const {
  if (images.rank() != 3 || images.dim(0) != static_cast<int64_t>(captions.size()))
    throw ShapeError("caption forward: images " + shape_str(images.shape()) + " for " +
                     std::to_string(captions.size()) + " captions");
  Encoded e = encode_images(t, images, bn_sums);
  const int64_t B = e.B;
  size_t T = 0;
  for (const auto& c : captions) T = std::max(T, c.size() + 1);
  Forward f;
  std::vector<Var> logits;
  std::vector<int32_t> targets;
  nn::State s = e.s0;
  Var cover;  // Σ_t α_t over each item's real steps
  const bool sampling = kind_ == CaptionAttention::Hard && hard && (hard->rng || hard->forced);
  if (sampling) {
    f.sampled.assign(static_cast<size_t>(B), 1);
    if (hard->forced) {
      if (hard->forced->size() < T)
        throw ShapeError("hard attention: forced locations for " +
                         std::to_string(hard->forced->size()) + " steps, not " + std::to_string(T));
    } else {
      const double share = hard->sample_prob >= 0.0 ? hard->sample_prob : c_.sample_prob;
      for (auto& x : f.sampled) x = hard->rng->uniform_double() < share;
    }
  }
  Var log_pi, ent;  // [B, 1]: Σ_t log p(s̃_t) over the sampled images' steps, Σ_t H(α_t)
  std::vector<Var> step_lp;  // per step [B, 1]: log p(s̃_t) (0 where not sampled or not live)
  for (size_t k = 0; k < T; ++k) {
    std::vector<int32_t> prev(static_cast<size_t>(B));
    std::vector<uint8_t> live(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const auto& c = captions[static_cast<size_t>(b)];
      prev[static_cast<size_t>(b)] =
          k == 0 ? Vocab::kBos : (k - 1 < c.size() ? c[k - 1] : Vocab::kPad);
      live[static_cast<size_t>(b)] = k <= c.size();
      targets.push_back(k < c.size() ? c[k] : (k == c.size() ? Vocab::kEos : -1));
      if (k <= c.size()) ++f.tokens;
    }
    Pick pick;
    if (sampling) {
      pick.rng = hard->rng;
      pick.sampled = &f.sampled;
      if (hard->forced) pick.forced = &(*hard->forced)[k];
    }
    Step st = step(t, e, prev, s, sampling ? &pick : nullptr);
    s = st.s;
    logits.push_back(st.logits);
    f.alpha.push_back(st.alpha);
    if (kind_ != CaptionAttention::None) {
      Var m = ad::mask_rows(st.alpha, live);
      cover = cover.valid() ? ad::add(cover, m) : m;
    }
    if (sampling) {
      std::vector<int32_t> a(pick.where);
      std::vector<uint8_t> keep(live);
      for (int64_t b = 0; b < B; ++b) {
        const size_t i = static_cast<size_t>(b);
        if (a[i] < 0) a[i] = 0, keep[i] = 0;
      }
      Var lp = ad::mask_rows(rl::categorical_log_prob(st.scores, a), keep);
      Var h = ad::mask_rows(rl::categorical_entropy(st.scores), live);
      log_pi = log_pi.valid() ? ad::add(log_pi, lp) : lp;
      step_lp.push_back(lp);
      ent = ent.valid() ? ad::add(ent, h) : h;
    }
  }
  nn::CrossEntropyOptions ce;
  ce.ignore_index = -1;
  Var all = ad::reshape(ad::stack(logits, 0), {static_cast<int64_t>(T) * B, vocab_.size()});
  f.nll = ad::mul(nn::cross_entropy(all, targets, ce), static_cast<float>(f.tokens));
  if (cover.valid())
    f.reg = ad::sum(ad::square(ad::sub(t.constant(Tensor({1}, 1.0f)), cover)));
  else
    f.reg = t.constant(Tensor::scalar(0.0f));
  f.loss = c_.lambda > 0 ? ad::add(f.nll, ad::mul(f.reg, static_cast<float>(c_.lambda))) : f.nll;
  if (sampling) {
    // Each image's cost C_b: its mean -log p per predicted token, from the logits' values;
    // c[k][b] the token's own -log p at step k.
    const int64_t V = vocab_.size();
    f.costs.assign(static_cast<size_t>(B), 0.0);
    std::vector<int64_t> n(static_cast<size_t>(B), 0);
    std::vector<std::vector<double>> c(T, std::vector<double>(static_cast<size_t>(B), 0.0));
    for (size_t k = 0; k < T; ++k) {
      const Tensor& lg = logits[k].value();
      for (int64_t b = 0; b < B; ++b) {
        const int32_t y = targets[k * static_cast<size_t>(B) + static_cast<size_t>(b)];
        if (y < 0) continue;
        const float* row = lg.data() + b * V;
        const double mx = *std::max_element(row, row + V);
        double z = 0.0;
        for (int64_t j = 0; j < V; ++j) z += std::exp(static_cast<double>(row[j]) - mx);
        c[k][static_cast<size_t>(b)] = mx + std::log(z) - row[y];
        f.costs[static_cast<size_t>(b)] += c[k][static_cast<size_t>(b)];
        ++n[static_cast<size_t>(b)];
      }
    }
    double mean = 0.0;
    int64_t m = 0;
    for (int64_t b = 0; b < B; ++b) {
      f.costs[static_cast<size_t>(b)] /=
          static_cast<double>(std::max<int64_t>(n[static_cast<size_t>(b)], 1));
      if (f.sampled[static_cast<size_t>(b)]) mean += f.costs[static_cast<size_t>(b)], ++m;
    }
    const double base =
        hard->baseline_started ? hard->baseline : (m ? mean / static_cast<double>(m) : 0.0);
    // The surrogate's rows and their coefficients (rl::reinforce_loss minimises
    // -mean_r A_r log_pi_r with A = G - baseline; 0 advantage where nothing was sampled):
    //   caption: one row per image, G_b = -λ_r n_b C_b (= λ_r log p(y_b | s̃, a)), baseline
    //            -λ_r n_b b: every step's log p(s̃_t) weighted by the whole caption's cost;
    //   to-go:   one row per step, G = -λ_r Σ_{k' >= k} c_k' (the cost of the words from
    //            step k on, which alone s̃_k can change), baseline -λ_r (n_b - k) b;
    //   word:    one row per step, G = -λ_r c_k (the step's own word), baseline -λ_r b.
    // The number of rows N times the mean gives the sum λ_r Σ_r (cost_r - baseline_r) log_pi_r.
    std::vector<float> ret, bl;
    Var rows;
    if (reward_ == CaptionReward::Caption) {
      for (int64_t b = 0; b < B; ++b) {
        const size_t i = static_cast<size_t>(b);
        const double len = static_cast<double>(n[i]);
        bl.push_back(static_cast<float>(-c_.reinforce * len * base));
        ret.push_back(f.sampled[i] ? static_cast<float>(-c_.reinforce * len * f.costs[i])
                                   : bl.back());
      }
      rows = log_pi;
    } else {
      for (size_t k = 0; k < T; ++k)
        for (int64_t b = 0; b < B; ++b) {
          const size_t i = static_cast<size_t>(b);
          const int64_t left = n[i] - static_cast<int64_t>(k);  // tokens from step k on
          double g = 0.0, bb = 0.0;
          if (left > 0 && f.sampled[i]) {
            if (reward_ == CaptionReward::Word) {
              g = c[k][i], bb = base;
            } else {
              for (size_t j = k; j < T; ++j) g += c[j][i];
              bb = static_cast<double>(left) * base;
            }
          }
          bl.push_back(static_cast<float>(-c_.reinforce * bb));
          ret.push_back(static_cast<float>(-c_.reinforce * g));
        }
      rows = ad::concat(step_lp, 0);  // [T B, 1], step-major like the returns
    }
    const rl::PolicyLoss pl = rl::reinforce_loss(t, rows, ret, Var(), {}, Var(), bl);
    f.token_costs = std::move(c);
    const float nrows = static_cast<float>(ret.size());
    Var surrogate = ad::mul(pl.policy, nrows);
    if (c_.entropy > 0.0)
      surrogate = ad::sub(surrogate, ad::mul(ad::sum(ent), static_cast<float>(c_.entropy)));
    f.log_pi = log_pi;
    f.policy = pl.policy;
    f.entropy = ad::sum(ent);
    f.loss = ad::add(f.loss, surrogate);
  }
  return f;
}

namespace {

int32_t argmax_row(const float* p, int64_t n) {
  return static_cast<int32_t>(std::max_element(p, p + n) - p);
}

Tensor rows_tensor(const std::vector<std::vector<float>>& rows, int64_t L) {
  Tensor a({static_cast<int64_t>(rows.size()), L});
  for (size_t r = 0; r < rows.size(); ++r)
    std::copy(rows[r].begin(), rows[r].end(), a.data() + static_cast<int64_t>(r) * L);
  return a;
}

}  // namespace

std::vector<CaptionModel::Decoded> CaptionModel::greedy(const Tensor& images) const {
  if (images.rank() != 3) throw ShapeError("greedy: images must be [B, H, W]");
  ad::Tape t(0);
  t.set_training(false);
  t.set_recording(false);
  Encoded e = encode_images(t, t.constant(images.clone()), nullptr);
  const int64_t B = e.B, L = e.L, V = vocab_.size();
  std::vector<Decoded> out(static_cast<size_t>(B));
  std::vector<std::vector<std::vector<float>>> rows(static_cast<size_t>(B));
  std::vector<int32_t> prev(static_cast<size_t>(B), Vocab::kBos);
  std::vector<uint8_t> done(static_cast<size_t>(B), 0);
  nn::State s = e.s0;
  for (int64_t k = 0; k <= c_.max_len; ++k) {
    Step st = step(t, e, prev, s);
    s = st.s;
    const Tensor& lg = st.logits.value();
    const Tensor& al = st.weights.value();
    bool all = true;
    for (int64_t b = 0; b < B; ++b) {
      if (done[static_cast<size_t>(b)]) continue;
      const int32_t y = argmax_row(lg.data() + b * V, V);
      rows[static_cast<size_t>(b)].emplace_back(al.data() + b * L, al.data() + (b + 1) * L);
      if (y == Vocab::kEos || k == c_.max_len) {
        done[static_cast<size_t>(b)] = 1;
      } else {
        out[static_cast<size_t>(b)].words.push_back(y);
        all = false;
      }
      prev[static_cast<size_t>(b)] = y;
    }
    if (all) break;
  }
  for (int64_t b = 0; b < B; ++b)
    out[static_cast<size_t>(b)].alpha = rows_tensor(rows[static_cast<size_t>(b)], L);
  return out;
}

CaptionModel::Decoded CaptionModel::beam(const Tensor& image, int k) const {
  if (k < 1) throw UsageError("beam must be >= 1");
  if (image.rank() != 2) throw ShapeError("beam: the image must be [H, W]");
  ad::Tape t(0);
  t.set_training(false);
  t.set_recording(false);
  Tensor one({1, image.dim(0), image.dim(1)}, image.values());
  Encoded e1 = encode_images(t, t.constant(std::move(one)), nullptr);
  const int64_t L = e1.L, V = vocab_.size();
  std::map<int64_t, Encoded> expanded;
  auto enc_for = [&](int64_t n) -> const Encoded& {
    auto it = expanded.find(n);
    if (it != expanded.end()) return it->second;
    Encoded e = e1;
    e.B = n;
    if (n > 1) {
      auto rep = [&](Var v) { return ad::concat(std::vector<Var>(static_cast<size_t>(n), v), 0); };
      e.a = rep(e1.a);
      e.mean = rep(e1.mean);
      if (e1.keys.valid()) e.keys = rep(e1.keys);
    }
    return expanded.emplace(n, e).first->second;
  };
  struct Hyp {
    std::vector<int32_t> words;
    std::vector<std::vector<float>> alpha;
    double score = 0;
    int64_t row = 0;  // its state's row in the live batch
  };
  std::vector<Hyp> live(1), finished;
  nn::State s = e1.s0;
  for (int64_t step_i = 0; step_i <= c_.max_len && !live.empty(); ++step_i) {
    const int64_t n = static_cast<int64_t>(live.size());
    const Encoded& e = enc_for(n);
    std::vector<int32_t> prev;
    for (const Hyp& h : live) prev.push_back(h.words.empty() ? Vocab::kBos : h.words.back());
    Step st = step(t, e, prev, s);
    Tensor logp = ad::log_softmax(st.logits).value().clone();
    const Tensor& al = st.weights.value();
    struct Cand {
      double score;
      int64_t hyp;
      int32_t y;
    };
    std::vector<Cand> cands;
    for (int64_t h = 0; h < n; ++h)
      for (int32_t y = 0; y < V; ++y)
        cands.push_back({live[static_cast<size_t>(h)].score + logp[h * V + y], h, y});
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return a.score > b.score || (a.score == b.score && (a.hyp < b.hyp));
    });
    std::vector<Hyp> next;
    std::vector<int64_t> parents;
    for (const Cand& c : cands) {
      if (static_cast<int>(next.size()) >= k) break;
      const Hyp& p = live[static_cast<size_t>(c.hyp)];
      Hyp h;
      h.words = p.words;
      h.alpha = p.alpha;
      h.alpha.emplace_back(al.data() + c.hyp * L, al.data() + (c.hyp + 1) * L);
      h.score = c.score;
      if (c.y == Vocab::kEos || step_i == c_.max_len) {
        finished.push_back(std::move(h));
        if (static_cast<int>(finished.size()) >= k) break;
        continue;
      }
      h.words.push_back(c.y);
      h.row = static_cast<int64_t>(next.size());
      parents.push_back(c.hyp);
      next.push_back(std::move(h));
    }
    // Stop once no live hypothesis can beat the best finished one (scores only fall).
    double best_fin = -std::numeric_limits<double>::infinity();
    for (const Hyp& h : finished) best_fin = std::max(best_fin, h.score);
    if (static_cast<int>(finished.size()) >= k) next.clear();
    std::vector<Hyp> keep;
    std::vector<int64_t> keep_parents;
    for (size_t i = 0; i < next.size(); ++i)
      if (next[i].score > best_fin)
        keep.push_back(std::move(next[i])), keep_parents.push_back(parents[i]);
    if (!keep.empty()) {
      std::vector<Var> hs, cs;
      for (int64_t p : keep_parents)
        hs.push_back(ad::index(st.s.h, p)), cs.push_back(ad::index(st.s.c, p));
      s.h = ad::stack(hs, 0);
      s.c = ad::stack(cs, 0);
    }
    live = std::move(keep);
  }
  const Hyp* best = nullptr;
  for (const Hyp& h : finished)
    if (!best || h.score > best->score) best = &h;
  Decoded d;
  if (best) {
    d.words = best->words;
    d.alpha = rows_tensor(best->alpha, L);
  } else {
    d.alpha = Tensor({0, L});
  }
  return d;
}

// ---- evaluation

std::vector<CaptionModel::Decoded> decode_captions(const CaptionModel& m, const Tensor& images,
                                                   int beam, int threads) {
  if (beam < 1) throw UsageError("beam must be >= 1");
  const int64_t N = images.dim(0), H = images.dim(1), W = images.dim(2);
  std::vector<CaptionModel::Decoded> out(static_cast<size_t>(N));
  constexpr int64_t kGroup = 64;
  const int64_t groups = (N + kGroup - 1) / kGroup;
  parallel_for(
      groups,
      [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t lo = g * kGroup, hi = std::min(N, lo + kGroup);
          if (beam == 1) {
            Tensor x({hi - lo, H, W});
            std::copy(images.data() + lo * H * W, images.data() + hi * H * W, x.data());
            auto y = m.greedy(x);
            for (int64_t i = lo; i < hi; ++i)
              out[static_cast<size_t>(i)] = std::move(y[static_cast<size_t>(i - lo)]);
          } else {
            for (int64_t i = lo; i < hi; ++i) {
              Tensor x({H, W});
              std::copy(images.data() + i * H * W, images.data() + (i + 1) * H * W, x.data());
              out[static_cast<size_t>(i)] = m.beam(x, beam);
            }
          }
        }
      },
      threads);
  return out;
}

CaptionScore evaluate_captions(const CaptionModel& m, const CaptionData& d, int beam, int threads,
                               std::vector<CaptionModel::Decoded>* outputs) {
  const int64_t N = d.size(), H = d.images.dim(1), W = d.images.dim(2);
  CaptionScore sc;
  sc.images = N;
  auto dec = decode_captions(m, d.images, beam, threads);
  eval::BleuStats st;
  std::vector<std::string> hyp_words;
  for (int64_t i = 0; i < N; ++i) {
    std::vector<std::string> hw;
    for (int32_t y : dec[static_cast<size_t>(i)].words) hw.push_back(m.vocab().token(y));
    std::vector<std::string_view> h(hw.begin(), hw.end()),
        r(d.captions[static_cast<size_t>(i)].begin(), d.captions[static_cast<size_t>(i)].end());
    st += eval::bleu_stats(h, r, 4);
  }
  sc.bleu4 = eval::bleu_score(st).score;
  // Teacher-forced attention over the references.
  // Named copies, not a structured binding: the lambda below uses them, and C++17 does not
  // let a lambda capture a structured binding (clang refuses; GCC accepts it as an extension).
  const auto grid = m.grid(H, W);
  const int64_t gh = grid.first, gw = grid.second;
  const int64_t L = gh * gw;
  constexpr int64_t kGroup = 64;
  const int64_t groups = (N + kGroup - 1) / kGroup;
  std::vector<int64_t> nouns(static_cast<size_t>(groups)), hits(static_cast<size_t>(groups));
  std::vector<double> dev(static_cast<size_t>(groups));
  parallel_for(
      groups,
      [&](int64_t g0, int64_t g1) {
        ad::Tape t(0);  // one a thread: its pool serves every group after the first
        t.set_training(false);
        t.set_recording(false);
        for (int64_t g = g0; g < g1; ++g) {
          t.clear();
          const int64_t lo = g * kGroup, hi = std::min(N, lo + kGroup);
          Tensor x({hi - lo, H, W});
          std::copy(d.images.data() + lo * H * W, d.images.data() + hi * H * W, x.data());
          std::vector<std::vector<int32_t>> caps;
          for (int64_t i = lo; i < hi; ++i)
            caps.push_back(m.encode(d.captions[static_cast<size_t>(i)]));
          auto f = m.forward(t, t.constant(std::move(x)), caps);
          for (int64_t i = lo; i < hi; ++i) {
            const int64_t b = i - lo;
            const auto& cells = d.cells[static_cast<size_t>(i)];
            const size_t len = caps[static_cast<size_t>(b)].size();
            std::vector<double> cover(static_cast<size_t>(L), 0.0);
            for (size_t k = 0; k <= len; ++k) {
              const float* a = f.alpha[k].value().data() + b * L;
              for (int64_t l = 0; l < L; ++l) cover[static_cast<size_t>(l)] += a[l];
              if (k < len && k < cells.size() && cells[k] >= 0) {
                ++nouns[static_cast<size_t>(g)];
                if (cell_of_region(argmax_row(a, L), gh, gw) == cells[k])
                  ++hits[static_cast<size_t>(g)];
              }
            }
            for (double c : cover) dev[static_cast<size_t>(g)] += std::fabs(1.0 - c);
          }
        }
      },
      threads);
  int64_t hit = 0;
  double devsum = 0;
  for (int64_t g = 0; g < groups; ++g)
    sc.nouns += nouns[static_cast<size_t>(g)], hit += hits[static_cast<size_t>(g)],
        devsum += dev[static_cast<size_t>(g)];
  sc.noun_in_cell = sc.nouns ? static_cast<double>(hit) / static_cast<double>(sc.nouns) : 0.0;
  sc.coverage_dev = N ? devsum / static_cast<double>(N * L) : 0.0;
  if (outputs) *outputs = std::move(dec);
  return sc;
}

// ---- training

namespace {

Vocab caption_vocab(const CaptionData& d) {
  data::TokenCounts counts;
  for (const auto& c : d.captions) data::count_tokens(counts, c);
  return Vocab::build(counts);
}

}  // namespace

CaptionTraining::CaptionTraining(CaptionConfig config, CaptionTrainOptions o, CaptionData train,
                                 CaptionData valid, int64_t steps_or_0, int64_t epochs,
                                 uint64_t seed, std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      cfg_(std::move(config)),
      o_(o),
      train_(std::move(train)),
      valid_(std::move(valid)),
      baseline_(cfg_.baseline_decay) {
  cfg_.validate();
  o_.validate();
  if (train_.size() < 2) throw DataError("caption training needs at least 2 images");
  if (valid_.size() > 0 && (valid_.images.dim(1) != train_.images.dim(1) ||
                            valid_.images.dim(2) != train_.images.dim(2)))
    throw DataError("validation images " + shape_str(valid_.images.shape()) +
                    " differ in size from the training images " + shape_str(train_.images.shape()));
  Rng init(seed);
  model_ = std::make_unique<CaptionModel>(ps_, cfg_, caption_vocab(train_), init);
  model_->grid(train_.images.dim(1), train_.images.dim(2));  // ShapeError when too small
  if (!o_.init.empty()) {
    try {
      const nn::ModelFile f = nn::load_model_file(o_.init, "caption");
      if (f.text("vocab") != model_->vocab().format())
        throw DataError(
            "its vocabulary differs from the training captions' (warm starts need the same "
            "captions' words)");
      nn::get_params(f, ps_);
      model_->encoder().get_buffers(f);
    } catch (Error& e) {
      e.locate(o_.init);
      throw;
    }
  }
  for (const auto& c : train_.captions) ids_.push_back(model_->encode(c));
  set_run(train_.size(), steps_or_0, epochs);
  use_adam(o_.lr, o_.schedule, o_.warmup);
}

void CaptionTraining::describe(nn::ModelFile& f) const {
  DatasetModule::describe(f);
  // what --pad auto and --coords/--no-coords resolved to (the options' own values may be
  // "auto", or the default)
  f.set_arch("pad", cfg_.pad);
  f.set_arch("coords", cfg_.coords ? 1 : 0);
  f.texts["vocab"] = model_->vocab().format();
  model_->encoder().put_buffers(f);
}

void CaptionTraining::save_state(nn::ModelFile& f) const {
  model_->encoder().put_buffers(f);
  if (cfg_.kind() == CaptionAttention::Hard) {
    f.numbers["hard/baseline"] = baseline_.value();
    f.numbers["hard/baseline_started"] = baseline_.started() ? 1.0 : 0.0;
  }
}

void CaptionTraining::load_state(const nn::ModelFile& f) {
  model_->encoder().get_buffers(f);
  if (cfg_.kind() == CaptionAttention::Hard) {
    const auto v = f.numbers.find("hard/baseline"), s = f.numbers.find("hard/baseline_started");
    if (v == f.numbers.end() || s == f.numbers.end())
      throw DataError("the checkpoint has no hard attention baseline (hard/baseline)");
    baseline_.restore(v->second, s->second != 0.0);
  }
}

std::vector<std::string> CaptionTraining::step_metrics() const {
  if (cfg_.kind() == CaptionAttention::Hard) return {"reg", "sampled_cost", "baseline"};
  return {"reg"};
}

std::vector<std::string> CaptionTraining::slice_sums() const {
  std::vector<std::string> n;
  for (int64_t i = 0; i < model_->encoder().batch_sums(); ++i)
    n.push_back("bn" + std::to_string(i));
  n.push_back("reg");
  if (cfg_.kind() == CaptionAttention::Hard) n.push_back("cost_sum"), n.push_back("cost_n");
  return n;
}

train::Slice CaptionTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  const int64_t H = train_.images.dim(1), W = train_.images.dim(2);
  Tensor x({end - begin, H, W});
  std::vector<std::vector<int32_t>> caps;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t j = batch()[static_cast<size_t>(i)];
    std::copy(train_.images.data() + j * H * W, train_.images.data() + (j + 1) * H * W,
              x.data() + (i - begin) * H * W);
    caps.push_back(ids_[static_cast<size_t>(j)]);
  }
  train::Slice s;
  CaptionModel::HardSampling hs;
  hs.rng = &t.rng();
  hs.baseline = baseline_.value();
  hs.baseline_started = baseline_.started();
  hs.sample_prob = cfg_.sample_prob;
  if (cfg_.sample_warmup > 0 && step_ < cfg_.sample_warmup)
    hs.sample_prob *= static_cast<double>(step_) / static_cast<double>(cfg_.sample_warmup);
  auto f = model_->forward(t, t.constant(std::move(x)), caps, &s.sums,
                           cfg_.kind() == CaptionAttention::Hard ? &hs : nullptr);
  s.sums.push_back(static_cast<double>(f.reg.value()[0]));
  if (cfg_.kind() == CaptionAttention::Hard) {
    double c = 0.0, n = 0.0;
    for (size_t b = 0; b < f.sampled.size(); ++b)
      if (f.sampled[b]) c += f.costs[b], n += 1.0;
    s.sums.push_back(c);
    s.sums.push_back(n);
  }
  s.weight = static_cast<double>(std::max<int64_t>(f.tokens, 1));
  s.loss = ad::mul(f.loss, 1.0f / static_cast<float>(s.weight));
  return s;
}

train::StepEnd CaptionTraining::end_step(const nn::TrainState&, double,
                                         const train::Metrics& sums) {
  std::vector<double> v;
  for (const auto& kv : sums) v.push_back(kv.second);
  model_->encoder().update_running(v);
  const size_t r = static_cast<size_t>(model_->encoder().batch_sums());  // reg's index
  train::StepEnd e;
  e.metrics = {{"reg", v.at(r) / static_cast<double>(std::max<int64_t>(batch_items(), 1))}};
  if (cfg_.kind() == CaptionAttention::Hard) {
    const double c = v.at(r + 1), n = v.at(r + 2);
    if (n > 0) baseline_.update(c / n);
    e.metrics.emplace_back("sampled_cost", n > 0 ? c / n : 0.0);
    e.metrics.emplace_back("baseline", baseline_.value());
  }
  return e;
}

std::vector<std::string> CaptionTraining::eval_metrics() const {
  if (valid_.size() == 0) return {};
  return {"valid_bleu4", "valid_noun_in_cell", "valid_coverage_dev"};
}

train::Metrics CaptionTraining::evaluate() {
  if (valid_.size() == 0) return {};
  const CaptionScore s = evaluate_captions(*model_, valid_, 1, 0);
  return evaluated({{"valid_bleu4", 100.0 * s.bleu4},
                    {"valid_noun_in_cell", s.noun_in_cell},
                    {"valid_coverage_dev", s.coverage_dev}},
                   -s.bleu4);
}

void CaptionTraining::finish(nn::ModelFile& f) {
  model_->encoder().put_buffers(f);
  DatasetModule::finish(f);
}

LoadedCaption load_caption(const std::string& path) {
  LoadedCaption m;
  m.file = nn::load_model_file(path, "caption");
  train::in_file(path, [&] {
    train::read_config(m.file, m.config);
    // files before 2026-11-26 have no arch/pad, arch/coords: their options' values
    if (m.file.numbers.count("arch/pad"))
      m.config.pad = m.file.arch("pad", 0, 256);
    else  // a number, or absent ("auto" with no image size: 0)
      io::check_stored([&] { m.config.pad = parse_caption_pad(m.config.pad_option, 0, 0, 0); },
                       path);
    if (m.file.numbers.count("arch/coords")) m.config.coords = m.file.arch("coords", 0, 1) == 1;
    io::check_stored([&] { m.config.validate(); }, path);
    Vocab v = Vocab::parse(m.file.text("vocab"), path + ":vocab");
    m.model = train::build<CaptionModel>(m.file, m.params, m.config, std::move(v));
    m.model->encoder().get_buffers(m.file);
  });
  return m;
}

}  // namespace attnkit::models
