// ptrtask-gen: seeded pointer-network problems (sorting, convex hulls, travelling salesman)
// with their exact answers.
#include <optional>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/models/ptrnet/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ptrtask-gen", argc, argv, [](cli::App& app) {
    std::string task, out = "-";
    int64_t count = 1000, n = 0;
    data::PtrGenOptions o;
    app.describe(
        "Seeded problems of the pointer networks' tasks (Vinyals et al. 2015) with exact "
        "answers: sort numbers, the convex hull of points, the shortest closed tour.",
        "--task sort|hull|tsp (--n N | --len-min A --len-max B) [--count C] [--solver S] [--seed "
        "S] "
        "[-o FILE]");
    app.options().add_options()("task", po::value(&task)->value_name("TASK")->required(),
                                "sort, hull or tsp")(
        "n", po::value(&n)->value_name("N"), "points a problem (sets --len-min and --len-max)")(
        "len-min", po::value(&o.n_min)->value_name("A")->default_value(o.n_min),
        "fewest points a problem")("len-max",
                                   po::value(&o.n_max)->value_name("B")->default_value(o.n_max),
                                   "most points a problem (uniform in [A, B])")(
        "count", po::value(&count)->value_name("C")->default_value(count), "problems")(
        "solver", po::value(&o.solver)->value_name("S")->default_value(o.solver),
        "tsp: exact (Held-Karp, at most 20 points), nn (nearest neighbour) or 2opt (2-opt from "
        "it)")("output,o", po::value(&out)->value_name("FILE")->default_value(out),
               "the problems (- is standard output; FILE.npz: arrays points and answers)");
    app.enable(cli::kSeed | cli::kQuiet);
    app.epilog(
        "One problem a line, the paper's format: the coordinates (one a number for sort, x y\n"
        "for hull and tsp; 9 decimals, uniform in [0, 1)), then 'output' and the answer's\n"
        "1-based indices. sort: ascending order (ties: lower index first). hull: the hull's\n"
        "vertices counter-clockwise from the lowest index, closed by returning to it (exact\n"
        "orientation tests; collinear points on an edge are not vertices; of identical points\n"
        "the lowest index). tsp: the tour from point 1 back to it, of its two directions the\n"
        "one whose second point has the lower index.\n"
        "Held-Karp takes O(2^n n^2) time and O(2^n n) memory: on one core about 0.1 ms a\n"
        "problem at n = 10, 1 ms at 12, 15 ms at 15 and 0.6 s (100 MB) at 20.\n"
        "-o FILE.npz (one size only) writes arrays points [count, n, coordinates] and answers\n"
        "[count, longest answer] (1-based indices, 0 after a shorter hull's end), float32:\n"
        "coordinates keep about 7 digits there (the text keeps all 9 decimals).\n"
        "Problems are drawn in order from --seed, then solved on --threads threads: the same\n"
        "file for any thread count.");
    app.parse();
    o.task = cli::parse_option("--task", [&] { return data::parse_ptr_task(task); });
    const std::optional<std::string> text =
        models::generate_ptr_problems(o, count, out, app.common().seed, app.common().threads,
                                      cli::given(app), n, cli::progress(app, "problem"));
    if (text) cli::write_text(out, *text);
  });
}
