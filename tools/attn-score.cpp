// attn-score: attention scores, weights or contexts of queries against keys (and values).
#include <string>

#include "attnkit/attention/score_run.h"
#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"

namespace at = attnkit::attention;

int main(int argc, char** argv) {
  return attnkit::cli::run("attn-score", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::string q_path, k_path, v_path, score = "scaled-dot", params, mask, output, hard, out = "-";
    std::string local_kind, padding;
    int64_t window = -1;
    float beta = 1.0f;
    app.describe("Attention scores, weights or contexts of queries against keys.",
                 "[OPTIONS] --query Q --key K [--value V]");
    app.options().add_options()("query", po::value(&q_path)->value_name("Q")->required(),
                                "queries, one per row: n_q x d_q (or a batch, B x n_q x d_q)")(
        "key", po::value(&k_path)->value_name("K")->required(), "keys: n_k x d_k")(
        "value", po::value(&v_path)->value_name("V"), "values: n_k x d_v")(
        "score", po::value(&score)->value_name("KIND")->default_value(score),
        "dot, scaled-dot, bilinear (general), additive (concat), cosine or location")(
        "params", po::value(&params)->value_name("P.npz"),
        "parameters: W (bilinear), Wk, Wq, v (additive), Wa (location), Wp, vp (--local p)")(
        "beta", po::value(&beta)->value_name("B")->default_value(1.0f, "1"),
        "sharpness of the cosine score")(
        "mask", po::value(&mask)->value_name("causal|FILE"),
        "'causal' (query i sees keys j <= i) or a 0/1 n_q x n_k matrix (0 = masked)")(
        "key-padding", po::value(&padding)->value_name("LENGTHS"),
        "file of one valid key length per batch item (later keys get zero weight)")(
        "local", po::value(&local_kind)->value_name("m|p"),
        "local attention (Luong): m = monotonic (p_i = i), p = predicted p_i")(
        "window", po::value(&window)->value_name("D"),
        "half-width of the local window: keys with |j - p_i| <= D")(
        "emit", po::value(&output)->value_name("WHAT"),
        "scores, weights or context (default: context with --value, else weights)")(
        "hard", po::value(&hard)->value_name("MODE"),
        "hard attention: argmax or sample (one-hot weights)");
    app.options().add_options()(
        "output,o", po::value(&out)->value_name("FILE"),
        "where to write (.npy, .npz or text by the extension; - is standard output)");
    app.enable(attnkit::cli::kSeed | attnkit::cli::kOutput);
    app.shard_items(
        "batch items (when an operand is 3-D), else the query rows (text "
        "output; not with --hard sample)");
    app.epilog(
        "Scores: dot q.k; scaled-dot q.k/sqrt(d_k); bilinear k'Wq with W d_k x d_q;\n"
        "additive v'tanh(Wk k + Wq q) with Wk d_a x d_k, Wq d_a x d_q, v d_a; cosine\n"
        "beta cos(q, k), 0 for a zero vector; location (Wa q)_j with Wa n_k x d_q. Local p:\n"
        "p_i = n_k sigmoid(vp'tanh(Wp q_i)), weights times exp(-(j-p_i)^2/(2 sigma^2)),\n"
        "sigma = D/2. Weights are the softmax of each row of scores\n"
        "(masked scores are -inf, their weights 0; a row with every key masked has zero\n"
        "weights and a zero context). Inputs are text or .npy/.npz, detected by content;\n"
        "3-D inputs are batches, a 2-D input is shared by every batch item.");
    app.parse();
    at::ScoreRunOptions o;
    o.query = q_path, o.key = k_path, o.value = v_path, o.score = score, o.params = params;
    o.mask = mask, o.padding = padding, o.local = local_kind, o.emit = output, o.hard = hard;
    o.window = window, o.beta = beta, o.seed = app.common().seed;
    at::ScoreRun r = at::prepare_score_run(o, attnkit::cli::given(app));
    if (app.shard().given) {
      attnkit::cli::check_shard_text_output(app, out);
      at::check_score_shard(r);
    }
    const at::PartResult res =
        at::run_score(r, attnkit::cli::given(app), attnkit::cli::shard_range(app));
    attnkit::cli::write_shard_tensor(app, out, res.result, res.first);
  });
}
