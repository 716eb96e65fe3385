// Helpers shared by the unit tests.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string>

#include "attnkit/core/tensor.h"

namespace attnkit::test {

// Checks that a and b have the same shape and |a_i - b_i| <= atol + rtol |b_i| everywhere;
// reports the first index that differs.
inline void check_close(const Tensor& a, const Tensor& b, double atol = 1e-6, double rtol = 1e-5) {
  REQUIRE_MESSAGE(a.shape() == b.shape(),
                  "shapes " << shape_str(a.shape()) << " vs " << shape_str(b.shape()));
  for (int64_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    const bool same_nan = std::isnan(x) && std::isnan(y);
    if (!same_nan && !(std::fabs(x - y) <= atol + rtol * std::fabs(y))) {
      FAIL_CHECK("first mismatch at flat index " << i << ": " << x << " vs " << y);
      return;
    }
  }
}

inline std::string testdata(const std::string& rel) {
  return std::string(ATTNKIT_TESTDATA_DIR) + "/" + rel;
}

// A case that cannot run here (data absent) says so on standard output; CTest marks it
// "Skipped" (cmake/unit_cases.cmake), where silence would look like a pass. Return after it.
inline void skip(const std::string& why) { std::cout << "SKIPPED: " << why << std::endl; }

}  // namespace attnkit::test
