#include "attnkit/memory/stackmem/run.h"

#include <algorithm>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/data/transduce.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/stackmem/model.h"

namespace attnkit::memory {

namespace {

// Rows of different lengths as one zero-padded matrix.
Tensor padded_matrix(const std::vector<std::vector<float>>& rows) {
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.size());
  Tensor t({static_cast<int64_t>(rows.size()), static_cast<int64_t>(w)}, 0.0f);
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), t.data() + i * w);
  return t;
}

// Greedy decoding's length limit for a source.
int64_t max_answer(const TransduceExample& e) {
  return 2 * static_cast<int64_t>(e.source.size()) + 10;
}

}  // namespace

std::string run_stack_lstm(const std::string& model, const std::string& input,
                           const StackRunOptions& o) {
  if (o.bucket < 1) throw UsageError("--bucket must be >= 1");
  if (o.rounding && o.soft) throw UsageError("--rounding and --soft exclude each other");
  LoadedStackLstm m = load_stack_lstm(model);
  if ((o.rounding || o.soft) && !m.config.stack_rnn)
    throw UsageError("--rounding and --soft apply to a stack RNN (stackmem-train --stack-rnn)");
  if (o.rounding || o.soft) m.model->set_rounding(o.rounding);
  const auto data = read_transduce(input, m.vocab);
  std::string text;
  if (o.eval) {
    text = data::accuracy_tsv(evaluate_transduce(*m.model, data, o.bucket, o.threads), o.bucket);
  } else {
    for (const auto& e : data)
      text += data::answer_line(m.vocab, m.model->decode(e.source, max_answer(e)));
  }
  if (!o.trace.empty()) {
    if (!m.config.has_memory()) throw UsageError("--trace: the plain LSTM has no memory to trace");
    StackTrace tr;
    tr.max_floats = o.trace_max_floats;
    try {
      m.model->decode(data[0].source, max_answer(data[0]), &tr);
    } catch (Error& e) {
      e.locate(input, data[0].line);
      throw;
    }
    Tensor push = padded_matrix(tr.push), pop = padded_matrix(tr.pop),
           st = padded_matrix(tr.strengths), rd = padded_matrix(tr.read);
    Tensor wt = padded_matrix(tr.weights);
    if (tr.weights.empty())
      io::write_npz(o.trace, {{"push", &push}, {"pop", &pop}, {"strengths", &st}, {"read", &rd}});
    else  // a set: the read weights of its slots too
      io::write_npz(
          o.trace,
          {{"push", &push}, {"pop", &pop}, {"strengths", &st}, {"read", &rd}, {"weights", &wt}});
  }
  return text;
}

}  // namespace attnkit::memory
