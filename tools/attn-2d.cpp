// attn-2d: a 2-D self-attention block (SAGAN, BigGAN's, non-local) applied to feature maps
// with PyTorch's parameters; the output, or the attention maps of chosen query pixels, and
// a picture of them over the input.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/attn2d.h"
#include "attnkit/nn/attn2d_run.h"

using namespace attnkit;

int main(int argc, char** argv) {
  return cli::run("attn-2d", argc, argv, [](cli::App& app) {
    namespace po = boost::program_options;
    std::string in, params, block = "sagan", emit = "output", draw, out = "-";
    std::vector<std::string> queries;
    app.describe(
        "Apply a 2-D self-attention block (SAGAN, BigGAN, non-local) to feature maps with "
        "PyTorch's parameters.",
        "[OPTIONS] -i MAPS --params P.npz [--block KIND] [--emit output|attention] "
        "[--pixel ROW,COL ...] [-o OUT] [--draw PICTURE.png]");
    app.options().add_options()("input,i", po::value(&in)->value_name("MAPS")->required(),
                                "feature maps C x H x W, or a batch N x C x H x W (.npy, "
                                ".npz:NAME, IDX or text)")(
        "params", po::value(&params)->value_name("P.npz")->required(),
        "the block's state_dict under PyTorch's names (see below)")(
        "block", po::value(&block)->value_name("KIND")->default_value(block),
        ("the block: " + nn::attn2d_kinds()).c_str())(
        "emit", po::value(&emit)->value_name("WHAT")->default_value(emit),
        "output (the block's result, the input's shape) or attention")(
        "pixel", po::value(&queries)->value_name("ROW,COL")->composing(),
        "a query pixel (zero-based; repeatable): --emit attention gives its map over the "
        "keys")("output,o", po::value(&out)->value_name("OUT")->default_value(out),
                "where to write (.npy, .npz or text by the name; - is standard output)")(
        "draw", po::value(&draw)->value_name("PICTURE.png"),
        "draw the first item's channel mean with each query's attention over it (needs "
        "--pixel)");
    app.enable(cli::kOutput);
    app.epilog(
        "Blocks and their parameters (PyTorch state_dict names, 1x1 convolutions):\n"
        "  sagan              query_conv, key_conv (C -> C/8), value_conv (C -> C), with\n"
        "                     .weight and .bias; gamma ([1] or 0-d). y = gamma o + x\n"
        "                     (Zhang et al.)\n"
        "  biggan             theta, phi (C -> C/8), g (C -> C/2), o (C/2 -> C), .weight\n"
        "                     only; gamma ([1] or 0-d, as BigGAN-PyTorch saves it). phi\n"
        "                     and g max-pooled 2x2: H and W even\n"
        "  nonlocal-gaussian, nonlocal-dot, nonlocal-concat\n"
        "                     g, theta, phi (C -> Ci), W (Ci -> C), .weight and .bias;\n"
        "                     f = softmax(theta . phi), (theta . phi) / K or\n"
        "                     ReLU(w [theta; phi]) / K over the K keys, w\n"
        "                     concat_project.0.weight [1, 2Ci, 1, 1]; z = W y + x (Wang\n"
        "                     et al.). NONLocalBlock2D's defaults as saved: g.0 and phi.0\n"
        "                     (sub_sample: max-pooled 2x2, K = HW/4, H and W even), W.0\n"
        "                     and W.1 (bn_layer: a BatchNorm2d in eval mode, eps 1e-5)\n"
        "Attention: without --pixel, N x HW x K (or HW x K for one map): row i is pixel i's\n"
        "weights over the K keys (K = HW; HW/4 for biggan and a sub-sampled non-local\n"
        "block), pixels in row-major order.\n"
        "With --pixel, one map per query, Q x H' x W' (N x Q x H' x W' for a batch: .npy).\n"
        "Inputs with NaN or infinite values are refused.");
    app.parse();
    const cli::Outputs outputs({out}, {draw});  // checked now; side ones removed on failure
    nn::Attn2dRunOptions o;
    o.input = in, o.params = params, o.block = block, o.emit = emit, o.draw = draw;
    o.queries = queries;
    io::write_tensor(out, nn::run_attn2d(o, cli::given(app)), app.write_options());
  });
}
