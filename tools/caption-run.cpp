// caption-run: caption images with a Show, Attend and Tell model from caption-train; BLEU-4 and
// attention figures; the paper's attention picture.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/caption.h"
#include "attnkit/plot/overlay.h"
#include "attnkit/train/trainer.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("caption-run", argc, argv, [](cli::App& app) {
    std::string model, input, captions, out = "-", attention, draw;
    bool eval = false, invert = false;
    int beam = 1;
    int64_t draw_index = 0;
    app.describe(
        "Caption images with a Show, Attend and Tell model, greedily or by beam search; with "
        "--eval, BLEU-4 against reference captions and how well the attention finds the "
        "items the nouns name.",
        "--model MODEL -i IMAGES [--captions TSV] [--beam K] [--eval] [--alignments FILE.npz] "
        "[--draw FILE.png] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from caption-train")(
        "input,i", po::value(&input)->value_name("IMAGES")->required(),
        "images [N, H, W] (.npz with an 'images' array, as image-gen writes, or any tensor "
        "file), or one grey picture [H, W] (PGM, PNG, .npy or a text matrix)")(
        "invert", po::bool_switch(&invert),
        "take 1 - v of every value: for pictures drawn dark on a light background")(
        "captions", po::value(&captions)->value_name("TSV"),
        "reference captions, one a line in the images' order (CAPTION<TAB>TOKEN_CELLS); needed "
        "by --eval")("beam,k", po::value(&beam)->value_name("K")->default_value(beam),
                     "beam width (1: greedy)")("eval", po::bool_switch(&eval),
                                               "print the scores instead of the captions")(
        "alignments", po::value(&attention)->value_name("FILE.npz"),
        "each image's attention per generated word: arrays a0, a1, ... [words + 1, H', W'] "
        "(the last row: the end's step)")(
        "draw", po::value(&draw)->value_name("FILE.png"),
        "the paper's figure for one image: the image, then each generated word's attention "
        "upsampled over it")("draw-index",
                             po::value(&draw_index)->value_name("N")->default_value(draw_index),
                             "--draw: which image (0-based)")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "captions or the scores (- is standard output)");
    app.epilog(
        "Outputs: one caption a line. --eval prints a header line and one row of tab-separated\n"
        "columns: images, bleu4 (corpus BLEU-4 x 100, sacreBLEU's defaults), nouns (reference\n"
        "tokens with a cell), noun_in_cell (the share of them whose attention argmax lies in\n"
        "their item's cell of the 2x2 grid) and coverage_dev (the mean over images and regions\n"
        "of |1 - sum_t alpha_ti|). The attention figures come from a teacher-forced pass over\n"
        "the reference captions, so every noun has its attention. A region belongs to the cell\n"
        "its centre lies in (none when it lies on the middle line).\n"
        "Beam search keeps K hypotheses and returns the finished caption of the highest total\n"
        "log-probability. A grey picture of your own: the models see light items on a black\n"
        "background in [0, 1] (PGM and PNG samples are divided by their maximum; colour PNGs\n"
        "become grey); --invert turns a dark drawing on white into that. A picture of another\n"
        "size than the training images gives another grid of regions (the same model).\n"
        "With a hard-attention model --alignments and --draw show the region each word\n"
        "looked at (one-hot).");
    app.parse();
    if (beam < 1) throw UsageError("--beam must be >= 1");
    if (!draw.empty() && !(draw.size() >= 4 && draw.compare(draw.size() - 4, 4, ".png") == 0))
      throw UsageError("--draw: the file must end in .png");
    if (eval && captions.empty()) throw UsageError("--eval needs --captions");
    for (const std::string* p : {&out, &attention, &draw})
      if (!p->empty() && *p != "-") train::check_writable(*p);
    const models::LoadedCaption m = models::load_caption(model);
    models::CaptionData d;
    if (!captions.empty()) {
      if (invert) throw UsageError("--invert is for pictures without references (no --captions)");
      d = models::read_caption_data(input, captions);
    } else {
      d.images = models::read_caption_input(input, invert);
    }
    if (draw_index < 0 || draw_index >= d.size())
      throw UsageError("--draw-index " + std::to_string(draw_index) + " is outside the " +
                       std::to_string(d.size()) + " images");
    const auto [gh, gw] = cli::parse_option(
        "--input", [&] { return m.model->grid(d.images.dim(1), d.images.dim(2)); });
    std::vector<models::CaptionModel::Decoded> outputs;
    std::string text;
    if (eval) {
      const models::CaptionScore s =
          models::evaluate_captions(*m.model, d, beam, app.common().threads, &outputs);
      char buf[256];
      std::snprintf(
          buf, sizeof buf,
          "images\tbleu4\tnouns\tnoun_in_cell\tcoverage_dev\n%lld\t%.2f\t%lld\t%.4f\t%.4f\n",
          static_cast<long long>(s.images), 100.0 * s.bleu4, static_cast<long long>(s.nouns),
          s.noun_in_cell, s.coverage_dev);
      text = buf;
    } else {
      outputs = models::decode_captions(*m.model, d.images, beam, app.common().threads);
      for (const auto& y : outputs) text += m.model->vocab().decode(y.words) + "\n";
    }
    if (!attention.empty()) {
      std::vector<std::pair<std::string, Tensor>> arrays;
      for (size_t i = 0; i < outputs.size(); ++i) {
        Tensor a = outputs[i].alpha.clone();
        a.reshape({a.dim(0), gh, gw});
        arrays.emplace_back("a" + std::to_string(i), std::move(a));
      }
      io::write_npz(attention, arrays);
    }
    if (!draw.empty()) {
      const auto& y = outputs[static_cast<size_t>(draw_index)];
      // The picture as the CNN sees it: with the model's padding.
      const int64_t h = d.images.dim(1), w = d.images.dim(2), P = m.config.pad;
      const int64_t H = h + 2 * P, W = w + 2 * P;
      Tensor img({H, W}, 0.0f);
      for (int64_t r = 0; r < h; ++r)
        std::copy(d.images.data() + (draw_index * h + r) * w,
                  d.images.data() + (draw_index * h + r + 1) * w, img.data() + (r + P) * W + P);
      std::vector<plot::OverlayQuery> qs;
      for (int64_t k = 0; k < y.alpha.dim(0); ++k) {
        plot::OverlayQuery q;
        q.row = q.col = -1;
        q.map = Tensor({gh, gw});
        std::copy(y.alpha.data() + k * gh * gw, y.alpha.data() + (k + 1) * gh * gw, q.map.data());
        q.label = k < static_cast<int64_t>(y.words.size())
                      ? m.model->vocab().token(y.words[static_cast<size_t>(k)])
                      : std::string("<end>");
        qs.push_back(std::move(q));
      }
      // The maps are cut to the part of the image the regions cover (pooling floors).
      const int64_t ch = gh * (H / gh), cw = gw * (W / gw);
      Tensor crop({ch, cw});
      for (int64_t r = 0; r < ch; ++r)
        std::copy(img.data() + r * W, img.data() + r * W + cw, crop.data() + r * cw);
      io::write_file(draw, plot::encode_png(plot::render_overlays(crop, qs)));
    }
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
