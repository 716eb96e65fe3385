// ntm-run: run a trained Neural Turing Machine: outputs, traces of its heads and memory, and
// bits per sequence by length on fresh episodes; on symbol pairs, the answers and their
// coarse and fine accuracy.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ntm-run", argc, argv, [](cli::App& app) {
    std::string model_path, in, out = "-", trace_path, lengths_text;
    bool eval = false;
    int64_t count = 100, bucket = 8;
    app.describe("Run a trained Neural Turing Machine: outputs, head traces, bits per sequence.",
                 "--model MODEL -i INPUT [-o OUT] [--trace TRACE.npz]\n"
                 "   or: ntm-run --model MODEL --eval [-i DATA.npz | --lengths L,...] [--count N]\n"
                 "   or: ntm-run --model MODEL -i PAIRS.tsv [--eval [--bucket N]] [--trace "
                 "TRACE.npz]");
    app.options().add_options()("model,m", po::value(&model_path)->value_name("MODEL")->required(),
                                "a model from ntm-train")(
        "input,i", po::value(&in)->value_name("INPUT"),
        "one sequence, a steps x inputs matrix (text, .npy, FILE.npz:NAME; - is standard "
        "input), a seqtask-gen data set DATA.npz, or (a model trained on symbol pairs) "
        "transduce-gen's SOURCE<TAB>TARGET pairs")(
        "output,o", po::value(&out)->value_name("OUT")->default_value("-"),
        "outputs σ(y), steps x outputs ([episodes, steps, outputs] for a data set); on pairs "
        "the answers, one line each; with --eval the TSV report")(
        "trace", po::value(&trace_path)->value_name("TRACE.npz"),
        "per step (of the first sequence): read<k>/write<k> weightings [T, N], erase<k>, "
        "add<k> [T, M], reads<k> [T, M], memory [T, N, M], inputs, outputs")(
        "eval", po::bool_switch(&eval),
        "report bits per sequence by length: on DATA.npz, or on fresh episodes of the "
        "model's task; on pairs, coarse and fine accuracy by target length")(
        "lengths", po::value(&lengths_text)->value_name("L,..."),
        "with --eval: lengths (items for associative recall) of fresh episodes (default: the "
        "training range)")("count,n", po::value(&count)->value_name("N")->default_value(count),
                           "with --eval: fresh episodes per length")(
        "bucket", po::value(&bucket)->value_name("N")->default_value(bucket),
        "with --eval on pairs: target lengths per bucket");
    app.enable(cli::kSeed | cli::kQuiet | cli::kOutput);
    app.shard_items(
        "episodes of a data set -i DATA.npz (outputs as text; not with --eval or "
        "--trace)");
    app.epilog(
        "--eval prints TSV: length, sequences, bits_per_seq (wrong bits after thresholding at\n"
        "0.5, per sequence), wrong_fraction (of the scored bits), and a last row 'all'.\n"
        "On pairs (a model from ntm-train -i PAIRS.tsv) it prints stackmem-run --eval's\n"
        "table: lengths (a bucket of target lengths), sequences, coarse (the share of pairs\n"
        "whose whole answer is right, <eos> included), fine (the mean share of each target\n"
        "right before its first error), and a last row 'all'. The answer is the likeliest\n"
        "symbol of each output step up to the first <eos>; --trace's outputs are then the\n"
        "softmax of each step.");
    app.parse();
    const cli::Outputs outputs({out}, {trace_path});  // checked now; side ones removed on failure
    memory::NtmRunOptions o;
    o.model = model_path, o.input = in, o.trace = trace_path, o.lengths = lengths_text;
    o.eval = eval, o.count = count, o.bucket = bucket, o.seed = app.common().seed;
    const bool shard = app.shard().given;
    memory::check_ntm_run(o, cli::given(app), shard);
    if (shard) cli::check_shard_text_output(app, out);
    const memory::LoadedNtm m = memory::load_ntm_run(o, cli::given(app));
    if (m.symbols)  // symbol pairs: answers, or their accuracy, and the first pair's trace
      return io::write_file(
          out, memory::run_ntm_pairs(m, o, cli::given(app), shard, cli::progress(app)));
    // Episodes: a data set, one sequence, or fresh ones.
    const memory::NtmEpisodes e = memory::read_ntm_episodes(m, in);
    if (eval) return io::write_file(out, memory::ntm_length_report(m, e, o, cli::progress(app)));
    // Outputs (and the trace of the first sequence).
    const int64_t first = app.shard().begin(e.count());
    if (shard && !e.dataset)
      throw UsageError("--shard takes the episodes of a data set (-i DATA.npz from seqtask-gen)");
    const Tensor result = memory::ntm_outputs(m, e, first, app.shard().end(e.count()), o);
    cli::write_shard_tensor(app, out, result, first);
  });
}
