// Hierarchical Attention Networks for document classification (Yang, Yang, Dyer, He, Smola &
// Hovy 2016), and the flat baselines the paper compares them with, in one model kind:
//
//   han       words → embedding → bidirectional GRU → word attention: u = tanh(W h + b),
//             α = softmax(uᵀ u_w) over each sentence's words → sentence vector s = Σ α h;
//             sentences → bidirectional GRU → sentence attention against u_s → document
//             vector v; p = softmax(W_c v + b_c).
//   flat      one bidirectional GRU over all the document's words, attention against u_w.
//   mean      the mean of the document's word embeddings, then the softmax layer.
//   ngram-lr  logistic regression on the mean of the document's n-gram indicators: every word
//             (its vocabulary id) and every n-gram of 2..ngrams words inside a sentence
//             (hashed into `buckets` rows), each row a weight vector over the classes
//             (initialised to 0).
//
// Regularisation for small data sets (a few thousand documents): dropout (--dropout) on the
// word embeddings, on the sentence vectors and on the document vector while training, and
// word embeddings drawn from N(0, 0.1²) rather than N(0, 1), so that words seen in training
// move away from the unseen ones quickly and Adam's early steps are not lost in the noise.
//
// Padding is masked at both levels: padded words and sentences get attention weight exactly 0,
// and the recurrent encoders read each sentence (document) from its own last real step
// (nn/rnn.h), so a document's output does not depend on the batch it is in (up to rounding).
// The word encoder runs on the batch's sentences sorted by length in groups of 64, each group
// padded to its own longest, so one long sentence costs its group only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/data/docs.h"
#include "attnkit/data/vocab.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/params.h"
#include "attnkit/nn/rnn.h"

namespace attnkit::models::han {

enum class Arch { Han, Flat, Mean, NgramLr };
Arch parse_arch(const std::string& s);  // ChoiceError naming the choices
const char* arch_name(Arch a);

struct HanConfig {
  std::string arch = "han";
  int64_t embed = 200, hidden = 50, context = 100;  // the paper's sizes
  int64_t min_freq = 2;                             // words seen fewer times are <unk>
  int64_t ngrams = 2, buckets = 1 << 18;            // ngram-lr only
  float dropout = 0.5f;     // on the GRUs' inputs and the document vector while training
  float embed_init = 0.1f;  // the initial word embeddings' standard deviation
  template <class V>
  void fields(V& v) {
    v(arch, {"arch", "ARCH",
             "han (hierarchical attention), flat (one GRU and attention over all words), mean "
             "(mean of word embeddings) or ngram-lr (logistic regression on n-grams)"});
    v(embed, {"embed", "N", "word embedding size"});
    v(hidden, {"hidden", "N", "GRU units per direction (both encoders)"});
    v(context, {"context", "N", "size of the attention's hidden layer and context vectors"});
    v(min_freq, {"min-freq", "N", "words seen fewer times in the training data are <unk>"});
    v(dropout, {"dropout", "P",
                "dropout while training on the word embeddings, the sentence vectors and the "
                "document vector (mean: the document vector; ngram-lr: none)",
                nullptr, true});
    v(embed_init, {"embed-init", "SD",
                   "the word embeddings start from N(0, SD^2) (words --embeddings has keep its "
                   "vectors)",
                   nullptr, true});
    v(ngrams, {"ngrams", "N", "ngram-lr: the longest n-gram (1: words only)"});
    v(buckets, {"buckets", "N", "ngram-lr: hash buckets of the n-grams of 2 words or more"});
  }
  void validate() const;  // UsageError naming the option
  Arch kind() const { return parse_arch(arch); }
};

// A document as word ids, and its class (-1: none).
struct Doc {
  std::vector<std::vector<int32_t>> sentences;  // each non-empty
  int32_t label = -1;
  int64_t words() const;
};
Doc encode_doc(const data::TextDoc& d, const data::Vocab& v, int32_t label = -1);

struct HanOutput {
  ad::Var logits;  // [B, classes]
  // With attention requested: per document, han: word weights [sentences, longest sentence]
  // (0 past each sentence's end) and sentence weights [sentences]; flat: word weights
  // [1, words] (no sentence weights: an empty tensor).
  std::vector<Tensor> word_weights, sentence_weights;
};

class HanNet {
 public:
  HanNet(nn::ParamStore& ps, const HanConfig& c, int64_t vocab, int64_t classes, Rng& rng);
  const HanConfig& config() const { return c_; }
  Arch arch() const { return arch_; }
  int64_t classes() const { return classes_; }
  int64_t vocab_size() const { return vocab_; }
  HanOutput forward(ad::Tape& t, const std::vector<const Doc*>& docs, bool attention = false) const;
  // Class probabilities [B, classes] (and the attention, when asked) without recording, on
  // `t` (set to evaluation; cleared at the end, so that a caller scoring many batches on one
  // tape draws every buffer from its pool after the first: no fresh, zero-filled memory).
  // With `word_table` (han, flat: word_projections()), the word GRU reads each word's input
  // projections from the table instead of multiplying its embedding by W_ih: the same sums,
  // the same values up to rounding (BLAS may order a sum differently in another product).
  Tensor probabilities(ad::Tape& t, const std::vector<const Doc*>& docs,
                       std::vector<Tensor>* words = nullptr,
                       std::vector<Tensor>* sentences = nullptr,
                       const Tensor* word_table = nullptr) const;
  // han, flat: every vocabulary word's input projections in both directions of the word GRU,
  // [vocab, 6·hidden] (nn::RecurrentEncoder::input_projections of the embeddings), for
  // probabilities(); cheaper than the words' own products once the documents scored hold
  // more words than the vocabulary. Error for mean and ngram-lr.
  Tensor word_projections() const;
  // Sets embedding rows from vectors of `dim` = embed floats by word (word2vec's text format:
  // an optional "COUNT DIM" first line, then "WORD V1 ... VD"); returns how many words of the
  // vocabulary were found (words are lower-cased; the first vector of a word wins). DataError
  // naming the file and line for a bad line; UsageError for ngram-lr (no embeddings).
  int64_t load_embeddings(const std::string& path, const data::Vocab& v);

