// attn-score: attention scores, weights or contexts of queries against keys (and values).
#include <map>
#include <string>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/attention/mha.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace at = attnkit::attention;

namespace {

// Loads the parameter arrays the score needs from an .npz archive; a missing array is a
// DataError naming it and the archive.
// Loads the parameter arrays the score (and predictive local attention) need from an .npz
// archive; a missing array is a DataError naming it and the archive.
void load_params(at::Scorer& s, at::LocalSpec& local, const std::string& path) {
  auto arrays = attnkit::io::read_npz(path);
  auto fetch = [&](const std::vector<std::string>& names, const std::string& who) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    for (const auto& n : names) {
      auto it = arrays.find(n);
      if (it == arrays.end())
        throw attnkit::DataError("no array '" + n + "' (" + who + " need " + list + ")", path);
      attnkit::Tensor& dst = n == "W"    ? s.W
                             : n == "Wk" ? s.Wk
                             : n == "Wq" ? s.Wq
                             : n == "v"  ? s.v
                             : n == "Wa" ? s.Wa
                             : n == "Wp" ? local.Wp
                                         : local.vp;
      dst = std::move(it->second);
    }
  };
  fetch(at::score_param_names(s.kind), at::score_kind_name(s.kind) + " scores");
  if (local.kind == at::Local::Predictive) fetch({"Wp", "vp"}, "--local p positions");
}

}  // namespace

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

    at::Scorer scorer;
    scorer.kind =
        attnkit::cli::parse_option("--score", [&] { return at::parse_score_kind(score); });
    scorer.beta = beta;
    at::LocalSpec local;
    if (app.given("local")) {
      local.kind =
          attnkit::cli::parse_option("--local", [&] { return at::parse_local(local_kind); });
      if (!app.given("window")) throw attnkit::UsageError("--local needs --window D");
      local.window = window;
      const int64_t least = local.kind == at::Local::Predictive ? 1 : 0;
      if (window < least)
        throw attnkit::UsageError("--window must be at least " + std::to_string(least) +
                                  " for --local " + local_kind);
    } else if (app.given("window")) {
      throw attnkit::UsageError("--window goes with --local");
    }
    const bool score_params = !at::score_param_names(scorer.kind).empty();
    const bool takes_params = score_params || local.kind == at::Local::Predictive;
    if (app.given("params") && !takes_params)
      throw attnkit::UsageError(
          "--params is for the bilinear, additive and location scores "
          "and --local p, not " +
          score);
    if (!app.given("params") && takes_params)
      throw attnkit::UsageError(score_params ? "--score " + score + " needs --params FILE.npz"
                                             : "--local p needs --params FILE.npz (Wp, vp)");
    if (app.given("beta") && scorer.kind != at::ScoreKind::Cosine)
      throw attnkit::UsageError("--beta is for the cosine score, not " + score);

    at::Options opt;
    opt.seed = app.common().seed;
    const bool has_v = app.given("value");
    if (output.empty()) output = has_v ? "context" : "weights";
    opt.output = attnkit::cli::parse_option("--emit", [&] { return at::parse_output(output); });
    if (opt.output == at::Output::Context && !has_v)
      throw attnkit::UsageError("--emit context needs --value V");
    if (app.given("hard"))
      opt.hard = attnkit::cli::parse_option("--hard", [&] { return at::parse_hard(hard); });
    if (opt.hard != at::Hard::None && opt.output == at::Output::Scores)
      throw attnkit::UsageError("--hard applies to weights and context, not to scores");

    const attnkit::cli::Shard shard = app.shard();
    if (shard.given) {
      attnkit::cli::check_shard_text_output(app, out);
      if (opt.hard == at::Hard::Sample)
        throw attnkit::UsageError(
            "--shard does not apply to --hard sample (one generator draws "
            "for every row in order)");
    }
    if (takes_params) load_params(scorer, local, params);
    opt.local = &local;
    const attnkit::Tensor q = attnkit::io::read_tensor(q_path);
    attnkit::io::require_finite(q, q_path);
    const attnkit::Tensor k = attnkit::io::read_tensor(k_path);
    attnkit::io::require_finite(k, k_path);
    attnkit::Tensor v, m;
    if (opt.output == at::Output::Context) {
      v = attnkit::io::read_tensor(v_path);
      attnkit::io::require_finite(v, v_path);
    }
    opt.causal = mask == "causal";
    if (app.given("mask") && !opt.causal) {
      m = attnkit::io::read_tensor(mask);
      opt.mask = &m;
    }

    std::vector<int64_t> lengths;
    if (app.given("key-padding")) {
      const attnkit::Tensor lt = attnkit::io::read_tensor(padding);
      const attnkit::Shape qs = attnkit::as_batch_shape(q.shape());
      const attnkit::Shape ks = attnkit::as_batch_shape(k.shape());
      const int64_t batch = q.rank() == 3 ? qs[0] : k.rank() == 3 ? ks[0] : 1;
      try {
        lengths = at::key_lengths_from(lt, batch, ks[1]);
      } catch (attnkit::Error& e) {
        e.locate(padding);
        throw;
      }
      opt.key_lengths = &lengths;
    }

    // --shard: the slice's batch items (when an operand is 3-D), else its query rows.
    int64_t first = 0;
    if (shard.given) {
      int64_t items = q.rank() == 2 ? q.dim(0) : 0;
      for (const attnkit::Tensor* t : {&q, &k, static_cast<const attnkit::Tensor*>(&v),
                                       static_cast<const attnkit::Tensor*>(&m)})
        if (t->rank() == 3) {
          items = t->dim(0);
          break;
        }
      first = opt.part_begin = shard.begin(items);
      opt.part_end = shard.end(items);
    }
    const at::OperandFiles files{q_path, k_path, v_path, opt.mask ? mask : "", params};
    const attnkit::Tensor result = at::locating_operands(files, [&] {
      return at::attend(scorer, q, k, opt.output == at::Output::Context ? &v : nullptr, opt);
    });
    attnkit::cli::write_shard_tensor(app, out, result, first);
  });
}
