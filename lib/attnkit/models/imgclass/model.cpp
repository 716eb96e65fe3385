#include "attnkit/models/imgclass/model.h"

#include <algorithm>
#include <cmath>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/params.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/load.h"

namespace attnkit::models {

using ad::Var;

namespace {
constexpr int64_t kCalibration = 4096;
constexpr int64_t kChunk = 128;  // images a forward pass at evaluation

int64_t pooled(int64_t s) { return s >= 2 ? s / 2 : s; }
}  // namespace

std::vector<int64_t> parse_sizes(const std::string& text, const std::string& key) {
  std::vector<int64_t> v;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || x < 1 || x > 100000)
      throw UsageError(key + ": '" + text + "' is not a list of sizes 1-100000 like 64,64");
    v.push_back(x);
    at = comma + 1;
  }
  return v;
}

namespace {

// "key: value" lines of the data's sizes.
struct SizeLines {
  std::string text;
  void operator()(int64_t& v, const fields::Key& k) {
    text += fields::stored_name(k) + ": " + std::to_string(v) + "\n";
  }
};

// The data's sizes of a Config as a field list of their own (for train::read_config).
struct DataSizes {
  ImgNetConfig& c;
  template <class V>
  void fields(V& v) {
    c.data_fields(v);
  }
};

}  // namespace

std::string ImgNetConfig::data_yaml() const {
  SizeLines lines;
  ImgNetConfig c = *this;
  c.data_fields(lines);
  return lines.text;
}

