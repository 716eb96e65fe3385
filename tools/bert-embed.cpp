// bert-embed: contextual embeddings of sentences from a pretrained BERT, for NumPy.
#include <string>
#include <utility>
#include <vector>

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
  return cli::run("bert-embed", argc, argv, [](cli::App& app) {
    std::string model, input = "-", out;
    bool cls = false;
    app.describe(
        "Contextual embeddings of sentences from a BERT model: every token's encoder output "
        "(.npz, an array a line), or the [CLS] vectors (one row a line).",
        "--model MODEL [-i TEXT] [--cls] -o OUT.npz|OUT.npy");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from bert-pretrain")(
        "input,i", po::value(&input)->value_name("TEXT")->default_value(input),
        "sentences, one a line (- is standard input)")(
        "cls", po::bool_switch(&cls), "only each line's [CLS] vector: a matrix [lines, hidden]")(
        "output,o", po::value(&out)->value_name("FILE")->required(),
        "token embeddings: a .npz; --cls: .npy, .npz or text (- is standard output, text "
        "unless --npy)");
    app.enable(cli::kOutput);
    app.epilog(
        "Each line is read as one sentence, [CLS] words [SEP] (segment 0), with the training's\n"
        "tokenisation; unknown words read as <unk>, [MASK] as the mask. The embeddings are the\n"
        "last encoder layer's outputs (no dropout).\n"
        "Without --cls the output is a .npz holding line1, line2, ... (1-based line numbers),\n"
        "each [tokens + 2, hidden]: rows [CLS], the line's words, [SEP]. In NumPy:\n"
        "  z = numpy.load('emb.npz'); z['line1'].shape\n"
        "With --cls: a matrix [lines, hidden], row i the [CLS] vector of line i + 1.\n"
        "Errors: a line longer than the model's max-len less 2 words (exit 1, naming the line);\n"
        "token embeddings to anything but a .npz (exit 2).");
    app.parse();
    const auto ends_with = [&](const std::string& s) {
      return out.size() >= s.size() && out.compare(out.size() - s.size(), s.size(), s) == 0;
    };
    if (!cls && !ends_with(".npz"))
      throw UsageError(
          "-o: token embeddings (lines of different lengths) go to a .npz; "
          "--cls writes one matrix");
    if (out != "-") train::check_writable(out);
    const models::LoadedBert m = models::load_bert(model);
    const std::string text = io::read_text(input);
    const std::string name = input == "-" ? "<stdin>" : input;
    std::vector<models::BertExample> xs;
    long line_no = 0;
    for (std::string_view line : data::split_lines(text, name)) {
      ++line_no;
      try {
        xs.push_back(models::bert_sentence(m.vocab, m.config.max_len, data::tokenize_words(line)));
      } catch (Error& e) {
        e.locate(name, line_no);
        throw;
      }
    }
    if (xs.empty()) throw DataError("no line to embed", name);
    const std::vector<Tensor> e = models::bert_embed(*m.model, xs);
    if (cls) {
      const int64_t d = m.config.hidden;
      Tensor y({static_cast<int64_t>(e.size()), d});
      for (size_t i = 0; i < e.size(); ++i)
        std::copy(e[i].data(), e[i].data() + d, y.data() + static_cast<int64_t>(i) * d);
      io::write_tensor(out, y, app.write_options());
      return;
    }
    std::vector<std::pair<std::string, const Tensor*>> arrays;
    std::vector<std::string> names;
    for (size_t i = 0; i < e.size(); ++i) names.push_back("line" + std::to_string(i + 1));
    for (size_t i = 0; i < e.size(); ++i) arrays.emplace_back(names[i], &e[i]);
    io::write_npz(out, arrays);
  });
}
