// Where threads work and where they wait, phase by phase (the training layer's per-step trace,
// ATTNKIT_TRACE_THREADS in train/module.h). One thread records at a time: it opens a phase
// with trace::begin_phase and closes it with trace::end_phase; in between, parallel_for's
// chunks and the helpers' chunks (core/parallel.h, core/helpers.h) add their busy time to
// their lanes. Off (the default) it costs parallel_for one atomic load.
//
// Lanes: lane 0 is the recording thread; a top-level parallel_for's chunk k runs in lane k;
// helper i of the pool in lane lanes - 1 - i (the helpers are lent to slices only when there
// are more threads than slices, so their lanes are the ones the slices leave free). A lane's
// busy time is CPU time (the thread's own clock, CLOCK_THREAD_CPUTIME_ID): lane 0's over the
// whole phase, the others' in their chunks. So a thread blocked in a join, waiting for its
// helpers or for a CPU on a loaded machine is not busy: busy time is the work, the same on a
// quiet machine and a loaded one (up to the caches), and a phase's busiest lane is how long it
// would take if no thread waited for a CPU. Wall times are whole nanoseconds of the steady
// clock, and each lane's busy time lies in [0, wall].
#pragma once

#include <cstdint>
#include <vector>

namespace attnkit::trace {

struct Phase {
  int64_t wall_ns = 0;
  std::vector<int64_t> busy_ns;  // per lane, each in [0, wall_ns]
};

// Whether a phase is being recorded (by any thread), and whether by this one.
bool recording();
bool recorder();
// Starts recording a phase with `lanes` lanes (at least 1) on this thread.
void begin_phase(int lanes);
// Ends the phase and starts the next at the same instant (so that phases tile a step's time).
Phase next_phase(int lanes);
// Ends it and returns its times; busy times are clamped to [0, wall] (a chunk that started
// before the phase, or a clock step, cannot make a lane busier than the phase was long).
Phase end_phase();

int64_t now_ns();  // the steady clock
int64_t cpu_ns();  // this thread's CPU time

// For parallel.cpp: this thread's lane (0 outside chunks), and CPU time a lane's chunk took.
int lane();
void set_lane(int lane);
void add_busy(int lane, int64_t ns);
int helper_lane(int pool_index);  // lanes - 1 - pool_index, or -1 outside the lanes

}  // namespace attnkit::trace
