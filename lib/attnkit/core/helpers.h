// Spare threads inside a task (the training layer's slices), and where the thread count comes
// from. Kept apart from parallel.h and blas.h, which most of the library includes.
//
// A task that runs on one thread (a slice of a training step) can be lent helpers: threads of
// a process-wide pool that take part in its parallel_chunks calls. The work is cut into
// chunks by the caller alone, each chunk computed whole by one thread, so the result does not
// depend on how many helpers there are (none, one, or many): only on how the caller cut it.
// Inside with_helpers, parallel_for (parallel.h) starts no threads of its own either: its
// chunks (at most helpers() + 1) run on the caller and its helpers.
#pragma once

#include <cstdint>
#include <functional>

#include "attnkit/core/cpus.h"

namespace attnkit {

// parallel.h's max_threads() with where it came from (--version prints it), and setting both
// (the command-line layer: core/cpus.h's thread_count). set_max_threads(n) is
// set_thread_count({n, "--threads"}), or the default (default_thread_count()) for n <= 0.
void set_thread_count(const ThreadCount& count);
ThreadCount thread_setting();

// While fn runs on this thread, parallel_chunks calls made from it may use up to `helpers`
// pool threads besides this one (0: none). Nested scopes replace the outer one's budget. The
// pool's threads are shared by every thread with a scope: the pool grows to the largest budget
// asked for, so workers with `helpers` spare threads between them use at most that many more.
void with_helpers(int helpers, const std::function<void()>& fn);
int helpers();  // this thread's budget (0 outside with_helpers, and inside a chunk)

// Calls fn(i) for every i in [0, n), on this thread and up to helpers() pool threads, and
// returns when all are done; the first exception is rethrown here once no chunk runs (a
// thread whose chunk threw takes no more; the others go on).
// Without helpers (or n <= 1) it is a plain loop in order.
void parallel_chunks(int64_t n, const std::function<void(int64_t i)>& fn);

// Whether matrix products on this thread are computed in panels (blas.h's gemm, by
// gemm_panels below, each panel one single-threaded product, run by parallel_chunks). Off by
// default; the training layer turns it on inside the slices of a module that asks for it
// (train::Module::split_products). Panels round differently from one whole product (OpenBLAS
// rounds by its own blocking), so this is a setting of the computation, and the same bits
// come out whatever the number of helpers. A chunk sees its caller's setting.
void set_split_products(bool on);
bool split_products();

// The panels of an m x n product over k with split_products() on: a function of the shape
// alone. Row panels of op(A) and C, or column panels of op(B) and C; both 0: one product.
struct GemmPanels {
  int64_t rows = 0, cols = 0;
};
GemmPanels gemm_panels(int64_t m, int64_t n, int64_t k);

}  // namespace attnkit
