#include "attnkit/models/seq2seq_file.h"

#include <map>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"

namespace attnkit::models {

void put_seq2seq(nn::ModelFile& m, const Seq2SeqConfig& config, const data::Vocab& source,
                 const data::Vocab& target, data::Tokenization source_tok,
                 data::Tokenization target_tok) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : config.to_map()) kv.push_back(k + "=" + v);
  m.strings["seq2seq.model"] = kv;
  m.strings["seq2seq.tokens"] = {data::tokenization_name(source_tok),
                                 data::tokenization_name(target_tok)};
  m.texts["vocab.source"] = source.format();
  m.texts["vocab.target"] = target.format();
}

Seq2SeqBundle get_seq2seq(const nn::ModelFile& m) {
  Seq2SeqBundle b;
  try {
    std::map<std::string, std::string> kv;
    for (const std::string& line : m.string_list("seq2seq.model")) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) throw DataError("malformed model setting '" + line + "'");
      kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    Seq2SeqConfig c;
    try {
      c = Seq2SeqConfig::from_map(kv);
    } catch (const UsageError& e) {
      throw DataError(e.what());  // a bad file, not bad usage
    }
    const auto& toks = m.string_list("seq2seq.tokens");
    if (toks.size() != 2) throw DataError("seq2seq.tokens must name two tokenisations");
    try {
      b.source_tok = data::parse_tokenization(toks[0]);
      b.target_tok = data::parse_tokenization(toks[1]);
    } catch (const UsageError& e) {
      throw DataError(e.what());  // a bad file, not bad usage
    }
    b.source_vocab = data::Vocab::parse(m.text("vocab.source"), m.file + " (source vocabulary)");
    b.target_vocab = data::Vocab::parse(m.text("vocab.target"), m.file + " (target vocabulary)");
    if (b.source_vocab.size() != c.src_vocab || b.target_vocab.size() != c.tgt_vocab)
      throw DataError("the vocabularies do not match the model's sizes");
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
