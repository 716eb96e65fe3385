// Running Hopfield networks, the logic behind hopfield-recall: the modern update of probes
// over stored patterns, or the classic dynamics of a net from hopfield-store with its trace
// and report; the checks of what was asked for each.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/hooks.h"
#include "attnkit/core/tensor.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield/file.h"
#include "attnkit/memory/hopfield/model.h"

namespace attnkit::memory {

// What hopfield-recall was asked (its options, by their long names).
struct HopfieldRunOptions {
  std::string net, input = "-", output = "-", patterns, trace, emit = "states";
  int max_steps = 100, steps = 1;
  float beta = 1.0f;
  bool trace_flips = false;
  uint64_t seed = 0;
};

// parse_layout's sheet layout with `pixel` pixels a value (UsageError outside 1 to 64).
ImageLayout parse_sheet_layout(const std::string& image_size, int64_t tiles_per_row, int64_t pixel);

// --shard: classic nets only, text output, no trace (UsageError).
void check_recall_shard(const HopfieldRunOptions& o, bool modern, const GivenOption& given);

// --modern: the options of classic nets are a UsageError; --patterns and --beta are needed.
void check_modern_recall(const HopfieldRunOptions& o, const GivenOption& given);
// The modern update of the probes (o.input) over the patterns (o.patterns): the states and the
// last update's weights [probes, patterns].
struct ModernRecall {
  Tensor states, weights;
};
ModernRecall modern_recall(const HopfieldRunOptions& o, ImageLayout* layout);
// --emit: "states" (false) or "weights" (true); a ChoiceError naming "output kind" otherwise.
bool parse_modern_emit(const std::string& what);
// The states (write_patterns) or, with `weights`, the weights (io::write_tensor) to `path`.
void write_modern_recall(const std::string& path, const ModernRecall& r, bool weights,
                         const ImageLayout& layout, const io::WriteOptions& w);
// Its summary line: probes, beta, steps, patterns and the mean largest weight.
std::string modern_report(const HopfieldRunOptions& o, const ModernRecall& r);

// A classic net: the options of --modern are a UsageError, -m NET is needed.
void check_classic_recall(const HopfieldRunOptions& o, const GivenOption& given);
// The net and its probes, with `opt` (its mode and order set) completed from o and checked.
struct ClassicRecall {
  RecallOptions opt;
  Net net;
  Tensor probes;
};
ClassicRecall load_classic_recall(const HopfieldRunOptions& o, RecallOptions opt,
                                  ImageLayout* layout, const GivenOption& given);
// The dynamics from c.probes (with the stored patterns o.patterns when given); then the trace
// (o.trace, when given: written with the states, committed after them), the states through
// `write_states`, and the report's lines (recall_report).
std::vector<std::string> run_classic_recall(ClassicRecall& c, const HopfieldRunOptions& o,
                                            const ImageLayout& layout, const GivenOption& given,
                                            const std::function<void(const Tensor&)>& write_states);

}  // namespace attnkit::memory
