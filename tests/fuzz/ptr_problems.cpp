// Pointer-network problem files (ptrtask-gen's lines, the paper's format) for each task, then
// what ptr-run does with a parsed problem: the exact answer, validity and the measures of the
// file's own answer.
#include "attnkit/data/ptrtask.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET({
  using namespace attnkit::data;
  for (const int dim : {1, 2}) {
    for (const PtrProblem& p : parse_ptr_problems(std::string(bytes), dim, "fuzz.txt")) {
      if (p.n() > 64) continue;  // the exact answers are for small problems
      if (dim == 1) {
        sort_answer(p);
        valid_output(PtrTask::Sort, p, p.answer);
        continue;
      }
      hull_answer(p);
      valid_output(PtrTask::Hull, p, p.answer);
      valid_output(PtrTask::Tsp, p, p.answer);
      path_length(p, p.answer);
      polygon_area(p, p.answer);
      if (p.n() <= 8) tsp_exact(p);
      if (p.n() <= 16) tsp_two_opt(p);
    }
  }
})
