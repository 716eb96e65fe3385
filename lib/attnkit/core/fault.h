// Fault injection for the tests of what a kill leaves behind (tests/cli/kill-resume-*.sh):
// with ATTNKIT_FAULT=WHERE:N in the environment, the process sends itself SIGKILL the N-th
// time it reaches the point WHERE, so that a test kills a run at a chosen moment instead of
// at a moment the clock picks. The points:
// - "step": a training step has ended and its log row is written, before its checkpoint;
// - "write": a file written through io::AtomicFile (a model, a checkpoint) is half written;
// - "slice": a slice's forward or backward pass of a training step is about to start (on one
//   process, 2 x slices passes a step); there the process sends itself SIGTERM, not SIGKILL,
//   so that a test places a polite stop inside a step (a trainer then stops within it).
// Without the variable (the normal case) a point costs one test of a cached flag.
#pragma once

namespace attnkit {

// Whether ATTNKIT_FAULT names the point `where` (read once, at the first call).
bool fault_armed(const char* where);

// Counts one passage through `where`; on the N-th, SIGKILL ("slice": SIGTERM). A malformed
// ATTNKIT_FAULT is a usage error (UsageError), raised at the first point reached.
void fault_point(const char* where);

}  // namespace attnkit
