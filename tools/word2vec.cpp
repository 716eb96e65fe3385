// word2vec: word vectors by skip-gram with negative sampling, in word2vec's text format (what
// han-train --embeddings reads).
#include <memory>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/progress.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/data/docs.h"
#include "attnkit/models/word2vec/sgns.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("word2vec", argc, argv, [](cli::App& app) {
    std::string in, out;
    models::word2vec::Word2VecConfig c;
    data::DocReadOptions ro;
    ro.need_labels = false;
    app.describe(
        "Train word vectors by skip-gram with negative sampling (word2vec) on a text, and write "
        "them in word2vec's text format (han-train --embeddings reads it).",
        "-i TEXT -o FILE [--embed N] [--window N] [--negative K] [OPTIONS]");
    app.enable(cli::kSeed | cli::kQuiet);
    app.options().add_options()(
        "input,i", po::value(&in)->value_name("TEXT")->required(),
        "the text: one document a line, [LABEL<TAB>]TEXT as han-train reads (labels ignored)")(
        "output,o", po::value(&out)->value_name("FILE")->required(),
        "the vectors (- is standard output)")(
        "max-sentence-words",
        po::value(&ro.max_sentence_words)->value_name("N")->default_value(1000),
        "refuse a document with a longer sentence");
    cli::add_fields(app, c);
    app.epilog(
        "The text is tokenised as han-train's documents (lower case, , . ! ? split off) and cut\n"
        "into sentences after . ! ?; a context window never crosses a sentence. Output: a line\n"
        "\"WORDS DIM\", then \"WORD V1 ... VDIM\" a line, by descending count. One thread: the\n"
        "same vectors for a seed on any machine. For han-train, train them on its training\n"
        "(and validation) documents only, never on the test documents.");
    app.parse();
    c.validate();
    const cli::Outputs outputs({out}, {});
    std::vector<std::vector<std::string>> sentences;
    for (auto& d : data::read_docs(in, ro))
      for (auto& s : d.sentences) sentences.push_back(std::move(s));
    std::unique_ptr<cli::Progress> bar;  // made at the first report, when the total is known
    const auto v = models::word2vec::train(
        c, sentences, app.common().seed, [&](int64_t done, int64_t total, double loss) {
          if (!bar) {
            bar = std::make_unique<cli::Progress>(app.name(), total, app.common().quiet);
            bar->set_unit("token");
          }
          bar->update(done, {{"loss", loss}});
        });
    if (bar) bar->finish();
    cli::write_text(out, models::word2vec::format_vectors(v));
    cli::report(app, {std::to_string(v.words.size()) + " words, " + std::to_string(v.dim) +
                      " dimensions: " + out});
  });
}
