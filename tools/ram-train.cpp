// ram-train: train a recurrent attention model (Mnih et al. 2014) on image classification.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/models/ram/model.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ram-train", argc, argv, [](cli::App& app) {
    std::string train_path, valid_path, out;
    cli::TrainingFlags tf;
    tf.batch_size = 64, tf.epochs = 10, tf.lr = 1e-3, tf.clip = 5.0, tf.log_every = 100;
    tf.offered = cli::kAllTraining & ~cli::kRuns;
    tf.batch_help = "images per step, in 2 slices (the same model for any --threads)";
    models::RamConfig c;
    models::RamTrainOptions o;
    app.describe(
        "Train a recurrent attention model: a network that classifies an image from a few "
        "glimpses, choosing where to look by a Gaussian location policy trained by REINFORCE.",
        "-i IMAGES.npz [--valid IMAGES.npz] -o MODEL [--glimpses N] [--core rnn|lstm] "
        "[--glimpse-net fc|conv] [--loc-std S] [--random-glimpses] [--log LOG.tsv]");
    app.options().add_options()(
        "input,i", po::value(&train_path)->value_name("IMAGES.npz")->required(),
        "training images [N, H, W] and labels [N] (image-gen's .npz: members images, labels)")(
        "valid", po::value(&valid_path)->value_name("IMAGES.npz"),
        "validation images: the error is measured after every epoch; the best epoch is kept")(
        "output,o", po::value(&out)->value_name("MODEL"), "the trained model (required)")(
        "eval-samples", po::value(&o.eval_samples)->value_name("M")->default_value(o.eval_samples),
        "location samples averaged in each validation")(
        "loc-lr", po::value(&o.loc_lr)->value_name("LR"),
        "learning rate of the location network (default: --lr), under the same schedule")(
        "loc-samples",
        po::value(&o.policy.samples)->value_name("M")->default_value(o.policy.samples),
        "glimpse paths sampled per image per step; M >= 2: each path's baseline is the mean "
        "reward of the image's other paths")(
        "reward", po::value(&o.policy.reward)->value_name("KIND")->default_value(o.policy.reward),
        "the locations' reward: correct (1 for a right final answer, else 0) or prob (the "
        "probability given to the true class)")(
        "normalize-advantage", po::bool_switch(&o.policy.normalize_advantage),
        "scale the batch's advantages to mean 0 and standard deviation 1");
    cli::add_training_options(app, tf);
    cli::add_fields(app, c);
    app.epilog(
        "The sensor takes K patches of G, G*S, G*S^2, ... pixels around the location, each\n"
        "averaged down to G x G (zeros outside the image). The first location is uniform; the\n"
        "next ones are sampled from N(tanh(Linear(h)), S^2), clipped to [-1, 1]. The loss is the\n"
        "final classification's cross-entropy, plus REINFORCE on the locations with reward 1\n"
        "for a right classification (the baseline b = Linear(h), regressed on the reward,\n"
        "subtracted), plus the baseline's squared error; a mean over images. The log's reward\n"
        "is the training batches' share of right classifications, saturated the share of\n"
        "location-mean coordinates beyond +-0.9, loc_norm the location network's weight\n"
        "norm; valid_error is the share of wrong ones on --valid. ram-run evaluates, traces\n"
        "and draws.\n"
        "--loc-samples M runs each image M times per step (M glimpse paths; the cross-\n"
        "entropy averaged over them); with M >= 2 a path's baseline is the mean reward of the\n"
        "image's other M-1 paths (leave-one-out) instead of the learned one. --reward prob\n"
        "rewards the probability of the true class instead of a right argmax. --loc-lr sets\n"
        "the location network's own learning rate (Adam's step size for its weights).\n"
        "--glimpse-net conv: each of the K patches, a G x G image, goes through the same\n"
        "blocks of conv 3x3 (padding 1, bias) + ReLU + 2x2 max pooling (--glimpse-channels,\n"
        "one block each; G must be at least 2^blocks) before h_g's Linear.");
    app.enable(cli::kPictures);
    app.parse();
    const train::TrainOptions topt = cli::resolve_training(app, tf, "ram", out);
    c.validate();
    o.batch = tf.batch_size, o.lr = tf.lr, o.schedule = tf.schedule, o.warmup = tf.warmup;
    if (app.vm().count("loc-lr") && !(o.loc_lr > 0)) throw UsageError("--loc-lr must be > 0");
    o.validate();
    models::ImageSet train = models::read_image_set(train_path);
    models::ImageSet valid;
    if (!valid_path.empty()) valid = models::read_image_set(valid_path);
    models::RamTraining module(c, o, std::move(train), std::move(valid), tf.steps, tf.epochs,
                               app.common().seed, app.config_yaml());
    cli::train(app, module, topt);
  });
}
