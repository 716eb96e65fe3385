// Mini-batches of encoded pairs, grouped by length.
//
// Token ids are held as int32 in a TokenMatrix, not in a float Tensor: ids are indices (an
// embedding lookup, a softmax target), not values to compute with, and an int type keeps
// them exact past 2^24 and out of arithmetic by mistake. to_tensor() gives the float copy
// that io::write_tensor can write (.npy, text) for inspection with NumPy.
//
// Grouping, per epoch: the pairs are shuffled with attnkit's Rng (seeded from the seed and
// the epoch), cut into pools of `pool_batches` × `batch_size` pairs, each pool is sorted by
// source length (longest first; ties by target length, then corpus order) and cut into
// batches, and the batches of all pools are shuffled. Sentences in one batch thus have
// similar lengths (little padding) while batch order stays random. Without shuffling, the
// pools are taken in corpus order and the batches stay in order (validation, evaluation).
// Every pair appears in exactly one batch per epoch; at most one batch is short (the end of
// the last pool; after shuffling it can come anywhere).
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/core/tensor.h"
#include "attnkit/data/corpus.h"

namespace attnkit::data {

// A rows × cols matrix of token ids, row-major.
struct TokenMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> ids;
  int32_t at(int64_t i, int64_t j) const { return ids[static_cast<size_t>(i * cols + j)]; }
  int32_t& at(int64_t i, int64_t j) { return ids[static_cast<size_t>(i * cols + j)]; }
  Tensor to_tensor() const;  // the ids as floats, shape [rows, cols]
};

struct Batch {
  TokenMatrix source;               // [B, max source length], <pad> (0) after each sentence
  std::vector<int32_t> source_len;  // tokens of each source row, <eos> included
  TokenMatrix target;               // [B, max target length]: <bos> ... <eos> <pad>...
  std::vector<int32_t> target_len;  // <bos> and <eos> included
  std::vector<size_t> index;        // position of each row's pair in the encoded data
  int64_t size() const { return source.rows; }
};

struct BatchOptions {
  int64_t batch_size = 64;    // pairs per batch (>= 1)
  int64_t pool_batches = 20;  // batches per length-sorting pool (>= 1)
  bool shuffle = true;        // false: corpus order, no shuffling
  uint64_t seed = 0;
};

// The batches of one epoch (epoch 0, 1, ... give different shuffles of the same seed).
std::vector<Batch> make_batches(const std::vector<EncodedPair>& data, const BatchOptions& opt,
                                uint64_t epoch = 0);

// One padded batch of the given pairs, in the given order.
Batch make_batch(const std::vector<EncodedPair>& data, const std::vector<size_t>& rows);

}  // namespace attnkit::data
