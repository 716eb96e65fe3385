// han-train: train a document classifier: the Hierarchical Attention Network (Yang et al.
// 2016) or one of its flat baselines.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/data/docs.h"
#include "attnkit/models/han/train.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("han-train", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    double valid_fraction = 0;
    cli::TrainingFlags tf;
    tf.batch_size = 64, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 5.0, tf.log_every = 20;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "documents per step, in 4 slices (the same model for any --threads)";
    models::han::HanConfig c;
    models::han::HanTrainOptions o;
    data::DocReadOptions ro;
    app.describe(
        "Train a document classifier: a Hierarchical Attention Network (word and sentence "
        "encoders with attention) or a flat baseline (--arch flat, mean or ngram-lr).",
        "-i DOCS [--valid DOCS | --valid-fraction F] -o MODEL [--arch han|flat|mean|ngram-lr]");
    app.options().add_options()("input,i", po::value(&train_path)->value_name("DOCS")->required(),
                                "training documents, one a line: LABEL<TAB>TEXT (see han-run(1))")(
        "valid", po::value(&valid_path)->value_name("DOCS"),
        "validation documents: accuracy after every epoch")(
        "valid-fraction", po::value(&valid_fraction)->value_name("F"),
        "hold out this share of the training documents (chosen by --seed) as validation")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)")(
        "embeddings", po::value(&o.embeddings)->value_name("FILE"),
        "start the word embeddings from word2vec-style vectors (text: WORD V1 ... VN, N = "
        "--embed)")("max-sentence-words",
                    po::value(&ro.max_sentence_words)->value_name("N")->default_value(1000),
                    "refuse a document with a longer sentence");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    app.epilog(
        "The loss is the mean cross-entropy per document; the log's valid_accuracy is measured\n"
        "after every epoch. The vocabulary is the training documents' words seen --min-freq\n"
        "times or more; the classes are their labels (sorted). han-run predicts, scores and\n"
        "draws the attention.");
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "han", out);
    if (!valid_path.empty() && valid_fraction > 0)
      throw UsageError("--valid and --valid-fraction: give one");
    auto train = data::read_docs(train_path, ro);
    std::vector<data::TextDoc> valid;
    if (!valid_path.empty()) valid = data::read_docs(valid_path, ro);
    if (valid_fraction != 0)
      models::han::split_validation(train, valid, valid_fraction, app.common().seed);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    models::han::HanTraining module(c, o, train, valid, train_path, valid_path, tf.steps, tf.epochs,
                                    app.common().seed, app.config_yaml());
    if (!o.embeddings.empty())
      cli::report(app, {o.embeddings + ": " + std::to_string(module.embeddings_found()) + " of " +
                        std::to_string(module.vocab().size()) + " words found"});
    cli::train(app, module, topt);
  });
}
