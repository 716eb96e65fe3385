#include "attnkit/models/seq2seq/file.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/nn/build_budget.h"

namespace attnkit::models {

void put_seq2seq(nn::ModelFile& m, const Seq2SeqConfig& config, const data::Vocab& source,
                 const data::Vocab& target, data::Tokenization tok) {
  // The architecture goes into the configuration YAML under seq2seq-train's option names,
  // where the options the run was given already are (the same values when seq2seq-train
  // wrote it; a model built in code gets its keys here). The vocabulary sizes are the
  // vocabularies' own.
  YAML::Node y =
      m.config_yaml.empty() ? YAML::Node(YAML::NodeType::Map) : YAML::Load(m.config_yaml);
  if (!y.IsMap()) throw Error("the configuration to store is not a YAML map");
  for (const auto& [k, v] : config.to_map())
    if (k != "src-vocab" && k != "tgt-vocab") y[k] = v;
  y["tokens"] = data::tokenization_name(tok);
  y.SetStyle(YAML::EmitterStyle::Block);
  YAML::Emitter e;
  e << y;
  m.config_yaml = std::string(e.c_str()) + "\n";
  m.texts["vocab.source"] = source.format();
  m.texts["vocab.target"] = target.format();
}

namespace {

// The architecture's key → value text: from the configuration YAML, or from the
// "seq2seq.model" lines of files written before (one "key=value" a line).
std::map<std::string, std::string> stored_settings(const nn::ModelFile& m) {
  std::map<std::string, std::string> kv;
  if (m.strings.count("seq2seq.model")) {
    for (const std::string& line : m.string_list("seq2seq.model")) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) throw DataError("malformed model setting '" + line + "'");
      kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    const auto& toks = m.string_list("seq2seq.tokens");
    if (toks.size() != 2 || toks[0] != toks[1])
      throw DataError("seq2seq.tokens must name one tokenisation twice");
    kv["tokens"] = toks[0];
    return kv;
  }
  const io::StoredConfig c(m.config_yaml, m.file);
  for (const char* k :
       {"type", "dropout", "layers", "cell", "embed", "hidden", "bidirectional", "attention",
        "no-input-feeding", "d-model", "heads", "d-ff", "shared-embeddings"})
    if (c.has(k)) kv[k] = c.get<std::string>(k);
  kv["tokens"] = c.get<std::string>("tokens");
  return kv;
}

}  // namespace

Seq2SeqBundle get_seq2seq(const nn::ModelFile& m) {
  Seq2SeqBundle b;
  try {
    std::map<std::string, std::string> kv = stored_settings(m);
    io::check_stored([&] { b.source_tok = b.target_tok = data::parse_tokenization(kv["tokens"]); },
                     m.file);
    b.source_vocab = data::Vocab::parse(m.text("vocab.source"), m.file + " (source vocabulary)");
    b.target_vocab = data::Vocab::parse(m.text("vocab.target"), m.file + " (target vocabulary)");
    const int64_t src = b.source_vocab.size(), tgt = b.target_vocab.size();
    io::check_stored([&] { Seq2SeqConfig::upgrade_keys(kv); }, m.file);
    if ((kv.count("src-vocab") && kv["src-vocab"] != std::to_string(src)) ||
        (kv.count("tgt-vocab") && kv["tgt-vocab"] != std::to_string(tgt)))
      throw DataError("the vocabularies do not match the model's sizes");
    kv["src-vocab"] = std::to_string(src);
    kv["tgt-vocab"] = std::to_string(tgt);
    Seq2SeqConfig c;
    io::check_stored([&] { c = Seq2SeqConfig::from_map(kv); }, m.file);
    const nn::BuildBudget budget(m);  // the configuration must fit the tensors
    b.model = Seq2Seq::create(c, 0);
    nn::get_params(m, b.model->params());
  } catch (Error& e) {
    e.locate(m.file);
    throw;
  }
  return b;
}

Seq2SeqBundle load_seq2seq(const std::string& path) {
  return get_seq2seq(nn::load_model_file(path, "seq2seq"));
}

std::string detokenize(const std::vector<std::string>& tokens, data::Tokenization t) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i && t == data::Tokenization::Words) out += ' ';
    out += tokens[i];
  }
  return out;
}

std::string target_text(const Seq2SeqBundle& b, const std::vector<int32_t>& ids) {
  std::vector<std::string> toks;
  for (int32_t id : ids) {
    if (id == data::Vocab::kEos) break;
    if (id == data::Vocab::kPad || id == data::Vocab::kBos) continue;
    toks.push_back(b.target_vocab.token(id));
  }
  return detokenize(toks, b.target_tok);
}

std::vector<int32_t> encode_source(const Seq2SeqBundle& b, const std::string& line,
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
