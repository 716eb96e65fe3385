// The model loaders' shared tail. Every family's loader reads its file, its Config's fields
// (core/fields.h) from the stored configuration, checks them, builds the net and reads the
// parameters into it; the steps the families share are here:
//
//   LoadedRam load_ram(const std::string& path) {
//     LoadedRam m;
//     m.file = nn::load_model_file(path, "ram");
//     train::in_file(path, [&] {
//       train::read_config(m.file, m.config);
//       io::check_stored([&] { m.config.validate(); }, path);
//       m.model = train::build<Ram>(m.file, m.params, m.config);
//     });
//     return m;
//   }
#pragma once

#include <memory>
#include <new>
#include <string>
#include <utility>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/config.h"
#include "attnkit/nn/build_budget.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/params.h"

namespace attnkit::train {

// Runs `body`; an Error it throws is located at `path` (the model file) before it goes on,
// and running out of memory becomes an Error that says what was being built, and from which
// file.
template <class F>
void in_file(const std::string& path, F&& body) {
  try {
    body();
  } catch (Error& e) {
    e.locate(path);
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("out of memory while building the model stored here", path);
  }
}

// Reads a Config's fields from the configuration stored in `f` (io::read_fields): a missing
// required key or a value of the wrong type is a DataError naming the file.
template <class Config>
void read_config(const nn::ModelFile& f, Config& c) {
  const io::StoredConfig s(f.config_yaml, f.file);
  io::read_fields(s, c);
}

// The net of a loaded file: Model(params, args..., rng) built in a fresh store `params`, its
// random initialisation (a fixed seed) replaced by the file's parameters (nn::get_params:
// every one present, of its shape). The building runs under the file's memory budget
// (nn::BuildBudget): a stored configuration that does not fit the tensors is refused at its
// first large tensor, before it takes gigabytes.
template <class Model, class... Args>
std::unique_ptr<Model> build(const nn::ModelFile& f, std::unique_ptr<nn::ParamStore>& params,
                             Args&&... args) {
  const nn::BuildBudget budget(f);
  params = std::make_unique<nn::ParamStore>();
  Rng init(0);
  auto model = std::make_unique<Model>(*params, std::forward<Args>(args)..., init);
  nn::get_params(f, *params);
  return model;
}

// The two entries of a loader whose `read(file, loaded)` fills all of a Loaded (train/loaded.h)
// but its file: from a path (the file kept in `file`) and from a file read already, which
// stays the caller's (`file` left empty).
template <class L, class Read>
L load_path(const std::string& path, const std::string& kind, Read read) {
  L m;
  m.file = nn::load_model_file(path, kind);
  read(m.file, m);
  return m;
}
template <class L, class Read>
L load_read(const nn::ModelFile& f, Read read) {
  L m;
  read(f, m);
  return m;
}

}  // namespace attnkit::train
