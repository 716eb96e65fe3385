#include "attnkit/data/vocab.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::data {

const char* const Vocab::kReservedTokens[Vocab::kReserved] = {"<pad>", "<bos>", "<eos>", "<unk>"};

void count_tokens(TokenCounts& counts, const std::vector<std::string>& tokens) {
  for (const auto& t : tokens) ++counts[t];
}

Vocab::Vocab() {
  for (const char* t : kReservedTokens) add(t, 0);
}

void Vocab::add(std::string token, int64_t count) {
  index_.emplace(token, static_cast<int32_t>(tokens_.size()));
  tokens_.push_back(std::move(token));
  counts_.push_back(count);
}

Vocab Vocab::build(const TokenCounts& counts, int64_t min_freq, int64_t max_size) {
  if (min_freq < 1) throw DataError("min_freq must be at least 1");
  if (max_size != 0 && max_size < kReserved)
    throw DataError("max_size must be 0 (no limit) or at least " + std::to_string(kReserved));
  Vocab v;
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [token, n] : counts)
    if (n >= min_freq && !token.empty() && !v.contains(token)) kept.emplace_back(token, n);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (auto& [token, n] : kept) {
    if (max_size > 0 && v.size() >= max_size) break;
    v.add(std::move(token), n);
  }
  return v;
}

int32_t Vocab::id(std::string_view token) const {
  auto it = index_.find(std::string(token));
  return it == index_.end() ? kUnk : it->second;
}

bool Vocab::contains(std::string_view token) const { return index_.count(std::string(token)) != 0; }

const std::string& Vocab::token(int32_t id) const {
  if (id < 0 || id >= size())
    throw DataError("token id " + std::to_string(id) + " outside the vocabulary of " +
                    std::to_string(size()));
  return tokens_[static_cast<size_t>(id)];
}

std::vector<int32_t> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id(t));
  return ids;
}

std::string Vocab::decode(const std::vector<int32_t>& ids, const std::string& sep) const {
  std::string out;
  bool first = true;
  for (int32_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    if (!first) out += sep;
    out += token(i);
    first = false;
  }
  return out;
}

std::string Vocab::format() const {
  std::string out;
  for (size_t i = 0; i < tokens_.size(); ++i)
    out += tokens_[i] + "\t" + std::to_string(counts_[i]) + "\n";
  return out;
}

Vocab Vocab::parse(std::string_view text, const std::string& name) {
  const auto lines = split_lines(text, name);
  if (lines.empty()) throw DataError("empty vocabulary file", name);
  Vocab v;
  v.tokens_.clear();
  v.counts_.clear();
  v.index_.clear();
  long number = 0;
  for (std::string_view line : lines) {
    ++number;
    const size_t tab = line.rfind('\t');
    if (tab == std::string_view::npos)
      throw DataError("expected TOKEN<TAB>COUNT, found no tab", name, number);
    const std::string token(line.substr(0, tab));
    const std::string count_text(line.substr(tab + 1));
    if (token.empty()) throw DataError("empty token", name, number);
    if (token.find('\t') != std::string::npos)
      throw DataError("expected TOKEN<TAB>COUNT, found more than one tab", name, number);
    char* end = nullptr;
    errno = 0;
    const long long count = count_text.empty() ? -1 : std::strtoll(count_text.c_str(), &end, 10);
    if (count_text.empty() || *end != '\0' || errno != 0 || count < 0 ||
        !(count_text[0] >= '0' && count_text[0] <= '9'))
      throw DataError("bad count '" + count_text + "' (a whole number >= 0)", name, number);
    const size_t id = static_cast<size_t>(number - 1);
    if (id < static_cast<size_t>(kReserved) && token != kReservedTokens[id])
      throw DataError("expected the reserved token " + std::string(kReservedTokens[id]) + " (id " +
                          std::to_string(id) + "), found '" + token + "'",
                      name, number);
    if (v.index_.count(token))
      throw DataError("token '" + token + "' repeated (first on line " +
                          std::to_string(v.index_.at(token) + 1) + ")",
                      name, number);
    v.add(token, count);
  }
  if (v.size() < kReserved)
    throw DataError("the vocabulary ends before the four reserved tokens", name,
                    static_cast<long>(lines.size()));
  return v;
}

void Vocab::save(const std::string& path) const { io::write_file(path, format()); }

Vocab Vocab::load(const std::string& path) { return parse(io::read_text(path), path); }

}  // namespace attnkit::data
