// bert-fill: fill the [MASK]s of sentences with a pretrained BERT's most probable words.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/bert/model.h"
#include "attnkit/train/trainer.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("bert-fill", argc, argv, [](cli::App& app) {
    std::string model, input = "-", out = "-";
    int top_k = 5;
    app.describe(
        "Fill the [MASK] words of sentences with a BERT model's most probable words and their "
        "probabilities.",
        "--model MODEL [-i TEXT] [--top-k K] [-o OUT.tsv]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from bert-pretrain")(
        "input,i", po::value(&input)->value_name("TEXT")->default_value(input),
        "sentences, one a line, each with at least one [MASK] (- is standard input)")(
        "top-k", po::value(&top_k)->value_name("K")->default_value(top_k),
        "how many words for each [MASK]")("output,o",
                                          po::value(&out)->value_name("FILE")->default_value(out),
                                          "the table (- is standard output)");
    app.epilog(
        "Each line is read as one sentence ([CLS] words [SEP], segment 0), with the training's\n"
        "tokenisation (lower case, a space before , . ! ?); [MASK] (any case) marks a word to\n"
        "fill, and words not in the model's vocabulary read as <unk>. Blank lines are skipped.\n"
        "Output: a header, then for each [MASK] its K words, most probable first, as\n"
        "line<TAB>position<TAB>rank<TAB>word<TAB>probability, with the line's number and the\n"
        "word's position in it (both 1-based). Probabilities come from the softmax over the whole\n"
        "output (reserved tokens and [MASK] included, never listed), so a [MASK]'s listed\n"
        "probabilities sum to at most 1.\n"
        "A line without [MASK] is skipped with a warning naming it. Errors: no line with a\n"
        "[MASK], or a line longer than the model's max-len less 2 words (exit 1, naming it).\n"
        "Example: echo 'the cat sat on the [MASK] .' | bert-fill --model bert.akm");
    app.parse();
    if (top_k < 1) throw UsageError("--top-k must be >= 1");
    if (out != "-") train::check_writable(out);
    const models::LoadedBert m = models::load_bert(model);
    const std::string text = io::read_text(input);
    const std::string name = input == "-" ? "<stdin>" : input;
    std::string table = "line\tposition\trank\tword\tprobability\n";
    long line_no = 0, filled = 0;
    for (std::string_view line : data::split_lines(text, name)) {
      ++line_no;
      const auto words = data::tokenize_words(line);
      if (words.empty()) continue;
      models::BertExample x;
      try {
        x = models::bert_sentence(m.vocab, m.config.max_len, words);
      } catch (Error& e) {
        e.locate(name, line_no);
        throw;
      }
      const auto fills = models::bert_fill(*m.model, x, top_k);
      if (fills.empty()) {  // one line without a [MASK] does not cost the others theirs
        std::cerr << "bert-fill: " << name << ":" << line_no
                  << ": no [MASK] in the line: skipped\n";
        continue;
      }
      ++filled;
      char buf[64];
      for (const auto& f : fills)
        for (size_t r = 0; r < f.top.size(); ++r) {
          std::snprintf(buf, sizeof buf, "%.6f", f.top[r].second);
          table += std::to_string(line_no) + "\t" + std::to_string(f.position + 1) + "\t" +
                   std::to_string(r + 1) + "\t" + m.vocab.token(f.top[r].first) + "\t" + buf + "\n";
        }
    }
    if (filled == 0) throw DataError("no line has a [MASK]", name);
    io::write_file(out, table);
  });
}
