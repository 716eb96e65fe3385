// memn2n-answer: answers the questions of a bAbI-format file with a trained memory network.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/memn2n_io.h"
#include "attnkit/memory/memn2n_train.h"

namespace {

std::string join(const std::vector<std::string>& w) {
  std::string s;
  for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  return attnkit::cli::run("memn2n-answer", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    std::string model_path, in = "-", out = "-", att_path, labels;
    app.describe("Answer the questions of a bAbI-format file with a trained memory network.",
                 "[OPTIONS] --model MODEL [-i STORIES] [--alignments ATT.npz]");
    app.options().add_options()("model,m", po::value(&model_path)->value_name("MODEL")->required(),
                                "a model from memn2n-train")(
        "input,i", po::value(&in)->value_name("STORIES")->default_value(in),
        "stories and questions in the bAbI format (- is standard input)")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the answers (- is standard output)")(
        "alignments", po::value(&att_path)->value_name("ATT.npz"),
        "each question's hop weights: array qLINE, memory sentences (oldest first) x hops")(
        "labels", po::value(&labels)->value_name("DIR"),
        "write DIR/qLINE.txt, the memory sentences of each question one a line (row labels "
        "for attn-plot)");
    app.enable(attnkit::cli::kQuiet);
    app.shard_items("questions (in file order; the header row comes with the first slice)");
    app.epilog(
        "Output (TSV): a header 'line question predicted answer', then one row per question:\n"
        "its line in STORIES, its words, the model's answer and the file's answer (empty for a\n"
        "question asked without one). Words are lower-cased without the final '.' or '?'.\n"
        "A question line has a tab and the answer after it (bAbI: 'ID question?<TAB>answer<TAB>\n"
        "supporting IDs'); a line without a tab that ends in '?' is a question without an\n"
        "answer ('4 Where is John?'), which the model answers all the same. A file without\n"
        "questions is an error. A summary goes to standard error.");
    app.parse();
    const mem::LoadedMemN2N m = mem::load_memn2n(model_path);
    auto ex = attnkit::data::read_babi(in, true);
    if (ex.empty())
      throw attnkit::DataError(
          "no questions (a question is a line ending in '?', or with a tab "
          "before its answer)",
          in);
    // --shard: the slice's questions, answered in the whole run's batches (a batch's padding
    // and its matrix products depend on every question in it): the batches that hold the
    // slice are answered whole, and the questions outside the slice dropped after.
    constexpr int64_t kBatch = 32;
    const int64_t total = static_cast<int64_t>(ex.size());
    const int64_t first = app.shard().begin(total), last = app.shard().end(total);
    const int64_t lo = first / kBatch * kBatch;
    const int64_t hi = std::min(total, (last + kBatch - 1) / kBatch * kBatch);
    if (app.shard().given)
      ex = std::vector<attnkit::data::BabiExample>(std::make_move_iterator(ex.begin() + lo),
                                                   std::make_move_iterator(ex.begin() + hi));
    auto enc = mem::encode_babi(ex, m.vocab, m.model->config().memory);
    const bool want_att = app.given("alignments") || app.given("labels");
    mem::EvalResult r = mem::evaluate(*m.model, enc, false, want_att, kBatch);
    if (app.shard().given) {
      const auto keep = [&](auto& v) {
        v.erase(v.begin() + (last - lo), v.end());
        v.erase(v.begin(), v.begin() + (first - lo));
      };
      keep(ex);
      keep(enc);
      keep(r.predicted);
      if (want_att) keep(r.attention);
    }
    std::ostringstream o;
    if (first == 0) o << "line\tquestion\tpredicted\tanswer\n";
    int64_t wrong = 0, unanswered = 0;
    for (size_t i = 0; i < ex.size(); ++i) {
      o << ex[i].line << '\t' << join(ex[i].question) << '\t' << m.vocab.token(r.predicted[i])
        << '\t' << ex[i].answer << '\n';
      if (ex[i].answer.empty())
        ++unanswered;
      else
        wrong += r.predicted[i] != enc[i].answer;
    }
    if (app.given("alignments")) {
      std::vector<std::string> names;
      for (const auto& e : ex) names.push_back("q" + std::to_string(e.line));
      std::vector<std::pair<std::string, const attnkit::Tensor*>> arrays;
      for (size_t i = 0; i < ex.size(); ++i) arrays.push_back({names[i], &r.attention[i]});
      attnkit::io::write_npz(att_path, arrays);
    }
    if (app.given("labels")) {
      std::filesystem::create_directories(labels);
      for (size_t i = 0; i < ex.size(); ++i) {
        std::string text;
        for (size_t s = static_cast<size_t>(enc[i].story_offset); s < ex[i].story.size(); ++s)
          text += join(ex[i].story[s]) + "\n";
        attnkit::io::write_file(labels + "/q" + std::to_string(ex[i].line) + ".txt", text);
      }
    }
    if (out == "-") {
      std::cout << o.str();
    } else {
      attnkit::io::write_file(out, o.str());
    }
    if (!app.common().quiet && !ex.empty()) {
      char b[160];
      const int64_t answered = static_cast<int64_t>(ex.size()) - unanswered;
      if (unanswered == 0)
        std::snprintf(b, sizeof b, "%zu questions, %lld answered wrong (%.1f%%)", ex.size(),
                      static_cast<long long>(wrong),
                      100.0 * static_cast<double>(wrong) / static_cast<double>(ex.size()));
      else if (answered == 0)
        std::snprintf(b, sizeof b, "%zu questions, none with an answer to check", ex.size());
      else
        std::snprintf(b, sizeof b,
                      "%zu questions, %lld without an answer; %lld of the %lld with one answered "
                      "wrong (%.1f%%)",
                      ex.size(), static_cast<long long>(unanswered), static_cast<long long>(wrong),
                      static_cast<long long>(answered),
                      100.0 * static_cast<double>(wrong) / static_cast<double>(answered));
      std::cerr << app.name() << ": " << b << "\n";
    }
  });
}
