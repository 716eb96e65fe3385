// stackmem-run: decode transductions with a model from stackmem-train; accuracy; traces.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/stack_lstm.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("stackmem-run", argc, argv, [](cli::App& app) {
    std::string model, input, out = "-", trace;
    bool eval = false, rounding = false, soft = false;
    int64_t bucket = 8;
    app.describe(
        "Decode SOURCE<TAB>TARGET pairs greedily with a Stack-, Queue- or DeQue-LSTM; "
        "with --eval, coarse and fine accuracy by target length.",
        "--model MODEL -i PAIRS.tsv [--eval [--bucket N]] [--trace TRACE.npz] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model)->value_name("MODEL")->required(),
                                "a model from stackmem-train")(
        "input,i", po::value(&input)->value_name("PAIRS.tsv")->required(),
        "pairs (transduce-gen's lines; the targets are used by --eval)")(
        "eval", po::bool_switch(&eval),
        "print coarse and fine accuracy per bucket of target lengths instead of the outputs")(
        "bucket", po::value(&bucket)->value_name("N")->default_value(bucket),
        "--eval: target lengths per bucket")(
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
        "[steps, read size].");
    app.parse();
    if (bucket < 1) throw UsageError("--bucket must be >= 1");
    if (rounding && soft) throw UsageError("--rounding and --soft exclude each other");
    memory::LoadedStackLstm m = memory::load_stack_lstm(model);
    if ((rounding || soft) && !m.config.stack_rnn)
      throw UsageError("--rounding and --soft apply to a stack RNN (stackmem-train --stack-rnn)");
    if (rounding || soft) m.model->set_rounding(rounding);
    const auto data = memory::read_transduce(input, m.vocab);
    std::string text;
    if (eval) {
      text = data::accuracy_tsv(
          memory::evaluate_transduce(*m.model, data, bucket, app.common().threads), bucket);
    } else {
      for (const auto& e : data) {
        const auto y = m.model->decode(e.source, 2 * static_cast<int64_t>(e.source.size()) + 10);
        for (size_t i = 0; i < y.size(); ++i) text += (i ? " " : "") + m.vocab.token(y[i]);
        text += "\n";
      }
    }
    if (!trace.empty()) {
      if (!m.config.has_memory())
        throw UsageError("--trace: the plain LSTM has no memory to trace");
      memory::StackTrace tr;
      m.model->decode(data[0].source, 2 * static_cast<int64_t>(data[0].source.size()) + 10, &tr);
      auto matrix = [](const std::vector<std::vector<float>>& rows) {
        size_t w = 0;
        for (const auto& r : rows) w = std::max(w, r.size());
        Tensor t({static_cast<int64_t>(rows.size()), static_cast<int64_t>(w)}, 0.0f);
        for (size_t i = 0; i < rows.size(); ++i)
          std::copy(rows[i].begin(), rows[i].end(), t.data() + i * w);
        return t;
      };
      Tensor push = matrix(tr.push), pop = matrix(tr.pop), st = matrix(tr.strengths),
             rd = matrix(tr.read);
      io::write_npz(trace, {{"push", &push}, {"pop", &pop}, {"strengths", &st}, {"read", &rd}});
    }
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}