 private:
  // Each sequence's attention-weighted sum: h [N, T, D], mask [N, T] → [N, D] (weights [N, T]).
  ad::Var attend(ad::Tape& t, ad::Var h, const Tensor& mask, const nn::Linear& proj,
                 ad::Parameter* ctx, ad::Var* weights) const;
  ad::Var doc_means(ad::Tape& t, ad::Var rows, const std::vector<int64_t>& counts) const;
  // forward(); the word GRU from `table` (word_projections()) when given (evaluation only).
  HanOutput run(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                const Tensor* table) const;
  // The word encoder's outputs [N, T, 2·hidden] for the word ids [N, T] of one group.
  ad::Var encode_words(ad::Tape& t, const std::vector<int32_t>& ids, int64_t N, int64_t T,
                       const std::vector<int64_t>& lengths, const Tensor* table) const;
  HanOutput forward_han(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                        const Tensor* table) const;
  HanOutput forward_flat(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                         const Tensor* table) const;
  HanOutput forward_mean(ad::Tape& t, const std::vector<const Doc*>& docs) const;
  HanOutput forward_ngram(ad::Tape& t, const std::vector<const Doc*>& docs) const;

  HanConfig c_;
  Arch arch_;
  int64_t vocab_, classes_;
  std::unique_ptr<nn::Embedding> embed_;
  std::unique_ptr<nn::RecurrentEncoder> word_rnn_, sent_rnn_;
  std::unique_ptr<nn::Linear> word_proj_, sent_proj_, out_;
  ad::Parameter* word_ctx_ = nullptr;
  ad::Parameter* sent_ctx_ = nullptr;
  ad::Parameter* ngram_w_ = nullptr;  // [vocab + buckets, classes]
  ad::Parameter* ngram_b_ = nullptr;  // [classes]
};

// The n-gram feature rows of a document (ngram-lr): its word ids, then for n = 2..ngrams each
// n-gram inside a sentence as vocab + hash mod buckets.
std::vector<int32_t> ngram_features(const Doc& d, int64_t vocab, int64_t ngrams, int64_t buckets);

}  // namespace attnkit::models::han
