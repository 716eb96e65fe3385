#include "attnkit/memory/ntm/run.h"

#include <algorithm>
#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/data/transduce.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::memory {

void check_ntm_run(const NtmRunOptions& o, const GivenOption& given, bool shard) {
  if (o.count < 1) throw UsageError("--count must be >= 1");
  if (!o.eval && o.input.empty()) throw UsageError("give -i INPUT (or --eval)");
  if (!o.eval && given("lengths")) throw UsageError("--lengths is for --eval");
  if (!o.lengths.empty() && !o.input.empty())
    throw UsageError("--lengths is for fresh episodes, not with -i");
  if (shard) {
    if (o.eval)
      throw UsageError("--shard does not apply to --eval (its report sums over every episode)");
    if (!o.trace.empty()) throw UsageError("--shard does not apply to --trace");
  }
}

LoadedNtm load_ntm_run(const NtmRunOptions& o, const GivenOption& given) {
  if (o.bucket < 1) throw UsageError("--bucket must be >= 1");
  LoadedNtm m = load_ntm(o.model);
  if (!m.symbols && given("bucket"))
    throw UsageError("--bucket is for a model trained on symbol pairs");
  return m;
}

std::string run_ntm_pairs(const LoadedNtm& m, const NtmRunOptions& o, const GivenOption& given,
                          bool shard, const ProgressFn& progress) {
  if (o.input.empty()) throw UsageError("the model was trained on symbol pairs: give -i PAIRS.tsv");
  if (given("lengths") || given("count"))
    throw UsageError("--lengths and --count are for fresh episodes, not symbol pairs");
  if (shard) throw UsageError("--shard does not apply to symbol pairs");
  const std::string bytes = io::read_all(o.input);  // once: -i may be a pipe
  if (io::detect_format(std::string_view(bytes).substr(0, 8)) == io::Format::Npz)
    throw UsageError(
        "the model was trained on symbol pairs, not a seqtask-gen data set: "
        "give -i PAIRS.tsv");
  const NtmPairs pairs = parse_ntm_pairs(bytes, o.input, &m.vocab);
  ad::Tape tape;
  tape.set_recording(false);
  const int64_t n = pairs.count();
  std::string text;
  tick(progress, 0, n);
  if (o.eval) {
    text = data::accuracy_tsv(evaluate_ntm_pairs(*m.model, tape, pairs, o.bucket,
                                                 [&](int64_t i) { tick(progress, i, n); }),
                              o.bucket);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      text += data::answer_line(m.vocab, ntm_answer(*m.model, tape, pairs.episode(i)));
      tick(progress, i + 1, n);
    }
  }
  if (!o.trace.empty()) {
    NtmTrace trace;
    data::Episode e = pairs.episode(0);
    Tensor p = symbol_probabilities(m.model->forward(tape, e.input, &trace).value());
    io::write_npz(o.trace, trace_arrays(trace, m.config, e.input.clone(), std::move(p)));
  }
  return text;
}

NtmEpisodes read_ntm_episodes(const LoadedNtm& m, const std::string& input) {
  NtmEpisodes e;
  e.dataset = is_ntm_dataset(input);
  if (!e.dataset) return e;
  e.data = read_ntm_dataset(input);
  const NtmDataset& ds = e.data;
  if (ds.input_width() != m.input || ds.output_width() != m.output)
    throw DataError("episodes have " + std::to_string(ds.input_width()) + " inputs and " +
                        std::to_string(ds.output_width()) + " outputs, the model " +
                        std::to_string(m.input) + " and " + std::to_string(m.output),
                    input);
  return e;
}

std::string ntm_length_report(const LoadedNtm& m, const NtmEpisodes& e, const NtmRunOptions& o,
                              const ProgressFn& progress) {
  ad::Tape tape;
  tape.set_recording(false);
  LengthReport report;
  if (e.dataset) {
    tick(progress, 0, e.data.count());
    for (int64_t i = 0; i < e.data.count(); ++i) {
      report.add(*m.model, tape, e.data.episode(i));
      tick(progress, i + 1, e.data.count());
    }
    return report.tsv();
  }
  if (!o.input.empty())  // a file that is not a data set: bad data, not bad usage
    throw DataError("not a data set from seqtask-gen (an .npz with the arrays inputs and steps)",
                    o.input);
  data::SeqTaskOptions topt;
  if (ntm_task_from_yaml(m.file.config_yaml, o.model, &topt).empty())
    throw UsageError("the model was trained on a data file: give --eval -i DATA.npz");
  std::vector<int64_t> lengths;
  if (!o.lengths.empty()) {
    lengths = parse_lengths(o.lengths);
  } else {
    for (int64_t l = topt.min_len; l <= topt.max_len; ++l) lengths.push_back(l);
  }
  const int64_t lo = topt.task == data::SeqTask::AssociativeRecall ? 2 : 1;
  for (int64_t l : lengths)
    if (l < lo) throw UsageError("--lengths: associative recall needs at least 2 items");
  Rng rng(o.seed);
  const int64_t total = static_cast<int64_t>(lengths.size()) * o.count;
  int64_t done = 0;
  tick(progress, 0, total);
  for (int64_t l : lengths)
    for (int64_t k = 0; k < o.count; ++k) {
      report.add(*m.model, tape, data::make_episode(topt, rng, l));
      tick(progress, ++done, total);
    }
  return report.tsv();
}

