#include "attnkit/nn/attn2d_run.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/attn2d.h"
#include "attnkit/plot/overlay.h"

namespace attnkit::nn {

namespace {

struct Query {
  int64_t row, col;
};

Query parse_query(const std::string& s) {
  int64_t r = 0, c = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%ld,%ld%c", &r, &c, &extra) != 2)
    throw UsageError("--pixel takes ROW,COL (zero-based), got '" + s + "'");
  return {r, c};
}

}  // namespace

Tensor run_attn2d(const Attn2dRunOptions& o, const GivenOption& given) {
  const Attn2dKind kind = option_value("--block", [&] { return parse_attn2d_kind(o.block); });
  if (o.emit != "output" && o.emit != "attention")
    throw UsageError("--emit: unknown output '" + o.emit + "' (choose output or attention)");
  std::vector<Query> qs;
  for (const std::string& q : o.queries) qs.push_back(parse_query(q));
  if (given("draw") && qs.empty()) throw UsageError("--draw needs at least one --pixel");
  Tensor x = io::read_tensor(o.input);
  io::require_finite(x, o.input);
  const bool single = x.rank() == 3;
  if (single) x = Tensor({1, x.dim(0), x.dim(1), x.dim(2)}, std::move(x.values()));
  if (x.rank() != 4)
    throw DataError("feature maps must be C x H x W or N x C x H x W, got " + shape_str(x.shape()),
                    o.input);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  for (const Query& q : qs)
    if (q.row < 0 || q.row >= h || q.col < 0 || q.col >= w)
      throw UsageError("--pixel " + std::to_string(q.row) + "," + std::to_string(q.col) +
                       " lies outside the " + std::to_string(h) + " x " + std::to_string(w) +
                       " maps");
  std::map<std::string, Tensor> p = io::read_npz(o.params);
  // A NaN or infinite parameter would make every weight 0 (or NaN): refused, as inputs are.
  for (const auto& [name, t] : p) io::require_finite(t, o.params + ":" + name);
  ad::Tape t;
  t.set_recording(false);
  Attn2dOutput r;
  try {
    r = attn2d(kind, p, t.constant(x.clone()));
  } catch (ShapeError&) {
    throw;  // the maps' shape, not the parameters'
  } catch (DataError& e) {
    e.locate(o.params);
    throw;
  }
  const Tensor& att = r.attention.value();  // [N, HW, K]
  const int64_t keys = att.dim(2);
  const int64_t kh = keys == h * w ? h : h / 2, kw = keys == h * w ? w : w / 2;
  // One [Q, kh, kw] block of maps per item.
  auto maps = [&](int64_t item) {
    Tensor m({static_cast<int64_t>(qs.size()), kh, kw});
    for (size_t i = 0; i < qs.size(); ++i) {
      const float* row = att.data() + (item * h * w + qs[i].row * w + qs[i].col) * keys;
      std::copy(row, row + keys, m.data() + static_cast<int64_t>(i) * keys);
    }
    return m;
  };
  Tensor result;
  if (o.emit == "output") {
    result = r.y.value().clone();
    if (single) result = Tensor({c, h, w}, std::move(result.values()));
  } else if (qs.empty()) {
    result = att.clone();
    if (single) result = Tensor({h * w, keys}, std::move(result.values()));
  } else if (single) {
    result = maps(0);
  } else {
    result = Tensor({n, static_cast<int64_t>(qs.size()), kh, kw});
    for (int64_t b = 0; b < n; ++b) {
      const Tensor m = maps(b);
      std::copy(m.data(), m.data() + m.size(), result.data() + b * m.size());
    }
  }
  if (given("draw")) {
    Tensor mean({h, w}, 0.0f);
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < h * w; ++i) mean[i] += x[ch * h * w + i] / static_cast<float>(c);
    const Tensor m = maps(0);
    std::vector<plot::OverlayQuery> oq;
    for (size_t i = 0; i < qs.size(); ++i) {
      Tensor one({kh, kw});
      std::copy(m.data() + static_cast<int64_t>(i) * keys,
                m.data() + static_cast<int64_t>(i + 1) * keys, one.data());
      // Each panel named by its query pixel (row, column, zero-based as --pixel takes them).
      oq.push_back({qs[i].row, qs[i].col, std::move(one),
                    "query " + std::to_string(qs[i].row) + "," + std::to_string(qs[i].col)});
    }
    io::write_file(o.draw, plot::encode_png(plot::render_overlays(mean, oq)));
  }
  return result;
}

}  // namespace attnkit::nn
