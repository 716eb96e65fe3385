// han-run: classify documents with a model from han-train; scores; attention; Figure 5.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/han/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("han-run", argc, argv, [](cli::App& app) {
    models::han::HanRunOptions o;
    app.describe(
        "Classify documents with a model from han-train: each document's label and class "
        "probabilities; with --eval, accuracy, per-class precision and recall and the "
        "confusion matrix; the attention as arrays or drawn.",
        "-m MODEL -i DOCS [--eval] [--alignments FILE.npz] [--draw FILE.png|FILE.html] [-o OUT]");
    app.options().add_options()("model,m", po::value(&o.model)->value_name("MODEL")->required(),
                                "a model from han-train")(
        "input,i", po::value(&o.input)->value_name("DOCS")->required(),
        "documents, one a line: [LABEL<TAB>]TEXT (labels needed by --eval)")(
        "eval", po::bool_switch(&o.eval), "print the scores instead of the labels")(
        "alignments", po::value(&o.alignments)->value_name("FILE.npz"),
        "each document's word weights w<i> and sentence weights s<i> (han, flat)")(
        "draw", po::value(&o.draw)->value_name("FILE"),
        "the first documents with their attention, as the paper's Figure 5: PNG or HTML, by the "
        "name's ending")("draw-count",
                         po::value(&o.draw_count)->value_name("N")->default_value(o.draw_count),
                         "with --draw: how many documents")(
        "max-sentence-words",
        po::value(&o.max_sentence_words)->value_name("N")->default_value(o.max_sentence_words),
        "refuse a document with a longer sentence")(
        "output,o", po::value(&o.output)->value_name("FILE")->default_value(o.output),
        "labels or the scores (- is standard output)");
    app.epilog(
        "Output: one line a document: the predicted label, its probability, then every class's\n"
        "probability in the model's label order (TAB-separated). --eval: documents, accuracy,\n"
        "a table class/precision/recall/support and the confusion matrix (rows: true label,\n"
        "columns: predicted).");
    app.parse();
    o.threads = app.common().threads;
    cli::write_text(o.output, models::han::run_han(o));
  });
}
