// The toolkit's own parallelism, kept to one thread pool at a time: while parallel_for runs
// its workers, OpenBLAS is single-threaded (and gets its thread count back afterwards), so
// two pools never spin against each other on the same cores.
#pragma once

#include <cstdint>
#include <functional>

namespace attnkit {

// The process-wide thread budget (like OpenBLAS's own): the command-line layer sets it from
// --threads and the environment (core/cpus.h); 0 or less means the default, the CPUs this
// process may run on (cpus.h's default_thread_count()). max_threads() is always >= 1.
// Spare threads inside a task, and where the count came from: core/helpers.h.
void set_max_threads(int n);
int max_threads();

// Calls fn(begin, end) on contiguous chunks that cover [0, n), on up to `threads` threads
// (0: max_threads()), never more threads than items: t chunks, chunk k = [n k / t, n (k + 1) / t),
// the same for the same n and thread count. The caller runs chunk 0, the others run on
// threads of a pool made on first need and kept for the process's life (no thread is started
// per call), each chunk whole on one thread. A parallel_for inside a chunk runs in that chunk.
// The first exception thrown by a chunk is rethrown once every chunk has ended. With one
// thread (or n <= 1) fn runs on the caller's thread and BLAS keeps its threads.
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn,
                  int threads = 0);

}  // namespace attnkit
