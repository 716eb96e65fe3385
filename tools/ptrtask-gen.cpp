// ptrtask-gen: seeded pointer-network problems (sorting, convex hulls, travelling salesman)
// with their exact answers.
#include <algorithm>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/train/trainer.h"

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
    if (app.given("n")) {
      if (app.given("len-min") || app.given("len-max"))
        throw UsageError("--n and --len-min/--len-max: give one");
      o.n_min = o.n_max = n;
    }
    try {
      o.validate();
    } catch (const ChoiceError& e) {
      throw UsageError(std::string("--solver: ") + e.what());
    } catch (const UsageError& e) {
      throw UsageError(std::string("--") + e.what());
    }
    if (count < 0) throw UsageError("--count must be >= 0");
    const bool npz = out.size() > 4 && out.compare(out.size() - 4, 4, ".npz") == 0;
    if (npz && o.n_min != o.n_max)
      throw UsageError(
          "-o .npz: the problems must have one size (--n); write text for mixed sizes");
    if (out != "-") train::check_writable(out);
    Rng rng(app.common().seed);
    std::vector<data::PtrProblem> ps(static_cast<size_t>(count));
    for (auto& p : ps) p = data::make_ptr_problem(o, rng);
    cli::Progress bar(app.name(), count,
                      app.common().quiet || o.task != data::PtrTask::Tsp);  // only tours take long
    constexpr int64_t kChunk = 256;
    for (int64_t at = 0; at < count; at += kChunk * 8) {
      const int64_t end = std::min(count, at + kChunk * 8);
      parallel_for(
          end - at,
          [&](int64_t b, int64_t e) {
            for (int64_t i = at + b; i < at + e; ++i)
              ps[static_cast<size_t>(i)].answer = data::ptr_answer(o, ps[static_cast<size_t>(i)]);
          },
          app.common().threads);
      bar.update(end);
    }
    bar.finish();
    if (npz) {
      // points [C, n, dim] and answers [C, L] (1-based; 0 pads a shorter hull), float32.
      int64_t L = 0;
      for (const auto& p : ps) L = std::max<int64_t>(L, static_cast<int64_t>(p.answer.size()));
      const int dim = data::ptr_task_dim(o.task);
      Tensor pts({count, o.n_min, dim}), ans({count, L}, 0.0f);
      for (int64_t i = 0; i < count; ++i) {
        const auto& p = ps[static_cast<size_t>(i)];
        for (int64_t k = 0; k < o.n_min * dim; ++k)
          pts[i * o.n_min * dim + k] = static_cast<float>(
              static_cast<double>(p.q[static_cast<size_t>(k)]) / data::kCoordScale);
        for (size_t k = 0; k < p.answer.size(); ++k)
          ans[i * L + static_cast<int64_t>(k)] = static_cast<float>(p.answer[k]);
      }
      std::vector<std::pair<std::string, Tensor>> arrays;
      arrays.emplace_back("points", std::move(pts));
      arrays.emplace_back("answers", std::move(ans));
      io::write_npz(out, arrays);
      return;
    }
    std::string text;
    for (const auto& p : ps) text += data::format_ptr_problem(p);
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
