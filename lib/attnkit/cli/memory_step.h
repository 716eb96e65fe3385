// stackmem-step's work: one update of a stack, queue, deque, set or tree memory from the option
// strings (inline numbers or tensor files, cli::read_vector), printed in double precision.
#pragma once

#include <string>

namespace attnkit::cli {

struct MemoryStepArgs {
  std::string kind = "stack";  // stack, queue, deque, set or tree
  std::string strengths, values, value;
  // stack, queue, deque
  double push = 0, pop = 0, push_bottom = 0, pop_bottom = 0;
  std::string value_bottom;
  bool stack_given = false;   // --push or --pop on the line
  bool bottom_given = false;  // --push-bottom or --pop-bottom on the line
  // set
  std::string keys, key, read_key, erase_key;
  double write = 0, erase = 0, threshold = 0;
  bool set_given = false;  // --write or --erase on the line
  // tree (memory/stackmem/ham.h)
  std::string tree_weights;  // a text file of lines "join_w ...", "join_b", "search_w",
                             // "search_b", "write_w", "write_b" (numbers after the name)
  std::string leaves, summaries, state;
  bool hard = false;
};

// The output lines (stackmem-step's epilog). UsageError for options of another memory.
std::string memory_step(const MemoryStepArgs& a);

}  // namespace attnkit::cli
