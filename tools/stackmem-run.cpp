// stackmem-run: decode transductions with a model from stackmem-train; accuracy; traces.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/memory/stackmem/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("stackmem-run", argc, argv, [](cli::App& app) {
    std::string model, input, out = "-", trace;
    bool eval = false, rounding = false, soft = false;
    int64_t bucket = 8;
    app.describe(
        "Decode SOURCE<TAB>TARGET pairs greedily with a Stack-, Queue- or DeQue-LSTM (or a set "
        "or tree memory); "
        "with --eval, coarse and fine accuracy by target length.",
        "--model MODEL -i PAIRS.tsv [--eval [--bucket N]] [--trace TRACE.npz] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from stackmem-train")(
        "input,i", po::value(&input)->value_name("PAIRS.tsv")->required(),
        "pairs (transduce-gen's lines; the targets are used by --eval)")(
        "eval", po::bool_switch(&eval),
        "print coarse and fine accuracy per bucket of target lengths instead of the outputs")(
        "bucket", po::value(&bucket)->value_name("N")->default_value(bucket),
        "with --eval: target lengths per bucket")(
        "trace", po::value(&trace)->value_name("TRACE.npz"),
        "the first pair's per-step push, pop, strengths and reads (for attn-plot)")(
        "rounding", po::bool_switch(&rounding),
        "a stack RNN: decode with each stack's likeliest action whole")(
        "soft", po::bool_switch(&soft), "a stack RNN: decode with the soft actions")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "outputs or the table (- is standard output)");
    app.epilog(
        "Coarse accuracy: the share of pairs whose whole target is right; fine accuracy: the\n"
        "mean share of each target right before its first error (Grefenstette et al. 2015).\n"
        "--trace arrays: push and pop [steps, ends], strengths [steps, size] (zero-padded;\n"
        "the memory grows by one slot a step, two for a deque; bottom first), read\n"
        "[steps, read size]. A set adds weights [steps, slots]: each step's read weights\n"
        "over its slots before that step's write (oldest slot first; strengths are after\n"
        "it). A tree's rows are its accesses, from the separator on: weights and strengths\n"
        "the leaf weights (leftmost leaf first), push the largest of them, pop 0.\n"
        "The strengths grow as the square of the length: a trace is bounded at 128 MB\n"
        "(about 8,000 steps of a stack), and a longer first pair is refused, naming its line.");
    app.parse();
    const cli::Outputs outputs({out}, {trace});  // checked now; side ones removed on failure
    memory::StackRunOptions o;
    o.eval = eval, o.bucket = bucket, o.rounding = rounding, o.soft = soft, o.trace = trace;
    o.threads = app.common().threads;
    cli::write_text(out, memory::run_stack_lstm(model, input, o));
  });
}
