#include "attnkit/data/ptrtask.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::data {

PtrTask parse_ptr_task(const std::string& name) {
  return parse_choice<PtrTask>(
      "task", name, {{"sort", PtrTask::Sort}, {"hull", PtrTask::Hull}, {"tsp", PtrTask::Tsp}});
}

std::string ptr_task_name(PtrTask t) {
  switch (t) {
    case PtrTask::Sort:
      return "sort";
    case PtrTask::Hull:
      return "hull";
    case PtrTask::Tsp:
      return "tsp";
  }
  return "?";
}

int ptr_task_dim(PtrTask t) { return t == PtrTask::Sort ? 1 : 2; }
bool ptr_task_closed(PtrTask t) { return t != PtrTask::Sort; }
bool ptr_task_permutes(PtrTask t) { return t != PtrTask::Hull; }

// ---- text

namespace {

constexpr int64_t kCoordLimit = kCoordScale * kCoordScale;  // |q| < 1e18: |coordinate| < 1e9

// A decimal number as fixed-point units, rounded half away from zero at the 9th decimal;
// false when the token is not a number or too large.
bool parse_coordinate(const std::string& tok, int64_t* out) {
  size_t i = 0;
  bool neg = false;
  if (i < tok.size() && (tok[i] == '-' || tok[i] == '+')) neg = tok[i++] == '-';
  bool plain = true, any = false, round_up = false;
  unsigned __int128 v = 0;
  int frac = 0;  // 0: in the integer part; else 1 + the decimals read
  for (; i < tok.size(); ++i) {
    const char ch = tok[i];
    if (ch >= '0' && ch <= '9') {
      any = true;
      const unsigned digit = static_cast<unsigned>(ch - '0');
      if (frac == 0) {
        v = v * 10 + digit;
        if (v > static_cast<unsigned __int128>(kCoordLimit)) return false;
      } else if (frac <= 9) {
        v = v * 10 + digit;
        ++frac;
      } else if (frac == 10) {  // the 10th decimal rounds; later ones are dropped
        round_up = digit >= 5;
        ++frac;
      }
    } else if (ch == '.' && frac == 0) {
      frac = 1;
    } else {
      plain = false;
      break;
    }
  }
  if (plain) {
    if (!any) return false;
    const int decimals = frac == 0 ? 0 : std::min(frac - 1, 9);
    for (int k = decimals; k < 9; ++k) v *= 10;
    if (round_up) v += 1;
    if (v >= static_cast<unsigned __int128>(kCoordLimit)) return false;
    *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  // Exponent forms ("1e-3", "2.5E+2"): through strtod, then rounded to the grid.
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(tok.c_str(), &end);
  if (end != tok.c_str() + tok.size() || errno != 0 || !std::isfinite(d) || std::fabs(d) >= 1e9)
    return false;
  *out = std::llround(d * static_cast<double>(kCoordScale));
  return true;
}

}  // namespace

std::string format_coordinate(int64_t q) {
  const bool neg = q < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(q + 1)) + 1 : static_cast<uint64_t>(q);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%09llu", neg ? "-" : "",
                static_cast<unsigned long long>(a / kCoordScale),
                static_cast<unsigned long long>(a % kCoordScale));
  return buf;
}

std::string format_ptr_problem(const PtrProblem& p) {
  std::string s;
  for (size_t i = 0; i < p.q.size(); ++i) s += (i ? " " : "") + format_coordinate(p.q[i]);
  if (!p.answer.empty()) {
    s += " output";
    for (int32_t k : p.answer) s += " " + std::to_string(k);
  }
  s += "\n";
  return s;
}

