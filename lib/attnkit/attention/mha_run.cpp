#include "attnkit/attention/mha_run.h"

#include <map>
#include <vector>

#include "attnkit/attention/score.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::attention {

MhaRun prepare_mha_run(const MhaRunOptions& o, const GivenOption& given) {
  if (given("key") != given("value"))
    throw UsageError("--key and --value go together (cross-attention)");
  MhaRun r;
  r.files = o;
  r.opt.heads = o.heads;
  r.opt.output = option_value("--emit", [&] { return parse_mha_output(o.emit); });
  if (o.heads < 1) throw UsageError("--heads must be at least 1");
  auto arrays = io::read_npz(o.params);
  // A NaN or infinite parameter would make every weight 0 (or NaN): refused, as inputs are.
  for (const auto& [name, t] : arrays) io::require_finite(t, o.params + ":" + name);
  try {
    r.params = mha_params(arrays);
  } catch (Error& e) {
    e.locate(o.params);
    throw;
  }
  return r;
}

void check_mha_shard(const MhaRun& r) {
  if (r.opt.output == MhaOutput::HeadWeights)
    throw UsageError(
        "--shard applies to context and weights, not head-weights "
        "(head-major: slices do not concatenate)");
}

PartResult run_mha(MhaRun& r, const GivenOption& given, const ItemRange& range) {
  MhaRunOptions& f = r.files;
  MhaOptions& opt = r.opt;
  const Tensor xq = io::read_tensor(f.query);
  io::require_finite(xq, f.query);
  Tensor xk, xv, m, lengths_t;
  if (given("key")) {
    xk = io::read_tensor(f.key);
    xv = io::read_tensor(f.value);
    io::require_finite(xk, f.key);
    io::require_finite(xv, f.value);
  } else {
    f.key = f.value = f.query;
  }
  const Tensor& K = given("key") ? xk : xq;
  const Tensor& V = given("key") ? xv : xq;
  opt.causal = f.mask == "causal";
  if (given("mask") && !opt.causal) {
    m = io::read_tensor(f.mask);
    opt.mask = &m;
  }
  std::vector<int64_t> lengths;
  if (given("key-padding")) {
    lengths_t = io::read_tensor(f.padding);
    try {
      const Shape ks = as_batch_shape(K.shape());
      lengths = key_lengths_from(lengths_t, K.rank() == 3 ? ks[0] : 1, ks[1]);
    } catch (Error& e) {
      e.locate(f.padding);
      throw;
    }
    opt.key_lengths = &lengths;
  }
  // A slice: its batch items (3-D inputs), else its query rows.
  PartResult res;
  if (range && (xq.rank() == 2 || xq.rank() == 3)) {
    const auto [begin, end] = range(xq.dim(0));
    res.first = opt.part_begin = begin;
    opt.part_end = end;
  }
  const OperandFiles files{f.query, f.key, f.value, opt.mask ? f.mask : "", f.params};
  res.result =
      locating_operands(files, [&] { return multi_head_attention(r.params, xq, K, V, opt); });
  opt.mask = nullptr, opt.key_lengths = nullptr;  // locals end here
  return res;
}

}  // namespace attnkit::attention
