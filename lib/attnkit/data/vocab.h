// Vocabulary: token ↔ id, built from token counts.
//
// Ids 0–3 are reserved: <pad> = 0, <bos> = 1, <eos> = 2, <unk> = 3. The other tokens follow
// by descending count, ties broken by the tokens' bytes (std::string order), so the same
// counts always give the same ids. Tokens seen fewer than `min_freq` times are left out (they
// encode as <unk>); the reserved spellings are never counted as ordinary tokens.
//
// File format (plain text, UTF-8): one token per line in id order, `TOKEN<TAB>COUNT`, the
// four reserved tokens first with count 0. A token is any non-empty text without a tab or a
// line break (a space is a token of the character vocabularies). Errors on loading name the
// file and the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnkit::data {

using TokenCounts = std::unordered_map<std::string, int64_t>;

// Adds each token of `tokens` to `counts`.
void count_tokens(TokenCounts& counts, const std::vector<std::string>& tokens);

class Vocab {
 public:
  static constexpr int32_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3, kReserved = 4;
  static const char* const kReservedTokens[kReserved];  // "<pad>", "<bos>", "<eos>", "<unk>"

  Vocab();  // the four reserved tokens only
  // From counts: tokens with count >= min_freq (min_freq >= 1), ordered as above;
  // max_size > 0 caps the total size (reserved tokens included).
  static Vocab build(const TokenCounts& counts, int64_t min_freq = 1, int64_t max_size = 0);

  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  // Id of a token; <unk> if it is not in the vocabulary.
  int32_t id(std::string_view token) const;
  bool contains(std::string_view token) const;
  // Token of an id; a DataError for an id outside [0, size).
  const std::string& token(int32_t id) const;
  int64_t count(int32_t id) const { return counts_.at(static_cast<size_t>(id)); }

  std::vector<int32_t> encode(const std::vector<std::string>& tokens) const;
  // Tokens of ids joined by `sep`, stopping at the first <eos> and skipping <pad>/<bos>.
  std::string decode(const std::vector<int32_t>& ids, const std::string& sep = " ") const;

  // The file format above, and its parser (`name` is used in error messages).
  std::string format() const;
  static Vocab parse(std::string_view text, const std::string& name);
  void save(const std::string& path) const;  // atomically
  static Vocab load(const std::string& path);

 private:
  void add(std::string token, int64_t count);
  std::vector<std::string> tokens_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int32_t> index_;
};

}  // namespace attnkit::data