std::vector<PtrProblem> parse_ptr_problems(const std::string& text, int dim,
                                           const std::string& file) {
  if (dim < 1) throw UsageError("dim must be >= 1");
  std::vector<PtrProblem> out;
  size_t at = 0;
  long line = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(at, end - at);
    at = end + 1;
    ++line;
    std::vector<std::string> toks;
    size_t k = 0;
    while (k < l.size()) {
      while (k < l.size() && std::isspace(static_cast<unsigned char>(l[k]))) ++k;
      size_t e = k;
      while (e < l.size() && !std::isspace(static_cast<unsigned char>(l[e]))) ++e;
      if (e > k) toks.push_back(l.substr(k, e - k));
      k = e;
    }
    if (toks.empty()) continue;
    PtrProblem p;
    p.dim = dim;
    p.line = line;
    size_t t = 0;
    for (; t < toks.size() && toks[t] != "output"; ++t) {
      int64_t q = 0;
      if (!parse_coordinate(toks[t], &q))
        throw DataError("'" + toks[t] + "' is not a coordinate (a number below 1e9 in size)", file,
                        line);
      p.q.push_back(q);
    }
    if (p.q.empty()) throw DataError("a problem without points", file, line);
    if (p.q.size() % static_cast<size_t>(dim) != 0)
      throw DataError(std::to_string(p.q.size()) + " coordinates are not points of " +
                          std::to_string(dim) + (dim == 1 ? " coordinate" : " coordinates"),
                      file, line);
    const int64_t n = p.n();
    for (++t; t < toks.size(); ++t) {
      char* e = nullptr;
      errno = 0;
      const long long v = std::strtoll(toks[t].c_str(), &e, 10);
      if (e != toks[t].c_str() + toks[t].size() || errno != 0)
        throw DataError("'" + toks[t] + "' is not an index", file, line);
      if (v < 1 || v > n)
        throw DataError("index " + toks[t] + " outside 1.." + std::to_string(n), file, line);
      p.answer.push_back(static_cast<int32_t>(v));
    }
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// ptrtask-gen's archive: points [count, n, dim] and answers [count, longest] (1-based, 0 after
// a shorter answer's end), float32.
std::vector<PtrProblem> ptr_problems_from_npz(std::string_view bytes, int dim,
                                              const std::string& path) {
  std::map<std::string, Tensor> a;
  for (auto& m : io::parse_npz(bytes, path)) a.emplace(m.name, std::move(m.tensor));
  auto pt = a.find("points");
  if (pt == a.end())
    throw DataError(
        "the archive holds no 'points' array (ptrtask-gen's .npz has points and answers)", path);
  const Tensor& pts = pt->second;
  if (pts.rank() != 3 || pts.dim(2) != dim || pts.dim(1) < 1)
    throw DataError(
        "points must be [count, n, " + std::to_string(dim) + "], found " + shape_str(pts.shape()),
        path);
  const int64_t count = pts.dim(0), n = pts.dim(1);
  auto at = a.find("answers");
  const Tensor* ans = at == a.end() ? nullptr : &at->second;
  if (ans && (ans->rank() != 2 || ans->dim(0) != count))
    throw DataError("answers must be [" + std::to_string(count) + ", longest], found " +
                        shape_str(ans->shape()),
                    path);
  std::vector<PtrProblem> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    PtrProblem& p = out[static_cast<size_t>(i)];
    p.dim = dim;
    for (int64_t k = 0; k < n * dim; ++k) {
      const double v = pts[i * n * dim + k];
      if (!std::isfinite(v) || std::fabs(v) >= 1e9)
        throw DataError("problem " + std::to_string(i + 1) + ": coordinate " +
                            io::format_number(pts[i * n * dim + k]) +
                            " is not a number below 1e9 in size",
                        path);
      p.q.push_back(std::llround(v * static_cast<double>(kCoordScale)));
    }
    if (!ans) continue;
    const int64_t L = ans->dim(1);
    bool ended = false;
    for (int64_t k = 0; k < L; ++k) {
      const float v = (*ans)[i * L + k];
      if (!(v >= 0 && v <= static_cast<float>(n)) || v != std::floor(v) || (ended && v != 0))
        throw DataError("problem " + std::to_string(i + 1) + ": answer " + io::format_number(v) +
                            " is not an index in 1.." + std::to_string(n) +
                            " (0 only after the answer's end)",
                        path);
      if (v == 0)
        ended = true;
      else
        p.answer.push_back(static_cast<int32_t>(v));
    }
  }
  return out;
}

}  // namespace

