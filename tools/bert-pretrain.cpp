// bert-pretrain: pretrain a small BERT (masked-language modelling and next-sentence
// prediction) on plain text.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/models/bert/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("bert-pretrain", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    cli::TrainingFlags tf;
    tf.batch_size = 512, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 0.0, tf.log_every = 10;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "sentence pairs per step, in 4 slices (the same model for any --threads)";
    models::BertConfig c;
    models::BertTrainOptions o;
    app.describe(
        "Pretrain a small BERT on text: a Transformer encoder with token, segment and position "
        "embeddings, trained by masked-language modelling (15% of the tokens) and "
        "next-sentence prediction (half the pairs true).",
        "-i TEXT [--valid TEXT] -o MODEL [--log LOG.tsv]");
    app.options().add_options()(
        "input,i", po::value(&train_path)->value_name("TEXT")->required(),
        "training text: one sentence a line, a blank line between documents")(
        "valid", po::value(&valid_path)->value_name("TEXT"),
        "held-out text of the same form: losses and accuracies at every evaluation")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    cli::add_fields(app, o);
    app.epilog(
        "Text: d2l's word tokenisation (lower case, a space before , . ! ?). Each sentence that\n"
        "has a next one in its document gives one pair per epoch: with probability 1/2 that next\n"
        "sentence (NSP label 1), else a random sentence of another document (0). Of each pair's\n"
        "words 15% are chosen (0.15 n rounded up or down at random, so 15% on average); a chosen\n"
        "word becomes [MASK] with probability 0.8, a random word 0.1, or stays 0.1. The draws of\n"
        "an example come from the seed, the epoch and the example alone: the same for any\n"
        "--threads and after --resume.\n"
        "The loss is the mean MLM cross-entropy over the batch's chosen words plus the mean NSP\n"
        "cross-entropy over its pairs. The log's step columns: mlm_loss, nsp_loss, mlm_acc\n"
        "(chosen words predicted exactly), nsp_acc; at evaluations: the masking over the run so\n"
        "far (mask_share of the words chosen, and of those mask_as_mask, mask_as_random,\n"
        "mask_as_kept), and with --valid the same losses and accuracies on its pairs (drawn once\n"
        "from a fixed seed) and valid_majority, the share of its chosen words that are the\n"
        "training text's most frequent word (the baseline of always guessing it).\n"
        "bert-fill fills [MASK]s; bert-embed writes contextual embeddings.");
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "bert", out);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    o.validate();
    const auto train_docs = models::read_bert_text(train_path);
    const data::Vocab vocab = models::bert_vocab(train_docs, o.min_freq, o.max_size);
    models::BertCorpus train = models::encode_bert_text(train_docs, vocab), valid;
    if (!valid_path.empty())
      valid = models::encode_bert_text(models::read_bert_text(valid_path), vocab);
    if (vocab.size() <= data::Vocab::kReserved)
      throw DataError("no word is seen --min-freq (" + std::to_string(o.min_freq) +
                          ") times: the vocabulary would be empty",
                      train_path);
    // Which file a pairing error is about.
    try {
      models::BertPairs check(train, vocab.size(), c.max_len);
    } catch (Error& e) {
      e.locate(train_path);
      throw;
    }
    if (!valid_path.empty()) try {
        models::BertPairs check(valid, vocab.size(), c.max_len);
      } catch (Error& e) {
        e.locate(valid_path);
        throw;
      }
    models::BertTraining module(c, o, vocab, std::move(train), std::move(valid), tf.steps,
                                tf.epochs, app.common().seed, app.config_yaml());
    if (!app.common().quiet)
      std::cerr << "bert-pretrain: " << module.pairs() << " sentence pairs an epoch ("
                << module.batches_per_epoch() << " steps), a vocabulary of " << vocab.size() + 1
                << " tokens ([MASK] included)\n";
    cli::train(app, module, topt);
  });
}
