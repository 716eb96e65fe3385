// attn-plot: a heatmap (PNG or SVG) of attention weights, with token labels and a legend.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/plot/heatmap.h"

namespace {

// One token a line (UTF-8); a final newline does not add an empty token.
std::vector<std::string> read_tokens(const std::string& path) {
  const std::string text = attnkit::io::read_text(path);
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return attnkit::cli::run("attn-plot", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    std::string in = "-", rows, cols, title, format, out;
    app.describe("Heatmap of attention weights as PNG or SVG.",
                 "[OPTIONS] -i WEIGHTS -o OUT.png|OUT.svg");
    app.options().add_options()(
        "input,i", po::value(&in)->value_name("WEIGHTS")->default_value(in),
        "weights: n_q x n_k, or B x n_q x n_k (a panel per item), or B x H x n_q x n_k")(
        "rows", po::value(&rows)->value_name("TOKENS"),
        "row (query) labels: a file of one token a line, UTF-8")(
        "cols", po::value(&cols)->value_name("TOKENS"), "column (key) labels, likewise")(
        "title", po::value(&title)->value_name("T"), "title above the panels")(
        "format", po::value(&format)->value_name("FMT"),
        "png or svg (default: by the extension of OUT, else png)")(
        "output,o", po::value(&out)->value_name("OUT")->required(),
        "the image file (- is standard output)");
    app.epilog(
        "Colours: viridis from min(0, smallest value) to the largest value; non-finite\n"
        "values (masked scores, -inf) are grey. PNG labels use a 5x7 bitmap font: ASCII,\n"
        "the accented letters and punctuation of Western European languages (other\n"
        "characters are drawn as boxes); SVG keeps the UTF-8 text.");
    app.parse();
    if (!app.given("format"))
      format = out.size() > 4 && out.compare(out.size() - 4, 4, ".svg") == 0 ? "svg" : "png";
    const bool svg = attnkit::cli::parse_option("--format", [&] {
      return attnkit::parse_choice<bool>("format", format, {{"png", false}, {"svg", true}});
    });

    const attnkit::Tensor w = attnkit::io::read_tensor(in);
    attnkit::plot::HeatmapSpec spec;
    spec.title = title;
    if (app.given("rows")) spec.rows = read_tokens(rows);
    if (app.given("cols")) spec.cols = read_tokens(cols);
    attnkit::plot::Layout layout;
    try {
      layout = attnkit::plot::heatmap_layout(w, spec);
    } catch (attnkit::Error& e) {
      const std::string what = e.what();
      e.locate(what.find(" row tokens") != std::string::npos      ? rows
               : what.find(" column tokens") != std::string::npos ? cols
                                                                  : in);
      throw;
    }
    const std::string bytes =
        svg ? attnkit::plot::heatmap_svg(w, spec, layout)
            : attnkit::plot::encode_png(attnkit::plot::render_heatmap(w, spec, layout));
    attnkit::io::write_file(out, bytes);
  });
}
