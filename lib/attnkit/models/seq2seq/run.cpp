#include "attnkit/models/seq2seq/run.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/seq2seq/file.h"

namespace attnkit::models {

namespace {

// DIR/<i>.rows (the target tokens) and DIR/<i>.cols (the source tokens) of each sentence.
void write_alignment_tokens(const std::string& dir, const LoadedSeq2Seq& b,
                            const std::vector<Translation>& tr,
                            const std::vector<std::vector<int32_t>>& sources, size_t first) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create the folder: " + ec.message(), dir);
  for (size_t i = 0; i < tr.size(); ++i) {
    std::string rows, cols;
    for (int32_t id : tr[i].tokens) rows += b.target_vocab.token(id) + "\n";
    for (int32_t id : sources[i]) cols += b.source_vocab.token(id) + "\n";
    io::write_file(dir + "/" + std::to_string(first + i) + ".rows", rows);
    io::write_file(dir + "/" + std::to_string(first + i) + ".cols", cols);
  }
}

}  // namespace

void run_translate(const TranslateRunOptions& o, const ItemRange& range,
                   const ProgressFn& progress) {
  if (o.beam < 1) throw UsageError("--beam must be at least 1");
  if (o.max_length < 1) throw UsageError("--len-max must be at least 1");
  if (!(o.length_penalty >= 0 && o.length_penalty <= 10))
    throw UsageError("--length-penalty must be in [0, 10]");
  if (!o.alignment_tokens.empty() && o.alignments.empty())
    throw UsageError("--alignment-tokens needs --alignments");
  if (!o.alignments.empty() && o.tokenize_only)
    throw UsageError("--alignments does not apply to --tokenize-only");
  if (!o.trace.empty() && o.tokenize_only)
    throw UsageError("--trace does not apply to --tokenize-only");

  LoadedSeq2Seq b = load_seq2seq(o.model);
  if (!o.alignments.empty() && b.model->config().type == ModelType::RNN &&
      b.model->config().attention == AttentionKind::None)
    throw UsageError("--alignments: the model has no attention (trained with --attention none)");
  if (!o.trace.empty() && (b.model->config().type != ModelType::RNN ||
                           b.model->config().attention != AttentionKind::Syntactic))
    throw UsageError(
        "--trace: the model has no syntactic attention (seq2seq-train --attention "
        "syntactic)");
  const std::string text = io::read_text(o.input);
  std::vector<std::string_view> lines =
      data::split_lines(text, o.input == "-" ? "<stdin>" : o.input);
  // A slice of the lines: `first` numbers its alignments in the whole input.
  const int64_t count = static_cast<int64_t>(lines.size());
  const auto [begin, end] = range ? range(count) : std::make_pair(int64_t{0}, count);
  const size_t first = static_cast<size_t>(begin);
  lines = std::vector<std::string_view>(lines.begin() + begin, lines.begin() + end);

  io::AtomicFile file(o.output);
  if (o.tokenize_only) {
    for (std::string_view l : lines)
      file.write(detokenize(data::tokenize(l, b.target_tok), b.target_tok) + "\n");
    file.commit();
    return;
  }
  std::vector<std::vector<int32_t>> sources;
  for (std::string_view l : lines) sources.push_back(encode_source(b, std::string(l)));
  DecodeOptions d;
  d.beam = o.beam;
  d.length_penalty = o.length_penalty;
  d.max_length = o.max_length;
  d.kv_cache = !o.no_kv_cache;
  std::vector<Translation> tr;
  tr.reserve(sources.size());
  const int64_t n = static_cast<int64_t>(sources.size());
  tick(progress, 0, n);
  const size_t block = 64;
  for (size_t s = 0; s < sources.size(); s += block) {
    std::vector<std::vector<int32_t>> part(
        sources.begin() + static_cast<long>(s),
        sources.begin() + static_cast<long>(std::min(sources.size(), s + block)));
    for (auto& t : translate_all(*b.model, part, d, o.threads)) tr.push_back(std::move(t));
    tick(progress, static_cast<int64_t>(tr.size()), n);
  }
  std::string outtext;
  for (const auto& t : tr) outtext += target_text(b, t.tokens) + "\n";

  if (!o.alignments.empty()) {
    std::vector<std::pair<std::string, const Tensor*>> arrays;
    std::vector<std::string> names;
    for (size_t i = 0; i < tr.size(); ++i) names.push_back("s" + std::to_string(first + i));
    for (size_t i = 0; i < tr.size(); ++i) arrays.push_back({names[i], &tr[i].attention});
    if (!o.alignment_tokens.empty())
      write_alignment_tokens(o.alignment_tokens, b, tr, sources, first);
    io::write_npz(o.alignments, arrays);
  }
  if (!o.trace.empty()) {
    std::vector<Tensor> arcs;
    for (size_t i = 0; i < tr.size(); ++i)
      arcs.push_back(b.model->syntactic_arcs(sources[i], tr[i].tokens));
    std::vector<std::pair<std::string, const Tensor*>> arrays;
    std::vector<std::string> names;
    for (size_t i = 0; i < tr.size(); ++i) names.push_back("s" + std::to_string(first + i));
    for (size_t i = 0; i < tr.size(); ++i) arrays.push_back({names[i], &arcs[i]});
    io::write_npz(o.trace, arrays);
  }
  file.write(outtext);
  file.commit();
}

}  // namespace attnkit::models