std::vector<PtrProblem> read_ptr_problems(const std::string& path, int dim) {
  const std::string bytes = io::read_all(path);
  std::vector<PtrProblem> out;
  if (io::detect_format(std::string_view(bytes).substr(0, 8)) == io::Format::Npz) {
    out = ptr_problems_from_npz(bytes, dim, path);
  } else {
    const std::string kind = io::binary_kind(bytes);
    if (!kind.empty())
      throw DataError(
          kind + ", expected problems as text (ptrtask-gen's lines) or ptrtask-gen's .npz", path);
    out = parse_ptr_problems(bytes, dim, path);
  }
  if (out.empty()) throw DataError("no problems", path);
  return out;
}

// ---- geometry

namespace {
int64_t cx(const PtrProblem& p, int64_t i) { return p.q[static_cast<size_t>(i * p.dim)]; }
int64_t cy(const PtrProblem& p, int64_t i) { return p.q[static_cast<size_t>(i * p.dim + 1)]; }
bool same_point(const PtrProblem& p, int64_t a, int64_t b) {
  for (int d = 0; d < p.dim; ++d)
    if (p.q[static_cast<size_t>(a * p.dim + d)] != p.q[static_cast<size_t>(b * p.dim + d)])
      return false;
  return true;
}
double dist(const PtrProblem& p, int64_t a, int64_t b) {
  double s = 0;
  for (int d = 0; d < p.dim; ++d) {
    const double v = p.x(a, d) - p.x(b, d);
    s += v * v;
  }
  return std::sqrt(s);
}
void need_points(const PtrProblem& p) {
  if (p.dim != 2) throw UsageError("hulls and tours need points of 2 coordinates");
  if (p.q.empty()) throw DataError("a problem without points");
}
}  // namespace

int orientation(const PtrProblem& p, int64_t a, int64_t b, int64_t c) {
  const __int128 abx = static_cast<__int128>(cx(p, b)) - cx(p, a);
  const __int128 aby = static_cast<__int128>(cy(p, b)) - cy(p, a);
  const __int128 acx = static_cast<__int128>(cx(p, c)) - cx(p, a);
  const __int128 acy = static_cast<__int128>(cy(p, c)) - cy(p, a);
  const __int128 cross = abx * acy - aby * acx;
  return cross > 0 ? 1 : cross < 0 ? -1 : 0;
}

double polygon_area(const PtrProblem& p, const std::vector<int32_t>& closed) {
  need_points(p);
  long double s = 0;
  if (closed.size() < 3) return 0.0;
  const int64_t o = closed[0] - 1;
  for (size_t i = 1; i + 1 < closed.size(); ++i) {
    const int64_t a = closed[i] - 1, b = closed[i + 1] - 1;
    const __int128 cr =
        (static_cast<__int128>(cx(p, a)) - cx(p, o)) *
            (static_cast<__int128>(cy(p, b)) - cy(p, o)) -
        (static_cast<__int128>(cy(p, a)) - cy(p, o)) * (static_cast<__int128>(cx(p, b)) - cx(p, o));
    s += static_cast<long double>(cr);
  }
  const long double scale = static_cast<long double>(kCoordScale) * kCoordScale;
  return static_cast<double>(std::fabs(s) / 2 / scale);
}

double path_length(const PtrProblem& p, const std::vector<int32_t>& seq) {
  double s = 0;
  for (size_t i = 0; i + 1 < seq.size(); ++i) s += dist(p, seq[i] - 1, seq[i + 1] - 1);
  return s;
}

std::vector<int32_t> sort_answer(const PtrProblem& p) {
  std::vector<int32_t> idx(static_cast<size_t>(p.n()));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) {
    for (int d = 0; d < p.dim; ++d) {
      const int64_t x = p.q[static_cast<size_t>(a * p.dim + d)],
                    y = p.q[static_cast<size_t>(b * p.dim + d)];
      if (x != y) return x < y;
    }
    return false;
  });
  for (int32_t& i : idx) ++i;
  return idx;
}

