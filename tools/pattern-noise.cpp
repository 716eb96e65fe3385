// pattern-noise: bipolar patterns with exactly K randomly chosen bits flipped in each.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/hopfield/file.h"
#include "attnkit/memory/hopfield/model.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("pattern-noise", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    std::string in = "-", out = "-", image_size;
    double fraction = 0.0;
    int64_t count = 0, per_row = 0, pixel = 1;
    app.describe("Flip exactly K randomly chosen bits of every bipolar pattern.",
                 "[OPTIONS] -i PATTERNS (--flip FRACTION | --flip-count K)");
    app.options().add_options()(
        "input,i", po::value(&in)->value_name("PATTERNS")->default_value("-"),
        "patterns, one per row of -1/+1 (text, .npy, or PBM images); - is standard input")(
        "output,o", po::value(&out)->value_name("FILE")->default_value("-"),
        "where to write (.pbm, .npy, .npz or text by the extension; - is standard output)")(
        "flip", po::value(&fraction)->value_name("FRACTION"),
        "flip round(FRACTION x N) bits of each pattern (0 to 1)")(
        "flip-count", po::value(&count)->value_name("K"), "flip K bits of each pattern")(
        "image-size", po::value(&image_size)->value_name("WxH"),
        "PBM tiles of W x H pixels, one pattern each, for input and output")(
        "tiles-per-row", po::value(&per_row)->value_name("C"),
        "tiles per row of a PBM output sheet (default: as the input, else 10)")(
        "pixel-size", po::value(&pixel)->value_name("K")->default_value(pixel),
        "a PBM output sheet draws each value as K x K pixels (to look at; 1 to 64)");
    app.enable(attnkit::cli::kSeed | attnkit::cli::kOutput | attnkit::cli::kQuiet);
    app.epilog(
        "Each pattern gets exactly K distinct flipped positions, drawn by a partial\n"
        "Fisher-Yates shuffle from one seeded generator, pattern after pattern: the same\n"
        "input and --seed give the same output.");
    app.parse();
    if (app.given("flip") == app.given("flip-count"))
      throw attnkit::UsageError("give one of --flip FRACTION and --flip-count K");
    if (app.given("flip") && !(fraction >= 0.0 && fraction <= 1.0))
      throw attnkit::UsageError("--flip must be a fraction between 0 and 1");
    if (app.given("flip-count") && count < 0)
      throw attnkit::UsageError("--flip-count must be 0 or more");
    mem::ImageLayout layout = mem::parse_layout(image_size, per_row);
    if (pixel < 1 || pixel > 64) throw attnkit::UsageError("--pixel-size must be 1 to 64");
    layout.pixel = pixel;
    const attnkit::Tensor p = mem::read_patterns(in, &layout);
    const int64_t n = p.dim(1);
    const int64_t k = app.given("flip") ? mem::flip_count(fraction, n) : count;
    attnkit::Tensor noisy;
    try {
      noisy = mem::flip_bits(p, k, app.common().seed);
    } catch (attnkit::Error& e) {
      e.locate(in);
      throw;
    }
    mem::write_patterns(out, noisy, layout, app.write_options());
    if (!app.common().quiet)
      std::cerr << "pattern-noise: flipped " << k << " of " << n << " bits in each of " << p.dim(0)
                << " patterns\n";
  });
}
