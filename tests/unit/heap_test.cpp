// keep_freed_memory: memory a step frees serves the next step without new page faults.
#include "attnkit/core/heap.h"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "doctest/doctest.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_heap_test {

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Faults taken by one step's worth of blocks (20 of 1-4 MB, 50 MB in all: a tape's tensors),
// allocated, written and freed.
long faults_of_a_step() {
  const long before = minor_faults();
  std::vector<char*> blocks;
  for (size_t i = 0; i < 20; ++i) {
    const size_t bytes = (size_t{1} << 20) * (1 + i % 4) + 4096 * i;
    auto* p = static_cast<char*>(std::malloc(bytes));
    REQUIRE(p != nullptr);
    std::memset(p, 1, bytes);
    blocks.push_back(p);
  }
  for (char* p : blocks) std::free(p);
  return minor_faults() - before;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

TEST_CASE("keep_freed_memory: a step's freed blocks serve the next step without page faults") {
  if (kSanitized || !attnkit::keep_freed_memory()) {
    MESSAGE("the allocator is not glibc's (a sanitizer's, or another libc): nothing to check");
    return;
  }
  faults_of_a_step();  // the first step faults its pages in
  // With glibc's defaults every later step faults all of its 12,800 pages in again (the heap's
  // top is trimmed on free, blocks over the threshold are unmapped); kept, none.
  for (int step = 0; step < 3; ++step) CHECK(faults_of_a_step() < 100);
}

TEST_CASE("keep_freed_memory: ATTNKIT_MALLOC=default leaves glibc's settings") {
  const char* old = std::getenv("ATTNKIT_MALLOC");
  const std::string saved = old ? old : "";
  setenv("ATTNKIT_MALLOC", "default", 1);
  CHECK_FALSE(attnkit::keep_freed_memory());
  if (old)
    setenv("ATTNKIT_MALLOC", saved.c_str(), 1);
  else
    unsetenv("ATTNKIT_MALLOC");
}

}  // namespace attnkit_unit_heap_test
