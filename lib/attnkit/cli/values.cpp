// Option values beyond Boost's: shapes and vectors.
#include <cstdlib>

#include "attnkit/cli/cli.h"

namespace attnkit::cli {

Shape parse_shape(const std::string& text, const std::string& option) {
  Shape shape;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) throw UsageError(option + ": bad shape '" + text + "' (expected e.g. 3,4)");
    for (char ch : cur)
      if (ch < '0' || ch > '9')
        throw UsageError(option + ": bad shape '" + text + "' (expected e.g. 3,4)");
    if (cur.size() > 12) throw UsageError(option + ": dimension " + cur + " is too large");
    shape.push_back(std::stoll(cur));
    cur.clear();
  };
  for (char ch : text) {
    if (ch == ',' || ch == 'x')
      flush();
    else
      cur += ch;
  }
  flush();
  try {
    shape_numel(shape);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  return shape;
}

std::vector<double> read_vector(const std::string& arg, const std::string& option) {
  std::vector<double> v;
  bool inline_numbers = !arg.empty();
  const char* p = arg.c_str();
  while (inline_numbers && *p) {
    while (*p == ',' || *p == ' ') ++p;
    if (!*p) break;
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p || (*end && *end != ',' && *end != ' '))
      inline_numbers = false;
    else
      v.push_back(x), p = end;
  }
  if (inline_numbers && !v.empty()) return v;
  v.clear();
  Tensor t = io::read_tensor(arg);
  if (t.size() == 0) throw DataError(option + ": " + arg + " holds no values");
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t[i]);
  return v;
}

}  // namespace attnkit::cli