std::vector<int32_t> hull_answer(const PtrProblem& p) {
  need_points(p);
  const int64_t n = p.n();
  std::vector<int64_t> pts(static_cast<size_t>(n));
  std::iota(pts.begin(), pts.end(), 0);
  std::sort(pts.begin(), pts.end(), [&](int64_t a, int64_t b) {
    if (cx(p, a) != cx(p, b)) return cx(p, a) < cx(p, b);
    if (cy(p, a) != cy(p, b)) return cy(p, a) < cy(p, b);
    return a < b;
  });
  // Of identical points the first (lowest index) stays.
  std::vector<int64_t> u;
  for (int64_t i : pts)
    if (u.empty() || !same_point(p, u.back(), i)) u.push_back(i);
  std::vector<int64_t> h;
  if (u.size() == 1) {
    h = {u[0]};
  } else {
    // Andrew's monotone chain; a turn that is not strictly counter-clockwise is dropped, so
    // collinear points are not vertices.
    std::vector<int64_t> lower, upper;
    for (int64_t i : u) {
      while (lower.size() >= 2 && orientation(p, lower[lower.size() - 2], lower.back(), i) <= 0)
        lower.pop_back();
      lower.push_back(i);
    }
    for (auto it = u.rbegin(); it != u.rend(); ++it) {
      while (upper.size() >= 2 && orientation(p, upper[upper.size() - 2], upper.back(), *it) <= 0)
        upper.pop_back();
      upper.push_back(*it);
    }
    lower.pop_back();
    upper.pop_back();
    h = lower;
    h.insert(h.end(), upper.begin(), upper.end());
  }
  // Counter-clockwise from the lowest index, closed.
  const auto first = std::min_element(h.begin(), h.end());
  std::rotate(h.begin(), first, h.end());
  std::vector<int32_t> out;
  for (int64_t i : h) out.push_back(static_cast<int32_t>(i + 1));
  out.push_back(out[0]);
  return out;
}

std::vector<int32_t> canonical_tour(const std::vector<int32_t>& closed) {
  if (closed.size() < 2 || closed.front() != closed.back())
    throw DataError("a tour must end where it starts");
  std::vector<int32_t> t(closed.begin(), closed.end() - 1);
  const auto one = std::min_element(t.begin(), t.end());
  std::rotate(t.begin(), one, t.end());
  if (t.size() > 2 && t[1] > t.back()) std::reverse(t.begin() + 1, t.end());
  t.push_back(t[0]);
  return t;
}

std::vector<int32_t> tsp_exact(const PtrProblem& p) {
  need_points(p);
  const int64_t n = p.n();
  if (n > kHeldKarpMax)
    throw UsageError("the exact tour (Held-Karp) takes at most " + std::to_string(kHeldKarpMax) +
                     " points, not " + std::to_string(n) + ": choose the solver nn or 2opt");
  if (n <= 2) {
    std::vector<int32_t> t;
    for (int32_t i = 1; i <= n; ++i) t.push_back(i);
    t.push_back(1);
    return t;
  }
  // Cities 1..n-1 (0-based) as bits 0..n-2; dp[mask·m + j]: the shortest path from city 0
  // through the cities of mask, ending at city j + 1 (in mask).
  const int64_t m = n - 1;
  const size_t states = size_t{1} << m;
  std::vector<double> d(static_cast<size_t>(n * n));
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) d[static_cast<size_t>(a * n + b)] = dist(p, a, b);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dp(states * static_cast<size_t>(m), inf);
  std::vector<int8_t> from(states * static_cast<size_t>(m), -1);
  for (int64_t j = 0; j < m; ++j) dp[(size_t{1} << j) * m + j] = d[static_cast<size_t>(j + 1)];
  for (size_t mask = 1; mask < states; ++mask) {
    for (int64_t j = 0; j < m; ++j) {
      if (!(mask >> j & 1)) continue;
      const double here = dp[mask * m + j];
      if (here == inf) continue;
      for (int64_t k = 0; k < m; ++k) {
        if (mask >> k & 1) continue;
        const size_t next = (mask | size_t{1} << k) * m + k;
        const double c = here + d[static_cast<size_t>((j + 1) * n + k + 1)];
        if (c < dp[next]) dp[next] = c, from[next] = static_cast<int8_t>(j);
      }
    }
  }
  const size_t full = states - 1;
  int64_t last = 0;
  double best = inf;
  for (int64_t j = 0; j < m; ++j) {
    const double c = dp[full * m + j] + d[static_cast<size_t>(j + 1)];
    if (c < best) best = c, last = j;
  }
  std::vector<int32_t> tour = {1};
  size_t mask = full;
  int64_t j = last;
  std::vector<int32_t> back;
  while (j >= 0) {
    back.push_back(static_cast<int32_t>(j + 2));
    const int8_t prev = from[mask * m + j];
    mask &= ~(size_t{1} << j);
    j = prev;
  }
  tour.insert(tour.end(), back.rbegin(), back.rend());
  tour.push_back(1);
  return canonical_tour(tour);
}

