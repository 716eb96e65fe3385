// Freed memory kept for the next step. A training step builds a tape of tensors and frees it,
// and the next step builds one of the same sizes. glibc's malloc gives large blocks back to the
// kernel on free (blocks over its mmap threshold are unmapped; a heap top over its trim
// threshold is trimmed, in a thread's arena with madvise), so every step faulted its tape's
// pages in again, each zeroed by the kernel: a 20-step snail-train run took 466,000 minor page
// faults for a 94 MB resident set, and 40% of its CPU time in the kernel.
//
// keep_freed_memory() raises both thresholds, so that the memory freed by one step serves the
// next. The resident set stays at the run's peak instead of falling between steps. Results do
// not change: only where the blocks come from.
#pragma once

namespace attnkit {

// Sets malloc's thresholds for a process that repeats steps of the same sizes (the tools call
// it at start). ATTNKIT_MALLOC=default leaves glibc's own settings (for comparison); any
// other value is ignored. Returns true if the thresholds were set.
bool keep_freed_memory();

}  // namespace attnkit
