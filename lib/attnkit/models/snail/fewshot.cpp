#include "attnkit/models/snail/fewshot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/snail/bandit.h"
#include "attnkit/nn/loss.h"
#include "attnkit/train/load.h"
#include "attnkit/vision/fmnist.h"

namespace attnkit::models {

using ad::Var;

namespace {
constexpr int kBlocks = 4;  // embedding blocks

int64_t pooled(int64_t n) {
  for (int i = 0; i < kBlocks; ++i) n /= 2;
  return n;
}
}  // namespace

void FewShotConfig::validate() const {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw UsageError(what);
  };
  need(ways >= 2 && ways <= 100, "ways must be from 2 to 100");
  need(shots >= 1 && shots <= 100, "shots must be from 1 to 100");
  need(height >= 16 && width >= 16 && height <= 4096 && width <= 4096,
       "images must be 16 to 4096 pixels high and wide (four 2x2 poolings)");
  need(channels >= 1 && filters >= 1 && key >= 1 && value >= 1,
       "channels, filters, key-size and value-size must be >= 1");
  need(channels <= 4096 && filters <= 4096 && key <= 4096 && value <= 4096,
       "channels, filters, key-size and value-size must be at most 4096");
}

void FewShotTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  if (eval_episodes < 1) throw UsageError("eval-episodes must be >= 1");
}