std::vector<int32_t> tsp_nearest_neighbour(const PtrProblem& p) {
  need_points(p);
  const int64_t n = p.n();
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  std::vector<int32_t> t = {1};
  seen[0] = 1;
  int64_t at = 0;
  for (int64_t s = 1; s < n; ++s) {
    int64_t best = -1;
    double bd = 0;
    for (int64_t k = 0; k < n; ++k)
      if (!seen[static_cast<size_t>(k)] && (best < 0 || dist(p, at, k) < bd))
        best = k, bd = dist(p, at, k);
    seen[static_cast<size_t>(best)] = 1;
    t.push_back(static_cast<int32_t>(best + 1));
    at = best;
  }
  t.push_back(1);
  return canonical_tour(t);
}

std::vector<int32_t> tsp_two_opt(const PtrProblem& p) {
  std::vector<int32_t> t = tsp_nearest_neighbour(p);
  t.pop_back();
  const size_t n = t.size();
  auto d = [&](size_t a, size_t b) { return dist(p, t[a] - 1, t[b % n] - 1); };
  for (bool improved = n > 3; improved;) {
    improved = false;
    for (size_t i = 0; i + 2 < n; ++i)
      for (size_t j = i + 2; j < n; ++j) {
        if (i == 0 && j == n - 1) continue;  // the same two edges
        const double delta = d(i, j) + d(i + 1, j + 1) - d(i, i + 1) - d(j, j + 1);
        // A gain relative to the edges removed, far above rounding: every move then shortens
        // the tour for real, so the search ends (an absolute 1e-12 could cycle on large
        // coordinates).
        if (delta < -1e-9 * (d(i, i + 1) + d(j, j + 1))) {
          std::reverse(t.begin() + static_cast<std::ptrdiff_t>(i + 1),
                       t.begin() + static_cast<std::ptrdiff_t>(j + 1));
          improved = true;
        }
      }
  }
  t.push_back(t[0]);
  return canonical_tour(t);
}

// ---- generation

void PtrGenOptions::validate() const {
  if (n_min < 1) throw UsageError("len-min must be >= 1");
  if (n_max < n_min) throw UsageError("len-max must be >= len-min");
  if (n_max > 100000) throw UsageError("len-max must be at most 100000");
  if (solver != "exact" && solver != "nn" && solver != "2opt")
    throw ChoiceError("solver", solver, {"exact", "nn", "2opt"});
  if (task != PtrTask::Tsp && solver != "exact")
    throw UsageError("solver: only tsp has heuristic solvers");
  if (task == PtrTask::Tsp && solver == "exact" && n_max > kHeldKarpMax)
    throw UsageError("len-max " + std::to_string(n_max) +
                     " is beyond the exact tour's limit (Held-Karp, " +
                     std::to_string(kHeldKarpMax) + " points): choose the solver nn or 2opt");
}

