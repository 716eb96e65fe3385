// ptr-run: decode problems with a pointer network from ptr-train; scores; pictures.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ptrnet.h"
#include "attnkit/plot/tours.h"
#include "attnkit/train/trainer.h"

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
        "--draw: how many problems")("output,o",
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
    if (beam < 1) throw UsageError("--beam must be >= 1");
    if (draw_count < 1) throw UsageError("--draw-count must be >= 1");
    const bool png = draw.size() >= 4 && draw.compare(draw.size() - 4, 4, ".png") == 0;
    if (!draw.empty() && !png &&
        !(draw.size() >= 4 && draw.compare(draw.size() - 4, 4, ".svg") == 0))
      throw UsageError("--draw: the file must end in .svg or .png");
    for (const std::string* p : {&out, &attention, &draw})
      if (!p->empty() && *p != "-") train::check_writable(*p);
    const models::LoadedPtrNet m = models::load_ptrnet(model);
    const data::PtrTask task = m.config.kind();
    if (!draw.empty() && task == data::PtrTask::Sort)
      throw UsageError("--draw: sorting problems are not drawn (points in the plane only)");
    const auto ps = data::read_ptr_problems(input, data::ptr_task_dim(task));
    if (eval || !draw.empty())
      for (size_t i = 0; i < ps.size(); ++i)
        if (ps[i].answer.empty())
          throw DataError(
              "problem " + std::to_string(i + 1) + " has no answer (needed by --eval and --draw)",
              input, static_cast<long>(i + 1));
    std::vector<std::vector<int32_t>> outputs;
    std::string text;
    if (eval) {
      text = models::ptr_score_tsv(
          task, models::evaluate_ptr(*m.model, ps, beam, app.common().threads, &outputs));
    } else {
      outputs = models::decode_ptr(*m.model, ps, beam, app.common().threads);
      for (const auto& y : outputs) {
        for (size_t i = 0; i < y.size(); ++i) text += (i ? " " : "") + std::to_string(y[i]);
        text += "\n";
      }
    }
    if (!attention.empty()) {
      std::vector<Tensor> att(ps.size());
      parallel_for(
          static_cast<int64_t>(ps.size()),
          [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
              const auto& p = ps[static_cast<size_t>(i)];
              if (beam == 1) {
                std::vector<Tensor> one;
                m.model->greedy({&p}, &one);
                att[static_cast<size_t>(i)] = std::move(one[0]);
              } else {
                m.model->beam(p, beam, &att[static_cast<size_t>(i)]);
              }
            }
          },
          app.common().threads);
      std::vector<std::pair<std::string, Tensor>> arrays;
      for (size_t i = 0; i < att.size(); ++i)
        arrays.emplace_back("s" + std::to_string(i), std::move(att[i]));
      io::write_npz(attention, arrays);
    }
    if (!draw.empty()) {
      std::vector<plot::TourPanel> panels;
      for (size_t i = 0; i < ps.size() && static_cast<int64_t>(i) < draw_count; ++i)
        panels.push_back(
            {&ps[i], outputs[i],
             plot::tour_caption(task, static_cast<int64_t>(i + 1), ps[i], outputs[i])});
      io::write_file(draw,
                     png ? plot::encode_png(plot::render_tours(panels)) : plot::tours_svg(panels));
    }
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
