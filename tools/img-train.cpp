// img-train: train an image classifier (fully connected, a small CNN, or the CNN with a
// SAGAN or non-local block) on images [N,H,W] with labels [N].
#include <algorithm>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/models/imgclass/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("img-train", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    cli::TrainingFlags tf;
    tf.batch_size = 64, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 5.0, tf.log_every = 50;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "images per step, in 4 slices (the same model for any --threads)";
    models::ImgNetConfig c;
    models::ImgTrainOptions o;
    app.describe(
        "Train an image classifier: fully connected layers, a small CNN, or the CNN with a "
        "SAGAN or non-local self-attention block, on images [N,H,W] with labels [N].",
        "-i FILE.npz [--valid FILE.npz] --arch mlp|cnn|cnn-sagan|cnn-nonlocal -o MODEL");
    app.options().add_options()(
        "input,i", po::value(&train_path)->value_name("FILE.npz")->required(),
        "arrays images [N,H,W] and labels [N] (classes 0, 1, ...; image-gen's files)")(
        "valid", po::value(&valid_path)->value_name("FILE.npz"),
        "validation images and labels: accuracy after every epoch")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    app.epilog(
        "mlp: the pixels flattened, ReLU layers of --hidden units (the RAM paper's baseline:\n"
        "64,64), a linear classifier. cnn: blocks of conv 3x3 (padding 1) + batch norm + ReLU +\n"
        "2x2 max pooling with --channels each, global average pooling, a linear classifier.\n"
        "cnn-sagan adds SAGAN's block (1x1 convolutions f, g to C/8 channels and h, attention\n"
        "over every position, y = gamma o + x with gamma starting at 0) after block\n"
        "--attn-after; cnn-nonlocal the embedded-Gaussian non-local block (C/2 channels inside,\n"
        "its output convolution zero at the start). The loss is the cross-entropy; the log's\n"
        "train_acc is the batch accuracy. Batch norm trains on each slice's statistics; at\n"
        "evaluation it uses statistics computed exactly over the first 4,096 training images.\n"
        "img-run predicts and scores.");
    app.enable(cli::kPictures);
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "imgclass", out);
    try {
      c.height = c.width = c.classes = 2;  // options first; the data's sizes below
      c.validate();
    } catch (const UsageError& e) {
      throw UsageError(std::string("--") + e.what());
    }
    models::ImageSet train = models::read_image_set(train_path);
    models::ImageSet valid;
    if (!valid_path.empty()) valid = models::read_image_set(valid_path);
    c.height = train.images.dim(1), c.width = train.images.dim(2);
    c.classes = 2;
    for (const int32_t l : train.labels) c.classes = std::max<int64_t>(c.classes, l + 1);
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    const std::string yaml = app.config_yaml() + c.data_yaml();
    try {
      models::ImgTraining module(c, o, std::move(train), std::move(valid), tf.steps, tf.epochs,
                                 app.common().seed, app.common().threads, yaml);
      cli::train(app, module, topt);
    } catch (DataError& e) {
      e.locate(train_path);
      throw;
    }
  });
}
