// attn-mha: multi-head attention with PyTorch nn.MultiheadAttention parameters.
#include <string>

#include "attnkit/attention/mha_run.h"
#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"

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
    at::MhaRunOptions o;
    o.query = q_path, o.key = k_path, o.value = v_path, o.params = params, o.mask = mask;
    o.padding = padding, o.emit = output, o.heads = heads;
    at::MhaRun r = at::prepare_mha_run(o, attnkit::cli::given(app));
    if (app.shard().given) {
      attnkit::cli::check_shard_text_output(app, out);
      at::check_mha_shard(r);
    }
    const at::PartResult res =
        at::run_mha(r, attnkit::cli::given(app), attnkit::cli::shard_range(app));
    attnkit::cli::write_shard_tensor(app, out, res.result, res.first);
  });
}
