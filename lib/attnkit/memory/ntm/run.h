// Running a trained Neural Turing Machine, the logic behind ntm-run and ntm-address: the
// checks of what was asked, the answers and accuracy on symbol pairs, bits per sequence by
// length, the outputs of episodes with the trace of the first; one addressing step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/hooks.h"
#include "attnkit/core/tensor.h"
#include "attnkit/memory/ntm/address.h"
#include "attnkit/memory/ntm/task.h"
#include "attnkit/memory/ntm/train.h"

namespace attnkit::memory {

// What ntm-run was asked (its options, by their long names).
struct NtmRunOptions {
  std::string model, input, trace, lengths;  // "": not given
  bool eval = false;
  int64_t count = 100, bucket = 8;
  uint64_t seed = 0;
};

// The checks that need no model (UsageError); `shard`: --shard was given.
void check_ntm_run(const NtmRunOptions& o, const GivenOption& given, bool shard);
// --bucket's check, then the model, which must be one of symbol pairs for --bucket.
LoadedNtm load_ntm_run(const NtmRunOptions& o, const GivenOption& given);

// A model trained on symbol pairs, on the pairs of o.input: one answer a line or, with
// o.eval, the accuracy table (data::accuracy_tsv); o.trace (when named) gets the first
// pair's trace, its outputs the softmax of each step.
std::string run_ntm_pairs(const LoadedNtm& m, const NtmRunOptions& o, const GivenOption& given,
                          bool shard, const ProgressFn& progress);

// Episodes of bit vectors: a seqtask-gen data set, or (not a data set) one sequence or
// fresh episodes of the model's task, read later.
struct NtmEpisodes {
  bool dataset = false;
  NtmDataset data;
  int64_t count() const { return dataset ? data.count() : 1; }
};
// o.input as a data set when it is one, checked against the model's widths.
NtmEpisodes read_ntm_episodes(const LoadedNtm& m, const std::string& input);

// --eval: bits per sequence by length (LengthReport::tsv) on the data set, or on o.count fresh
// episodes (drawn from o.seed) per length of o.lengths (default: the training range).
std::string ntm_length_report(const LoadedNtm& m, const NtmEpisodes& e, const NtmRunOptions& o,
                              const ProgressFn& progress);

// Outputs σ(y): of the data set's episodes [first, last) as [last - first, steps, outputs],
// else of the one sequence in o.input as [steps, outputs]; o.trace (when named) gets the
// first episode's trace (trace_arrays).
Tensor ntm_outputs(const LoadedNtm& m, const NtmEpisodes& e, int64_t first, int64_t last,
                   const NtmRunOptions& o);

// ntm-address: the checks of its values against the N x M memory (UsageError naming the
// options), then ntm_address; an empty prev is the uniform weighting 1/N.
AddressStages run_ntm_address(const Tensor& memory, const std::vector<double>& key, double beta,
                              double gate, const std::vector<double>& shift, double gamma,
                              const std::vector<double>& prev);
// The stages as arrays wc, wg, wshift, w [N]; or as the rows of one 4 x N matrix.
std::vector<std::pair<std::string, Tensor>> address_arrays(const AddressStages& s);
Tensor address_matrix(const AddressStages& s);

}  // namespace attnkit::memory
