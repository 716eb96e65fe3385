// bleu: BLEU of hypotheses against references, over the corpus or per sentence.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/eval/bleu_run.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("bleu", argc, argv, [](cli::App& app) {
    std::string ref, hyp = "-", smooth = "exp", out = "-";
    int max_n = 4, decimals = -1;
    bool sentence = false, textbook = false, fraction = false, details = false;
    app.describe("BLEU of tokenised hypotheses against references.", "--ref REF [OPTIONS] [HYP]");
    app.options().add_options()("ref,r", po::value(&ref)->value_name("REF"),
                                "references, one sentence per line (required)")(
        "hyp", po::value(&hyp)->value_name("HYP")->default_value("-"),
        "hypotheses, one per line, aligned with REF (also the positional argument; "
        "- is standard input)")("ngrams", po::value(&max_n)->value_name("N")->default_value(4),
                                "the longest n-gram: the largest order (1 to 100)")(
        "sentence,s", po::bool_switch(&sentence),
        "one score per sentence instead of the corpus score")(
        "textbook", po::bool_switch(&textbook),
        "per sentence, the textbook's score exp(min(0, 1 - r/c)) prod p_n^(1/2^n) (implies "
        "--sentence)")(
        "smooth", po::value(&smooth)->value_name("M")->default_value("exp"),
        "zero precisions: exp (sacreBLEU's default) or none (any zero precision gives 0)")(
        "fraction", po::bool_switch(&fraction), "scores in [0, 1] instead of 0 to 100")(
        "decimals", po::value(&decimals)->value_name("D"),
        "digits after the point (default 2, or 4 with --fraction)")(
        "details", po::bool_switch(&details),
        "corpus score with its parts: a header line, then score, p1..pN, BP, ratio, "
        "hyp_len, ref_len (tab-separated)")("output,o",
                                            po::value(&out)->value_name("OUT")->default_value("-"),
                                            "where to write (- is standard output)");
    std::vector<std::string> extra;
    app.hidden_options().add_options()("extra-file", po::value(&extra));
    app.positional().add("hyp", 1).add("extra-file", -1);
    app.epilog(
        "Tokens are the white-space-separated words of each line (as Python's str.split):\n"
        "tokenise (and lower-case) both sides the same way first.\n"
        "The corpus score sums clipped n-gram matches over all lines (sacreBLEU --tokenize\n"
        "none); per-sentence scores leave out orders longer than the hypothesis (sacreBLEU's\n"
        "sentence_bleu).");
    app.parse();
    eval::BleuRunOptions o;
    o.ref = ref, o.hyp = hyp, o.smooth = smooth, o.max_n = max_n, o.decimals = decimals;
    o.sentence = sentence, o.textbook = textbook, o.fraction = fraction, o.details = details;
    o.extra = extra;
    io::write_file(out, eval::run_bleu(o, cli::given(app)));
  });
}
