// Model files: one file holds everything a trained model (or a training checkpoint) needs —
// its kind, the hyper-parameters as YAML, named tensors (parameters, optimiser buffers),
// string lists (vocabularies), numbers (step, epoch, best loss) and texts (RNG states).
//
//   nn::ModelFile m;
//   m.kind = "seq2seq";
//   m.config_yaml = app.config_yaml();          // hyper-parameters travel with the model
//   nn::put_params(m, store);                   // "param/<name>" tensors
//   m.texts["vocab.source"] = source_vocab.format();  // Vocab::parse reads it back
//   nn::save_model_file("model.akm", m);        // atomic
//   ...
//   nn::ModelFile m = nn::load_model_file("model.akm", "seq2seq");
//   nn::get_params(m, store);                   // shapes checked, all or nothing
//
// On disk (all integers little-endian):
//   bytes  0-7   magic "\x89AKM\r\n\x1a\n" (PNG-style: the high byte and the CR-LF / ^Z / LF
//                catch 7-bit transfers, newline conversion and `type` on text)
//   bytes  8-11  u32 format version (kModelFormatVersion; a newer one is refused)
//   bytes 12-15  u32 CRC-32 (IEEE, as zlib's crc32) of every byte from 24 to the end
//   bytes 16-23  u64 length of the rest of the file (a truncated or extended file is caught
//                before anything is parsed)
//   bytes 24-    u32 length K, then K bytes of the kind ("seq2seq");
//                u64 length A, then A bytes of a Boost.Serialization *text* archive holding
//                the metadata (config YAML, strings, numbers as IEEE-754 bit patterns,
//                texts, and the name and shape of every tensor);
//                then the tensor values, in archive order, as raw little-endian float32.
//
// Why this mix: Boost's native binary archives are not portable between platforms (their
// own header says so), and its text archives print floats as decimals (big and slow for
// millions of weights). So the structured, small part is a portable text archive, and the
// bulk is a fixed little-endian float32 layout that reads back bit for bit anywhere.
// The archived classes carry BOOST_CLASS_VERSION, so a later format can still read them.
//
// Hyper-parameters, one scheme for every kind:
//   config_yaml         the trainer's options under their flag names ("hidden: 128",
//                       "d-model: 256", "no-mask: false"), as cli::App::config_yaml() writes
//                       them; a loader reads them with io::StoredConfig (io/config.h), and
//                       --resume takes the options not given again from there.
//   numbers["arch/K"]   the architecture values that are not options' own: sizes the data
//                       decided (vocabulary, input width, image height and width, classes),
//                       and values an option resolves differently by data (memn2n's
//                       dimension and position-encoding length: it keeps its whole resolved
//                       architecture here). set_arch()/arch() below.
// Besides them: "param/<name>" tensors, "train/*" and "log/*" numbers of the training layer,
// "result/*" the final evaluation, and a kind's own run statistics or data description
// under its own prefix (e.g. bert/ masking counts, fewshot/train_classes).
//
// Errors are DataErrors naming the file: "not an attnkit model file (bad magic)",
// "unsupported model format version N", "is a ntm model, expected seq2seq", "truncated
// model file", "corrupted model file (checksum mismatch)". A damaged file never crashes,
// and never makes the reader allocate more than a small multiple of the file's own size: the
// checksum is not trusted either, every count and string length inside the metadata archive
// is checked against the characters left before anything is allocated (a Boost text archive
// reader of our own, nn/model_file.cpp), and every tensor's size against the bytes left.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::nn {

class ParamStore;
class Optimizer;

constexpr uint32_t kModelFormatVersion = 1;

struct ModelFile {
  std::string kind;                                         // "seq2seq", "ntm", "memn2n", ...
  std::string config_yaml;                                  // the hyper-parameters
  std::map<std::string, Tensor> tensors;                    // parameters, optimiser state, ...
  std::map<std::string, std::vector<std::string>> strings;  // vocabularies, token lists, ...
  std::map<std::string, double> numbers;                    // step, epoch, best loss, ...
  std::map<std::string, std::string> texts;                 // e.g. serialised RNG state

  // Typed access with a DataError naming the missing entry (and `file`, when given).
  const Tensor& tensor(const std::string& name) const;
  const std::vector<std::string>& string_list(const std::string& name) const;
  double number(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  // A number that must be a whole number in [lo, hi] (steps, epochs, sizes).
  int64_t integer(const std::string& name, int64_t lo = 0, int64_t hi = INT64_MAX) const;
  // An architecture size kept beside the options (see "Hyper-parameters" above):
  // numbers["arch/<key>"], read as a whole number in [lo, hi]; `legacy` is the number's name
  // in files written before the arch/ scheme.
  void set_arch(const std::string& key, int64_t v) { numbers["arch/" + key] = double(v); }
  int64_t arch(const std::string& key, int64_t lo, int64_t hi,
               const std::string& legacy = "") const;
  std::string file;  // set by load_model_file (for messages); not saved
};

// The file's bytes (what save_model_file writes) and their parser. `name` is used in errors.
std::string format_model_file(const ModelFile& m);
ModelFile parse_model_file(const std::string& bytes, const std::string& name,
                           const std::string& expected_kind = "");

// Writes atomically (io::AtomicFile): a failed write leaves any earlier file untouched.
void save_model_file(const std::string& path, const ModelFile& m);
// Reads and checks a model file; a non-empty expected_kind must match m.kind.
ModelFile load_model_file(const std::string& path, const std::string& expected_kind = "");

// Parameters as tensors "<prefix><name>" (default prefix "param/"). get_params checks that
// every parameter of the store is present with its shape, and that no other tensor under the
// prefix is left over, before changing anything (DataError naming the parameter).
void put_params(ModelFile& m, const ParamStore& store, const std::string& prefix = "param/");
void get_params(const ModelFile& m, ParamStore& store, const std::string& prefix = "param/");

// An optimiser's state: buffers as tensors "<prefix><param>/<slot>", the step count and base
// learning rate as numbers "<prefix>steps" and "<prefix>lr" (default prefix "optim/").
void put_optimizer(ModelFile& m, const Optimizer& opt, const std::string& prefix = "optim/");
void get_optimizer(const ModelFile& m, Optimizer& opt, const std::string& prefix = "optim/");

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) of a byte range, continuing from `crc`.
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace attnkit::nn
