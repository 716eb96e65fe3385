// attn-2d: a 2-D self-attention block (SAGAN, BigGAN's, non-local) applied to feature maps
// with PyTorch's parameters; the output, or the attention maps of chosen query pixels, and
// a picture of them over the input.
#include <cstdio>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/attn2d.h"
#include "attnkit/plot/overlay.h"

using namespace attnkit;

namespace {

struct Query {
  int64_t row, col;
};

Query parse_query(const std::string& s) {
  int64_t r = 0, c = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%ld,%ld%c", &r, &c, &extra) != 2)
    throw UsageError("--query takes ROW,COL (zero-based), got '" + s + "'");
  return {r, c};
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run("attn-2d", argc, argv, [](cli::App& app) {
    namespace po = boost::program_options;
    std::string in, params, block = "sagan", emit = "output", draw, out = "-";
    std::vector<std::string> queries;
    app.describe(
        "Apply a 2-D self-attention block (SAGAN, BigGAN, non-local) to feature maps with "
        "PyTorch's parameters.",
        "[OPTIONS] -i MAPS --params P.npz [--block KIND] [--emit output|attention] "
        "[--query ROW,COL ...] [-o OUT] [--draw PICTURE.png]");
    app.options().add_options()("input,i", po::value(&in)->value_name("MAPS")->required(),
                                "feature maps C x H x W, or a batch N x C x H x W (.npy, "
                                ".npz:NAME, IDX or text)")(
        "params", po::value(&params)->value_name("P.npz")->required(),
        "the block's state_dict under PyTorch's names (see below)")(
        "block", po::value(&block)->value_name("KIND")->default_value(block),
        ("the block: " + nn::attn2d_kinds()).c_str())(
        "emit", po::value(&emit)->value_name("WHAT")->default_value(emit),
        "output (the block's result, the input's shape) or attention")(
        "query", po::value(&queries)->value_name("ROW,COL")->composing(),
        "a query pixel (zero-based; repeatable): --emit attention gives its map over the "
        "keys")("output,o", po::value(&out)->value_name("OUT")->default_value(out),
                "where to write (.npy, .npz or text by the name; - is standard output)")(
        "draw", po::value(&draw)->value_name("PICTURE.png"),
        "draw the first item's channel mean with each query's attention over it (needs "
        "--query)");
    app.enable(cli::kOutput);
    app.epilog(
        "Blocks and their parameters (PyTorch state_dict names, 1x1 convolutions):\n"
        "  sagan              query_conv, key_conv (C -> C/8), value_conv (C -> C), with\n"
        "                     .weight and .bias; gamma [1]. y = gamma o + x (Zhang et al.)\n"
        "  biggan             theta, phi (C -> C/8), g (C -> C/2), o (C/2 -> C), .weight\n"
        "                     only; gamma. phi and g max-pooled 2x2: H and W even\n"
        "  nonlocal-gaussian  g, theta, phi (C -> Ci), W (Ci -> C), .weight and .bias;\n"
        "  nonlocal-dot       softmax(theta . phi), (theta . phi) / HW, or\n"
        "  nonlocal-concat    ReLU(w [theta; phi]) / HW with concat_project.0.weight\n"
        "                     [1, 2Ci, 1, 1] (Wang et al.; z = W y + x, no batch norm)\n"
        "Attention: without --query, N x HW x K (or HW x K for one map): row i is pixel i's\n"
        "weights over the K keys (K = HW; HW/4 for biggan), pixels in row-major order.\n"
        "With --query, one map per query, Q x H' x W' (N x Q x H' x W' for a batch: .npy).\n"
        "Inputs with NaN or infinite values are refused.");
    app.parse();
    const nn::Attn2dKind kind =
        cli::parse_option("--block", [&] { return nn::parse_attn2d_kind(block); });
    if (emit != "output" && emit != "attention")
      throw UsageError("--emit: unknown output '" + emit + "' (choose output or attention)");
    std::vector<Query> qs;
    for (const std::string& q : queries) qs.push_back(parse_query(q));
    if (app.given("draw") && qs.empty()) throw UsageError("--draw needs at least one --query");
    Tensor x = io::read_tensor(in);
    io::require_finite(x, in);
    const bool single = x.rank() == 3;
    if (single) x = Tensor({1, x.dim(0), x.dim(1), x.dim(2)}, std::move(x.values()));
    if (x.rank() != 4)
      throw DataError(
          "feature maps must be C x H x W or N x C x H x W, got " + shape_str(x.shape()), in);
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    for (const Query& q : qs)
      if (q.row < 0 || q.row >= h || q.col < 0 || q.col >= w)
        throw UsageError("--query " + std::to_string(q.row) + "," + std::to_string(q.col) +
                         " lies outside the " + std::to_string(h) + " x " + std::to_string(w) +
                         " maps");
    std::map<std::string, Tensor> p = io::read_npz(params);
    ad::Tape t;
    t.set_recording(false);
    nn::Attn2dOutput r;
    try {
      r = nn::attn2d(kind, p, t.constant(x.clone()));
    } catch (ShapeError&) {
      throw;  // the maps' shape, not the parameters'
    } catch (DataError& e) {
      e.locate(params);
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
    if (emit == "output") {
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
    if (app.given("draw")) {
      Tensor mean({h, w}, 0.0f);
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < h * w; ++i) mean[i] += x[ch * h * w + i] / static_cast<float>(c);
      const Tensor m = maps(0);
      std::vector<plot::OverlayQuery> oq;
      for (size_t i = 0; i < qs.size(); ++i) {
        Tensor one({kh, kw});
        std::copy(m.data() + static_cast<int64_t>(i) * keys,
                  m.data() + static_cast<int64_t>(i + 1) * keys, one.data());
        oq.push_back({qs[i].row, qs[i].col, std::move(one)});
      }
      io::write_file(draw, plot::encode_png(plot::render_overlays(mean, oq)));
    }
    io::write_tensor(out, result, app.write_options());
  });
}
