// Text matrices: whitespace-separated numbers, one row per line, '#' comments, blank lines
// between the matrices of a rank-3 tensor.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// One number; the whole token must be used. Accepts a leading '+', nan, inf, exponents;
// a magnitude beyond float's range becomes ±inf (or a denormal / zero), as NumPy does.
bool parse_float(std::string_view tok, float& out) {
  if (tok.size() > 1 && tok[0] == '+' && tok[1] != '-' && tok[1] != '+') tok.remove_prefix(1);
  const char* end = tok.data() + tok.size();
  auto r = std::from_chars(tok.data(), end, out);
  if (r.ptr != end) return false;
  if (r.ec == std::errc::result_out_of_range) {
    const std::string s(tok);
    out = static_cast<float>(std::strtod(s.c_str(), nullptr));
    return true;
  }
  return r.ec == std::errc();
}

std::string quote(std::string_view tok) {
  if (tok.size() > 40) return "'" + printable(tok.substr(0, 40)) + "...'";
  return "'" + printable(tok) + "'";
}

}  // namespace

Tensor parse_text(std::string_view text, const std::string& name) {
  std::vector<float> values;
  int64_t cols = -1;        // columns of every row
  int64_t rows = 0;         // rows of the current matrix
  int64_t first_rows = -1;  // rows of the first matrix
  int64_t matrices = 0;
  long block_line = 0;  // line where the current matrix started
  bool gap = false;     // a blank line since the last row
  long line = 0;
  // The matrix that started at block_line ends: all matrices have the same number of rows.
  auto end_matrix = [&] {
    if (first_rows < 0)
      first_rows = rows;
    else if (rows != first_rows)
      throw DataError("matrix " + std::to_string(matrices) + " has " + std::to_string(rows) +
                          (rows == 1 ? " row" : " rows") + ", expected " +
                          std::to_string(first_rows) + " as the first",
                      name, block_line);
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    const size_t hash = l.find('#');
    const bool comment_only =
        hash != std::string_view::npos && l.find_first_not_of(" \t\r\f\v") == hash;
    if (hash != std::string_view::npos) l = l.substr(0, hash);
    int64_t n = 0;
    size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && is_space(l[i])) ++i;
      if (i >= l.size()) break;
      const size_t start = i;
      while (i < l.size() && !is_space(l[i])) ++i;
      const std::string_view tok = l.substr(start, i - start);
      float v;
      if (!parse_float(tok, v)) throw DataError("not a number: " + quote(tok), name, line);
      values.push_back(v);
      ++n;
    }
    if (n == 0) {
      if (!comment_only && rows > 0) gap = true;  // blank line: the matrix may end here
      continue;
    }
    if (gap) {
      end_matrix();
      rows = 0;
      gap = false;
    }
    if (rows == 0) {
      ++matrices;
      block_line = line;
    }
    if (cols < 0)
      cols = n;
    else if (n != cols)
      throw DataError("expected " + std::to_string(cols) + " columns, found " + std::to_string(n),
                      name, line);
    ++rows;
  }
  if (matrices == 0) throw DataError("no numbers", name);
  end_matrix();
  if (matrices == 1) return Tensor(Shape{rows, cols}, std::move(values));
  return Tensor(Shape{matrices, first_rows, cols}, std::move(values));
}

namespace {

void append_number(std::string& out, float v, int precision) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  char buf[64];
  if (precision < 0) {
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  } else {
    const int n = std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::string format_number(float v, int precision) {
  std::string s;
  append_number(s, v, precision);
  return s;
}

namespace {

void append_row(std::string& out, const float* v, int64_t n, int precision) {
  for (int64_t j = 0; j < n; ++j) {
    if (j) out += ' ';
    append_number(out, v[j], precision);
  }
  out += '\n';
}

}  // namespace

std::string format_text(const Tensor& t, int precision) {
  std::string out;
  const float* v = t.data();
  switch (t.rank()) {
    case 0:
      append_row(out, v, 1, precision);
      break;
    case 1:
      append_row(out, v, t.size(), precision);
      break;
    case 2:
      for (int64_t i = 0; i < t.dim(0); ++i) append_row(out, v + i * t.dim(1), t.dim(1), precision);
      break;
    case 3:
      for (int64_t b = 0; b < t.dim(0); ++b) {
        if (b) out += '\n';
        for (int64_t i = 0; i < t.dim(1); ++i)
          append_row(out, v + (b * t.dim(1) + i) * t.dim(2), t.dim(2), precision);
      }
      break;
    default:
      throw ShapeError("text holds rank <= 3; write .npy (shape " + shape_str(t.shape()) + ")");
  }
  return out;
}

}  // namespace attnkit::io