Tensor ntm_outputs(const LoadedNtm& m, const NtmEpisodes& e, int64_t first, int64_t last,
                   const NtmRunOptions& o) {
  ad::Tape tape;
  tape.set_recording(false);
  NtmTrace trace;
  Tensor result, first_in, first_out;
  const int64_t no = m.output;
  if (e.dataset) {
    const int64_t tm = e.data.inputs.dim(1);
    result = Tensor({last - first, tm, no});
    for (int64_t i = first; i < last; ++i) {
      data::Episode ep = e.data.episode(i);
      const bool tr = i == 0 && !o.trace.empty();
      Tensor p =
          output_probabilities(m.model->forward(tape, ep.input, tr ? &trace : nullptr).value());
      if (tr) first_in = ep.input.clone(), first_out = p.clone();
      std::copy(p.values().begin(), p.values().end(), result.data() + (i - first) * tm * no);
      tape.clear();
    }
  } else {
    Tensor x = io::read_tensor(o.input);
    if (x.rank() == 1) x.reshape({1, x.dim(0)});
    if (x.rank() != 2 || x.dim(1) != m.input)
      throw DataError("input is " + shape_str(x.shape()) + ", the model takes steps x " +
                          std::to_string(m.input),
                      io::split_member(o.input).first);
    result =
        output_probabilities(m.model->forward(tape, x, o.trace.empty() ? nullptr : &trace).value());
    first_in = x.clone();
    first_out = result.clone();
  }
  if (!o.trace.empty())
    io::write_npz(o.trace,
                  trace_arrays(trace, m.config, std::move(first_in), std::move(first_out)));
  return result;
}

AddressStages run_ntm_address(const Tensor& memory, const std::vector<double>& key, double beta,
                              double gate, const std::vector<double>& shift, double gamma,
                              const std::vector<double>& prev) {
  const int64_t n = memory.dim(0), m = memory.dim(1);
  const std::vector<double> mv(memory.values().begin(), memory.values().end());
  const std::vector<double> pv =
      prev.empty() ? std::vector<double>(static_cast<size_t>(n), 1.0 / n) : prev;
  auto sized = [&](const std::vector<double>& v, int64_t want, const char* opt) {
    if (static_cast<int64_t>(v.size()) != want)
      throw UsageError(std::string(opt) + " has " + std::to_string(v.size()) + " values, the " +
                       std::to_string(n) + " x " + std::to_string(m) + " memory needs " +
                       std::to_string(want));
  };
  sized(key, m, "--key");
  sized(pv, n, "--prev");
  if (shift.size() % 2 == 0 || static_cast<int64_t>(shift.size()) > n)
    throw UsageError(
        "--shift has " + std::to_string(shift.size()) +
        " values: expected an odd number 2R+1 (shifts -R..+R) of at most N = " + std::to_string(n));
  if (!std::isfinite(beta) || beta < 0) throw UsageError("--beta must be a number >= 0");
  if (!std::isfinite(gate) || gate < 0 || gate > 1) throw UsageError("--gate must be in [0, 1]");
  if (!std::isfinite(gamma) || gamma < 1) throw UsageError("--gamma must be a number >= 1");
  return ntm_address(mv, n, m, key, beta, gate, shift, gamma, pv);
}

std::vector<std::pair<std::string, Tensor>> address_arrays(const AddressStages& s) {
  auto row = [](const std::vector<double>& v) {
    return Tensor({static_cast<int64_t>(v.size())}, std::vector<float>(v.begin(), v.end()));
  };
  std::vector<std::pair<std::string, Tensor>> a;
  a.emplace_back("wc", row(s.wc));
  a.emplace_back("wg", row(s.wg));
  a.emplace_back("wshift", row(s.wshift));
  a.emplace_back("w", row(s.w));
  return a;
}

Tensor address_matrix(const AddressStages& s) {
  const int64_t n = static_cast<int64_t>(s.w.size());
  Tensor all({4, n});
  for (int64_t i = 0; i < n; ++i) {
    all.at(0, i) = static_cast<float>(s.wc[i]);
    all.at(1, i) = static_cast<float>(s.wg[i]);
    all.at(2, i) = static_cast<float>(s.wshift[i]);
    all.at(3, i) = static_cast<float>(s.w[i]);
  }
  return all;
}

}  // namespace attnkit::memory
