// attn-mha: multi-head attention with PyTorch nn.MultiheadAttention parameters.
#include <map>
#include <string>
#include <vector>

#include "attnkit/attention/mha.h"
#include "attnkit/attention/score.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace at = attnkit::attention;

int main(int argc, char** argv) {
  return attnkit::cli::run("attn-mha", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::string q_path, k_path, v_path, params, mask, padding, output = "context", out = "-";
    int64_t heads = 0;
    app.describe("Multi-head attention (self or cross) with PyTorch's parameters.",
                 "[OPTIONS] --query X [--key K --value V] --params P.npz --heads H");
    app.options().add_options()("query", po::value(&q_path)->value_name("X")->required(),
                                "queries: N_q x E (or a batch, B x N_q x E)")(
        "key", po::value(&k_path)->value_name("K"),
        "keys: N_k x kdim (cross-attention; default: X, self-attention)")(
        "value", po::value(&v_path)->value_name("V"), "values: N_k x vdim (with --key)")(
        "params", po::value(&params)->value_name("P.npz")->required(),
        "nn.MultiheadAttention state_dict: in_proj_weight, in_proj_bias, out_proj.weight, "
        "out_proj.bias (or q_proj_weight, k_proj_weight, v_proj_weight)")(
        "heads", po::value(&heads)->value_name("H")->required(), "number of heads (divides E)")(
        "mask", po::value(&mask)->value_name("causal|FILE"),
        "'causal' (query i sees keys j <= i) or a 0/1 N_q x N_k matrix (0 = masked)")(
        "key-padding", po::value(&padding)->value_name("LENGTHS"),
        "file of one valid key length per batch item (later keys get zero weight)")(
        "emit", po::value(&output)->value_name("WHAT")->default_value(output),
        "context, weights (averaged over heads) or head-weights");
    app.options().add_options()(
        "output,o", po::value(&out)->value_name("FILE"),
        "where to write (.npy, .npz or text by the extension; - is standard output)");
    app.enable(attnkit::cli::kOutput);
    app.shard_items(
        "batch items (3-D inputs), else the query rows (text output of context "
        "or weights)");
    app.epilog(
        "Computes what torch.nn.MultiheadAttention(E, H, batch_first=True) computes for\n"
        "mha(X, K, V): per-head scaled-dot attention of the projected inputs, then the\n"
        "output projection. Head weights are B x H x N_q x N_k (write them to .npy).\n"
        "Inputs are text or .npy/.npz, detected by content; 3-D inputs are batches.");
    app.parse();
    if (app.given("key") != app.given("value"))
      throw attnkit::UsageError("--key and --value go together (cross-attention)");
    at::MhaOptions opt;
    opt.heads = heads;
    opt.output = attnkit::cli::parse_option("--emit", [&] { return at::parse_mha_output(output); });
    if (heads < 1) throw attnkit::UsageError("--heads must be at least 1");

    auto arrays = attnkit::io::read_npz(params);
    at::MhaParams p;
    try {
      p = at::mha_params(arrays);
    } catch (attnkit::Error& e) {
      e.locate(params);
      throw;
    }
    const attnkit::cli::Shard shard = app.shard();
    if (shard.given) {
      attnkit::cli::check_shard_text_output(app, out);
      if (opt.output == at::MhaOutput::HeadWeights)
        throw attnkit::UsageError(
            "--shard applies to context and weights, not head-weights "
            "(head-major: slices do not concatenate)");
    }
    const attnkit::Tensor xq = attnkit::io::read_tensor(q_path);
    attnkit::io::require_finite(xq, q_path);
    attnkit::Tensor xk, xv, m, lengths_t;
    if (app.given("key")) {
      xk = attnkit::io::read_tensor(k_path);
      xv = attnkit::io::read_tensor(v_path);
      attnkit::io::require_finite(xk, k_path);
      attnkit::io::require_finite(xv, v_path);
    } else {
      k_path = v_path = q_path;
    }
    const attnkit::Tensor& K = app.given("key") ? xk : xq;
    const attnkit::Tensor& V = app.given("key") ? xv : xq;
    opt.causal = mask == "causal";
    if (app.given("mask") && !opt.causal) {
      m = attnkit::io::read_tensor(mask);
      opt.mask = &m;
    }
    std::vector<int64_t> lengths;
    if (app.given("key-padding")) {
      lengths_t = attnkit::io::read_tensor(padding);
      try {
        const attnkit::Shape ks = attnkit::as_batch_shape(K.shape());
        lengths = at::key_lengths_from(lengths_t, K.rank() == 3 ? ks[0] : 1, ks[1]);
      } catch (attnkit::Error& e) {
        e.locate(padding);
        throw;
      }
      opt.key_lengths = &lengths;
    }

    // --shard: the slice's batch items (3-D inputs), else its query rows.
    int64_t first = 0;
    if (shard.given && (xq.rank() == 2 || xq.rank() == 3)) {
      first = opt.part_begin = shard.begin(xq.dim(0));
      opt.part_end = shard.end(xq.dim(0));
    }
    const at::OperandFiles files{q_path, k_path, v_path, opt.mask ? mask : "", params};
    const attnkit::Tensor result =
        at::locating_operands(files, [&] { return at::multi_head_attention(p, xq, K, V, opt); });
    attnkit::cli::write_shard_tensor(app, out, result, first);
  });
}
