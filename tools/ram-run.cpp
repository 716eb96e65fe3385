// ram-run: classify images with a recurrent attention model from ram-train; the error, the
// glimpse trace and the picture of the glimpse path.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ram.h"
#include "attnkit/plot/glimpses.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/trainer.h"

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
        "--draw: how many images")("output,o",
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
    app.parse();
    if (samples < 1) throw UsageError("--samples must be >= 1");
    if (draw_count < 1) throw UsageError("--draw-count must be >= 1");
    if (!draw.empty() && !(draw.size() >= 4 && draw.compare(draw.size() - 4, 4, ".png") == 0))
      throw UsageError("--draw: the file must end in .png");
    for (const std::string* p : {&out, &trace, &draw})
      if (!p->empty() && *p != "-") train::check_writable(*p);
    const models::LoadedRam m = models::load_ram(model);
    const models::ImageSet data = models::read_image_set(input);
    const models::RamConfig& c = m.config;
    if (data.images.dim(1) != c.height || data.images.dim(2) != c.width)
      throw DataError("the images are " + std::to_string(data.images.dim(1)) + " x " +
                          std::to_string(data.images.dim(2)) + " pixels; the model reads " +
                          std::to_string(c.height) + " x " + std::to_string(c.width),
                      input);
    for (size_t i = 0; i < data.labels.size(); ++i)
      if (data.labels[i] >= c.classes)
        throw DataError("label " + std::to_string(i + 1) + " (" + std::to_string(data.labels[i]) +
                            ") is not one of the model's " + std::to_string(c.classes) + " classes",
                        input);
    const bool want_trace = !trace.empty() || !draw.empty();
    models::RamTrace tr;
    const Tensor probs =
        models::ram_predict(*m.model, data.images, samples, app.common().seed, app.common().threads,
                            want_trace ? &tr : nullptr, !draw.empty());
    const std::vector<int32_t> pred = rl::argmax_rows(probs);
    std::string text;
    char buf[160];
    if (eval) {
      const double err = models::ram_error(probs, data.labels);
      std::snprintf(buf, sizeof buf, "images\tsamples\terror\taccuracy\n%lld\t%lld\t%.4f\t%.4f\n",
                    static_cast<long long>(data.size()), static_cast<long long>(samples), err,
                    1.0 - err);
      text = buf;
    } else {
      text = "image\tlabel\tpredicted\tprobability\n";
      for (int64_t i = 0; i < data.size(); ++i) {
        const int32_t p = pred[static_cast<size_t>(i)];
        std::snprintf(buf, sizeof buf, "%lld\t%d\t%d\t%.4f\n", static_cast<long long>(i + 1),
                      data.labels[static_cast<size_t>(i)], p,
                      static_cast<double>(probs[i * c.classes + p]));
        text += buf;
      }
    }
    if (!trace.empty()) io::write_file(trace, models::ram_trace_tsv(c, tr));
    if (!draw.empty()) {
      std::vector<plot::GlimpsePanel> panels;
      const int64_t per = c.height * c.width, pp = c.glimpse.features();
      for (int64_t i = 0; i < std::min<int64_t>(draw_count, data.size()); ++i) {
        plot::GlimpsePanel p;
        p.image = Tensor({c.height, c.width});
        std::copy(data.images.data() + i * per, data.images.data() + (i + 1) * per, p.image.data());
        for (int64_t g = 0; g < c.glimpses; ++g) {
          const Tensor& l = tr.locations[static_cast<size_t>(g)];
          p.x.push_back(l[2 * i]), p.y.push_back(l[2 * i + 1]);
          Tensor patch({c.glimpse.scales, c.glimpse.size, c.glimpse.size});
          const float* src = tr.patches[static_cast<size_t>(g)].data() + i * pp;
          std::copy(src, src + pp, patch.data());
          p.patches.push_back(std::move(patch));
        }
        const int32_t y = data.labels[static_cast<size_t>(i)], yp = pred[static_cast<size_t>(i)];
        std::snprintf(buf, sizeof buf, "image %lld: label %d, predicted %d (%.2f)%s",
                      static_cast<long long>(i + 1), y, yp,
                      static_cast<double>(probs[i * c.classes + yp]), y == yp ? "" : " wrong");
        p.caption = buf;
        panels.push_back(std::move(p));
      }
      io::write_file(draw, plot::encode_png(plot::render_glimpses(panels, c.glimpse)));
    }
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
