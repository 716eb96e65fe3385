#include "attnkit/attention/score_run.h"

#include <map>

#include "attnkit/attention/mha.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::attention {

void load_score_params(Scorer& s, LocalSpec& local, const std::string& path) {
  auto arrays = io::read_npz(path);
  // A NaN or infinite parameter would make every weight 0 (or NaN): refused, as inputs are.
  for (const auto& [name, t] : arrays) io::require_finite(t, path + ":" + name);
  auto fetch = [&](const std::vector<std::string>& names, const std::string& who) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    for (const auto& n : names) {
      auto it = arrays.find(n);
      if (it == arrays.end())
        throw DataError("no array '" + n + "' (" + who + " need " + list + ")", path);
      Tensor& dst = n == "W"    ? s.W
                    : n == "Wk" ? s.Wk
                    : n == "Wq" ? s.Wq
                    : n == "v"  ? s.v
                    : n == "Wa" ? s.Wa
                    : n == "Wp" ? local.Wp
                                : local.vp;
      dst = std::move(it->second);
    }
  };
  fetch(score_param_names(s.kind), score_kind_name(s.kind) + " scores");
  if (local.kind == Local::Predictive) fetch({"Wp", "vp"}, "--local p positions");
}

ScoreRun prepare_score_run(const ScoreRunOptions& o, const GivenOption& given) {
  ScoreRun r;
  r.files = o;
  r.scorer.kind = option_value("--score", [&] { return parse_score_kind(o.score); });
  r.scorer.beta = o.beta;
  if (given("local")) {
    r.local.kind = option_value("--local", [&] { return parse_local(o.local); });
    if (!given("window")) throw UsageError("--local needs --window D");
    r.local.window = o.window;
    const int64_t least = r.local.kind == Local::Predictive ? 1 : 0;
    if (o.window < least)
      throw UsageError("--window must be at least " + std::to_string(least) + " for --local " +
                       o.local);
  } else if (given("window")) {
    throw UsageError("--window goes with --local");
  }
  const bool score_params = !score_param_names(r.scorer.kind).empty();
  r.takes_params = score_params || r.local.kind == Local::Predictive;
  if (given("params") && !r.takes_params)
    throw UsageError(
        "--params is for the bilinear, additive and location scores "
        "and --local p, not " +
        o.score);
  if (!given("params") && r.takes_params)
    throw UsageError(score_params ? "--score " + o.score + " needs --params FILE.npz"
                                  : "--local p needs --params FILE.npz (Wp, vp)");
  if (given("beta") && r.scorer.kind != ScoreKind::Cosine)
    throw UsageError("--beta is for the cosine score, not " + o.score);

  r.opt.seed = o.seed;
  const bool has_v = given("value");
  const std::string emit = !o.emit.empty() ? o.emit : has_v ? "context" : "weights";
  r.opt.output = option_value("--emit", [&] { return parse_output(emit); });
  if (r.opt.output == Output::Context && !has_v) throw UsageError("--emit context needs --value V");
  if (given("hard")) r.opt.hard = option_value("--hard", [&] { return parse_hard(o.hard); });
  if (r.opt.hard != Hard::None && r.opt.output == Output::Scores)
    throw UsageError("--hard applies to weights and context, not to scores");
  return r;
}

void check_score_shard(const ScoreRun& r) {
  if (r.opt.hard == Hard::Sample)
    throw UsageError(
        "--shard does not apply to --hard sample (one generator draws "
        "for every row in order)");
}

PartResult run_score(ScoreRun& r, const GivenOption& given, const ItemRange& range) {
  const ScoreRunOptions& f = r.files;
  Options& opt = r.opt;
  if (r.takes_params) load_score_params(r.scorer, r.local, f.params);
  opt.local = &r.local;
  const Tensor q = io::read_tensor(f.query);
  io::require_finite(q, f.query);
  const Tensor k = io::read_tensor(f.key);
  io::require_finite(k, f.key);
  Tensor v, m;
  if (opt.output == Output::Context) {
    v = io::read_tensor(f.value);
    io::require_finite(v, f.value);
  }
  opt.causal = f.mask == "causal";
  if (given("mask") && !opt.causal) {
    m = io::read_tensor(f.mask);
    opt.mask = &m;
  }
  std::vector<int64_t> lengths;
  if (given("key-padding")) {
    const Tensor lt = io::read_tensor(f.padding);
    const Shape qs = as_batch_shape(q.shape());
    const Shape ks = as_batch_shape(k.shape());
    const int64_t batch = q.rank() == 3 ? qs[0] : k.rank() == 3 ? ks[0] : 1;
    try {
      lengths = key_lengths_from(lt, batch, ks[1]);
    } catch (Error& e) {
      e.locate(f.padding);
      throw;
    }
    opt.key_lengths = &lengths;
  }
  // A slice: its batch items (when an operand is 3-D), else its query rows.
  PartResult res;
  if (range) {
    int64_t items = q.rank() == 2 ? q.dim(0) : 0;
    for (const Tensor* t : {&q, &k, static_cast<const Tensor*>(&v), static_cast<const Tensor*>(&m)})
      if (t->rank() == 3) {
        items = t->dim(0);
        break;
      }
    const auto [begin, end] = range(items);
    res.first = opt.part_begin = begin;
    opt.part_end = end;
  }
  const OperandFiles files{f.query, f.key, f.value, opt.mask ? f.mask : "", f.params};
  res.result = locating_operands(files, [&] {
    return attend(r.scorer, q, k, opt.output == Output::Context ? &v : nullptr, opt);
  });
  opt.local = nullptr, opt.mask = nullptr, opt.key_lengths = nullptr;  // locals end here
  return res;
}

}  // namespace attnkit::attention