std::string format_sizes(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void ImgNetConfig::validate() const {
  if (arch != "mlp" && arch != "cnn" && arch != "cnn-sagan" && arch != "cnn-nonlocal")
    throw UsageError("arch: unknown architecture '" + arch +
                     "' (choose mlp, cnn, cnn-sagan or cnn-nonlocal)");
  if (hidden.empty()) throw UsageError("hidden: at least one layer");
  if (channels.empty()) throw UsageError("channels: at least one block");
  if ((arch == "cnn-sagan" || arch == "cnn-nonlocal") &&
      (attn_after < 1 || attn_after > static_cast<int64_t>(channels.size())))
    throw UsageError("attn-after must be a block 1-" + std::to_string(channels.size()));
  if (height < 1 || width < 1 || classes < 2)
    throw DataError("images must be at least 1x1 with at least 2 classes");
}

ImgNet::ImgNet(nn::ParamStore& ps, const ImgNetConfig& c, Rng& rng) : c_((c.validate(), c)) {
  if (!c.conv()) {
    int64_t in = c.height * c.width;
    for (size_t k = 0; k < c.hidden.size(); ++k) {
      mlp_.emplace_back(ps, "fc" + std::to_string(k + 1), in, c.hidden[k], rng);
      in = c.hidden[k];
    }
    out_ = std::make_unique<nn::Linear>(ps, "classifier", in, c.classes, rng);
    return;
  }
  int64_t in = 1;
  for (size_t k = 0; k < c.channels.size(); ++k) {
    const std::string p = "block" + std::to_string(k + 1) + ".";
    const int64_t o = c.channels[k];
    Tensor w({o, in, 3, 3});
    nn::init_uniform(w, rng, std::sqrt(6.0f / static_cast<float>(in * 9)));  // He, for ReLU
    Block b;
    b.w = &ps.add(p + "conv.weight", std::move(w));
    b.gamma = &ps.add(p + "bn.weight", Tensor({o}, 1.0f));
    b.beta = &ps.add(p + "bn.bias", Tensor({o}, 0.0f));
    b.mean = &ps.add(p + "bn.running_mean", Tensor({o}, 0.0f));
    b.var = &ps.add(p + "bn.running_var", Tensor({o}, 1.0f));
    blocks_.push_back(b);
    in = o;
    if (c.arch != "cnn" && static_cast<int64_t>(k + 1) == c.attn_after) {
      const bool sagan = c.arch == "cnn-sagan";
      const int64_t ci = std::max<int64_t>(1, sagan ? o / 8 : o / 2);
      auto conv = [&](const std::string& name, int64_t from, int64_t to, bool zero) {
        Tensor cw({to, from, 1, 1}), cb({to}, 0.0f);
        const float bound = 1.0f / std::sqrt(static_cast<float>(from));
        if (!zero) nn::init_uniform(cw, rng, bound), nn::init_uniform(cb, rng, bound);
        attn_.push_back(&ps.add("attn." + name + ".weight", std::move(cw)));
        attn_.push_back(&ps.add("attn." + name + ".bias", std::move(cb)));
      };
      if (sagan) {
        conv("query_conv", o, ci, false);
        conv("key_conv", o, ci, false);
        conv("value_conv", o, o, false);
        attn_.push_back(&ps.add("attn.gamma", Tensor({1}, 0.0f)));
      } else {
        conv("theta", o, ci, false);
        conv("phi", o, ci, false);
        conv("g", o, ci, false);
        conv("W", ci, o, true);
      }
    }
  }
  out_ = std::make_unique<nn::Linear>(ps, "classifier", in, c.classes, rng);
}

Var ImgNet::attention(ad::Tape& t, Var x) const {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  auto conv = [&](size_t k, Var in) {
    return ad::conv2d(in, t.param(*attn_[k]), t.param(*attn_[k + 1]));
  };
  auto flat = [](Var v) { return ad::reshape(v, {v.dim(0), v.dim(1), v.dim(2) * v.dim(3)}); };
  if (c_.arch == "cnn-sagan") {
    Var q = flat(conv(0, x)), k = flat(conv(2, x)), v = flat(conv(4, x));
    Var a = ad::softmax(ad::matmul(q, k, true, false));  // [N, L, L]
    Var o = ad::reshape(ad::matmul(v, a, false, true), {n, c, h, w});
    return ad::add(ad::mul(o, t.param(*attn_[6])), x);
  }
  Var th = flat(conv(0, x)), ph = flat(conv(2, x)), g = flat(conv(4, x));
  Var a = ad::softmax(ad::matmul(th, ph, true, false));
  Var y = ad::reshape(ad::matmul(g, a, false, true), {n, g.dim(1), h, w});
  return ad::add(conv(6, y), x);
}

// The blocks [0, upto) (and the attention after its block); the others are not applied.
Var ImgNet::features(ad::Tape& t, Var x, bool training, int64_t upto) const {
  ad::Conv2dOptions pad;
  pad.pad_h = pad.pad_w = 1;
  for (int64_t k = 0; k < upto; ++k) {
    const Block& b = blocks_[static_cast<size_t>(k)];
    x = ad::conv2d(x, t.param(*b.w), Var(), pad);
    if (training) {
      Tensor m({b.mean->value.size()}, 0.0f), v({b.var->value.size()}, 1.0f);  // discarded
      x = ad::batch_norm2d(x, t.param(*b.gamma), t.param(*b.beta), m, v, true);
    } else {
      x = ad::batch_norm2d(x, t.param(*b.gamma), t.param(*b.beta), b.mean->value, b.var->value,
                           false);
    }
    x = ad::relu(x);
    if (x.dim(2) >= 2 && x.dim(3) >= 2) x = ad::max_pool2d(x, 2);
    if (!attn_.empty() && k + 1 == c_.attn_after) x = attention(t, x);
  }
  return x;
}

Var ImgNet::logits(ad::Tape& t, const float* images, int64_t b, bool training) const {
  const int64_t px = c_.height * c_.width;
  Tensor in({b, px});
  std::copy(images, images + b * px, in.data());
  if (!c_.conv()) {
    Var x = t.constant(std::move(in));
    for (const auto& l : mlp_) x = ad::relu(l(t, x));
    return (*out_)(t, x);
  }
  in.reshape({b, 1, c_.height, c_.width});
  Var x = features(t, t.constant(std::move(in)), training, static_cast<int64_t>(blocks_.size()));
  x = ad::mean_last(ad::reshape(x, {b, x.dim(1), x.dim(2) * x.dim(3)}));  // global average
  return (*out_)(t, ad::reshape(x, {b, x.dim(1)}));
}

void ImgNet::calibrate(const Tensor& images, int threads) {
  const int64_t m = images.dim(0), px = c_.height * c_.width;
  for (size_t k = 0; k < blocks_.size(); ++k) {
    const int64_t ch = blocks_[k].w->value.dim(0);
    const int64_t chunks = (m + kChunk - 1) / kChunk;
    // Per chunk: the conv output's channel sums and sums of squares (double), then added in
    // chunk order: the same for any thread count.
    std::vector<double> sums(static_cast<size_t>(chunks * ch * 2), 0.0);
    int64_t count = 0;
    parallel_for(
        chunks,
        [&](int64_t c0, int64_t c1) {
          ad::Tape t;
          for (int64_t c = c0; c < c1; ++c) {
            t.clear();
            const int64_t b0 = c * kChunk, b = std::min(kChunk, m - b0);
            Tensor in({b, 1, c_.height, c_.width});
            std::copy(images.data() + b0 * px, images.data() + (b0 + b) * px, in.data());
            Var x = features(t, t.constant(std::move(in)), false, static_cast<int64_t>(k));
            ad::Conv2dOptions pad;
            pad.pad_h = pad.pad_w = 1;
            const Tensor& y = ad::conv2d(x, t.param(*blocks_[k].w), Var(), pad).value();
            const int64_t hw = y.dim(2) * y.dim(3);
            double* s = sums.data() + c * ch * 2;
            for (int64_t i = 0; i < b; ++i)
              for (int64_t o = 0; o < ch; ++o) {
                const float* p = y.data() + (i * ch + o) * hw;
                for (int64_t q = 0; q < hw; ++q) s[o] += p[q], s[ch + o] += double(p[q]) * p[q];
              }
          }
        },
        threads);
    (void)count;
    std::vector<double> total(static_cast<size_t>(2 * ch), 0.0);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t o = 0; o < 2 * ch; ++o)
        total[static_cast<size_t>(o)] += sums[static_cast<size_t>(c * ch * 2 + o)];
    // The number of positions: m images times the conv output's area at block k.
    int64_t h = c_.height, w = c_.width;
    for (size_t q = 0; q < k; ++q)
      if (h >= 2 && w >= 2) h = pooled(h), w = pooled(w);
    const double npos = static_cast<double>(m) * static_cast<double>(h * w);
    for (int64_t o = 0; o < ch; ++o) {
      const double mean = total[static_cast<size_t>(o)] / npos;
      const double var = std::max(0.0, total[static_cast<size_t>(ch + o)] / npos - mean * mean);
      blocks_[k].mean->value[o] = static_cast<float>(mean);
      blocks_[k].var->value[o] = static_cast<float>(var);
    }
  }
}

