// Running a Stack-, Queue- or DeQue-LSTM or a stack RNN, the logic behind stackmem-run:
// greedy answers or their accuracy on SOURCE<TAB>TARGET pairs, and the trace of the first.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit::memory {

struct StackRunOptions {
  bool eval = false;      // the accuracy table instead of the answers
  int64_t bucket = 8;     // --eval: target lengths per bucket
  bool rounding = false;  // a stack RNN: whole actions
  bool soft = false;      // a stack RNN: soft actions
  int threads = 0;        // --eval's threads
  std::string trace;      // the first pair's push, pop, strengths and reads (.npz; "": none)
  // The trace's bound (StackTrace::max_floats): 128 MB of floats. Its strengths grow with
  // the square of the length; a longer pair is refused (a DataError naming its line).
  int64_t trace_max_floats = int64_t{32} << 20;
};

// The model file `model` on the pairs of `input`: one answer a line (its symbols joined by
// spaces) or, with o.eval, data::accuracy_tsv's table; o.trace written when named.
std::string run_stack_lstm(const std::string& model, const std::string& input,
                           const StackRunOptions& o);

}  // namespace attnkit::memory
