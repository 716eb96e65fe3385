#include "attnkit/memory/hopfield/run.h"

#include <algorithm>
#include <cstdio>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield/modern.h"

namespace attnkit::memory {

ImageLayout parse_sheet_layout(const std::string& image_size, int64_t tiles_per_row,
                               int64_t pixel) {
  ImageLayout layout = parse_layout(image_size, tiles_per_row);
  if (pixel < 1 || pixel > 64) throw UsageError("--pixel-size must be 1 to 64");
  layout.pixel = pixel;
  return layout;
}

void check_recall_shard(const HopfieldRunOptions& o, bool modern, const GivenOption& given) {
  const std::string& out = o.output;
  if (modern) throw UsageError("--shard is for classic nets, not --modern");
  if (given("trace")) throw UsageError("--shard does not apply to --trace");
  if (given("image-size") || (out.size() >= 4 && out.compare(out.size() - 4, 4, ".pbm") == 0))
    throw UsageError("--shard writes text, not PBM sheets");
}

void check_modern_recall(const HopfieldRunOptions& o, const GivenOption& given) {
  for (const char* opt : {"model", "mode", "order", "max-steps", "trace", "trace-flips"})
    if (given(opt) || (std::string(opt) == "trace-flips" && o.trace_flips))
      throw UsageError(std::string("--") + opt + " is for classic nets, not --modern");
  if (!given("patterns") || !given("beta"))
    throw UsageError("--modern needs --patterns X and --beta B");
  if (!(o.beta > 0.0f)) throw UsageError("--beta must be a number above 0");
  if (o.steps < 1) throw UsageError("--steps must be 1 or more");
}

ModernRecall modern_recall(const HopfieldRunOptions& o, ImageLayout* layout) {
  const Tensor x = read_patterns(o.patterns, layout, false);
  const Tensor xi = read_patterns(o.input, layout, false);
  ModernRecall r;
  try {
    r.states = modern_update(x, xi, o.beta, o.steps, &r.weights);
  } catch (ShapeError& e) {
    e.locate(o.input);
    throw;
  }
  return r;
}

bool parse_modern_emit(const std::string& what) {
  return parse_choice<bool>("output kind", what, {{"states", false}, {"weights", true}});
}

void write_modern_recall(const std::string& path, const ModernRecall& r, bool weights,
                         const ImageLayout& layout, const io::WriteOptions& w) {
  if (weights)
    io::write_tensor(path, r.weights, w);
  else
    write_patterns(path, r.states, layout, w);
}

std::string modern_report(const HopfieldRunOptions& o, const ModernRecall& r) {
  const Tensor& w = r.weights;
  double top = 0.0;
  for (int64_t i = 0; i < w.dim(0); ++i) {
    float m = 0.0f;
    for (int64_t j = 0; j < w.dim(1); ++j) m = std::max(m, w.at(i, j));
    top += m;
  }
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%lld probes, modern update (beta %g, %d step%s) over %lld patterns: mean "
                "largest weight %.4g",
                static_cast<long long>(w.dim(0)), static_cast<double>(o.beta), o.steps,
                o.steps == 1 ? "" : "s", static_cast<long long>(w.dim(1)),
                w.dim(0) ? top / static_cast<double>(w.dim(0)) : 0.0);
  return buf;
}

void check_classic_recall(const HopfieldRunOptions& o, const GivenOption& given) {
  for (const char* opt : {"beta", "steps", "emit"})
    if (given(opt) || (std::string(opt) == "emit" && o.emit != "states"))
      throw UsageError(std::string("--") + opt + " is for --modern");
  if (!given("model")) throw UsageError("-m NET.npz is required (or --modern)");
}

ClassicRecall load_classic_recall(const HopfieldRunOptions& o, RecallOptions opt,
                                  ImageLayout* layout, const GivenOption& given) {
  if (o.max_steps < 0) throw UsageError("--max-steps must be 0 or more");
  if (o.trace_flips && opt.mode != Mode::Async)
    throw UsageError("--trace-flips is for --mode async");
  if (o.trace_flips && !given("trace")) throw UsageError("--trace-flips needs --trace FILE");
  if (given("trace") && o.trace == o.output && o.output != "/dev/null")
    throw UsageError("--trace and -o name the same file");
  opt.max_steps = o.max_steps;
  opt.seed = o.seed;
  opt.trace = given("trace") && !o.trace_flips;
  opt.trace_flips = o.trace_flips;
  ClassicRecall c{opt, load_net(o.net), Tensor()};
  c.probes = read_patterns(o.input, layout, true);
  return c;
}

std::vector<std::string> run_classic_recall(
    ClassicRecall& c, const HopfieldRunOptions& o, const ImageLayout& layout,
    const GivenOption& given, const std::function<void(const Tensor&)>& write_states) {
  Tensor stored;
  c.opt.patterns = nullptr;
  if (given("patterns")) {
    ImageLayout pl = layout;
    stored = read_patterns(o.patterns, &pl, true);
    if (stored.dim(1) != c.net.n())
      throw ShapeError("patterns have " + std::to_string(stored.dim(1)) +
                           " columns but the net has N = " + std::to_string(c.net.n()) + " neurons",
                       o.patterns);
    c.opt.patterns = &stored;
  }
  RecallResult r;
  try {
    r = recall(c.net, c.probes, c.opt);
  } catch (ShapeError& e) {
    e.locate(o.input);
    throw;
  }
  std::unique_ptr<io::AtomicFile> tf;
  if (given("trace")) {
    tf = std::make_unique<io::AtomicFile>(o.trace);
    tf->write(o.trace_flips ? format_flip_trace(r.flip_trace)
                            : format_trace(r.trace, c.opt.patterns ? stored.dim(0) : 0));
  }
  write_states(r.states);
  if (tf) tf->commit();
  std::vector<std::string> report = recall_report(r, c.opt, c.opt.patterns != nullptr);
  c.opt.patterns = nullptr;  // `stored` ends here
  return report;
}

}  // namespace attnkit::memory
