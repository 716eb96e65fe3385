// hopfield-recall: run Hopfield dynamics from probe states (classic), or the modern update.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/hopfield/file.h"
#include "attnkit/memory/hopfield/model.h"
#include "attnkit/memory/hopfield/run.h"

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
    const attnkit::cli::Outputs outputs({out},
                                        {trace});  // checked now; side ones removed on failure
    mem::ImageLayout layout = mem::parse_sheet_layout(image_size, per_row, pixel);
    mem::HopfieldRunOptions o;
    o.net = net_path, o.input = in, o.output = out, o.patterns = patterns, o.trace = trace;
    o.emit = what, o.max_steps = max_steps, o.steps = steps, o.beta = beta;
    o.trace_flips = trace_flips, o.seed = app.common().seed;
    const attnkit::GivenOption given = attnkit::cli::given(app);
    const attnkit::cli::Shard shard = app.shard();
    if (shard.given) {
      mem::check_recall_shard(o, modern, given);
      attnkit::cli::check_shard_text_output(app, out);
    }
    if (modern) {
      mem::check_modern_recall(o, given);
      const bool emit_weights =
          attnkit::cli::parse_option("--emit", [&] { return mem::parse_modern_emit(what); });
      const mem::ModernRecall r = mem::modern_recall(o, &layout);
      mem::write_modern_recall(out, r, emit_weights, layout, app.write_options());
      attnkit::cli::report(app, {mem::modern_report(o, r)});
      return;
    }
    mem::check_classic_recall(o, given);
    mem::RecallOptions opt;
    opt.mode = attnkit::cli::parse_option("--mode", [&] { return mem::parse_mode(mode); });
    opt.order = attnkit::cli::parse_option("--order", [&] { return mem::parse_order(order); });
    mem::ClassicRecall c = mem::load_classic_recall(o, opt, &layout, given);
    if (shard.given) {
      c.opt.probe0 = shard.begin(c.probes.dim(0));
      c.probes = attnkit::cli::slice_first(c.probes, c.opt.probe0, shard.end(c.probes.dim(0)));
    }
    attnkit::cli::report(app, mem::run_classic_recall(c, o, layout, given, [&](const Tensor& s) {
                           if (shard.given)
                             attnkit::cli::write_shard_tensor(app, out, s, c.opt.probe0);
                           else
                             mem::write_patterns(out, s, layout, app.write_options());
                         }));
  });
}
