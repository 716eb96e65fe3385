// What a family's loader returns (train/load.h): the model file, its Config, and the net built
// from them in a parameter store of its own.
//
//   using LoadedRam = train::Loaded<RamConfig, Ram>;
//
// A family whose file holds more (a vocabulary, labels, sizes) derives from it:
//
//   struct LoadedBert : train::Loaded<BertConfig, Bert> {
//     data::Vocab vocab;
//   };
#pragma once

#include <memory>

#include "attnkit/nn/model_file.h"
#include "attnkit/nn/params.h"

namespace attnkit::train {

// A net that holds its own parameters (memn2n's, seq2seq's) leaves `params` empty.
template <class Config, class Model>
struct Loaded {
  nn::ModelFile file;
  Config config;
  std::unique_ptr<nn::ParamStore> params;
  std::unique_ptr<Model> model;
};

}  // namespace attnkit::train
