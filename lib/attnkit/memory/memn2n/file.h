// MemN2N model files (nn::ModelFile of kind "memn2n"): the architecture as numbers
// ("arch/vocab", "arch/dim", "arch/hops", "arch/memory", "arch/pe", "arch/te", "arch/kv",
// "arch/layerwise"), the vocabulary as text ("vocab", data::Vocab's file format), the tasks
// trained on (strings "tasks"), the parameters ("param/<name>"), and the training's
// configuration YAML for the record.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnkit/data/vocab.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/train/loaded.h"

namespace attnkit::memory {

constexpr const char* kMemN2NKind = "memn2n";

// Writes the architecture, vocabulary and tasks into m (parameters: nn::put_params).
void put_memn2n(nn::ModelFile& m, const MemN2NConfig& cfg, const data::Vocab& vocab,
                const std::vector<int>& tasks);

// The file, its Config, the net (which holds its parameters: `params` stays empty), the
// vocabulary and the tasks trained on.
struct LoadedMemN2N : train::Loaded<MemN2NConfig, MemN2N> {
  data::Vocab vocab;
  std::vector<int> tasks;
};

// A model from a file, or from a file already read, which stays the caller's (`file` is
// left empty): DataErrors name the file.
LoadedMemN2N load_memn2n(const nn::ModelFile& f);
LoadedMemN2N load_memn2n(const std::string& path);

}  // namespace attnkit::memory
