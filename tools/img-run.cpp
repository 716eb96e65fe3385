// img-run: classify images with a model from img-train; --eval: accuracy and per class.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/imgclass/model.h"
#include "attnkit/train/trainer.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("img-run", argc, argv, [](cli::App& app) {
    std::string model, input, out = "-";
    bool eval = false;
    app.describe(
        "Classify images with a model from img-train; with --eval, the accuracy "
        "overall and per class.",
        "--model MODEL -i FILE.npz [--eval] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from img-train")(
        "input,i", po::value(&input)->value_name("FILE.npz")->required(),
        "array images [N,H,W] (or [H,W]) of the model's size; labels [N] for --eval")(
        "eval", po::bool_switch(&eval), "print the accuracy table instead of the predictions")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "predictions or the table (- is standard output)");
    app.epilog(
        "Predictions: one line an image, its class (the argmax of the logits; ties: the lower\n"
        "class). --eval: a TSV table, a row a class (class, images, correct, accuracy) and a\n"
        "last row 'all'; accuracies with 4 decimals.");
    app.enable(cli::kPictures);
    app.parse();
    if (out != "-") train::check_writable(out);
    const models::LoadedImgNet m = models::load_imgnet(model);
    const models::ImageSet s = models::read_image_set(input, eval);
    std::vector<int32_t> pred;
    try {
      pred = m.model->predict(s.images, app.common().threads);
    } catch (Error& e) {
      e.locate(input);
      throw;
    }
    std::string text;
    if (!eval) {
      for (const int32_t p : pred) text += std::to_string(p) + "\n";
    } else {
      models::ImgScore sc;
      try {
        sc = models::score_predictions(pred, s.labels, m.config.classes);
      } catch (Error& e) {
        e.locate(input);
        throw;
      }
      auto row = [](const std::string& name, int64_t n, int64_t c) {
        char acc[32];
        std::snprintf(acc, sizeof acc, "%.4f", n ? static_cast<double>(c) / n : 0.0);
        return name + "\t" + std::to_string(n) + "\t" + std::to_string(c) + "\t" + acc + "\n";
      };
      text = "class\timages\tcorrect\taccuracy\n";
      for (size_t k = 0; k < sc.class_n.size(); ++k)
        text += row(std::to_string(k), sc.class_n[k], sc.class_correct[k]);
      text += row("all", sc.n, sc.correct);
    }
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