std::vector<int32_t> ImgNet::predict(const Tensor& images, int threads) const {
  const int64_t m = images.dim(0), px = c_.height * c_.width;
  if (images.rank() != 3 || images.dim(1) != c_.height || images.dim(2) != c_.width)
    throw ShapeError("the model classifies images of " + std::to_string(c_.height) + "x" +
                     std::to_string(c_.width) + ", given " + shape_str(images.shape()));
  std::vector<int32_t> out(static_cast<size_t>(m), 0);
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  parallel_for(
      chunks,
      [&](int64_t c0, int64_t c1) {
        ad::Tape t;
        t.set_training(false);
        for (int64_t c = c0; c < c1; ++c) {
          t.clear();
          const int64_t b0 = c * kChunk, b = std::min(kChunk, m - b0);
          const Tensor& y = logits(t, images.data() + b0 * px, b, false).value();
          for (int64_t i = 0; i < b; ++i) {
            const float* r = y.data() + i * c_.classes;
            out[static_cast<size_t>(b0 + i)] =
                static_cast<int32_t>(std::max_element(r, r + c_.classes) - r);
          }
        }
      },
      threads);
  return out;
}

ImgScore score_predictions(const std::vector<int32_t>& pred, const std::vector<int32_t>& labels,
                           int64_t classes) {
  ImgScore s;
  s.class_n.assign(static_cast<size_t>(classes), 0);
  s.class_correct.assign(static_cast<size_t>(classes), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes)
      throw DataError("label " + std::to_string(labels[i]) + " of image " + std::to_string(i) +
                      " is not a class of the model (0-" + std::to_string(classes - 1) + ")");
    ++s.n;
    ++s.class_n[static_cast<size_t>(labels[i])];
    if (pred[i] == labels[i]) ++s.correct, ++s.class_correct[static_cast<size_t>(labels[i])];
  }
  return s;
}

