// Parallel corpora: reading, the seeded train/validation split, and encoding into ids.
//
// A corpus is one file of `SOURCE<TAB>TARGET` lines (the manythings/Tatoeba layout; further
// tab-separated columns, such as the attribution column of newer manythings releases, are
// ignored) or two files of aligned lines (line i of one translates line i of the other).
// The text must be UTF-8 ("\r\n" line ends and a leading byte-order mark are accepted).
// Malformed lines are errors, not skipped: an empty line, a line without a tab, or an empty
// source or target is a DataError naming the file and the line. (Skipping them silently
// would hide a broken or misaligned file, and the training data would change without
// notice; a user who wants them gone can `grep -v` first.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/data/text.h"
#include "attnkit/data/vocab.h"

namespace attnkit::data {

struct SentencePair {
  std::string source, target;
  long line = 0;  // line number in the file(s) it came from
};

struct ParallelCorpus {
  std::string name;  // the file(s), for messages
  std::vector<SentencePair> pairs;
  size_t size() const { return pairs.size(); }
};

// `SOURCE<TAB>TARGET[<TAB>...]` lines. `name` is used in error messages.
ParallelCorpus parse_tsv(std::string_view text, const std::string& name);
ParallelCorpus read_tsv(const std::string& path);
// Aligned lines of two texts; a different number of lines is a DataError naming both.
ParallelCorpus parse_aligned(std::string_view source, const std::string& source_name,
                             std::string_view target, const std::string& target_name);
ParallelCorpus read_aligned(const std::string& source_path, const std::string& target_path);

// A seeded split: round(valid_fraction · n) pairs, drawn without replacement by a
// Fisher–Yates shuffle with attnkit's Rng(seed), go to validation, the rest to training;
// both keep the corpus order. valid_fraction in [0, 1).
struct TrainValid {
  ParallelCorpus train, valid;
};
TrainValid split_train_valid(const ParallelCorpus& corpus, double valid_fraction, uint64_t seed);

// Token counts of one side (source or target) of a corpus.
enum class Side { Source, Target };
Side parse_side(const std::string& text);  // "source" or "target"; ChoiceError otherwise
TokenCounts count_side(const ParallelCorpus& corpus, Side side, Tokenization tok);

// A pair as ids: the source is its tokens then <eos> (as in d2l); the target is <bos>, its
// tokens, <eos> — a decoder reads target[0..n-2] and predicts target[1..n-1].
struct EncodedPair {
  std::vector<int32_t> source, target;
};

struct EncodeOptions {
  Tokenization source_tok = Tokenization::Words;
  Tokenization target_tok = Tokenization::Words;
  // Longest sequence kept, counting <bos>/<eos> (0: no limit). Longer sentences lose their
  // last tokens but keep the final <eos>; the limits must leave room for a token
  // (source >= 2, target >= 3).
  int64_t max_source_len = 0;
  int64_t max_target_len = 0;
};

std::vector<EncodedPair> encode(const ParallelCorpus& corpus, const Vocab& source_vocab,
                                const Vocab& target_vocab, const EncodeOptions& opt);

}  // namespace attnkit::data
