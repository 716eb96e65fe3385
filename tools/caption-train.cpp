// caption-train: train a Show, Attend and Tell captioner (Xu et al. 2015) on images and captions.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/models/caption/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("caption-train", argc, argv, [](cli::App& app) {
    std::string images, captions, valid_images, valid_captions, out;
    cli::TrainingFlags tf;
    tf.batch_size = 64, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 5.0, tf.log_every = 50;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "images per step, in 4 slices (the same model for any --threads)";
    models::CaptionConfig c;
    models::CaptionTrainOptions o;
    app.describe(
        "Train a Show, Attend and Tell captioner: a small CNN encoder, an LSTM decoder with soft "
        "attention over the image's regions, the gate and the doubly stochastic regulariser; "
        "--attention none trains the no-attention baseline.",
        "-i IMAGES.npz --captions CAPTIONS.tsv [--valid V.npz --valid-captions "
        "V.tsv] -o MODEL [--log LOG.tsv]");
    app.options().add_options()(
        "input,i", po::value(&images)->value_name("IMAGES")->required(),
        "training images [N, H, W] (.npz with an 'images' array, as image-gen writes, or any "
        "tensor file)")("captions", po::value(&captions)->value_name("TSV")->required(),
                        "one caption a line, in the images' order (CAPTION[<TAB>TOKEN_CELLS])")(
        "valid", po::value(&valid_images)->value_name("IMAGES"),
        "validation images: greedy decoding scored (BLEU-4) after every epoch")(
        "valid-captions", po::value(&valid_captions)->value_name("TSV"),
        "the validation images' captions")(
        "init", po::value(&o.init)->value_name("MODEL"),
        "start from this caption model's weights instead of random ones (the same sizes and "
        "training captions; e.g. a soft model to warm-start --attention hard)")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    c.channels = {16, 32, 64, 64};  // the tool's defaults
    c.coords = true;
    cli::add_fields(app, c);
    app.epilog(
        "The loss (the log's loss) is the cross-entropy of each word and of the end, per\n"
        "predicted token, plus lambda times the regulariser (the log's reg: its mean per\n"
        "image). The words are the training captions' tokens. The CNN's batch norm\n"
        "normalises each of the 4 slices by its own statistics; its running statistics move\n"
        "once a step by the whole batch's and are saved with the model. With --valid\n"
        "the log has valid_bleu4 (greedy, BLEU-4 x 100), valid_noun_in_cell and\n"
        "valid_coverage_dev (see caption-run --eval). caption-run decodes and scores.\n"
        "\n"
        "--attention hard (the paper's 4.1): each image samples its regions with\n"
        "probability --sample-prob, one a word from the attention's alpha, and otherwise\n"
        "takes the expected (soft) context. A sampled image's cost C is its mean -log p\n"
        "per predicted token (n of them); the loss adds reinforce n (C - b) sum_t log p(s_t)\n"
        "- entropy sum_t H(alpha_t), b a moving average of C (the log's baseline;\n"
        "sampled_cost is the step's mean C). Decoding takes the argmax region. --reward\n"
        "to-go weights step t's log p(s_t) by the cost of the tokens from t on (baseline\n"
        "(n - t) b), word by t's own token (baseline b).\n"
        "\n"
        "--init MODEL starts from a caption model's weights and running statistics\n"
        "instead of random ones (its sizes and training captions must be this run's; the\n"
        "attention kind and training options may differ): a soft model warm-starts\n"
        "--attention hard, whose decoder then learns to read single regions.");
    app.enable(cli::kPictures);
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "caption", out);
    cli::parse_option("--attention", [&] { return c.kind(); });
    cli::parse_option("--reward", [&] { return c.reward_kind(); });
    if (valid_images.empty() != valid_captions.empty())
      throw UsageError("--valid and --valid-captions go together");
    auto train = models::read_caption_data(images, captions);
    c.pad = cli::parse_option("--pad", [&] {
      return models::parse_caption_pad(c.pad_option, train.images.dim(1), train.images.dim(2),
                                       c.channels.size());
    });
    models::CaptionData valid;
    if (!valid_images.empty()) valid = models::read_caption_data(valid_images, valid_captions);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    models::CaptionTraining module(c, o, std::move(train), std::move(valid), tf.steps, tf.epochs,
                                   app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
