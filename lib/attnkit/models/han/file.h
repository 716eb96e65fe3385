// The "han" model files that han-train writes (every architecture of models/han/model.h):
// the configuration's fields as YAML, the vocabulary (texts["vocab"], data/vocab.h's format),
// the classes in index order (strings["labels"]), arch/vocab and arch/classes, the parameters.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnkit/data/vocab.h"
#include "attnkit/models/han/model.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/params.h"
#include "attnkit/train/loaded.h"

namespace attnkit::models::han {

struct LoadedHan : train::Loaded<HanConfig, HanNet> {
  data::Vocab vocab;
  std::vector<std::string> labels;
};
// DataError naming the file for anything that does not fit.
LoadedHan load_han(const std::string& path);

}  // namespace attnkit::models::han
