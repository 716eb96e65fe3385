// A trained seq2seq model as a file (nn/model_file.h, kind "seq2seq"), and the text side of
// translating with it.
//
// Besides the parameters ("param/<name>"), the file holds:
//   config_yaml  seq2seq-train's options (its field list, Seq2SeqSettings in train.h), among
//                them the architecture (type, cell, embed, hidden, layers, ...) and the
//                tokenisation of both sides ("tokens": words or chars), as every model file
//                keeps its hyper-parameters (nn/model_file.h); a Transformer's width also as
//                "d-model"
//   texts["vocab.source"], texts["vocab.target"]  the vocabularies in data::Vocab's format,
//                whose sizes are the model's
// Files written before the architecture moved into the YAML held it as "key=value" lines in
// strings["seq2seq.model"] and the tokenisations in strings["seq2seq.tokens"]; they still load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnkit/data/text.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/seq2seq/model.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/train/loaded.h"

namespace attnkit::models {

// The file, its Config, the net (which holds its parameters: `params` stays empty), the
// vocabularies and the tokenisation.
struct LoadedSeq2Seq : train::Loaded<Seq2SeqConfig, Seq2Seq> {
  data::Vocab source_vocab, target_vocab;
  data::Tokenization source_tok = data::Tokenization::Words;
  data::Tokenization target_tok = data::Tokenization::Words;
};

// The configuration YAML `yaml` (a run's options, or empty) with the net's architecture and
// the tokenisation written in, through seq2seq-train's field list: what put_seq2seq stores.
std::string seq2seq_config_yaml(const std::string& yaml, const Seq2SeqConfig& config,
                                data::Tokenization tok);
// Everything but the parameters: the architecture and the tokenisation into config_yaml
// (added to the options already there), and the vocabularies.
void put_seq2seq(nn::ModelFile& m, const Seq2SeqConfig& config, const data::Vocab& source,
                 const data::Vocab& target, data::Tokenization tok);
// A model rebuilt from a file (its parameters loaded); DataError naming the file otherwise.
// get_seq2seq reads a file already read, which stays the caller's (`file` is left empty).
LoadedSeq2Seq get_seq2seq(const nn::ModelFile& m);
LoadedSeq2Seq load_seq2seq(const std::string& path);

// Tokens back to text: words joined by single spaces, characters concatenated.
std::string detokenize(const std::vector<std::string>& tokens, data::Tokenization t);
// The target-side text of ids (stopping at <eos>, skipping <pad>/<bos>).
std::string target_text(const LoadedSeq2Seq& b, const std::vector<int32_t>& ids);
// A source line as ids ending with <eos> (unknown tokens → <unk>); max_len > 0 keeps the
// first max_len - 1 tokens.
std::vector<int32_t> encode_source(const LoadedSeq2Seq& b, const std::string& line,
                                   int64_t max_len = 0);

// Translates every source on up to `threads` threads (0: all), one tape each; the result
// does not depend on the thread count.
std::vector<Translation> translate_all(const Seq2Seq& model,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const DecodeOptions& opt, int threads = 0);

}  // namespace attnkit::models
