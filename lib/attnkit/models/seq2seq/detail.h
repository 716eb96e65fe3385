// Internal to models/seq2seq*.cpp: the two model classes' factories and shared helpers.
#pragma once

#include <memory>

#include "attnkit/models/seq2seq/model.h"

namespace attnkit::models::detail {

std::unique_ptr<Seq2Seq> make_rnn(const Seq2SeqConfig& c, uint64_t seed);
std::unique_ptr<Seq2Seq> make_transformer(const Seq2SeqConfig& c, uint64_t seed);

// A batch's decoder input (target[:, 0..L-2]) and output (target[:, 1..L-1]) ids, time-major
// ([L-1, B] flattened) or batch-major ([B, L-1]); padding stays 0.
void split_target(const data::Batch& b, bool time_major, std::vector<int32_t>& in,
                  std::vector<int32_t>& out);
// Whether any source row is shorter than the batch's width, and the lengths as int64.
bool source_lengths(const data::Batch& b, std::vector<int64_t>& lengths);

}  // namespace attnkit::models::detail
