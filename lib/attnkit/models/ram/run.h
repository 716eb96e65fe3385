// Running a recurrent attention model (RAM), the logic behind ram-run: predictions for a
// set of images (or their error), the glimpses' trace, and a picture of the first images'
// glimpses.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit::models {

// What ram-run was asked (its options, by their long names; "": not given).
struct RamRunOptions {
  std::string model, input, trace, draw, output = "-";
  bool eval = false;
  int64_t samples = 1, draw_count = 4;
  uint64_t seed = 0;
  int threads = 0;
};

// Checks the options (UsageError naming them) and that the outputs can be written, then
// returns TSV: image, label, predicted, probability per image, or with o.eval images, samples,
// error, accuracy; writes o.trace (ram_trace_tsv) and o.draw (the first o.draw_count
// images' glimpses) when named.
std::string run_ram(const RamRunOptions& o);

struct RamConfig;
// Class k as --draw's captions name it: "3", and for a model of 10 classes (Fashion-MNIST's,
// as image-gen and the pipelines give them) with the class's name, "3 dress".
std::string ram_class_name(const RamConfig& c, int32_t k);

}  // namespace attnkit::models
