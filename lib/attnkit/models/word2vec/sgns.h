// Word vectors by skip-gram with negative sampling (Mikolov, Sutskever, Chen, Corrado & Dean
// 2013; the textbook's word2vec, d2l 15.1-15.4), as the original word2vec.c trains them:
//
//   - the vocabulary: the words seen --min-freq times or more, by descending count (ties in
//     byte order); other words are dropped from the text before the windows are taken;
//   - subsampling: a word of frequency f (share of the kept tokens) is kept with probability
//     min(1, (sqrt(f / t) + 1) t / f), t = --subsample (0: no subsampling), drawn afresh in
//     every epoch;
//   - windows inside each sentence only, of a random size b in 1..--window per centre word;
//   - for each (centre w, context c) pair, the loss
//       L = -log σ(u_c · v_w) - Σ_{k=1..K} log σ(-u_c · v_{n_k}),
//     u the input vectors (what is written out), v the output vectors, n_k K = --negative words
//     drawn from the unigram distribution to the power 3/4;
//   - plain SGD, one pair at a time, the rate falling linearly from --lr to 1e-4 --lr over
//     the run; u starts uniform in [-0.5/D, 0.5/D), v at 0.
//
// Unlike word2vec.c (Hogwild threads), one thread does the whole run, so that a seed gives
// the same vectors on every machine and for any --threads. That is affordable at the sizes
// this project meets (a few hundred thousand tokens: seconds to a minute).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnkit::models::word2vec {

struct Word2VecConfig {
  int64_t embed = 200;  // han-train's --embed default, so its --embeddings reads them as they are
  int64_t window = 5, negative = 5, min_freq = 5, epochs = 5;
  double lr = 0.025, subsample = 1e-3;
  template <class V>
  void fields(V& v) {
    v(embed, {"embed", "N", "vector size"});
    v(window, {"window", "N", "the largest distance between a word and its context words"});
    v(negative, {"negative", "K", "negative samples per (word, context) pair"});
    v(min_freq, {"min-freq", "N", "words seen fewer times are left out of the text"});
    v(subsample,
      {"subsample", "T", "subsampling threshold for frequent words (0: keep every word)"});
    v(epochs, {"epochs", "N", "passes over the text"});
    v(lr, {"lr", "RATE", "the SGD rate at the start (it falls linearly to 1e-4 of itself)"});
  }
  void validate() const;  // UsageError naming the option
};

// The SGNS loss of one pair and its gradient. `in` is the context word's input vector [D];
// rows[0] is the centre word's output vector (label 1), rows[1..n-1] the negatives' (label 0).
// When g_in / g_rows are not null, they receive dL/d in [D] and dL/d rows[j] [n D] (rows one
// after another). A row that appears twice is treated as two rows.
double sgns_loss(const float* in, const float* const* rows, int64_t n, int64_t D,
                 float* g_in = nullptr, float* g_rows = nullptr);

// One SGD step of rate `lr` on one pair: in -= lr dL/d in, rows[j] -= lr dL/d rows[j], the
// gradient taken before the step (for distinct rows; word2vec.c's order otherwise). `scratch`
// holds D floats. Returns the loss before the step.
double sgns_step(float* in, float* const* rows, int64_t n, int64_t D, float lr, float* scratch);

struct Vectors {
  std::vector<std::string> words;  // by descending count
  std::vector<int64_t> counts;
  int64_t dim = 0;
  std::vector<float> input;  // [words, dim]: the vectors written out
};

// Called now and then with the tokens read (every epoch's, those subsampling dropped
// included), all the run's tokens, and the mean loss of the pairs since the last call.
using Progress = std::function<void(int64_t done, int64_t total, double loss)>;

// Trains on sentences of words (each sentence a window boundary). UsageError when the text
// has fewer than 2 distinct words seen --min-freq times.
Vectors train(const Word2VecConfig& c, const std::vector<std::vector<std::string>>& sentences,
              uint64_t seed, const Progress& progress = {});

// word2vec's text format: "COUNT DIM", then "WORD V1 ... VD" a line (6 significant digits).
std::string format_vectors(const Vectors& v);

// The k words whose vectors have the largest cosine with `word`'s (itself excluded), best
// first; empty when the word is not in the vectors.
std::vector<std::string> nearest(const Vectors& v, const std::string& word, int64_t k);

}  // namespace attnkit::models::word2vec
