// attn-score: attention scores, weights or contexts of queries against keys (and values).
#include <map>
#include <string>

#include "attnkit/attention/attention.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace at = attnkit::attention;

namespace {

// Loads the parameter arrays the score needs from an .npz archive; a missing array is a
// DataError naming it and the archive.
void load_params(at::Scorer& s, const std::string& path) {
  auto arrays = attnkit::io::read_npz(path);
  const auto names = at::score_param_names(s.kind);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  for (const auto& n : names) {
    auto it = arrays.find(n);
    if (it == arrays.end())
      throw attnkit::DataError("no array '" + n + "' (" + at::score_kind_name(s.kind) +
                                   " scores need " + list + ")",
                               path);
    attnkit::Tensor& dst = n == "W" ? s.W : n == "Wk" ? s.Wk : n == "Wq" ? s.Wq : s.v;
    dst = std::move(it->second);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return attnkit::cli::run("attn-score", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::string q_path, k_path, v_path, score = "scaled-dot", params, mask, output, hard, out;
    float beta = 1.0f;
    app.describe("Attention scores, weights or contexts of queries against keys.",
                 "[OPTIONS] --query Q --key K [--value V]");
    app.options().add_options()
        ("query", po::value(&q_path)->value_name("Q")->required(),
         "queries, one per row: n_q x d_q (or a batch, B x n_q x d_q)")
        ("key", po::value(&k_path)->value_name("K")->required(), "keys: n_k x d_k")
        ("value", po::value(&v_path)->value_name("V"), "values: n_k x d_v")
        ("score", po::value(&score)->value_name("KIND")->default_value(score),
         "dot, scaled-dot, bilinear, additive or cosine")
        ("params", po::value(&params)->value_name("P.npz"),
         "parameters: W (bilinear) or Wk, Wq, v (additive)")
        ("beta", po::value(&beta)->value_name("B")->default_value(1.0f, "1"),
         "sharpness of the cosine score")
        ("mask", po::value(&mask)->value_name("causal|FILE"),
         "'causal' (query i sees keys j <= i) or a 0/1 n_q x n_k matrix (0 = masked)")
        ("output", po::value(&output)->value_name("WHAT"),
         "scores, weights or context (default: context with --value, else weights)")
        ("hard", po::value(&hard)->value_name("MODE"),
         "hard attention: argmax or sample (one-hot weights)")
        ("output-file,o", po::value(&out)->value_name("FILE")->default_value("-"),
         "where to write (.npy, .npz or text by the extension; - is standard output)");
    app.enable(attnkit::cli::kSeed | attnkit::cli::kOutput);
    app.epilog(
        "Scores: dot q.k; scaled-dot q.k/sqrt(d_k); bilinear k'Wq with W d_k x d_q;\n"
        "additive v'tanh(Wk k + Wq q) with Wk d_a x d_k, Wq d_a x d_q, v d_a; cosine\n"
        "beta cos(q, k), 0 for a zero vector. Weights are the softmax of each row of scores\n"
        "(masked scores are -inf, their weights 0; a row with every key masked has zero\n"
        "weights and a zero context). Inputs are text or .npy/.npz, detected by content;\n"
        "3-D inputs are batches, a 2-D input is shared by every batch item.");
    app.parse();

    at::Scorer scorer;
    scorer.kind = at::parse_score_kind(score);
    scorer.beta = beta;
    const bool takes_params = !at::score_param_names(scorer.kind).empty();
    if (app.given("params") && !takes_params)
      throw attnkit::UsageError("--params is for the bilinear and additive scores, not " + score);
    if (!app.given("params") && takes_params)
      throw attnkit::UsageError("--score " + score + " needs --params FILE.npz");
    if (app.given("beta") && scorer.kind != at::ScoreKind::Cosine)
      throw attnkit::UsageError("--beta is for the cosine score, not " + score);

    at::Options opt;
    opt.seed = app.common().seed;
    const bool has_v = app.given("value");
    if (!app.given("output")) output = has_v ? "context" : "weights";
    opt.output = at::parse_output(output);
    if (opt.output == at::Output::Context && !has_v)
      throw attnkit::UsageError("--output context needs --value V");
    if (app.given("hard")) opt.hard = at::parse_hard(hard);
    if (opt.hard != at::Hard::None && opt.output == at::Output::Scores)
      throw attnkit::UsageError("--hard applies to weights and context, not to scores");

    if (takes_params) load_params(scorer, params);
    const attnkit::Tensor q = attnkit::io::read_tensor(q_path);
    const attnkit::Tensor k = attnkit::io::read_tensor(k_path);
    attnkit::Tensor v, m;
    if (opt.output == at::Output::Context) v = attnkit::io::read_tensor(v_path);
    opt.causal = mask == "causal";
    if (app.given("mask") && !opt.causal) {
      m = attnkit::io::read_tensor(mask);
      opt.mask = &m;
    }

    attnkit::Tensor result;
    try {
      result = at::attend(scorer, q, k, opt.output == at::Output::Context ? &v : nullptr, opt);
    } catch (at::InputShapeError& e) {
      const std::map<at::Operand, std::string> file = {{at::Operand::Query, q_path},
          {at::Operand::Key, k_path}, {at::Operand::Value, v_path},
          {at::Operand::Mask, mask}, {at::Operand::Params, params}};
      e.locate(file.at(e.operand()));
      throw;
    } catch (attnkit::DataError& e) {  // mask values other than 0/1
      if (opt.mask) e.locate(mask);
      throw;
    }
    attnkit::io::write_tensor(out, result, app.write_options());
  });
}
