#include "attnkit/vision/cnn.h"

#include <cmath>
#include <sstream>

#include "attnkit/core/error.h"

namespace attnkit::vision {

void CnnConfig::validate() const {
  if (channels.empty()) throw UsageError("the CNN needs at least one block (--channels)");
  for (int64_t c : channels)
    if (c < 1) throw UsageError("CNN channel counts must be positive, got " + std::to_string(c));
  if (in_channels < 1)
    throw UsageError("the CNN's input channels must be positive, got " +
                     std::to_string(in_channels));
  if (!(momentum > 0.0f && momentum <= 1.0f))
    throw UsageError("batch norm momentum must be in (0, 1]");
  if (!(eps > 0.0f)) throw UsageError("batch norm eps must be positive");
}

std::vector<int64_t> parse_channels(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1 || v > 4096)
      throw UsageError("channels: expected comma-separated counts in 1..4096 such as 16,32, got '" +
                       text + "'");
    out.push_back(v);
  }
  if (out.empty() || (!text.empty() && text.back() == ','))
    throw UsageError("channels: expected comma-separated counts such as 16,32, got '" + text + "'");
  return out;
}

std::vector<int64_t> parse_channels_field(const std::string& text, const std::string& name) {
  try {
    return parse_channels(text);
  } catch (const UsageError& e) {
    throw UsageError(name + ": " + e.what());
  }
}

std::string format_channels(const std::vector<int64_t>& channels) {
  std::string s;
  for (size_t i = 0; i < channels.size(); ++i) s += (i ? "," : "") + std::to_string(channels[i]);
  return s;
}

CnnEncoder::CnnEncoder(nn::ParamStore& ps, const std::string& name, const CnnConfig& c, Rng& rng)
    : c_(c), name_(name) {
  c_.validate();
  int64_t in = c_.in_channels;
  for (size_t i = 0; i < c_.channels.size(); ++i) {
    const int64_t out = c_.channels[i];
    const std::string p = name + ".b" + std::to_string(i);
    Tensor w({out, in, 3, 3});
    nn::init_uniform(w, rng, 1.0f / std::sqrt(static_cast<float>(in * 9)));
    Block b;
    b.conv = &ps.add(p + ".conv.weight", std::move(w));
    b.gamma = &ps.add(p + ".bn.weight", Tensor({out}, 1.0f));
    b.beta = &ps.add(p + ".bn.bias", Tensor({out}, 0.0f));
    blocks_.push_back(b);
    mean_.emplace_back(Shape{out}, 0.0f);
    var_.emplace_back(Shape{out}, 1.0f);
    in = out;
  }
}

int64_t CnnEncoder::out_size(int64_t h) const {
  const int64_t h0 = h;
  for (size_t i = 0; i < c_.channels.size(); ++i) h /= 2;
  if (h < 1)
    throw ShapeError("a side of " + std::to_string(h0) + " pixels is too small for " +
                     std::to_string(blocks()) + " pooling blocks (needs at least " +
                     std::to_string(int64_t{1} << blocks()) + ")");
  return h;
}

int64_t CnnEncoder::batch_sums() const {
  int64_t n = 0;
  for (int64_t c : c_.channels) n += 1 + 2 * c;
  return n;
}