PtrProblem make_ptr_problem(const PtrGenOptions& o, Rng& rng) {
  PtrProblem p;
  p.dim = ptr_task_dim(o.task);
  const int64_t n =
      o.n_min + static_cast<int64_t>(rng.below(static_cast<uint64_t>(o.n_max - o.n_min + 1)));
  p.q.resize(static_cast<size_t>(n * p.dim));
  for (int64_t& v : p.q) v = static_cast<int64_t>(rng.below(kCoordScale));
  return p;
}

std::vector<int32_t> ptr_answer(const PtrGenOptions& o, const PtrProblem& p) {
  switch (o.task) {
    case PtrTask::Sort:
      return sort_answer(p);
    case PtrTask::Hull:
      return hull_answer(p);
    case PtrTask::Tsp:
      if (o.solver == "nn") return tsp_nearest_neighbour(p);
      if (o.solver == "2opt") return tsp_two_opt(p);
      return tsp_exact(p);
  }
  return {};
}

// ---- validity

namespace {
bool on_segment(const PtrProblem& p, int64_t a, int64_t b, int64_t c) {  // c collinear with ab
  return std::min(cx(p, a), cx(p, b)) <= cx(p, c) && cx(p, c) <= std::max(cx(p, a), cx(p, b)) &&
         std::min(cy(p, a), cy(p, b)) <= cy(p, c) && cy(p, c) <= std::max(cy(p, a), cy(p, b));
}
bool segments_touch(const PtrProblem& p, int64_t a, int64_t b, int64_t c, int64_t d) {
  const int o1 = orientation(p, a, b, c), o2 = orientation(p, a, b, d);
  const int o3 = orientation(p, c, d, a), o4 = orientation(p, c, d, b);
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  return (o1 == 0 && on_segment(p, a, b, c)) || (o2 == 0 && on_segment(p, a, b, d)) ||
         (o3 == 0 && on_segment(p, c, d, a)) || (o4 == 0 && on_segment(p, c, d, b));
}
}  // namespace

bool valid_output(PtrTask task, const PtrProblem& p, const std::vector<int32_t>& seq) {
  const int64_t n = p.n();
  for (int32_t i : seq)
    if (i < 1 || i > n) return false;
  auto distinct = [&](size_t count) {
    std::vector<uint8_t> seen(static_cast<size_t>(n) + 1, 0);
    for (size_t i = 0; i < count; ++i) {
      if (seen[static_cast<size_t>(seq[i])]) return false;
      seen[static_cast<size_t>(seq[i])] = 1;
    }
    return true;
  };
  switch (task) {
    case PtrTask::Sort:
      return static_cast<int64_t>(seq.size()) == n && distinct(seq.size());
    case PtrTask::Tsp:
      return static_cast<int64_t>(seq.size()) == n + 1 && seq.front() == seq.back() &&
             distinct(seq.size() - 1);
    case PtrTask::Hull: {
      if (seq.size() < 2 || seq.front() != seq.back() || !distinct(seq.size() - 1)) return false;
      const size_t k = seq.size() - 1;
      if (k < 3) return hull_answer(p).size() == seq.size();  // a degenerate problem's answer
      auto pt = [&](size_t i) { return static_cast<int64_t>(seq[i % k] - 1); };
      for (size_t i = 0; i < k; ++i) {
        // No spike: an edge that doubles back along the previous one.
        const int64_t a = pt(i), b = pt(i + 1), c = pt(i + 2);
        if (orientation(p, a, b, c) == 0 && (on_segment(p, a, b, c) || on_segment(p, b, c, a)))
          return false;
        for (size_t j = i + 2; j < k; ++j) {
          if (i == 0 && j == k - 1) continue;  // adjacent through the closing edge
          if (segments_touch(p, pt(i), pt(i + 1), pt(j), pt(j + 1))) return false;
        }
      }
      return polygon_area(p, seq) > 0;
    }
  }
  return false;
}

}  // namespace attnkit::data
