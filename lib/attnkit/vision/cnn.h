// A small convolutional encoder on the tape: the "regions" that attention over images looks at
// (Show, Attend and Tell's annotation vectors a_1..a_L).
//
// Blocks, one per entry of the channel list (e.g. 16,32): conv 3×3 (padding 1, no bias; the
// batch norm's shift replaces it) → batch norm (train/eval) → ReLU → 2×2 max pool. Images
// [B, H, W] (one channel) or [B, C, H, W] become feature maps [B, D, H', W'] with D the last
// channel count and H' = H / 2^blocks (each pooling floors), and the maps become L = H'·W'
// annotation vectors [B, L, D], regions in row-major order (region l is at row l / W',
// column l % W').
//
// Parameters (in the ParamStore, PyTorch's names under `name`, block i):
//   <name>.b<i>.conv.weight [C_i, C_{i-1}, 3, 3]   U(-1/√fan_in, 1/√fan_in) as PyTorch
//   <name>.b<i>.bn.weight   [C_i]                  ones
//   <name>.b<i>.bn.bias     [C_i]                  zeros
// Running statistics (not trained, so not parameters; saved with the model by
// put_buffers/get_buffers as "<prefix><name>.b<i>.bn.running_mean" and ".running_var"):
// mean 0 and variance 1 at the start, as PyTorch's.
//
// Batch norm and the training layer: a training tape normalises each slice by its own
// statistics (as PyTorch's DataParallel does, a slice being a device) and leaves the running
// statistics alone, because slices run concurrently over one const model. Instead the
// forward pass can hand out the slice's per-channel sums (batch_sums) which the training
// layer adds up over the whole batch in slice order (train::Slice::sums); update_running()
// then moves the running statistics by `momentum` towards the whole batch's mean and unbiased
// variance (SyncBatchNorm's running statistics). The result depends on the slice count only,
// never on the thread count. An evaluation tape (training() false) uses the running
// statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/params.h"

namespace attnkit::vision {

struct CnnConfig {
  std::vector<int64_t> channels = {16, 32};  // one block each
  int64_t in_channels = 1;
  float momentum = 0.1f, eps = 1e-5f;  // batch norm
  void validate() const;               // UsageError naming what is wrong
};

// "16,32" → {16, 32}; UsageError on anything but a comma-separated list of positive integers.
std::vector<int64_t> parse_channels(const std::string& text);
std::string format_channels(const std::vector<int64_t>& channels);
// parse_channels as a Config field's parser (core/fields.h): its UsageError names `name`
// ("--channels: channels: expected ...").
std::vector<int64_t> parse_channels_field(const std::string& text, const std::string& name);

class CnnEncoder {
 public:
  CnnEncoder(nn::ParamStore& ps, const std::string& name, const CnnConfig& c, Rng& rng);
  const CnnConfig& config() const { return c_; }
  int64_t blocks() const { return static_cast<int64_t>(c_.channels.size()); }
  int64_t out_channels() const { return c_.channels.back(); }  // D
  // H' for an input side H (each block's pooling floors); ShapeError when it reaches 0.
  int64_t out_size(int64_t h) const;

  // Feature maps [B, D, H', W'] of images x [B, H, W] or [B, C, H, W] (C = in_channels;
  // ShapeError otherwise). On a training tape, when `sums` is given, the batch-statistic
  // sums of every block are appended to it (batch_sums() of them).
  ad::Var features(ad::Tape& t, ad::Var x, std::vector<double>* sums = nullptr) const;
  // Annotation vectors [B, L, D] of feature maps [B, D, H', W'].
  static ad::Var regions(ad::Var maps);
  // features then regions.
  ad::Var annotations(ad::Tape& t, ad::Var x, std::vector<double>* sums = nullptr) const {
    return regions(features(t, x, sums));
  }

  // How many numbers features() appends: per block 1 + 2 C_i (the value count per channel,
  // the per-channel sums, the per-channel sums of squares).
  int64_t batch_sums() const;
  // Moves the running statistics towards the batch that gave `sums` (batch_sums() numbers
  // from sums[offset], added up over the batch's slices). DataError on a short vector.
  void update_running(const std::vector<double>& sums, size_t offset = 0);

  // The running statistics, block by block: mean, then variance.
  const std::vector<Tensor>& running_mean() const { return mean_; }
  const std::vector<Tensor>& running_var() const { return var_; }
  std::vector<std::string> buffer_names() const;  // "<name>.b<i>.bn.running_mean", ...
  void put_buffers(nn::ModelFile& f, const std::string& prefix = "buffer/") const;
  // DataError naming the missing or misshapen entry; nothing changed unless all fit.
  void get_buffers(const nn::ModelFile& f, const std::string& prefix = "buffer/");

  struct Block {
    ad::Parameter* conv;
    ad::Parameter* gamma;
    ad::Parameter* beta;
  };
  const std::vector<Block>& block_params() const { return blocks_; }

 private:
  CnnConfig c_;
  std::string name_;
  std::vector<Block> blocks_;
  std::vector<Tensor> mean_, var_;
};

}  // namespace attnkit::vision
