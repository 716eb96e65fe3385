#include "attnkit/data/corpus.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::data {

ParallelCorpus parse_tsv(std::string_view text, const std::string& name) {
  ParallelCorpus c;
  c.name = name;
  const auto lines = split_lines(text, name);
  c.pairs.reserve(lines.size());
  long number = 0;
  for (std::string_view line : lines) {
    ++number;
    if (line.empty()) throw DataError("empty line (expected SOURCE<TAB>TARGET)", name, number);
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos)
      throw DataError("no tab (expected SOURCE<TAB>TARGET)", name, number);
    const size_t end = line.find('\t', tab + 1);
    std::string_view src = line.substr(0, tab);
    std::string_view tgt =
        line.substr(tab + 1, end == std::string_view::npos ? end : end - tab - 1);
    if (src.find_first_not_of(' ') == std::string_view::npos)
      throw DataError("empty source sentence", name, number);
    if (tgt.find_first_not_of(' ') == std::string_view::npos)
      throw DataError("empty target sentence", name, number);
    c.pairs.push_back({std::string(src), std::string(tgt), number});
  }
  return c;
}

ParallelCorpus read_tsv(const std::string& path) { return parse_tsv(io::read_text(path), path); }

ParallelCorpus parse_aligned(std::string_view source, const std::string& source_name,
                             std::string_view target, const std::string& target_name) {
  const auto src = split_lines(source, source_name);
  const auto tgt = split_lines(target, target_name);
  if (src.size() != tgt.size())
    throw DataError(source_name + " has " + std::to_string(src.size()) + " lines but " +
                    target_name + " has " + std::to_string(tgt.size()) +
                    ": the files must be aligned line by line");
  ParallelCorpus c;
  c.name = source_name + " + " + target_name;
  c.pairs.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    const long number = static_cast<long>(i + 1);
    if (src[i].find_first_not_of(' ') == std::string_view::npos)
      throw DataError("empty sentence", source_name, number);
    if (tgt[i].find_first_not_of(' ') == std::string_view::npos)
      throw DataError("empty sentence", target_name, number);
    c.pairs.push_back({std::string(src[i]), std::string(tgt[i]), number});
  }
  return c;
}

ParallelCorpus read_aligned(const std::string& source_path, const std::string& target_path) {
  const std::string src = io::read_text(source_path);
  const std::string tgt = io::read_text(target_path);
  return parse_aligned(src, source_path, tgt, target_path);
}

TrainValid split_train_valid(const ParallelCorpus& corpus, double valid_fraction, uint64_t seed) {
  if (!(valid_fraction >= 0.0 && valid_fraction < 1.0))
    throw DataError("the validation fraction must be in [0, 1), not " +
                    std::to_string(valid_fraction));
  const size_t n = corpus.size();
  const size_t n_valid = static_cast<size_t>(std::llround(valid_fraction * static_cast<double>(n)));
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<char> is_valid(n, 0);
  for (size_t i = 0; i < n_valid; ++i) is_valid[order[i]] = 1;
  TrainValid out;
  out.train.name = corpus.name;
  out.valid.name = corpus.name;
  for (size_t i = 0; i < n; ++i)
    (is_valid[i] ? out.valid : out.train).pairs.push_back(corpus.pairs[i]);
  return out;
}

Side parse_side(const std::string& text) {
  return parse_choice<Side>("side", text,
                            {
                                {"source", Side::Source},
                                {"target", Side::Target},
                            });
}

TokenCounts count_side(const ParallelCorpus& corpus, Side side, Tokenization tok) {
  TokenCounts counts;
  for (const auto& p : corpus.pairs)
    count_tokens(counts, tokenize(side == Side::Source ? p.source : p.target, tok));
  return counts;
}

std::vector<EncodedPair> encode(const ParallelCorpus& corpus, const Vocab& source_vocab,
                                const Vocab& target_vocab, const EncodeOptions& opt) {
  if (opt.max_source_len != 0 && opt.max_source_len < 2)
    throw DataError("the source length limit must be 0 (none) or at least 2 (a token and <eos>)");
  if (opt.max_target_len != 0 && opt.max_target_len < 3)
    throw DataError(
        "the target length limit must be 0 (none) or at least 3 (<bos>, a token, <eos>)");
  std::vector<EncodedPair> out;
  out.reserve(corpus.size());
  for (const auto& p : corpus.pairs) {
    EncodedPair e;
    e.source = source_vocab.encode(tokenize(p.source, opt.source_tok));
    if (opt.max_source_len > 0 && static_cast<int64_t>(e.source.size()) > opt.max_source_len - 1)
      e.source.resize(static_cast<size_t>(opt.max_source_len - 1));
    e.source.push_back(Vocab::kEos);
    std::vector<int32_t> t = target_vocab.encode(tokenize(p.target, opt.target_tok));
    if (opt.max_target_len > 0 && static_cast<int64_t>(t.size()) > opt.max_target_len - 2)
      t.resize(static_cast<size_t>(opt.max_target_len - 2));
    e.target.reserve(t.size() + 2);
    e.target.push_back(Vocab::kBos);
    e.target.insert(e.target.end(), t.begin(), t.end());
    e.target.push_back(Vocab::kEos);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace attnkit::data
