#include "attnkit/core/fault.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attnkit/core/error.h"

namespace attnkit {
namespace {

struct Fault {
  std::string where;  // empty: none armed
  long at = 0;
  long seen = 0;
};

Fault& fault() {
  static Fault f = [] {
    Fault r;
    const char* v = std::getenv("ATTNKIT_FAULT");
    if (v == nullptr || *v == '\0') return r;
    const std::string s(v);
    const size_t colon = s.rfind(':');
    char* end = nullptr;
    const long n = colon == std::string::npos ? 0 : std::strtol(s.c_str() + colon + 1, &end, 10);
    const std::string w = colon == std::string::npos ? "" : s.substr(0, colon);
    if (n < 1 || end == nullptr || *end != '\0' || (w != "step" && w != "write" && w != "slice"))
      throw UsageError("ATTNKIT_FAULT='" + s +
                       "' is not WHERE:N with WHERE step, write or slice and N 1 or more");
    r.where = w;
    r.at = n;
    return r;
  }();
  return f;
}

}  // namespace

bool fault_armed(const char* where) {
  const char* v = std::getenv("ATTNKIT_FAULT");
  if (v == nullptr || *v == '\0') return false;
  return fault().where == where;
}

void fault_point(const char* where) {
  if (!fault_armed(where)) return;
  Fault& f = fault();
  if (++f.seen == f.at) std::raise(f.where == "slice" ? SIGTERM : SIGKILL);
}

}  // namespace attnkit
