// caption-run: caption images with a Show, Attend and Tell model from caption-train; BLEU-4 and
// attention figures; the paper's attention picture.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/caption/run.h"

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
                             "with --draw: which image (0-based)")(
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
    app.enable(cli::kPictures);
    app.parse();
    const cli::Outputs outputs({out},
                               {attention, draw});  // checked now; side ones removed on failure
    models::CaptionRunOptions o;
    o.model = model, o.input = input, o.captions = captions, o.attention = attention;
    o.draw = draw, o.output = out, o.invert = invert, o.eval = eval, o.beam = beam;
    o.draw_index = draw_index, o.threads = app.common().threads;
    o.warn = [](const std::string& w) { std::cerr << "caption-run: warning: " << w << "\n"; };
    cli::write_text(out, models::run_caption(o));
  });
}
