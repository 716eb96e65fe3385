// memn2n-answer: answers the questions of a bAbI-format file with a trained memory network.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/memory/memn2n/run.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("memn2n-answer", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    std::string model_path, in = "-", out = "-", att_path, sentences;
    app.describe("Answer the questions of a bAbI-format file with a trained memory network.",
                 "[OPTIONS] --model MODEL [-i STORIES] [--alignments ATT.npz]");
    app.options().add_options()("model,m", po::value(&model_path)->value_name("MODEL")->required(),
                                "a model from memn2n-train")(
        "input,i", po::value(&in)->value_name("STORIES")->default_value(in),
        "stories and questions in the bAbI format (- is standard input)")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the answers (- is standard output)")(
        "alignments", po::value(&att_path)->value_name("ATT.npz"),
        "each question's hop weights: array qLINE, memory sentences (oldest first) x hops")(
        "sentences", po::value(&sentences)->value_name("DIR"),
        "write DIR/qLINE.txt, the memory sentences of each question one a line (row labels "
        "for attn-plot)");
    app.enable(attnkit::cli::kQuiet);
    app.shard_items("questions (in file order; the header row comes with the first slice)");
    app.epilog(
        "Output (TSV): a header 'line question predicted answer', then one row per question:\n"
        "its line in STORIES, its words, the model's answer and the file's answer (empty for a\n"
        "question asked without one). Words are lower-cased without the final '.' or '?'.\n"
        "A question line has a tab and the answer after it (bAbI: 'ID question?<TAB>answer<TAB>\n"
        "supporting IDs'); a line without a tab that ends in '?' is a question without an\n"
        "answer ('4 Where is John?'), which the model answers all the same. A file without\n"
        "questions is an error. A summary goes to standard error.");
    app.parse();
    const attnkit::cli::Outputs outputs({out},
                                        {att_path});  // checked now; side ones removed on failure
    mem::MemN2NRunOptions o;
    o.model = model_path, o.input = in, o.attention = att_path, o.sentences = sentences;
    const mem::MemN2NAnswers a =
        mem::answer_memn2n(o, attnkit::cli::given(app), attnkit::cli::shard_range(app));
    attnkit::cli::write_text(out, a.table);
    attnkit::cli::report(app, a.summary);
  });
}
