// attn-struct: structured attention (Kim et al. 2017): the marginals, log partition, most
// likely structure and context of a linear-chain CRF over selections or of a projective
// dependency CRF, from their potentials (the work: lib/attnkit/cli/attn_struct.h).
#include <string>

#include "attnkit/cli/attn_struct.h"
#include "attnkit/cli/cli.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("attn-struct", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    attnkit::cli::AttnStructArgs a;
    app.describe(
        "Structured attention: the marginals of a chain CRF over selections or of a "
        "projective dependency CRF.",
        "--kind chain --unary U [--pairwise P] | --kind tree --arcs A  [OPTIONS]");
    app.options().add_options()("kind", po::value(&a.kind)->value_name("K")->default_value(a.kind),
                                "chain (segmentation attention) or tree (syntactic attention)")(
        "unary", po::value(&a.unary)->value_name("U"),
        "chain: the score of selecting each input, n (or a batch, B x n)")(
        "pairwise", po::value(&a.pairwise)->value_name("P"),
        "chain: link scores P[z_i][z_i+1], 2 x 2 (every link), (n-1) x 2 x 2 or "
        "B x (n-1) x 2 x 2 (default 0: independent selections)")(
        "arcs", po::value(&a.arcs)->value_name("A"),
        "tree: arc scores n x n (or B x n x n), A[i][j] for head i of input j, A[j][j] for "
        "the root heading j")("lengths", po::value(&a.lengths)->value_name("FILE"),
                              "one length per batch item: later inputs are padding (marginal "
                              "0, head -1)")("value", po::value(&a.value)->value_name("V"),
                                             "values for the context: n x d (shared) or B x n x d")(
        "emit", po::value(&a.emit)->value_name("WHAT"),
        "marginals, log-partition, argmax, heads (tree) or context (default: context with "
        "--value, else marginals); not with OUT.npz, which holds every array")(
        "output,o", po::value(&a.output)->value_name("OUT")->default_value(a.output),
        "where to write (.npy, .npz or text by the extension; - is standard output)");
    app.enable(attnkit::cli::kOutput);
    app.epilog(
        "Chain: p(z) is proportional to exp(sum_i U_i z_i + sum_i P_i[z_i][z_i+1]) over\n"
        "z in {0,1}^n; marginals p(z_i = 1) [B, n] by forward-backward in log space, argmax\n"
        "the most likely z (Viterbi), context sum_i p(z_i = 1) V_i [B, 1, d].\n"
        "Tree: p(y) is proportional to exp(sum of A over the arcs of y) over the projective\n"
        "dependency trees whose root heads one or more inputs; marginals p(head i of j) in\n"
        "A's layout by Eisner's inside-outside (each column sums to 1), argmax the most\n"
        "likely tree as a 0/1 matrix (Eisner's argmax), heads the head of each input\n"
        "(1-based, 0 the root), context for each i sum_{j != i} p(head i of j) V_j [B, n, d].\n"
        "log-partition: log Z of each item [B]. Computed in double, written as float32.\n"
        "A potential of -inf forbids its part; NaN and +inf are errors. Inputs are text or\n"
        ".npy/.npz (detected by content); a 2-D P or V is shared by a batch. OUT.npz holds\n"
        "marginals, log-partition, argmax, heads (tree) and context (with --value). The\n"
        "marginals, argmax and context draw with attn-plot.");
    app.parse();
    attnkit::cli::run_attn_struct(a, app.write_options());
  });
}