std::vector<int32_t> parse_class_list(const std::string& text, const std::string& what) {
  std::vector<int32_t> out;
  std::string cur;
  auto flush = [&] {
    if (cur.empty() || cur.size() > 3 || cur.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(what + ": expected class ids such as 0,2,4, not '" + text + "'");
    const int32_t c = std::stoi(cur);
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw UsageError(what + ": class " + cur + " is named twice");
    out.push_back(c);
    cur.clear();
  };
  for (char ch : text) {
    if (ch == ',')
      flush();
    else
      cur += ch;
  }
  flush();
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// n, H, W of pictures [n, H, W] or [n, 1, H, W] with labels [n] or [n, 1] of whole numbers
// in [0, 1000).
void check_labelled(const Tensor& images, const Tensor& labels, const std::string& name,
                    const std::string& labels_name, int64_t& n, int64_t& h, int64_t& w) {
  if (images.rank() == 3) {
    n = images.dim(0), h = images.dim(1), w = images.dim(2);
  } else if (images.rank() == 4 && images.dim(1) == 1) {
    n = images.dim(0), h = images.dim(2), w = images.dim(3);
  } else {
    throw DataError("images must be [n, H, W] or [n, 1, H, W], got " + shape_str(images.shape()),
                    name);
  }
  const bool column = labels.rank() == 2 && labels.dim(1) == 1;  // a text file, one a line
  if (!(labels.rank() == 1 || column) || labels.dim(0) != n)
    throw DataError("labels must be [" + std::to_string(n) + "] (one a picture of " + name +
                        "), got " + shape_str(labels.shape()),
                    labels_name);
  for (int64_t i = 0; i < n; ++i) {
    const float l = labels[i];
    if (!(l >= 0 && l < 1000 && l == std::floor(l)))
      throw DataError("label " + std::to_string(i + 1) + " is " + io::format_number(l) +
                          ", not a class id in [0, 1000)",
                      labels_name);
  }
}
}  // namespace

std::vector<int32_t> label_classes(const Tensor& images, const Tensor& labels,
                                   const std::string& name, const std::string& labels_name) {
  int64_t n = 0, h = 0, w = 0;
  check_labelled(images, labels, name, labels_name.empty() ? name : labels_name, n, h, w);
  std::vector<int32_t> c;
  for (int64_t i = 0; i < n; ++i) c.push_back(static_cast<int32_t>(labels[i]));
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

LabelledImages select_classes(const Tensor& images, const Tensor& labels,
                              const std::vector<int32_t>& classes, bool scale_255,
                              int64_t min_per_class, const std::string& name,
                              const std::string& labels_name) {
  int64_t n = 0, h = 0, w = 0;
  check_labelled(images, labels, name, labels_name.empty() ? name : labels_name, n, h, w);
  LabelledImages d;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<int32_t>(labels[i]);
    if (classes.empty() || std::binary_search(classes.begin(), classes.end(), c)) keep.push_back(i);
  }
  d.images = Tensor({static_cast<int64_t>(keep.size()), h, w});
  const float scale = scale_255 ? 1.0f / 255.0f : 1.0f;
  const int64_t hw = h * w;
  for (size_t k = 0; k < keep.size(); ++k) {
    const float* src = images.data() + keep[k] * hw;
    float* dst = d.images.data() + static_cast<int64_t>(k) * hw;
    for (int64_t j = 0; j < hw; ++j) {
      if (!std::isfinite(src[j]))
        throw DataError("picture " + std::to_string(keep[k]) + " holds a NaN or infinity", name);
      dst[j] = src[j] * scale;
    }
    d.labels.push_back(static_cast<int32_t>(labels[keep[k]]));
  }
  d.classes = classes;
  if (d.classes.empty()) {
    d.classes = d.labels;
    std::sort(d.classes.begin(), d.classes.end());
    d.classes.erase(std::unique(d.classes.begin(), d.classes.end()), d.classes.end());
  }
  d.by_class.assign(d.classes.size(), {});
  for (size_t k = 0; k < d.labels.size(); ++k) {
    const auto it = std::lower_bound(d.classes.begin(), d.classes.end(), d.labels[k]);
    d.by_class[static_cast<size_t>(it - d.classes.begin())].push_back(static_cast<int64_t>(k));
  }
  for (size_t c = 0; c < d.classes.size(); ++c)
    if (static_cast<int64_t>(d.by_class[c].size()) < min_per_class)
      throw DataError("class " + std::to_string(d.classes[c]) + " has " +
                          std::to_string(d.by_class[c].size()) + " pictures; an episode needs " +
                          std::to_string(min_per_class),
                      labels_name.empty() ? name : labels_name);
  return d;
}

Pictures read_pictures(std::string images, std::string labels, const std::string& split) {
  if (images.empty()) images = vision::fmnist_file(vision::default_fmnist_dir(), split, "images");
  if (labels.empty()) labels = vision::fmnist_file(vision::default_fmnist_dir(), split, "labels");
  Pictures p;
  io::SourceInfo info;
  p.images = io::read_tensor(images, &info);
  p.labels = io::read_tensor(labels);
  p.bytes = info.format == io::Format::Idx;
  p.name = images;
  p.labels_name = labels;
  return p;
}

ClassSplit split_classes(const Pictures& p, const std::vector<int32_t>& train,
                         const FewShotConfig& c) {
  std::vector<int32_t> held;
  for (int32_t k : label_classes(p.images, p.labels, p.name, p.labels_name))
    if (!std::binary_search(train.begin(), train.end(), k)) held.push_back(k);
  if (static_cast<int64_t>(train.size()) < c.ways || static_cast<int64_t>(held.size()) < c.ways) {
    std::string list;
    for (int32_t k : train) list += (list.empty() ? "" : ",") + std::to_string(k);
    throw UsageError("classes " + list + ": " + std::to_string(c.ways) + "-way episodes need " +
                     std::to_string(c.ways) + " training classes and as many held out; " +
                     std::to_string(held.size()) + " others are in the data");
  }
  ClassSplit out;
  out.train =
      select_classes(p.images, p.labels, train, p.bytes, c.shots + 1, p.name, p.labels_name);
  out.held_out =
      select_classes(p.images, p.labels, held, p.bytes, c.shots + 1, p.name, p.labels_name);
  return out;
}

EpisodeBatch draw_episodes(const LabelledImages& data, int64_t episodes, int64_t ways,
                           int64_t shots, Rng& rng) {
  const auto nc = static_cast<int64_t>(data.classes.size());
  if (nc < ways)
    throw DataError("an episode of " + std::to_string(ways) + " ways needs as many classes; " +
                    std::to_string(nc) + " are there");
  EpisodeBatch b;
  b.episodes = episodes;
  b.ways = ways;
  b.steps = ways * shots + 1;
  const int64_t h = data.height(), w = data.width(), hw = h * w, T = b.steps;
  b.images = Tensor({episodes, T, h, w});
  b.support_labels.resize(static_cast<size_t>(episodes * (T - 1)));
  b.query_labels.resize(static_cast<size_t>(episodes));
  b.classes.resize(static_cast<size_t>(episodes * T));
  std::vector<int64_t> cls(static_cast<size_t>(nc));
  for (int64_t e = 0; e < episodes; ++e) {
    // The first `ways` of a partial Fisher–Yates shuffle: distinct classes in random order.
    std::iota(cls.begin(), cls.end(), 0);
    for (int64_t i = 0; i < ways; ++i)
      std::swap(cls[static_cast<size_t>(i)],
                cls[static_cast<size_t>(i + static_cast<int64_t>(rng.below(nc - i)))]);
    const auto query_way = static_cast<int64_t>(rng.below(static_cast<uint64_t>(ways)));
    std::vector<std::pair<int64_t, int32_t>> support;  // (image index, episode label)
    int64_t query_image = -1;
    for (int64_t i = 0; i < ways; ++i) {
      std::vector<int64_t> pool = data.by_class[static_cast<size_t>(cls[static_cast<size_t>(i)])];
      const int64_t need = shots + (i == query_way ? 1 : 0);
      const auto have = static_cast<int64_t>(pool.size());
      for (int64_t j = 0; j < need; ++j)
        std::swap(pool[static_cast<size_t>(j)],
                  pool[static_cast<size_t>(j + static_cast<int64_t>(rng.below(have - j)))]);
      for (int64_t j = 0; j < shots; ++j)
        support.emplace_back(pool[static_cast<size_t>(j)], static_cast<int32_t>(i));
      if (i == query_way) query_image = pool[static_cast<size_t>(shots)];
    }
    for (size_t i = support.size(); i > 1; --i)
      std::swap(support[i - 1], support[static_cast<size_t>(rng.below(i))]);
    auto put = [&](int64_t step, int64_t image) {
      std::copy(data.images.data() + image * hw, data.images.data() + (image + 1) * hw,
                b.images.data() + (e * T + step) * hw);
      b.classes[static_cast<size_t>(e * T + step)] = data.labels[static_cast<size_t>(image)];
    };
    for (int64_t s = 0; s < T - 1; ++s) {
      put(s, support[static_cast<size_t>(s)].first);
      b.support_labels[static_cast<size_t>(e * (T - 1) + s)] =
          support[static_cast<size_t>(s)].second;
    }
    put(T - 1, query_image);
    b.query_labels[static_cast<size_t>(e)] = static_cast<int32_t>(query_way);
  }
  return b;
}

SnailFewShot::SnailFewShot(nn::ParamStore& ps, const FewShotConfig& c, Rng& rng)
    : c_((c.validate(), c)) {
  int64_t in = 1;
  for (int i = 0; i < kBlocks; ++i) {
    // He-uniform weights (ReLU follows), zero biases.
    const int64_t fan_in = in * 9;
    const float bound = std::sqrt(6.0f / static_cast<float>(fan_in));
    Tensor w({c.channels, in, 3, 3});
    for (int64_t j = 0; j < w.size(); ++j) w[j] = (2.0f * rng.uniform() - 1.0f) * bound;
    const std::string name = "embed.conv" + std::to_string(i + 1);
    conv_w_.push_back(&ps.add(name + ".weight", std::move(w)));
    conv_b_.push_back(&ps.add(name + ".bias", Tensor({c.channels})));
    in = c.channels;
  }
  embed_size_ = c.channels * pooled(c.height) * pooled(c.width);
  embed_norm_ = std::make_unique<nn::LayerNorm>(ps, "embed.norm", embed_size_);
  const int64_t T = c.steps();
  at1_ = std::make_unique<nn::AttentionBlock>(ps, "snail.attn1", embed_size_ + c.ways, c.key,
                                              c.value, rng);
  tc1_ = std::make_unique<nn::TCBlock>(ps, "snail.tc1", at1_->out_channels(), T, c.filters, rng);
  at2_ = std::make_unique<nn::AttentionBlock>(ps, "snail.attn2", tc1_->out_channels(), c.key,
                                              c.value, rng);
  tc2_ = std::make_unique<nn::TCBlock>(ps, "snail.tc2", at2_->out_channels(), T, c.filters, rng);
  at3_ = std::make_unique<nn::AttentionBlock>(ps, "snail.attn3", tc2_->out_channels(), c.key,
                                              c.value, rng);
  out_ = std::make_unique<nn::Linear>(ps, "snail.out", at3_->out_channels(), c.ways, rng);
  // The first attention block starts with its key map equal to its query map, so that its
  // scores begin as a similarity (q·k = x'WᵀWx, a positive semi-definite kernel): a query
  // attends most to the supports whose embedding is like its own before anything is
  // learnt. With independent maps the scores start as noise and training sits on a plateau
  // at chance for hundreds of steps, how many depending on the seed.
  for (const char* part : {".W", ".b"}) {
    const ad::Parameter& q = ps.get(std::string("snail.attn1.query") + part);
    ps.get(std::string("snail.attn1.key") + part).value = q.value.clone();
  }
}

ad::Var SnailFewShot::embed(ad::Tape& t, ad::Var images) const {
  const int64_t B = images.dim(0);
  Var x = ad::reshape(images, {B, 1, c_.height, c_.width});
  ad::Conv2dOptions o;
  o.pad_h = o.pad_w = 1;
  for (int i = 0; i < kBlocks; ++i)
    x = ad::max_pool2d(ad::relu(ad::conv2d(x, t.param(*conv_w_[static_cast<size_t>(i)]),
                                           t.param(*conv_b_[static_cast<size_t>(i)]), o)),
                       2);
  return (*embed_norm_)(t, ad::reshape(x, {B, embed_size_}));
}

ad::Var SnailFewShot::operator()(ad::Tape& t, const EpisodeBatch& b, int64_t begin,
                                 int64_t end) const {
  const int64_t E = end - begin, T = b.steps, N = c_.ways, hw = c_.height * c_.width;
  if (begin < 0 || end > b.episodes || E < 1) throw Error("SnailFewShot: bad episode range");
  if (T != c_.steps() || b.images.dim(2) != c_.height || b.images.dim(3) != c_.width)
    throw ShapeError("episodes of " + std::to_string(T) + " steps of " +
                     shape_str({b.images.dim(2), b.images.dim(3)}) + " pictures for a model of " +
                     std::to_string(c_.steps()) + " steps of " + shape_str({c_.height, c_.width}));
  Tensor img = t.alloc({E * T, c_.height, c_.width});
  std::copy(b.images.data() + begin * T * hw, b.images.data() + end * T * hw, img.data());
  Var emb = ad::reshape(embed(t, t.constant(std::move(img))), {E, T, embed_size_});
  Tensor onehot = t.zeros({E, T, N});
  for (int64_t e = 0; e < E; ++e)
    for (int64_t s = 0; s < T - 1; ++s)
      onehot[(e * T + s) * N + b.support_labels[static_cast<size_t>((begin + e) * (T - 1) + s)]] =
          1.0f;
  Var h = ad::concat({emb, t.constant(std::move(onehot))}, 2);
  h = (*at3_)(t, (*tc2_)(t, (*at2_)(t, (*tc1_)(t, (*at1_)(t, h)))));
  Var last = ad::reshape(ad::slice(h, 1, T - 1, T), {E, at3_->out_channels()});
  return (*out_)(t, last);
}

namespace {

// The label of the nearest class mean of the supports (squared Euclidean distance; ties:
// the lower label) for each episode, from features [E, T, D].
std::vector<int32_t> nearest_mean(const float* f, int64_t E, int64_t T, int64_t D, int64_t N,
                                  const std::vector<int32_t>& support_labels) {
  std::vector<int32_t> out(static_cast<size_t>(E));
  std::vector<double> mean(static_cast<size_t>(N * D));
  std::vector<int64_t> count(static_cast<size_t>(N));
  for (int64_t e = 0; e < E; ++e) {
    std::fill(mean.begin(), mean.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (int64_t s = 0; s < T - 1; ++s) {
      const int32_t l = support_labels[static_cast<size_t>(e * (T - 1) + s)];
      ++count[static_cast<size_t>(l)];
      for (int64_t d = 0; d < D; ++d)
        mean[static_cast<size_t>(l * D + d)] += f[(e * T + s) * D + d];
    }
    const float* q = f + (e * T + T - 1) * D;
    double best = std::numeric_limits<double>::infinity();
    for (int64_t l = 0; l < N; ++l) {
      if (count[static_cast<size_t>(l)] == 0) continue;
      double dist = 0.0;
      for (int64_t d = 0; d < D; ++d) {
        const double diff = mean[static_cast<size_t>(l * D + d)] /
                                static_cast<double>(count[static_cast<size_t>(l)]) -
                            q[d];
        dist += diff * diff;
      }
      if (dist < best) best = dist, out[static_cast<size_t>(e)] = static_cast<int32_t>(l);
    }
  }
  return out;
}

double share_right(const std::vector<int32_t>& pred, const std::vector<int32_t>& truth,
                   int64_t offset) {
  int64_t right = 0;
  for (size_t i = 0; i < pred.size(); ++i)
    right += pred[i] == truth[static_cast<size_t>(offset) + i];
  return static_cast<double>(right);
}

}  // namespace

FewShotScores score_episodes(const SnailFewShot* model, const EpisodeBatch& b, int64_t chunk) {
  FewShotScores s;
  s.episodes = b.episodes;
  if (b.episodes == 0) return s;
  const int64_t T = b.steps, N = b.ways;
  const int64_t hw = b.images.dim(2) * b.images.dim(3);
  const std::vector<int32_t> px =
      nearest_mean(b.images.data(), b.episodes, T, hw, N, b.support_labels);
  s.pixel_nn = share_right(px, b.query_labels, 0) / static_cast<double>(b.episodes);
  if (!model) return s;
  const int64_t chunks = (b.episodes + chunk - 1) / chunk;
  std::vector<double> snail(static_cast<size_t>(chunks)), emb(static_cast<size_t>(chunks));
  parallel_for(chunks, [&](int64_t c0, int64_t c1) {
    ad::Tape t;  // one a thread: its pool serves every chunk after the first
    t.set_recording(false);
    t.set_training(false);
    for (int64_t c = c0; c < c1; ++c) {
      t.clear();
      const int64_t lo = c * chunk, hi = std::min(b.episodes, lo + chunk), E = hi - lo;
      Var logits = (*model)(t, b, lo, hi);
      std::vector<int32_t> pred(static_cast<size_t>(E));
      const int64_t n = logits.dim(1);
      for (int64_t e = 0; e < E; ++e) {
        const float* row = logits.value().data() + e * n;
        pred[static_cast<size_t>(e)] = static_cast<int32_t>(std::max_element(row, row + n) - row);
      }
      snail[static_cast<size_t>(c)] = share_right(pred, b.query_labels, lo);
      Tensor img({E * T, b.images.dim(2), b.images.dim(3)});
      std::copy(b.images.data() + lo * T * hw, b.images.data() + hi * T * hw, img.data());
      Var f = model->embed(t, t.constant(std::move(img)));
      std::vector<int32_t> sl(b.support_labels.begin() + lo * (T - 1),
                              b.support_labels.begin() + hi * (T - 1));
      emb[static_cast<size_t>(c)] = share_right(
          nearest_mean(f.value().data(), E, T, model->embedding_size(), n, sl), b.query_labels, lo);
    }
  });
  for (int64_t c = 0; c < chunks; ++c)
    s.snail += snail[static_cast<size_t>(c)], s.embed_nn += emb[static_cast<size_t>(c)];
  s.snail /= static_cast<double>(b.episodes);
  s.embed_nn /= static_cast<double>(b.episodes);
  return s;
}

// ---- training

FewShotTraining::FewShotTraining(FewShotConfig config, FewShotTrainOptions options,
                                 LabelledImages train, LabelledImages eval, int64_t steps,
                                 uint64_t seed, std::string config_yaml)
    : DrawnModule(steps, seed, std::move(config_yaml), "episodes", seed ^ 0xF5E75ULL),
      cfg_(std::move(config)),
      o_(std::move(options)),
      train_(std::move(train)),
      eval_(std::move(eval)) {
  cfg_.validate();
  o_.validate();
  Rng init(seed);
  model_ = std::make_unique<SnailFewShot>(ps_, cfg_, init);
  opt_ = std::make_unique<nn::Adam>(ps_.params(), o_.lr);
}

void FewShotTraining::describe(nn::ModelFile& f) const {
  DrawnModule::describe(f);
  std::vector<std::string> cls;
  for (int32_t c : train_.classes) cls.push_back(std::to_string(c));
  f.strings["fewshot/train_classes"] = cls;
  f.set_arch("height", cfg_.height);
  f.set_arch("width", cfg_.width);
}

void FewShotTraining::check_resume(const nn::ModelFile& ck) const {
  std::vector<std::string> cls;
  for (int32_t c : train_.classes) cls.push_back(std::to_string(c));
  if (ck.string_list("fewshot/train_classes") != cls)
    throw DataError("the checkpoint was trained on other classes", ck.file);
}

int64_t FewShotTraining::begin_batch(const nn::TrainState&) {
  batch_ = draw_episodes(train_, o_.batch, cfg_.ways, cfg_.shots, draws());
  return o_.batch;
}

train::Slice FewShotTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  Var logits = (*model_)(t, batch_, begin, end);
  std::vector<int32_t> target(batch_.query_labels.begin() + begin,
                              batch_.query_labels.begin() + end);
  train::Slice s;
  s.loss = nn::cross_entropy(logits, target);
  s.weight = static_cast<double>(end - begin);
  double right = 0;
  const int64_t n = logits.dim(1);
  for (int64_t e = 0; e < end - begin; ++e) {
    const float* row = logits.value().data() + e * n;
    right += (std::max_element(row, row + n) - row) == target[static_cast<size_t>(e)];
  }
  s.sums = {right};
  return s;
}

train::StepEnd FewShotTraining::end_step(const nn::TrainState&, double,
                                         const train::Metrics& sums) {
  train::StepEnd e;
  e.metrics = {{"accuracy", sums[0].second / static_cast<double>(o_.batch)}};
  return e;
}

train::Metrics FewShotTraining::evaluate() {
  Rng ev(0xE7A1ULL);  // the same episodes at every evaluation
  const EpisodeBatch b = draw_episodes(eval_, o_.eval_episodes, cfg_.ways, cfg_.shots, ev);
  const FewShotScores s = score_episodes(model_.get(), b);
  return evaluated({{"eval_accuracy", s.snail}, {"eval_embed_nn", s.embed_nn}}, -s.snail);
}

LoadedFewShot load_fewshot(const std::string& path) {
  LoadedFewShot m;
  m.file = nn::load_model_file(path, "snail-fewshot");
  try {
    train::read_config(m.file, m.config);
    m.config.height = m.file.arch("height", 16, 4096, "fewshot/height");
    m.config.width = m.file.arch("width", 16, 4096, "fewshot/width");
    rl::BanditConfig sizes;  // snail-train's SNAIL sizes, shared by both tasks
    train::read_config(m.file, sizes);
    m.config.filters = sizes.filters, m.config.key = sizes.key, m.config.value = sizes.value;
    io::check_stored([&] { m.config.validate(); }, path);
    std::string joined;
    for (const std::string& s : m.file.string_list("fewshot/train_classes"))
      joined += (joined.empty() ? "" : ",") + s;
    m.train_classes = parse_class_list(joined, "the model's training classes");
    m.model = train::build<SnailFewShot>(m.file, m.params, m.config);
  } catch (const UsageError& e) {
    throw DataError(e.what(), path);
  } catch (Error& e) {
    e.locate(path);
    throw;
  }
  return m;
}

}  // namespace attnkit::models
