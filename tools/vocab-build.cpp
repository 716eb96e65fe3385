// vocab-build: the vocabulary of one side of a parallel corpus, as a TOKEN<TAB>COUNT file.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/data/corpus.h"
#include "attnkit/data/vocab.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("vocab-build", argc, argv, [](cli::App& app) {
    std::string in = "-", side = "source", tok = "words", out = "-";
    long long min_freq = 1, max_size = 0;
    bool plain = false;
    app.describe("Build the vocabulary of one side of a parallel corpus.",
                 "[-i CORPUS] [--side source|target] [--tokens words|chars] [OPTIONS] [-o VOCAB]");
    app.options().add_options()("input,i", po::value(&in)->value_name("CORPUS")->default_value("-"),
                                "SOURCE<TAB>TARGET lines (- is standard input)")(
        "side", po::value(&side)->value_name("SIDE")->default_value("source"),
        "which column: source or target")(
        "plain", po::bool_switch(&plain),
        "the input is one sentence per line (one file of an aligned pair), not TSV")(
        "tokens", po::value(&tok)->value_name("KIND")->default_value("words"),
        "words (d2l: lower case, punctuation split off) or chars (one per code point), as "
        "seq2seq-train --tokens")("min-freq",
                                  po::value(&min_freq)->value_name("K")->default_value(1),
                                  "leave out tokens seen fewer than K times (they become <unk>)")(
        "max-size", po::value(&max_size)->value_name("N")->default_value(0),
        "keep at most N tokens, the reserved four included (0: no limit)")(
        "output,o", po::value(&out)->value_name("VOCAB")->default_value("-"),
        "where to write (- is standard output)");
    app.epilog(
        "Output: TOKEN<TAB>COUNT lines in id order: <pad> <bos> <eos> <unk> (ids 0-3, count\n"
        "0), then the tokens by descending count, ties in byte order.");
    app.parse();
    data::Tokenization tokenization;
    data::Side which;
    tokenization = cli::parse_option("--tokens", [&] { return data::parse_tokenization(tok); });
    which = cli::parse_option("--side", [&] { return data::parse_side(side); });
    if (plain && app.given("side")) throw UsageError("--side does not apply to --plain input");
    if (min_freq < 1) throw UsageError("--min-freq must be at least 1");
    if (max_size != 0 && max_size < data::Vocab::kReserved)
      throw UsageError("--max-size must be 0 or at least 4");
    data::TokenCounts counts;
    const std::string text = io::read_text(in);
    if (plain) {
      for (auto line : data::split_lines(text, in))
        data::count_tokens(counts, data::tokenize(line, tokenization));
    } else {
      counts = data::count_side(data::parse_tsv(text, in), which, tokenization);
    }
    io::write_file(out, data::Vocab::build(counts, min_freq, max_size).format());
  });
}