ImgTraining::ImgTraining(ImgNetConfig c, ImgTrainOptions o, ImageSet train, ImageSet valid,
                         int64_t steps_or_0, int64_t epochs, uint64_t seed, int threads,
                         std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      c_(std::move(c)),
      o_(std::move(o)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      threads_(threads) {
  if (o_.batch < 1) throw UsageError("batch-size must be >= 1");
  c_.validate();
  if (train_.images.dim(1) != c_.height || train_.images.dim(2) != c_.width)
    throw DataError("training images are not " + std::to_string(c_.height) + "x" +
                    std::to_string(c_.width));
  for (const int32_t l : train_.labels)
    if (l >= c_.classes)
      throw DataError("training label " + std::to_string(l) + " is not below classes " +
                      std::to_string(c_.classes));
  if (valid_.size() > 0) {
    if (valid_.images.dim(1) != c_.height || valid_.images.dim(2) != c_.width)
      throw DataError("validation images are " + shape_str(valid_.images.shape()) +
                      ", training images " + std::to_string(c_.height) + "x" +
                      std::to_string(c_.width));
    for (const int32_t l : valid_.labels)
      if (l >= c_.classes)
        throw DataError("validation label " + std::to_string(l) + " is not a class of the " +
                        "training set (0-" + std::to_string(c_.classes - 1) + ")");
  }
  set_run(train_.size(), steps_or_0, epochs);
  Rng init(seed);
  model_ = std::make_unique<ImgNet>(ps_, c_, init);
  const int64_t mc = std::min(kCalibration, train_.size()), px = c_.height * c_.width;
  calib_ = Tensor({mc, c_.height, c_.width});
  std::copy(train_.images.data(), train_.images.data() + mc * px, calib_.data());
  std::vector<ad::Parameter*> trained;
  for (ad::Parameter* p : ps_.params())
    if (p->name.find("running_") == std::string::npos) trained.push_back(p);
  opt_ = std::make_unique<nn::Adam>(trained, o_.lr, 0.9, 0.999, 1e-8, 0.0,
                                    nn::parse_schedule(o_.schedule, o_.warmup, steps_));
}

void ImgTraining::on_batch(const nn::TrainState&) {
  const int64_t px = c_.height * c_.width, b = batch_items();
  batch_images_ = Tensor({b, px});
  for (int64_t i = 0; i < b; ++i)
    std::copy(train_.images.data() + batch()[static_cast<size_t>(i)] * px,
              train_.images.data() + (batch()[static_cast<size_t>(i)] + 1) * px,
              batch_images_.data() + i * px);
}

train::Slice ImgTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  const int64_t px = c_.height * c_.width, b = end - begin;
  Var z = model_->logits(t, batch_images_.data() + begin * px, b, true);
  std::vector<int32_t> y;
  for (int64_t i = begin; i < end; ++i)
    y.push_back(train_.labels[static_cast<size_t>(batch()[static_cast<size_t>(i)])]);
  train::Slice s;
  s.loss = nn::cross_entropy(z, y);
  s.weight = static_cast<double>(b);
  double correct = 0;
  for (int64_t i = 0; i < b; ++i) {
    const float* r = z.value().data() + i * c_.classes;
    correct += (std::max_element(r, r + c_.classes) - r) == y[static_cast<size_t>(i)];
  }
  s.sums = {correct};
  return s;
}

std::vector<std::string> ImgTraining::eval_metrics() const {
  if (valid_.size() == 0) return {};
  return {"valid_acc"};
}

train::Metrics ImgTraining::evaluate() {
  if (c_.conv()) model_->calibrate(calib_, threads_);
  if (valid_.size() == 0) return {};
  const ImgScore s =
      score_predictions(model_->predict(valid_.images, threads_), valid_.labels, c_.classes);
  return {{"valid_acc", static_cast<double>(s.correct) / static_cast<double>(s.n)}};
}

void ImgTraining::finish(nn::ModelFile& f) {
  const train::Metrics m = evaluate();  // also calibrates what the file keeps
  for (const auto& [k, v] : m) f.numbers["result/" + k] = v;
  nn::put_params(f, ps_);
}

LoadedImgNet load_imgnet(const std::string& path) {
  LoadedImgNet m;
  m.file = nn::load_model_file(path, "imgclass");
  train::in_file(path, [&] {
    train::read_config(m.file, m.config);
    DataSizes sizes{m.config};  // stored after the options (data_yaml)
    train::read_config(m.file, sizes);
    io::check_stored([&] { m.config.validate(); }, path);
    m.model = train::build<ImgNet>(m.file, m.params, m.config);
  });
  return m;
}

}  // namespace attnkit::models
