#include "attnkit/eval/bleu_run.h"

#include <cstdio>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/eval/bleu.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::eval {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string label(const std::string& path) { return path == "-" ? "standard input" : path; }

// The header and row of --details.
std::string details_tsv(const BleuScore& s, int max_n, double scale, int decimals) {
  std::string text = "bleu";
  for (int n = 1; n <= max_n; ++n) text += "\tp" + std::to_string(n);
  text += "\tbp\tratio\thyp_len\tref_len\n";
  text += fixed(s.score * scale, decimals);
  for (double p : s.precisions) text += "\t" + fixed(p * scale, decimals);
  const double ratio =
      s.ref_len ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
  text += "\t" + fixed(s.brevity_penalty, 4) + "\t" + fixed(ratio, 4) + "\t" +
          std::to_string(s.hyp_len) + "\t" + std::to_string(s.ref_len) + "\n";
  return text;
}

}  // namespace

std::string run_bleu(BleuRunOptions o, const GivenOption& given) {
  if (!given("ref") && o.extra.empty())
    throw UsageError("the option '--ref' is required but missing");
  if (!o.extra.empty())
    throw UsageError(given("ref") ? "one hypothesis file, not " + std::to_string(1 + o.extra.size())
                                  // `bleu REF HYP`, the order of multi-bleu.perl and sacrebleu
                                  : "the references go with --ref: bleu --ref " + o.hyp + " " +
                                        o.extra.front() + " (one positional file, the hypotheses)");
  if (o.textbook) o.sentence = true;
  if (o.max_n < 1 || o.max_n > 100) throw UsageError("--ngrams must be between 1 and 100");
  if (given("decimals") && (o.decimals < 0 || o.decimals > 15))
    throw UsageError("--decimals must be between 0 and 15");
  if (!given("decimals")) o.decimals = o.fraction ? 4 : 2;
  const Smoothing smoothing = option_value("--smooth", [&] { return parse_smoothing(o.smooth); });
  if (o.textbook && given("smooth")) throw UsageError("--smooth does not apply to --textbook");
  if (o.details && o.sentence)
    throw UsageError("--details is for the corpus score, not --sentence");

  const std::string ref_text = io::read_text(o.ref);
  const std::string hyp_text = io::read_text(o.hyp);
  const auto refs = data::split_lines(ref_text, o.ref);
  const auto hyps = data::split_lines(hyp_text, o.hyp);
  if (refs.size() != hyps.size())
    throw DataError(label(o.hyp) + " has " + std::to_string(hyps.size()) + " lines but " +
                    label(o.ref) + " has " + std::to_string(refs.size()) +
                    ": hypotheses and references must be aligned line by line");
  const double scale = o.fraction ? 1.0 : 100.0;
  std::string text;
  if (o.sentence) {
    for (size_t i = 0; i < refs.size(); ++i) {
      const double s = o.textbook ? textbook_bleu(hyps[i], refs[i], o.max_n)
                                  : sentence_bleu(hyps[i], refs[i], o.max_n, smoothing);
      text += fixed(s * scale, o.decimals) + "\n";
    }
    return text;
  }
  BleuStats stats(o.max_n);
  for (size_t i = 0; i < refs.size(); ++i)
    stats += bleu_stats(data::split_whitespace(hyps[i]), data::split_whitespace(refs[i]), o.max_n);
  const BleuScore s = bleu_score(stats, smoothing);
  if (o.details) return details_tsv(s, o.max_n, scale, o.decimals);
  return fixed(s.score * scale, o.decimals) + "\n";
}

}  // namespace attnkit::eval
