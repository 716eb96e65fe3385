// hopfield-recall: run Hopfield dynamics from probe states (classic), or the modern update.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield.h"
#include "attnkit/memory/hopfield_io.h"
#include "attnkit/memory/hopfield_modern.h"

namespace mem = attnkit::memory;

int main(int argc, char** argv) {
  return attnkit::cli::run("hopfield-recall", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    using attnkit::Tensor;
    using attnkit::UsageError;
    std::string net_path, in = "-", out = "-", mode = "async", order = "random", patterns, trace,
                          image_size, what = "states";
    int max_steps = 100, steps = 1;
    int64_t per_row = 0, pixel = 1;
    float beta = 1.0f;
    bool modern = false, trace_flips = false;
    app.describe("Recall stored patterns from probes with Hopfield dynamics (classic or modern).",
                 "[OPTIONS] -m NET.npz -i PROBES -o OUT\n"
                 "   or: hopfield-recall [OPTIONS] --modern --patterns X --beta B -i PROBES");
    app.options().add_options()("model,m", po::value(&net_path)->value_name("NET.npz"),
                                "classic net from hopfield-store: W (N x N) and b (N)")(
        "input,i", po::value(&in)->value_name("PROBES")->default_value("-"),
        "probe states, one per row (classic: -1/+1); text, .npy or PBM; - is standard input");
    app.options().add_options()(
        "output,o", po::value(&out)->value_name("OUT"),
        "final states (.pbm, .npy, .npz or text by the extension; - is standard output)");
    app.options().add_options()("mode", po::value(&mode)->value_name("MODE")->default_value(mode),
                                "async (one neuron at a time) or sync (all at once)")(
        "order", po::value(&order)->value_name("ORDER")->default_value(order),
        "async visiting order: random (a fresh seeded permutation per sweep) or sequential")(
        "max-steps", po::value(&max_steps)->value_name("K")->default_value(max_steps),
        "stop after K steps (async: sweeps over all N neurons); 1 = one-step dynamics")(
        "patterns", po::value(&patterns)->value_name("P"),
        "stored patterns: overlaps in the trace and the retrieved pattern per probe; "
        "with --modern, the memory X (P x d)")(
        "trace", po::value(&trace)->value_name("TRACE.tsv"),
        "TSV per probe and step: energy, flips (and best pattern, overlaps)")(
        "trace-flips", po::bool_switch(&trace_flips),
        "async: the trace gets one row per flip instead, with the energy recomputed from "
        "its definition (O(N^2) per flip: small nets)")(
        "modern", po::bool_switch(&modern),
        "modern Hopfield update xi <- softmax(beta xi X') X (Ramsauer et al. 2020)")(
        "beta", po::value(&beta)->value_name("B"), "modern: inverse temperature (> 0)")(
        "steps", po::value(&steps)->value_name("K")->default_value(steps), "modern: updates")(
        "emit", po::value(&what)->value_name("WHAT")->default_value(what),
        "modern: states, or weights (the softmax over stored patterns of the last update)")(
        "image-size", po::value(&image_size)->value_name("WxH"),
        "PBM tiles of W x H pixels, one pattern each, for input and output")(
        "tiles-per-row", po::value(&per_row)->value_name("C"),
        "tiles per row of a PBM output sheet (default: as the input, else 10)")(
        "pixel-size", po::value(&pixel)->value_name("K")->default_value(pixel),
        "a PBM output sheet draws each value as K x K pixels (to look at; 1 to 64)");
    app.enable(attnkit::cli::kSeed | attnkit::cli::kOutput | attnkit::cli::kQuiet);
    app.shard_items("probes (rows of -i; classic nets, text output, not with --trace)");
    app.epilog(
        "Classic update: s_i <- sign(sum_j w_ij s_j + b_i); a zero field (within rounding:\n"
        "|h_i| <= 1e-6 (sum_j |w_ij| + |b_i|)) keeps s_i. A run stops at a fixed point, after\n"
        "K steps, or (sync) on a 2-cycle s(t) = s(t-2). Probes, patterns and neurons are\n"
        "numbered from 1. Async probe k draws its permutations from its own generator\n"
        "(--seed, k), so the output does not depend on --threads. Summary on stderr.");
    app.parse();
    mem::ImageLayout layout = mem::parse_layout(image_size, per_row);
    if (pixel < 1 || pixel > 64) throw attnkit::UsageError("--pixel-size must be 1 to 64");
    layout.pixel = pixel;

    const attnkit::cli::Shard shard = app.shard();
    if (shard.given) {
      if (modern) throw UsageError("--shard is for classic nets, not --modern");
      if (app.given("trace")) throw UsageError("--shard does not apply to --trace");
      if (app.given("image-size") ||
          (out.size() >= 4 && out.compare(out.size() - 4, 4, ".pbm") == 0))
        throw UsageError("--shard writes text, not PBM sheets");
      attnkit::cli::check_shard_text_output(app, out);
    }
    if (modern) {
      for (const char* o : {"model", "mode", "order", "max-steps", "trace", "trace-flips"})
        if (app.given(o) || (std::string(o) == "trace-flips" && trace_flips))
          throw UsageError(std::string("--") + o + " is for classic nets, not --modern");
      if (!app.given("patterns") || !app.given("beta"))
        throw UsageError("--modern needs --patterns X and --beta B");
      if (!(beta > 0.0f)) throw UsageError("--beta must be a number above 0");
      if (steps < 1) throw UsageError("--steps must be 1 or more");
      const bool emit_weights = attnkit::cli::parse_option("--emit", [&] {
        return attnkit::parse_choice<bool>("output kind", what,
                                           {{"states", false}, {"weights", true}});
      });
      const Tensor x = mem::read_patterns(patterns, &layout, false);
      const Tensor xi = mem::read_patterns(in, &layout, false);
      Tensor w, s;
      try {
        s = mem::modern_update(x, xi, beta, steps, &w);
      } catch (attnkit::ShapeError& e) {
        e.locate(in);
        throw;
      }
      if (emit_weights)
        attnkit::io::write_tensor(out, w, app.write_options());
      else
        mem::write_patterns(out, s, layout, app.write_options());
      if (!app.common().quiet) {
        double top = 0.0;
        for (int64_t r = 0; r < w.dim(0); ++r) {
          float m = 0.0f;
          for (int64_t j = 0; j < w.dim(1); ++j) m = std::max(m, w.at(r, j));
          top += m;
        }
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%lld probes, modern update (beta %g, %d step%s) over %lld patterns: mean "
                      "largest weight %.4g\n",
                      static_cast<long long>(w.dim(0)), static_cast<double>(beta), steps,
                      steps == 1 ? "" : "s", static_cast<long long>(w.dim(1)),
                      w.dim(0) ? top / static_cast<double>(w.dim(0)) : 0.0);
        std::cerr << "hopfield-recall: " << buf;
      }
      return;
    }

    for (const char* o : {"beta", "steps", "emit"})
      if (app.given(o) || (std::string(o) == "emit" && what != "states"))
        throw UsageError(std::string("--") + o + " is for --modern");
    if (!app.given("model")) throw UsageError("-m NET.npz is required (or --modern)");
    mem::RecallOptions opt;
    opt.mode = attnkit::cli::parse_option("--mode", [&] { return mem::parse_mode(mode); });
    opt.order = attnkit::cli::parse_option("--order", [&] { return mem::parse_order(order); });
    if (max_steps < 0) throw UsageError("--max-steps must be 0 or more");
    if (trace_flips && opt.mode != mem::Mode::Async)
      throw UsageError("--trace-flips is for --mode async");
    if (trace_flips && !app.given("trace")) throw UsageError("--trace-flips needs --trace FILE");
    if (app.given("trace") && trace == out && out != "/dev/null")
      throw UsageError("--trace and -o name the same file");
    opt.max_steps = max_steps;
    opt.seed = app.common().seed;
    opt.trace = app.given("trace") && !trace_flips;
    opt.trace_flips = trace_flips;
    const mem::Net net = mem::load_net(net_path);
    Tensor probes = mem::read_patterns(in, &layout, true);
    if (shard.given) {
      opt.probe0 = shard.begin(probes.dim(0));
      probes = attnkit::cli::slice_first(probes, opt.probe0, shard.end(probes.dim(0)));
    }
    Tensor stored;
    if (app.given("patterns")) {
      mem::ImageLayout pl = layout;
      stored = mem::read_patterns(patterns, &pl, true);
      if (stored.dim(1) != net.n())
        throw attnkit::ShapeError("patterns have " + std::to_string(stored.dim(1)) +
                                      " columns but the net has N = " + std::to_string(net.n()) +
                                      " neurons",
                                  patterns);
      opt.patterns = &stored;
    }
    mem::RecallResult r;
    try {
      r = mem::recall(net, probes, opt);
    } catch (attnkit::ShapeError& e) {
      e.locate(in);
      throw;
    }
    std::unique_ptr<attnkit::io::AtomicFile> tf;
    if (app.given("trace")) {
      tf = std::make_unique<attnkit::io::AtomicFile>(trace);
      tf->write(trace_flips ? mem::format_flip_trace(r.flip_trace)
                            : mem::format_trace(r.trace, opt.patterns ? stored.dim(0) : 0));
    }
    if (shard.given)
      attnkit::cli::write_shard_tensor(app, out, r.states, opt.probe0);
    else
      mem::write_patterns(out, r.states, layout, app.write_options());
    if (tf) tf->commit();
    if (!app.common().quiet)
      for (const std::string& line : mem::recall_report(r, opt, opt.patterns != nullptr))
        std::cerr << "hopfield-recall: " << line << "\n";
  });
}
