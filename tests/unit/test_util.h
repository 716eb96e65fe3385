// Helpers shared by the unit tests.
#pragma once

#include <dirent.h>
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

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
// The numbers of a golden file's line "NAME x1 x2 ..." (the line must start with `name`).
inline std::vector<double> golden_numbers(const std::string& line, const std::string& name) {
  std::istringstream is(line);
  std::string head;
  is >> head;
  REQUIRE(head == name);
  std::vector<double> v;
  double x;
  while (is >> x) v.push_back(x);
  return v;
}

inline void skip(const std::string& why) { std::cout << "SKIPPED: " << why << std::endl; }

// A fresh folder under /tmp, removed with its files when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/attnkit-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  // The path of NAME in the folder.
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  // Writes TEXT to NAME in the folder; returns its path.
  std::string file(const std::string& name, const std::string& text) const {
    const std::string p = *this / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The folder's entries, without . and .. (in readdir's order).
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    DIR* d = opendir(path.c_str());
    REQUIRE(d != nullptr);
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) v.push_back(e->d_name);
    closedir(d);
    return v;
  }
};

}  // namespace attnkit::test
