// The work of the attn-struct tool after its options are parsed (tools/attn-struct.cpp):
// checks their combination, reads and checks the arrays, runs attention/structured.h and
// writes what was asked for.
#pragma once

#include <string>

#include "attnkit/io/tensor_io.h"

namespace attnkit::cli {

struct AttnStructArgs {
  std::string kind = "chain";                         // chain or tree
  std::string unary, pairwise, arcs, lengths, value;  // paths; empty: not given
  std::string emit;                                   // empty: context with a value, else marginals
  std::string output = "-";
};

// UsageError for options that do not go together (--kind chain without --unary, --arcs with
// a chain, --pairwise with a tree, --emit with OUT.npz, --emit context without --value, an
// unknown kind or --emit); DataError / ShapeError naming the file for n = 0, NaN or +inf
// potentials, shapes that do not fit and bad lengths. The output path is checked (its folder
// must exist) before any array is read.
void run_attn_struct(const AttnStructArgs& args, const io::WriteOptions& write);

}  // namespace attnkit::cli
