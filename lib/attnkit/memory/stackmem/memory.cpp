#include "attnkit/memory/stackmem/memory.h"

#include <algorithm>
#include <cmath>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/stackmem/ops.h"

namespace attnkit::memory {

StackKind parse_stack_kind(const std::string& name) {
  return parse_choice<StackKind>(
      "memory", name,
      {{"stack", StackKind::Stack}, {"queue", StackKind::Queue}, {"deque", StackKind::Deque}});
}

std::string stack_kind_name(StackKind k) {
  switch (k) {
    case StackKind::Stack:
      return "stack";
    case StackKind::Queue:
      return "queue";
    case StackKind::Deque:
      return "deque";
  }
  return "?";
}

// ---- double precision

namespace {

// Strengths after a pop of u from the top (from_top) or the bottom; ops: 2 a strength (its
// share of the pop, and the running sum).
std::vector<double> popped(const std::vector<double>& s, double u, bool from_top, int64_t& ops) {
  const size_t n = s.size();
  std::vector<double> out(n);
  double above = 0.0;  // Σ of the strengths nearer the end popped from
  for (size_t k = 0; k < n; ++k) {
    const size_t i = from_top ? n - 1 - k : k;
    out[i] = std::max(0.0, s[i] - std::max(0.0, u - above));
    above += s[i];
  }
  ops += 2 * static_cast<int64_t>(n);
  return out;
}

// Σ_i min(s[i], max(0, 1 − Σ of the strengths nearer the end)) · V[i]; ops: m + 2 a value (its
// weight, the running sum and the m multiply-adds).
std::vector<double> read_end(const std::vector<double>& s, const std::vector<double>& v, int64_t m,
                             bool from_top, int64_t& ops) {
  const size_t n = s.size();
  std::vector<double> r(static_cast<size_t>(m), 0.0);
  double above = 0.0;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = from_top ? n - 1 - k : k;
    const double w = std::min(s[i], std::max(0.0, 1.0 - above));
    for (int64_t c = 0; c < m; ++c)
      r[static_cast<size_t>(c)] += w * v[i * static_cast<size_t>(m) + static_cast<size_t>(c)];
    above += s[i];
  }
  ops += static_cast<int64_t>(n) * (m + 2);
  return r;
}

void check_strength(double x, const char* what) {
  if (!std::isfinite(x) || x < 0.0 || x > 1.0)
    throw DataError(std::string(what) + " must be in [0, 1], got " + std::to_string(x));
}

}  // namespace

StackStepOut stack_step(StackKind kind, const StackStepIn& in) {
  const int64_t m = in.m;
  if (m < 1) throw ShapeError("the value width must be at least 1");
  const size_t n = in.strengths.size();
  if (in.values.size() != n * static_cast<size_t>(m))
    throw ShapeError("the memory has " + std::to_string(in.values.size()) + " numbers; " +
                     std::to_string(n) + " strengths of width " + std::to_string(m) + " need " +
                     std::to_string(n * static_cast<size_t>(m)));
  if (in.value.size() != static_cast<size_t>(m))
    throw ShapeError("the pushed value has " + std::to_string(in.value.size()) +
                     " numbers, the memory's width is " + std::to_string(m));
  for (double x : in.values)
    if (!std::isfinite(x)) throw DataError("the memory's values must be finite");
  for (double x : in.value)
    if (!std::isfinite(x)) throw DataError("the pushed value must be finite");
  for (double x : in.strengths) check_strength(x, "a strength");
  check_strength(in.push, "the push strength");
  check_strength(in.pop, "the pop strength");
  StackStepOut out;
  if (kind != StackKind::Deque) {
    const bool top = kind == StackKind::Stack;
    out.strengths = popped(in.strengths, in.pop, top, out.ops);
    out.strengths.push_back(in.push);
    out.values = in.values;
    out.values.insert(out.values.end(), in.value.begin(), in.value.end());
    out.read = read_end(out.strengths, out.values, m, top, out.ops);
    return out;
  }
  if (in.value_bottom.size() != static_cast<size_t>(m))
    throw ShapeError("the bottom value has " + std::to_string(in.value_bottom.size()) +
                     " numbers, the memory's width is " + std::to_string(m));
  for (double x : in.value_bottom)
    if (!std::isfinite(x)) throw DataError("the pushed value must be finite");
  check_strength(in.push_bottom, "the bottom push strength");
  check_strength(in.pop_bottom, "the bottom pop strength");
  const std::vector<double> s =
      popped(popped(in.strengths, in.pop, true, out.ops), in.pop_bottom, false, out.ops);
  out.strengths.push_back(in.push_bottom);
  out.strengths.insert(out.strengths.end(), s.begin(), s.end());
  out.strengths.push_back(in.push);
  out.values = in.value_bottom;
  out.values.insert(out.values.end(), in.values.begin(), in.values.end());
  out.values.insert(out.values.end(), in.value.begin(), in.value.end());
  out.read = read_end(out.strengths, out.values, m, true, out.ops);
  const std::vector<double> rb = read_end(out.strengths, out.values, m, false, out.ops);
  out.read.insert(out.read.end(), rb.begin(), rb.end());
  return out;
}

