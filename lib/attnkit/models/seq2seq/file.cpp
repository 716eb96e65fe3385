#include "attnkit/models/seq2seq/file.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/models/seq2seq/train.h"
#include "attnkit/nn/build_budget.h"
#include "attnkit/train/load.h"

namespace attnkit::models {

namespace {

// A Transformer's width in the stored configuration: not an option of seq2seq-train (whose
// --hidden is either type's width), stored after its keys; the loader prefers it to hidden.
constexpr const char* kWidthKey = "d-model";

}  // namespace

std::string seq2seq_config_yaml(const std::string& yaml, const Seq2SeqConfig& config,
                                data::Tokenization tok) {
  // The settings the run's YAML holds (none for a model built in code), the net's own
  // architecture over them, written back through seq2seq-train's field list: a key the run
  // gave keeps its place and text unless the net's value differs (a float's dropout).
  YAML::Node y = yaml.empty() ? YAML::Node(YAML::NodeType::Map) : YAML::Load(yaml);
  if (!y.IsMap()) throw Error("the configuration to store is not a YAML map");
  Seq2SeqSettings s;
  io::read_present_fields(io::StoredConfig(yaml, "the configuration to store"), s);
  s.set_net(config);
  s.data.tokens = data::tokenization_name(tok);
  io::write_fields(y, s);
  if (config.type == ModelType::Transformer) y[kWidthKey] = std::to_string(config.d_model);
  y.SetStyle(YAML::EmitterStyle::Block);
  YAML::Emitter e;
  e << y;
  return std::string(e.c_str()) + "\n";
}

void put_seq2seq(nn::ModelFile& m, const Seq2SeqConfig& config, const data::Vocab& source,
                 const data::Vocab& target, data::Tokenization tok) {
  m.config_yaml = seq2seq_config_yaml(m.config_yaml, config, tok);
  m.texts["vocab.source"] = source.format();
  m.texts["vocab.target"] = target.format();
}

namespace {

// The settings of a file written before the architecture moved into the YAML: its
// "seq2seq.model" lines ("key=value", the older '_' keys renamed) and its tokenisation, as
// YAML for the field list to read.
std::string legacy_yaml(const nn::ModelFile& m) {
  std::map<std::string, std::string> kv;
  for (const std::string& line : m.string_list("seq2seq.model")) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) throw DataError("malformed model setting '" + line + "'");
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  const auto& toks = m.string_list("seq2seq.tokens");
  if (toks.size() != 2 || toks[0] != toks[1])
    throw DataError("seq2seq.tokens must name one tokenisation twice");
  kv["tokens"] = toks[0];
  io::check_stored([&] { Seq2SeqConfig::upgrade_keys(kv); }, m.file);
  YAML::Node y(YAML::NodeType::Map);
  for (const auto& [k, v] : kv) y[k] = v;
  YAML::Emitter e;
  e << y;
  return e.c_str();
}

}  // namespace

namespace {

// Everything of `b` but its file, from `m`.
void read_seq2seq(const nn::ModelFile& m, LoadedSeq2Seq& b) {
  train::in_file(m.file, [&] {
    const io::StoredConfig stored(m.strings.count("seq2seq.model") ? legacy_yaml(m) : m.config_yaml,
                                  m.file);
    Seq2SeqSettings s;  // seq2seq-train's field list: its keys, as the file stores them
    io::read_fields(stored, s);
    Seq2SeqConfig& c = b.config;
    c = s.config();
    // A Transformer's width: put_seq2seq's "d-model" (also seq2seq-train's option before it
    // became --hidden), else --hidden.
    if (stored.has(kWidthKey)) c.d_model = stored.get<int64_t>(kWidthKey);
    io::check_stored([&] { b.source_tok = b.target_tok = data::parse_tokenization(s.data.tokens); },
                     m.file);
    b.source_vocab = data::Vocab::parse(m.text("vocab.source"), m.file + " (source vocabulary)");
    b.target_vocab = data::Vocab::parse(m.text("vocab.target"), m.file + " (target vocabulary)");
    c.src_vocab = b.source_vocab.size(), c.tgt_vocab = b.target_vocab.size();
    if (stored.get<int64_t>("src-vocab", c.src_vocab) != c.src_vocab ||
        stored.get<int64_t>("tgt-vocab", c.tgt_vocab) != c.tgt_vocab)
      throw DataError("the vocabularies do not match the model's sizes");
    io::check_stored([&] { c.validate(); }, m.file);
    const nn::BuildBudget budget(m);  // the configuration must fit the tensors
    b.model = Seq2Seq::create(c, 0);
    nn::get_params(m, b.model->params());
  });
}

}  // namespace

LoadedSeq2Seq get_seq2seq(const nn::ModelFile& m) {
  return train::load_read<LoadedSeq2Seq>(m, read_seq2seq);
}

LoadedSeq2Seq load_seq2seq(const std::string& path) {
  return train::load_path<LoadedSeq2Seq>(path, "seq2seq", read_seq2seq);
}

std::string detokenize(const std::vector<std::string>& tokens, data::Tokenization t) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i && t == data::Tokenization::Words) out += ' ';
    out += tokens[i];
  }
  return out;
}

std::string target_text(const LoadedSeq2Seq& b, const std::vector<int32_t>& ids) {
  std::vector<std::string> toks;
  for (int32_t id : ids) {
    if (id == data::Vocab::kEos) break;
    if (id == data::Vocab::kPad || id == data::Vocab::kBos) continue;
    toks.push_back(b.target_vocab.token(id));
  }
  return detokenize(toks, b.target_tok);
}

std::vector<int32_t> encode_source(const LoadedSeq2Seq& b, const std::string& line,
                                   int64_t max_len) {
  std::vector<int32_t> ids = b.source_vocab.encode(data::tokenize(line, b.source_tok));
  if (max_len > 0 && static_cast<int64_t>(ids.size()) > max_len - 1)
    ids.resize(static_cast<size_t>(max_len - 1));
  ids.push_back(data::Vocab::kEos);
  return ids;
}

std::vector<Translation> translate_all(const Seq2Seq& model,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const DecodeOptions& opt, int threads) {
  std::vector<Translation> out(sources.size());
  parallel_for(
      static_cast<int64_t>(sources.size()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          out[static_cast<size_t>(i)] = model.translate(sources[static_cast<size_t>(i)], opt);
      },
      threads);
  return out;
}

}  // namespace attnkit::models
