// image-gen: seeded images composed from Fashion-MNIST items (translated, cluttered, pairs,
// scenes with captions and a compositional split), as .npz for the image tools and NumPy.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/train/trainer.h"
#include "attnkit/vision/compose.h"
#include "attnkit/vision/fmnist.h"

using namespace attnkit;
namespace po = boost::program_options;

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

int main(int argc, char** argv) {
  return cli::run("image-gen", argc, argv, [](cli::App& app) {
    std::string task, out, captions, split = "train", dir = vision::default_fmnist_dir();
    vision::ComposeOptions o;
    app.describe(
        "Seeded images composed from Fashion-MNIST items: the items, one item translated on a "
        "canvas, the same with clutter, pairs in opposite corners, captioned scenes.",
        "--task plain|translated|cluttered|pairs|scenes -o FILE.npz [--count N] [--split "
        "train|test] [--captions FILE.tsv] [OPTIONS]");
    app.options().add_options()("task", po::value(&task)->value_name("TASK")->required(),
                                "plain, translated, cluttered, pairs or scenes")(
        "output,o", po::value(&out)->value_name("FILE.npz")->required(),
        "the images and their labels, boxes or cells (see below)")(
        "count", po::value(&o.count)->value_name("N")->default_value(o.count), "images")(
        "split", po::value(&split)->value_name("S")->default_value(split),
        "train (items from the 60,000 training images; scenes without held-out pairs) or "
        "test (the 10,000 test images; scenes with at least one)")(
        "canvas", po::value(&o.canvas)->value_name("C"),
        "canvas side in pixels (translated, cluttered: default 60, >= 28; pairs: default 64, "
        ">= 56)")("clutter", po::value(&o.clutter)->value_name("K")->default_value(o.clutter),
                  "cluttered: crops of other items a canvas")(
        "clutter-size", po::value(&o.clutter_size)->value_name("S")->default_value(o.clutter_size),
        "cluttered: side of a crop (1-28)")(
        "sample", po::bool_switch(&o.sample),
        "plain: a seeded sample of the split instead of its first N images")(
        "captions", po::value(&captions)->value_name("FILE.tsv"),
        "scenes: one line an image, CAPTION<TAB>TOKEN_CELLS")(
        "fmnist", po::value(&dir)->value_name("DIR")->default_value(dir),
        "the folder of Fashion-MNIST's IDX files (Debian package dataset-fashion-mnist)");
    app.enable(cli::kSeed | cli::kQuiet);
    app.epilog(
        "Pixels are float32 in [0,1] (item bytes / 255, 0 = background; overlapping items take\n"
        "the max). Arrays of -o FILE.npz (read one with FILE.npz:NAME), float32:\n"
        "  plain       images [N,28,28] (the first N of the split, or --sample); labels [N]\n"
        "  translated  images [N,C,C], one item at a uniformly random place; labels [N];\n"
        "              boxes [N,4] = top, left, height, width of the item's non-zero pixels\n"
        "  cluttered   as translated plus --clutter crops (--clutter-size square) of other\n"
        "              items at random places that never intersect the item's box\n"
        "  pairs       images [N,C,C], two items at the ends of a random diagonal (28x28 at\n"
        "              the corners); labels [N] = 1 same class, 0 different (half each)\n"
        "  scenes      images [N,56,56], 2-3 items on the 2x2 grid of 28x28 cells;\n"
        "              cells [N,4] = class in cell top-left, top-right, bottom-left,\n"
        "              bottom-right, -1 when empty\n"
        "Classes 0-9: tshirt trouser pullover dress coat sandal shirt sneaker bag boot.\n"
        "Scene captions chain the items in reading order with the relation of each to the\n"
        "next (left of, above, above and left of, above and right of):\n"
        "  a bag left of a sneaker above and right of a coat\t-1 0 -1 -1 -1 1 -1 -1 -1 -1 -1 2\n"
        "TOKEN_CELLS: a token, the cell (0-3) of the item a noun names, -1 for other tokens.\n"
        "Compositional split: the held-out (class, cell) pairs are (trouser, top-left),\n"
        "(bag, top-right), (sneaker, bottom-left), (dress, bottom-right); --split train\n"
        "scenes never contain one, --split test scenes contain at least one.\n"
        "Items are drawn uniformly (with replacement) from the split; the same --seed and\n"
        "options give the same files.");
    app.parse();
    o.task = cli::parse_option("--task", [&] { return vision::parse_task(task); });
    if (split != "train" && split != "test")
      throw UsageError("--split: unknown split '" + split + "' (choose train or test)");
    o.split = split == "test" ? vision::SceneSplit::Test : vision::SceneSplit::Train;
    if (app.given("sample") && o.task != vision::Task::Plain)
      throw UsageError("--sample: only plain takes a sample of the split");
    if ((app.given("clutter") || app.given("clutter-size")) && o.task != vision::Task::Cluttered)
      throw UsageError("--clutter/--clutter-size: only cluttered has clutter");
    if (app.given("captions") && o.task != vision::Task::Scenes)
      throw UsageError("--captions: only scenes have captions");
    if (app.given("canvas") && o.canvas == 0) throw UsageError("--canvas must be >= 1");
    try {
      o.validate();
    } catch (const UsageError& e) {
      throw UsageError(std::string("--") + e.what());
    }
    if (!ends_with(out, ".npz")) throw UsageError("-o: the output must be a FILE.npz");
    if (!captions.empty() && !ends_with(captions, ".tsv"))
      throw UsageError("--captions: the captions must be a FILE.tsv");
    train::check_writable(out);
    if (!captions.empty()) train::check_writable(captions);

    const vision::ItemSet items = vision::load_fashion_mnist(dir, split);
    Rng rng(app.common().seed);
    cli::Progress bar(app.name(), o.count, app.common().quiet);
    vision::Composed c;
    try {
      c = vision::compose(items, o, rng, [&](int64_t done) { bar.update(done); });
    } catch (const UsageError& e) {
      throw UsageError(std::string("--") + e.what());
    }
    bar.finish();
    std::vector<std::pair<std::string, const Tensor*>> arrays = {{"images", &c.images}};
    if (!c.labels.empty()) arrays.emplace_back("labels", &c.labels);
    if (!c.boxes.empty()) arrays.emplace_back("boxes", &c.boxes);
    if (!c.cells.empty()) arrays.emplace_back("cells", &c.cells);
    // Captions first: a failed captions write leaves no archive either.
    if (!captions.empty()) io::write_file(captions, vision::format_captions(c));
    io::write_npz(out, arrays);
  });
}