// ---- on the tape

using ad::Var;

StackUpdate stack_update(ad::Tape& /*t*/, StackKind kind, const StackState& prev, Var push, Var pop,
                         Var value) {
  const bool deque = kind == StackKind::Deque;
  const int64_t b = push.dim(0), ends = deque ? 2 : 1;
  if (push.shape() != Shape{b, ends} || pop.shape() != Shape{b, ends} || value.rank() != 2 ||
      value.dim(0) != b || value.dim(1) % ends != 0)
    throw ShapeError("stack_update: push and pop must be [B, " + std::to_string(ends) +
                     "] and the value [B, " + (deque ? std::string("2m") : std::string("m")) +
                     "]; got " + shape_str(push.shape()) + ", " + shape_str(pop.shape()) + ", " +
                     shape_str(value.shape()));
  const int64_t m = value.dim(1) / ends;
  StackUpdate out;
  out.state.size = prev.size + ends;
  Var v_top = ad::reshape(deque ? ad::slice(value, 1, 0, m) : value, {b, 1, m});
  Var d_top = deque ? ad::slice(push, 1, 0, 1) : push;
  if (!deque) {
    const bool top = kind == StackKind::Stack;
    if (prev.size == 0) {
      out.state.strengths = d_top;
      out.state.values = v_top;
    } else {
      out.state.strengths = ad::concat({stack_pop(prev.strengths, pop, top), d_top}, 1);
      out.state.values = ad::concat({prev.values, v_top}, 1);
    }
    out.read = stack_read(out.state.strengths, out.state.values, top);
    return out;
  }
  Var v_bot = ad::reshape(ad::slice(value, 1, m, 2 * m), {b, 1, m});
  Var d_bot = ad::slice(push, 1, 1, 2);
  if (prev.size == 0) {
    out.state.strengths = ad::concat({d_bot, d_top}, 1);
    out.state.values = ad::concat({v_bot, v_top}, 1);
  } else {
    Var s = stack_pop(prev.strengths, ad::slice(pop, 1, 0, 1), true);
    s = stack_pop(s, ad::slice(pop, 1, 1, 2), false);
    out.state.strengths = ad::concat({d_bot, s, d_top}, 1);
    out.state.values = ad::concat({v_bot, prev.values, v_top}, 1);
  }
  out.read = ad::concat({stack_read(out.state.strengths, out.state.values, true),
                         stack_read(out.state.strengths, out.state.values, false)},
                        1);
  return out;
}

Var stack_rnn_update(ad::Tape& t, Var stacks, Var actions, Var value) {
  if (stacks.rank() != 2 || stacks.dim(1) < 1 || actions.shape() != Shape{stacks.dim(0), 3} ||
      value.shape() != Shape{stacks.dim(0), 1})
    throw ShapeError(
        "stack_rnn_update: stacks must be [N, n] (n >= 1), actions [N, 3] and the "
        "value [N, 1]; got " +
        shape_str(stacks.shape()) + ", " + shape_str(actions.shape()) + ", " +
        shape_str(value.shape()));
  const int64_t N = stacks.dim(0), n = stacks.dim(1);
  Var pushed = ad::concat({value, stacks}, 1);
  Var popped = n > 1 ? ad::concat({ad::slice(stacks, 1, 1, n), t.constant(Tensor({N, 2}, 0.0f))}, 1)
                     : t.constant(Tensor({N, 2}, 0.0f));
  Var kept = ad::concat({stacks, t.constant(Tensor({N, 1}, 0.0f))}, 1);
  return ad::add(ad::add(ad::mul(ad::slice(actions, 1, 0, 1), pushed),
                         ad::mul(ad::slice(actions, 1, 1, 2), popped)),
                 ad::mul(ad::slice(actions, 1, 2, 3), kept));
}

}  // namespace attnkit::memory
