// bleu: BLEU of hypotheses against references, over the corpus or per sentence.
#include "attnkit/eval/bleu.h"

#include <cstdio>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string label(const std::string& path) { return path == "-" ? "standard input" : path; }

}  // namespace

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
        "- is standard input)")("max-n", po::value(&max_n)->value_name("N")->default_value(4),
                                "largest n-gram order (1 to 100)")(
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
    if (!app.given("ref") && extra.empty())
      throw UsageError("the option '--ref' is required but missing");
    if (!extra.empty())
      throw UsageError(app.given("ref")
                           ? "one hypothesis file, not " + std::to_string(1 + extra.size())
                           : "the references go with --ref: bleu --ref " + extra.front() + " " +
                                 hyp + " (one positional file, the hypotheses)");
    if (textbook) sentence = true;
    if (max_n < 1 || max_n > 100) throw UsageError("--max-n must be between 1 and 100");
    if (app.given("decimals") && (decimals < 0 || decimals > 15))
      throw UsageError("--decimals must be between 0 and 15");
    if (!app.given("decimals")) decimals = fraction ? 4 : 2;
    eval::Smoothing smoothing;
    smoothing = cli::parse_option("--smooth", [&] { return eval::parse_smoothing(smooth); });
    if (textbook && app.given("smooth")) throw UsageError("--smooth does not apply to --textbook");
    if (details && sentence) throw UsageError("--details is for the corpus score, not --sentence");

    const std::string ref_text = io::read_all(ref);
    const std::string hyp_text = io::read_all(hyp);
    const auto refs = data::split_lines(ref_text, ref);
    const auto hyps = data::split_lines(hyp_text, hyp);
    if (refs.size() != hyps.size())
      throw DataError(label(hyp) + " has " + std::to_string(hyps.size()) + " lines but " +
                      label(ref) + " has " + std::to_string(refs.size()) +
                      ": hypotheses and references must be aligned line by line");
    const double scale = fraction ? 1.0 : 100.0;
    std::string text;
    if (sentence) {
      for (size_t i = 0; i < refs.size(); ++i) {
        const double s = textbook ? eval::textbook_bleu(hyps[i], refs[i], max_n)
                                  : eval::sentence_bleu(hyps[i], refs[i], max_n, smoothing);
        text += fixed(s * scale, decimals) + "\n";
      }
    } else {
      eval::BleuStats stats(max_n);
      for (size_t i = 0; i < refs.size(); ++i)
        stats += eval::bleu_stats(data::split_whitespace(hyps[i]), data::split_whitespace(refs[i]),
                                  max_n);
      const eval::BleuScore s = eval::bleu_score(stats, smoothing);
      if (details) {
        text += "bleu";
        for (int n = 1; n <= max_n; ++n) text += "\tp" + std::to_string(n);
        text += "\tbp\tratio\thyp_len\tref_len\n";
        text += fixed(s.score * scale, decimals);
        for (double p : s.precisions) text += "\t" + fixed(p * scale, decimals);
        const double ratio =
            s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
        text += "\t" + fixed(s.brevity_penalty, 4) + "\t" + fixed(ratio, 4) + "\t" +
                std::to_string(s.hyp_len) + "\t" + std::to_string(s.ref_len) + "\n";
      } else {
        text += fixed(s.score * scale, decimals) + "\n";
      }
    }
    io::write_file(out, text);
  });
}
