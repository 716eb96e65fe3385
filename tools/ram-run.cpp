// ram-run: classify images with a recurrent attention model from ram-train; the error, the
// glimpse trace and the picture of the glimpse path.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/ram/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ram-run", argc, argv, [](cli::App& app) {
    std::string model, input, out = "-", trace, draw;
    bool eval = false;
    int64_t samples = 1, draw_count = 4;
    app.describe(
        "Classify images with a recurrent attention model; with --eval, the test error; "
        "the glimpses' locations and patches (--trace) and a picture of the glimpse path "
        "(--draw).",
        "--model MODEL -i IMAGES.npz [--samples M] [--eval] [--trace FILE.tsv] [--draw FILE.png] "
        "[-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from ram-train")(
        "input,i", po::value(&input)->value_name("IMAGES.npz")->required(),
        "images [N, H, W] and labels [N] (image-gen's .npz: members images, labels)")(
        "samples", po::value(&samples)->value_name("M")->default_value(samples),
        "location samples per image, their class probabilities averaged (Monte-Carlo)")(
        "eval", po::bool_switch(&eval), "print the error instead of the predictions")(
        "trace", po::value(&trace)->value_name("FILE.tsv"),
        "every glimpse of every image (of the first sample): location and patch boxes")(
        "draw", po::value(&draw)->value_name("FILE.png"),
        "the glimpse path over the first images, with what each glimpse saw")(
        "draw-count", po::value(&draw_count)->value_name("N")->default_value(draw_count),
        "with --draw: how many images")("output,o",
                                        po::value(&out)->value_name("FILE")->default_value(out),
                                        "predictions or the error (- is standard output)");
    app.enable(cli::kSeed);
    app.epilog(
        "Predictions (TSV): image (1-based), label, predicted, probability (of the predicted\n"
        "class, averaged over the samples). --eval: images, samples, error (the share of\n"
        "images whose most probable class is not the label), accuracy.\n"
        "--trace (TSV): image, glimpse, x, y (the location in [-1, 1], x to the right, y\n"
        "down), then top, left and side of each patch in pixels (rows and columns from 0; a\n"
        "patch may reach outside the image, which reads as 0).\n"
        "Locations are sampled from the model's policy (the first uniformly) with --seed:\n"
        "the same numbers for any --threads.");
    app.enable(cli::kPictures);
    app.parse();
    const cli::Outputs outputs({out}, {trace, draw});  // checked now; side ones removed on failure
    models::RamRunOptions o;
    o.model = model, o.input = input, o.trace = trace, o.draw = draw, o.output = out;
    o.eval = eval, o.samples = samples, o.draw_count = draw_count;
    o.seed = app.common().seed, o.threads = app.common().threads;
    cli::write_text(out, models::run_ram(o));
  });
}
