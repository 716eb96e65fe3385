#include "attnkit/models/ptrnet/run.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ptrnet/model.h"
#include "attnkit/models/run_outputs.h"
#include "attnkit/plot/tours.h"
#include "attnkit/train/trainer.h"

namespace attnkit::models {

namespace {

// Each problem's attention while it is decoded (as decode_ptr does: greedy or beam).
std::vector<std::pair<std::string, Tensor>> ptr_attention(const PtrNet& model,
                                                          const std::vector<data::PtrProblem>& ps,
                                                          int beam, int threads) {
  std::vector<Tensor> att(ps.size());
  parallel_for(
      static_cast<int64_t>(ps.size()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const auto& p = ps[static_cast<size_t>(i)];
          if (beam == 1) {
            std::vector<Tensor> one;
            model.greedy({&p}, &one);
            att[static_cast<size_t>(i)] = std::move(one[0]);
          } else {
            model.beam(p, beam, &att[static_cast<size_t>(i)]);
          }
        }
      },
      threads);
  std::vector<std::pair<std::string, Tensor>> arrays;
  for (size_t i = 0; i < att.size(); ++i)
    arrays.emplace_back("s" + std::to_string(i), std::move(att[i]));
  return arrays;
}

// Points [C, n, dim] and answers [C, L] (1-based; 0 pads a shorter hull), float32.
std::vector<std::pair<std::string, Tensor>> problem_arrays(
    const data::PtrGenOptions& o, const std::vector<data::PtrProblem>& ps) {
  const int64_t count = static_cast<int64_t>(ps.size());
  int64_t L = 0;
  for (const auto& p : ps) L = std::max<int64_t>(L, static_cast<int64_t>(p.answer.size()));
  const int dim = data::ptr_task_dim(o.task);
  Tensor pts({count, o.n_min, dim}), ans({count, L}, 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    const auto& p = ps[static_cast<size_t>(i)];
    for (int64_t k = 0; k < o.n_min * dim; ++k)
      pts[i * o.n_min * dim + k] =
          static_cast<float>(static_cast<double>(p.q[static_cast<size_t>(k)]) / data::kCoordScale);
    for (size_t k = 0; k < p.answer.size(); ++k)
      ans[i * L + static_cast<int64_t>(k)] = static_cast<float>(p.answer[k]);
  }
  std::vector<std::pair<std::string, Tensor>> arrays;
  arrays.emplace_back("points", std::move(pts));
  arrays.emplace_back("answers", std::move(ans));
  return arrays;
}

}  // namespace

std::optional<std::string> generate_ptr_problems(data::PtrGenOptions o, int64_t count,
                                                 const std::string& path, uint64_t seed,
                                                 int threads, const GivenOption& given, int64_t n,
                                                 const ProgressFn& progress) {
  if (given("n")) {
    if (given("len-min") || given("len-max"))
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
  const bool npz = path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0;
  if (npz && o.n_min != o.n_max)
    throw UsageError("-o .npz: the problems must have one size (--n); write text for mixed sizes");
  if (path != "-") train::check_writable(path);
  Rng rng(seed);
  std::vector<data::PtrProblem> ps(static_cast<size_t>(count));
  for (auto& p : ps) p = data::make_ptr_problem(o, rng);
  const bool tours = o.task == data::PtrTask::Tsp;  // only tours take long
  if (tours) tick(progress, 0, count);
  constexpr int64_t kChunk = 256;
  for (int64_t at = 0; at < count; at += kChunk * 8) {
    const int64_t end = std::min(count, at + kChunk * 8);
    parallel_for(
        end - at,
        [&](int64_t b, int64_t e) {
          for (int64_t i = at + b; i < at + e; ++i)
            ps[static_cast<size_t>(i)].answer = data::ptr_answer(o, ps[static_cast<size_t>(i)]);
        },
        threads);
    if (tours) tick(progress, end, count);
  }
  if (npz) {
    io::write_npz(path, problem_arrays(o, ps));
    return std::nullopt;
  }
  std::string text;
  for (const auto& p : ps) text += data::format_ptr_problem(p);
  return text;
}

std::string run_ptrnet(const PtrRunOptions& o) {
  const std::string& draw = o.draw;
  if (o.beam < 1) throw UsageError("--beam must be >= 1");
  if (o.draw_count < 1) throw UsageError("--draw-count must be >= 1");
  const bool png = is_png_name(draw);
  if (!draw.empty() && !png && !(draw.size() >= 4 && draw.compare(draw.size() - 4, 4, ".svg") == 0))
    throw UsageError("--draw: the file must end in .svg or .png");
  check_outputs_writable({&o.output, &o.attention, &o.draw});
  const LoadedPtrNet m = load_ptrnet(o.model);
  const data::PtrTask task = m.config.kind();
  if (!draw.empty() && task == data::PtrTask::Sort)
    throw UsageError("--draw: sorting problems are not drawn (points in the plane only)");
  const auto ps = data::read_ptr_problems(o.input, data::ptr_task_dim(task));
  if (o.eval || !draw.empty())
    for (size_t i = 0; i < ps.size(); ++i)
      if (ps[i].answer.empty())
        throw DataError(
            "problem " + std::to_string(i + 1) + " has no answer (needed by --eval and --draw)",
            o.input, static_cast<long>(ps[i].line));
  // Scores against answers the model's task does not allow (a hull file given to a tsp
  // model, a non-tour) would be meaningless: checked as ptr-train checks its data.
  if (o.eval || !draw.empty())
    for (size_t i = 0; i < ps.size(); ++i) {
      std::vector<int32_t> prefix;
      for (size_t k = 0; k <= ps[i].answer.size(); ++k) {
        const int32_t y = k < ps[i].answer.size() ? ps[i].answer[k] : 0;
        if (!ptr_allowed(task, true, ps[i].n(), prefix)[static_cast<size_t>(y)])
          throw DataError("problem " + std::to_string(i + 1) + ": its answer is not a valid " +
                              data::ptr_task_name(task) + " answer (step " + std::to_string(k + 1) +
                              "), as the model's task needs",
                          o.input, static_cast<long>(ps[i].line));
        if (k < ps[i].answer.size()) prefix.push_back(y);
      }
    }
  std::vector<std::vector<int32_t>> outputs;
  std::string text;
  if (o.eval) {
    text = ptr_score_tsv(task, evaluate_ptr(*m.model, ps, o.beam, o.threads, &outputs));
  } else {
    outputs = decode_ptr(*m.model, ps, o.beam, o.threads);
    for (const auto& y : outputs) {
      for (size_t i = 0; i < y.size(); ++i) text += (i ? " " : "") + std::to_string(y[i]);
      text += "\n";
    }
  }
  if (!o.attention.empty())
    io::write_npz(o.attention, ptr_attention(*m.model, ps, o.beam, o.threads));
  if (!draw.empty()) {
    std::vector<plot::TourPanel> panels;
    for (size_t i = 0; i < ps.size() && static_cast<int64_t>(i) < o.draw_count; ++i)
      panels.push_back({&ps[i], outputs[i],
                        plot::tour_caption(task, static_cast<int64_t>(i + 1), ps[i], outputs[i])});
    io::write_file(draw,
                   png ? plot::encode_png(plot::render_tours(panels)) : plot::tours_svg(panels));
  }
  return text;
}

}  // namespace attnkit::models