ad::Var CnnEncoder::features(ad::Tape& t, ad::Var x, std::vector<double>* sums) const {
  if (x.rank() == 3) x = ad::reshape(x, {x.dim(0), 1, x.dim(1), x.dim(2)});
  if (x.rank() != 4 || x.dim(1) != c_.in_channels)
    throw ShapeError("the CNN encoder expects images [B, H, W] or [B, " +
                     std::to_string(c_.in_channels) + ", H, W], got " + shape_str(x.shape()));
  out_size(x.dim(2));
  out_size(x.dim(3));
  const bool training = t.training();
  ad::Conv2dOptions same;
  same.pad_h = same.pad_w = 1;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    ad::Var y = ad::conv2d(x, t.param(*b.conv), ad::Var(), same);
    if (training) {
      // The slice's own statistics; the op's running-statistics update lands in copies.
      Tensor m = mean_[i].clone(), v = var_[i].clone();
      if (sums) {
        const Tensor& Y = y.value();
        const int64_t n = Y.dim(0), c = Y.dim(1), hw = Y.dim(2) * Y.dim(3);
        sums->push_back(static_cast<double>(n * hw));
        const size_t s0 = sums->size();
        sums->resize(s0 + static_cast<size_t>(2 * c), 0.0);
        for (int64_t ch = 0; ch < c; ++ch) {
          double s = 0.0, s2 = 0.0;
          for (int64_t k = 0; k < n; ++k) {
            const float* p = Y.data() + (k * c + ch) * hw;
            for (int64_t j = 0; j < hw; ++j) {
              s += p[j];
              s2 += static_cast<double>(p[j]) * p[j];
            }
          }
          (*sums)[s0 + static_cast<size_t>(ch)] = s;
          (*sums)[s0 + static_cast<size_t>(c + ch)] = s2;
        }
      }
      y = ad::batch_norm2d(y, t.param(*b.gamma), t.param(*b.beta), m, v, true, c_.momentum, c_.eps);
    } else {
      // Evaluation only reads the running statistics.
      y = ad::batch_norm2d(y, t.param(*b.gamma), t.param(*b.beta), const_cast<Tensor&>(mean_[i]),
                           const_cast<Tensor&>(var_[i]), false, c_.momentum, c_.eps);
    }
    x = ad::max_pool2d(ad::relu(y), 2);
  }
  return x;
}

ad::Var CnnEncoder::regions(ad::Var maps) {
  if (maps.rank() != 4)
    throw ShapeError("regions expects feature maps [B, D, H, W], got " + shape_str(maps.shape()));
  const int64_t B = maps.dim(0), D = maps.dim(1), L = maps.dim(2) * maps.dim(3);
  return ad::permute(ad::reshape(maps, {B, D, L}), {0, 2, 1});
}

void CnnEncoder::update_running(const std::vector<double>& sums, size_t offset) {
  if (sums.size() < offset + static_cast<size_t>(batch_sums()))
    throw DataError("batch-norm sums: expected " + std::to_string(batch_sums()) + " numbers");
  size_t k = offset;
  const double mom = c_.momentum;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const int64_t c = c_.channels[i];
    const double n = sums[k++];
    if (n < 2) throw DataError("batch-norm sums: fewer than two values a channel");
    for (int64_t ch = 0; ch < c; ++ch) {
      const double s = sums[k + static_cast<size_t>(ch)];
      const double s2 = sums[k + static_cast<size_t>(c + ch)];
      const double m = s / n;
      const double var = std::max(0.0, (s2 - s * m) / (n - 1));
      mean_[i][ch] = static_cast<float>((1.0 - mom) * mean_[i][ch] + mom * m);
      var_[i][ch] = static_cast<float>((1.0 - mom) * var_[i][ch] + mom * var);
    }
    k += static_cast<size_t>(2 * c);
  }
}

std::vector<std::string> CnnEncoder::buffer_names() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const std::string p = name_ + ".b" + std::to_string(i) + ".bn.";
    out.push_back(p + "running_mean");
    out.push_back(p + "running_var");
  }
  return out;
}

void CnnEncoder::put_buffers(nn::ModelFile& f, const std::string& prefix) const {
  const std::vector<std::string> names = buffer_names();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    f.tensors[prefix + names[2 * i]] = mean_[i].clone();
    f.tensors[prefix + names[2 * i + 1]] = var_[i].clone();
  }
}

void CnnEncoder::get_buffers(const nn::ModelFile& f, const std::string& prefix) {
  const std::vector<std::string> names = buffer_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor& t = f.tensor(prefix + names[i]);
    const int64_t c = c_.channels[i / 2];
    if (t.shape() != Shape{c})
      throw DataError(prefix + names[i] + ": expected [" + std::to_string(c) + "], found " +
                          shape_str(t.shape()),
                      f.file);
  }
  for (size_t i = 0; i < blocks_.size(); ++i) {
    mean_[i] = f.tensor(prefix + names[2 * i]).clone();
    var_[i] = f.tensor(prefix + names[2 * i + 1]).clone();
  }
}

}  // namespace attnkit::vision
