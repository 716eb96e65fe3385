#include "attnkit/core/heap.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnkit {

bool keep_freed_memory() {
  const char* env = std::getenv("ATTNKIT_MALLOC");
  if (env != nullptr && std::strcmp(env, "default") == 0) return false;
#if defined(__GLIBC__)
  // Blocks up to 256 MB come from the heap (glibc refuses more than its heap size allows on
  // some versions: then the largest it takes, 32 MB on 64-bit), and up to 1 GB of free memory
  // at a heap's top stays mapped.
  const bool mmap_set =
      mallopt(M_MMAP_THRESHOLD, 256 << 20) == 1 || mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return mmap_set && trim_set;
#else
  return false;
#endif
}

}  // namespace attnkit
