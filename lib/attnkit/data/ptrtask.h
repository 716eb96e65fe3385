// The pointer networks' problems (Vinyals, Fortunato & Jaitly 2015) with their exact answers:
// sorting numbers, planar convex hulls and the travelling salesman.
//
// Coordinates are fixed-point: integers in units of 1e-9 (text is read to 9 decimals,
// rounded), so that text round-trips exactly and the hull's orientation tests are exact
// (128-bit products; |coordinate| < 1e9). Answers are 1-based indices, as in the paper's
// released files:
//   sort  the ascending order (ties: the lower index first);
//   hull  the convex hull's vertices counter-clockwise from the lowest index, closed by
//         returning to it. Points on an edge's interior (collinear) are not vertices; of
//         identical points only the lowest index can be one. All points identical: "1 1";
//         all on a line: its two ends "a b a" (a the lower index);
//   tsp   the shortest closed tour, from point 1 back to it; of its two directions the one
//         whose second point has the lower index.
// A problem is a text line "c1 c2 ... output i1 i2 ..." (the paper's format; hull and tsp
// have two coordinates a point, sort one); "output" and the indices may be absent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/rng.h"

namespace attnkit::data {

enum class PtrTask { Sort, Hull, Tsp };
PtrTask parse_ptr_task(const std::string& name);  // ChoiceError otherwise
std::string ptr_task_name(PtrTask t);
int ptr_task_dim(PtrTask t);        // coordinates a point: 1 (sort) or 2
bool ptr_task_closed(PtrTask t);    // hull, tsp: the answer returns to its first index
bool ptr_task_permutes(PtrTask t);  // sort, tsp: the answer visits every point once

constexpr int64_t kCoordScale = 1000000000;  // fixed-point units a unit

struct PtrProblem {
  int dim = 2;
  std::vector<int64_t> q;       // n·dim fixed-point coordinates
  std::vector<int32_t> answer;  // 1-based; empty when unknown
  int64_t line = 0;             // its line in the text it was read from (0: an archive's)
  int64_t n() const { return static_cast<int64_t>(q.size()) / dim; }
  double x(int64_t i, int d) const {  // 0-based point i
    return static_cast<double>(q[static_cast<size_t>(i * dim + d)]) /
           static_cast<double>(kCoordScale);
  }
};

// Parsing: DataError (naming file and line) for a non-number, a coordinate count that is not
// a multiple of dim or is 0, |coordinate| >= 1e9, or an index outside [1, n].
std::vector<PtrProblem> parse_ptr_problems(const std::string& text, int dim,
                                           const std::string& file = "");
std::vector<PtrProblem> read_ptr_problems(const std::string& path, int dim);
std::string format_ptr_problem(const PtrProblem& p);  // one line, with its newline
std::string format_coordinate(int64_t q);             // "0.250000000", "-1.500000000"

// ---- exact answers
std::vector<int32_t> sort_answer(const PtrProblem& p);
std::vector<int32_t> hull_answer(const PtrProblem& p);
// The exact tour by Held–Karp dynamic programming: O(2^n n^2) time, O(2^n n) memory;
// UsageError above kHeldKarpMax points.
constexpr int64_t kHeldKarpMax = 20;
std::vector<int32_t> tsp_exact(const PtrProblem& p);
std::vector<int32_t> tsp_nearest_neighbour(const PtrProblem& p);  // from point 1
std::vector<int32_t> tsp_two_opt(const PtrProblem& p);  // 2-opt from the nearest-neighbour tour
// A tour (closed, starting anywhere) in the answers' canonical form: from point 1, the
// direction whose second point has the lower index.
std::vector<int32_t> canonical_tour(const std::vector<int32_t>& closed);

// Orientation of (a, b, c), 0-based points: +1 counter-clockwise, -1 clockwise, 0 collinear.
// Exact.
int orientation(const PtrProblem& p, int64_t a, int64_t b, int64_t c);

// ---- generation
struct PtrGenOptions {
  PtrTask task = PtrTask::Sort;
  int64_t n_min = 5, n_max = 5;
  std::string solver = "exact";  // tsp: exact (Held–Karp), nn or 2opt
  void validate() const;         // UsageError naming the flag
};
// Coordinates uniform on the 1e-9 grid of [0, 1), n uniform in [n_min, n_max].
PtrProblem make_ptr_problem(const PtrGenOptions& o, Rng& rng);
// The answer of o.task (o.solver for tsp) for p's coordinates.
std::vector<int32_t> ptr_answer(const PtrGenOptions& o, const PtrProblem& p);

// ---- measures of an output (1-based indices, as decoded)
double path_length(const PtrProblem& p, const std::vector<int32_t>& seq);  // Σ |p_{s_k} p_{s_k+1}|
// sort: a permutation of 1..n; tsp: n + 1 indices, the first n a permutation, the last the
// first; hull: closed (last = first), no other repeat, >= 3 distinct points (or the
// degenerate answers above), and a simple polygon (no two non-adjacent edges touch).
bool valid_output(PtrTask task, const PtrProblem& p, const std::vector<int32_t>& seq);
// The absolute shoelace area of a closed sequence of points.
double polygon_area(const PtrProblem& p, const std::vector<int32_t>& closed);

}  // namespace attnkit::data
