#include "attnkit/memory/memn2n/run.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/train.h"

namespace attnkit::memory {

namespace {

std::string join(const std::vector<std::string>& w) {
  std::string s;
  for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

// "N questions, W answered wrong (P%)", or its forms with questions without an answer.
std::string summary_line(int64_t questions, int64_t unanswered, int64_t wrong) {
  char b[160];
  const int64_t answered = questions - unanswered;
  if (unanswered == 0)
    std::snprintf(b, sizeof b, "%lld questions, %lld answered wrong (%.1f%%)",
                  static_cast<long long>(questions), static_cast<long long>(wrong),
                  100.0 * static_cast<double>(wrong) / static_cast<double>(questions));
  else if (answered == 0)
    std::snprintf(b, sizeof b, "%lld questions, none with an answer to check",
                  static_cast<long long>(questions));
  else
    std::snprintf(b, sizeof b,
                  "%lld questions, %lld without an answer; %lld of the %lld with one answered "
                  "wrong (%.1f%%)",
                  static_cast<long long>(questions), static_cast<long long>(unanswered),
                  static_cast<long long>(wrong), static_cast<long long>(answered),
                  100.0 * static_cast<double>(wrong) / static_cast<double>(answered));
  return b;
}

}  // namespace

MemN2NAnswers answer_memn2n(const MemN2NRunOptions& o, const GivenOption& given,
                            const ItemRange& range) {
  const LoadedMemN2N m = load_memn2n(o.model);
  auto ex = data::read_babi(o.input, true);
  if (ex.empty())
    throw DataError(
        "no questions (a question is a line ending in '?', or with a tab "
        "before its answer)",
        o.input);
  // A slice: its questions, answered in the whole run's batches (a batch's padding and its
  // matrix products depend on every question in it): the batches that hold the slice are
  // answered whole, and the questions outside the slice dropped after.
  constexpr int64_t kBatch = 32;
  const int64_t total = static_cast<int64_t>(ex.size());
  const auto [first, last] = range ? range(total) : std::make_pair(int64_t{0}, total);
  const int64_t lo = first / kBatch * kBatch;
  const int64_t hi = std::min(total, (last + kBatch - 1) / kBatch * kBatch);
  if (range)
    ex = std::vector<data::BabiExample>(std::make_move_iterator(ex.begin() + lo),
                                        std::make_move_iterator(ex.begin() + hi));
  auto enc = encode_babi(ex, m.vocab, m.model->config().memory);
  const bool want_att = given("alignments") || given("sentences");
  EvalResult r = evaluate(*m.model, enc, false, want_att, kBatch);
  if (range) {
    const auto keep = [&, first = first, last = last](auto& v) {
      v.erase(v.begin() + (last - lo), v.end());
      v.erase(v.begin(), v.begin() + (first - lo));
    };
    keep(ex);
    keep(enc);
    keep(r.predicted);
    if (want_att) keep(r.attention);
  }
  std::ostringstream table;
  if (first == 0) table << "line\tquestion\tpredicted\tanswer\n";
  int64_t wrong = 0, unanswered = 0;
  for (size_t i = 0; i < ex.size(); ++i) {
    table << ex[i].line << '\t' << join(ex[i].question) << '\t' << m.vocab.token(r.predicted[i])
          << '\t' << ex[i].answer << '\n';
    if (ex[i].answer.empty())
      ++unanswered;
    else
      wrong += r.predicted[i] != enc[i].answer;
  }
  if (given("alignments")) {
    std::vector<std::string> names;
    for (const auto& e : ex) names.push_back("q" + std::to_string(e.line));
    std::vector<std::pair<std::string, const Tensor*>> arrays;
    for (size_t i = 0; i < ex.size(); ++i) arrays.push_back({names[i], &r.attention[i]});
    io::write_npz(o.attention, arrays);
  }
  if (given("sentences")) {
    std::filesystem::create_directories(o.sentences);
    for (size_t i = 0; i < ex.size(); ++i) {
      std::string text;
      for (size_t s = static_cast<size_t>(enc[i].story_offset); s < ex[i].story.size(); ++s)
        text += join(ex[i].story[s]) + "\n";
      io::write_file(o.sentences + "/q" + std::to_string(ex[i].line) + ".txt", text);
    }
  }
  MemN2NAnswers a;
  a.table = table.str();
  if (!ex.empty())
    a.summary.push_back(summary_line(static_cast<int64_t>(ex.size()), unanswered, wrong));
  return a;
}

std::string eval_table(const LoadedMemN2N& m, const std::string& dir, const std::vector<int>& tasks,
                       const std::string& split, double pass) {
  std::ostringstream o;
  o << "task\terror\tpass\tfacts\n";
  double sum = 0.0, fact_sum = 0.0;
  int failed = 0, with_facts = 0;
  char b[96];
  auto pct = [](char* buf, size_t size, const FactSelection& f) {
    if (f.scored)
      std::snprintf(buf, size, "%.1f", 100.0 * f.rate());
    else
      std::snprintf(buf, size, "-");
  };
  for (int t : tasks) {
    const auto ex = data::read_babi(data::babi_task_file(dir, t, split));
    const auto enc = encode_babi(ex, m.vocab, m.model->config().memory);
    const EvalResult r = evaluate(*m.model, enc, false, true);
    const double err = 100.0 * error_rate(enc, r.predicted);
    const FactSelection f = fact_selection(enc, r.attention);
    char facts[16];
    pct(facts, sizeof facts, f);
    std::snprintf(b, sizeof b, "%d\t%.1f\t%s\t%s\n", t, err, err <= pass ? "yes" : "no", facts);
    o << b;
    sum += err;
    failed += err > pass;
    if (f.scored) fact_sum += 100.0 * f.rate(), ++with_facts;
  }
  const double mean = tasks.empty() ? 0.0 : sum / static_cast<double>(tasks.size());
  char facts[16] = "-";
  if (with_facts) std::snprintf(facts, sizeof facts, "%.1f", fact_sum / with_facts);
  std::snprintf(b, sizeof b, "mean\t%.1f\t%s\t%s\nfailed\t%d\t-\t-\n", mean,
                mean <= pass ? "yes" : "no", facts, failed);
  o << b;
  return o.str();
}

}  // namespace attnkit::memory
