// ptr-run: decode problems with a pointer network from ptr-train; scores; pictures.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/ptrnet/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ptr-run", argc, argv, [](cli::App& app) {
    std::string model, input, out = "-", attention, draw;
    bool eval = false;
    int beam = 1;
    int64_t draw_count = 8;
    app.describe(
        "Decode problems with a pointer network, greedily or by beam search; with "
        "--eval, the exact and valid shares, tour lengths and hull areas by n.",
        "--model MODEL -i PROBLEMS [--beam K] [--eval] [--alignments FILE.npz] [--draw "
        "FILE.svg|FILE.png] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from ptr-train")(
        "input,i", po::value(&input)->value_name("PROBLEMS")->required(),
        "problems (ptrtask-gen's lines; answers are needed by --eval and --draw)")(
        "beam,k", po::value(&beam)->value_name("K")->default_value(beam), "beam width (1: greedy)")(
        "eval", po::bool_switch(&eval), "print the scores by n instead of the outputs")(
        "alignments", po::value(&attention)->value_name("FILE.npz"),
        "each problem's pointer distributions: arrays s0, s1, ... [output steps, 1 + n] (column 0: "
        "the end), for attn-plot")(
        "draw", po::value(&draw)->value_name("FILE"),
        "hull and tsp: the first problems' points, answers and outputs (.svg or .png)")(
        "draw-count", po::value(&draw_count)->value_name("N")->default_value(draw_count),
        "with --draw: how many problems")("output,o",
                                          po::value(&out)->value_name("FILE")->default_value(out),
                                          "outputs or the table (- is standard output)");
    app.epilog(
        "Outputs: one line a problem, the chosen 1-based indices (the end not written).\n"
        "--eval columns: n, problems, exact (the whole answer), valid (a permutation for sort;\n"
        "a closed permutation for tsp; a closed simple polygon for hull); tsp: the mean tour\n"
        "of the valid outputs, the answers' mean on the same problems, the gap in percent and\n"
        "the nearest-neighbour tour's mean on them; hull: the mean area of the output polygon\n"
        "over the answer's (valid outputs). A last row 'all' sums every n.\n"
        "Beam search keeps K hypotheses and returns the finished one of the highest total\n"
        "log-probability.");
    app.parse();
    const cli::Outputs outputs({out},
                               {attention, draw});  // checked now; side ones removed on failure
    models::PtrRunOptions o;
    o.model = model, o.input = input, o.attention = attention, o.draw = draw, o.output = out;
    o.eval = eval, o.beam = beam, o.draw_count = draw_count, o.threads = app.common().threads;
    cli::write_text(out, models::run_ptrnet(o));
  });
}
