// ntm-run: run a trained Neural Turing Machine: outputs, traces of its heads and memory, and
// bits per sequence by length on fresh episodes; on symbol pairs, the answers and their
// coarse and fine accuracy.
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm_train.h"

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
        "--eval: lengths (items for associative recall) of fresh episodes (default: the "
        "training range)")("count,n", po::value(&count)->value_name("N")->default_value(count),
                           "--eval: fresh episodes per length")(
        "bucket", po::value(&bucket)->value_name("N")->default_value(bucket),
        "--eval on pairs: target lengths per bucket");
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
    if (count < 1) throw UsageError("--count must be >= 1");
    if (!eval && in.empty()) throw UsageError("give -i INPUT (or --eval)");
    if (!eval && app.given("lengths")) throw UsageError("--lengths is for --eval");
    if (!lengths_text.empty() && !in.empty())
      throw UsageError("--lengths is for fresh episodes, not with -i");

    if (app.shard().given) {
      if (eval)
        throw UsageError("--shard does not apply to --eval (its report sums over every episode)");
      if (!trace_path.empty()) throw UsageError("--shard does not apply to --trace");
      cli::check_shard_text_output(app, out);
    }
    if (bucket < 1) throw UsageError("--bucket must be >= 1");
    memory::LoadedNtm m = memory::load_ntm(model_path);
    const memory::Ntm& ntm = *m.ntm;
    const memory::NtmConfig& cfg = m.config;
    const int64_t ni = m.input, no = m.output;
    ad::Tape tape;
    tape.set_recording(false);

    if (!m.symbols && app.given("bucket"))
      throw UsageError("--bucket is for a model trained on symbol pairs");
    if (m.symbols) {
      // Symbol pairs: answers, or their accuracy, and the first pair's trace.
      if (in.empty()) throw UsageError("the model was trained on symbol pairs: give -i PAIRS.tsv");
      if (app.given("lengths") || app.given("count"))
        throw UsageError("--lengths and --count are for fresh episodes, not symbol pairs");
      if (app.shard().given) throw UsageError("--shard does not apply to symbol pairs");
      const std::string bytes = io::read_all(in);  // once: -i may be a pipe
      if (io::detect_format(std::string_view(bytes).substr(0, 8)) == io::Format::Npz)
        throw UsageError(
            "the model was trained on symbol pairs, not a seqtask-gen data set: "
            "give -i PAIRS.tsv");
      const memory::NtmPairs pairs = memory::parse_ntm_pairs(bytes, in, &m.vocab);
      std::string text;
      cli::Progress bar(app.name(), pairs.count(), app.common().quiet);
      if (eval) {
        text = data::accuracy_tsv(
            memory::evaluate_ntm_pairs(ntm, tape, pairs, bucket, [&](int64_t i) { bar.update(i); }),
            bucket);
      } else {
        for (int64_t i = 0; i < pairs.count(); ++i) {
          const auto a = memory::ntm_answer(ntm, tape, pairs.episode(i));
          for (size_t k = 0; k < a.size(); ++k) text += (k ? " " : "") + m.vocab.token(a[k]);
          text += "\n";
          bar.update(i + 1);
        }
      }
      if (!trace_path.empty()) {
        memory::NtmTrace trace;
        data::Episode e = pairs.episode(0);
        Tensor p = memory::symbol_probabilities(ntm.forward(tape, e.input, &trace).value());
        io::write_npz(trace_path, memory::trace_arrays(trace, cfg, e.input.clone(), std::move(p)));
      }
      io::write_file(out, text);
      return;
    }

    // Episodes: a data set, one sequence, or fresh ones.
    const bool dataset = memory::is_ntm_dataset(in);
    memory::NtmDataset ds;
    if (dataset) {
      ds = memory::read_ntm_dataset(in);
      if (ds.input_width() != ni || ds.output_width() != no)
        throw DataError("episodes have " + std::to_string(ds.input_width()) + " inputs and " +
                            std::to_string(ds.output_width()) + " outputs, the model " +
                            std::to_string(ni) + " and " + std::to_string(no),
                        in);
    }

    if (eval) {
      memory::LengthReport report;
      if (dataset) {
        cli::Progress bar(app.name(), ds.count(), app.common().quiet);
        for (int64_t i = 0; i < ds.count(); ++i) {
          report.add(ntm, tape, ds.episode(i));
          bar.update(i + 1);
        }
      } else {
        if (!in.empty())  // a file that is not a data set: bad data, not bad usage
          throw DataError(
              "not a data set from seqtask-gen (an .npz with the arrays inputs and steps)", in);
        data::SeqTaskOptions topt;
        if (memory::ntm_task_from_yaml(m.file.config_yaml, model_path, &topt).empty())
          throw UsageError("the model was trained on a data file: give --eval -i DATA.npz");
        std::vector<int64_t> lengths;
        if (!lengths_text.empty()) {
          lengths = memory::parse_lengths(lengths_text);
        } else {
          for (int64_t l = topt.min_len; l <= topt.max_len; ++l) lengths.push_back(l);
        }
        const int64_t lo = topt.task == data::SeqTask::AssociativeRecall ? 2 : 1;
        for (int64_t l : lengths)
          if (l < lo) throw UsageError("--lengths: associative recall needs at least 2 items");
        Rng rng(app.common().seed);
        cli::Progress bar(app.name(), static_cast<int64_t>(lengths.size()) * count,
                          app.common().quiet);
        int64_t done = 0;
        for (int64_t l : lengths)
          for (int64_t k = 0; k < count; ++k) {
            report.add(ntm, tape, data::make_episode(topt, rng, l));
            bar.update(++done);
          }
      }
      io::write_file(out, report.tsv());
      return;
    }

    // Outputs (and the trace of the first sequence).
    memory::NtmTrace trace;
    Tensor result;
    Tensor first_in, first_out;
    const int64_t first = app.shard().begin(dataset ? ds.count() : 1);
    if (app.shard().given && !dataset)
      throw UsageError("--shard takes the episodes of a data set (-i DATA.npz from seqtask-gen)");
    if (dataset) {
      const int64_t tm = ds.inputs.dim(1);
      const int64_t last = app.shard().end(ds.count());
      result = Tensor({last - first, tm, no});
      for (int64_t i = first; i < last; ++i) {
        data::Episode e = ds.episode(i);
        const bool tr = i == 0 && !trace_path.empty();
        Tensor p =
            memory::output_probabilities(ntm.forward(tape, e.input, tr ? &trace : nullptr).value());
        if (tr) first_in = e.input.clone(), first_out = p.clone();
        std::copy(p.values().begin(), p.values().end(), result.data() + (i - first) * tm * no);
        tape.clear();
      }
    } else {
      Tensor x = io::read_tensor(in);
      if (x.rank() == 1) x.reshape({1, x.dim(0)});
      if (x.rank() != 2 || x.dim(1) != ni)
        throw DataError(
            "input is " + shape_str(x.shape()) + ", the model takes steps x " + std::to_string(ni),
            io::split_member(in).first);
      result = memory::output_probabilities(
          ntm.forward(tape, x, trace_path.empty() ? nullptr : &trace).value());
      first_in = x.clone();
      first_out = result.clone();
    }
    if (!trace_path.empty()) {
      io::write_npz(trace_path,
                    memory::trace_arrays(trace, cfg, std::move(first_in), std::move(first_out)));
    }
    cli::write_shard_tensor(app, out, result, first);
  });
}
