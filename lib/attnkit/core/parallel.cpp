#include "attnkit/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "attnkit/core/blas.h"

namespace attnkit {

namespace {
std::atomic<int> g_max_threads{0};

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}
}  // namespace

void set_max_threads(int n) { g_max_threads = n; }

int max_threads() {
  const int n = g_max_threads.load();
  return n > 0 ? n : hardware_threads();
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int threads) {
  if (n <= 0) return;
  int t = threads > 0 ? threads : max_threads();
  t = static_cast<int>(std::min<int64_t>(t, n));
  if (t <= 1) {
    fn(0, n);
    return;
  }
  const int blas_before = blas_threads();
  blas_set_threads(1);
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(t - 1));
  auto chunk = [&](int k) {
    const int64_t begin = n * k / t, end = n * (k + 1) / t;
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  for (int k = 1; k < t; ++k) pool.emplace_back(chunk, k);
  chunk(0);
  for (auto& th : pool) th.join();
  blas_set_threads(blas_before);
  if (error) std::rethrow_exception(error);
}

}  // namespace attnkit
