#include "attnkit/memory/memn2n/file.h"

#include "attnkit/core/error.h"
#include "attnkit/nn/build_budget.h"
#include "attnkit/nn/params.h"

namespace attnkit::memory {

void put_memn2n(nn::ModelFile& m, const MemN2NConfig& cfg, const data::Vocab& vocab,
                const std::vector<int>& tasks) {
  m.kind = kMemN2NKind;
  m.numbers["arch/vocab"] = static_cast<double>(cfg.vocab);
  m.numbers["arch/dim"] = static_cast<double>(cfg.dim);
  m.numbers["arch/hops"] = cfg.hops;
  m.numbers["arch/memory"] = static_cast<double>(cfg.memory);
  m.numbers["arch/pe"] = cfg.pe;
  m.numbers["arch/pe_code"] = cfg.pe_form == PeForm::Code;
  m.numbers["arch/pe_words"] = static_cast<double>(cfg.pe_words);
  m.numbers["arch/te"] = cfg.te;
  m.numbers["arch/kv"] = cfg.kv;
  m.numbers["arch/mask_empty"] = cfg.mask_empty;
  m.numbers["arch/layerwise"] = cfg.tying == Tying::LayerWise;
  m.texts["vocab"] = vocab.format();
  std::vector<std::string> t;
  for (int x : tasks) t.push_back(std::to_string(x));
  m.strings["tasks"] = t;
}

LoadedMemN2N load_memn2n(const nn::ModelFile& m) {
  try {
    if (m.kind != kMemN2NKind) throw DataError("is a " + m.kind + " model, expected memn2n");
    MemN2NConfig cfg;
    cfg.vocab = m.integer("arch/vocab", 2, 1 << 24);
    cfg.dim = m.integer("arch/dim", 1, 1 << 16);
    cfg.hops = static_cast<int>(m.integer("arch/hops", 1, 10));
    cfg.memory = m.integer("arch/memory", 1, 1 << 20);
    cfg.pe = m.integer("arch/pe", 0, 1) != 0;
    // models saved before the form was a choice used the paper's
    cfg.pe_form = m.numbers.count("arch/pe_code") && m.integer("arch/pe_code", 0, 1)
                      ? PeForm::Code
                      : PeForm::Paper;
    // models saved before it existed: each sentence's own J
    cfg.pe_words = m.numbers.count("arch/pe_words") ? m.integer("arch/pe_words", 0, 1 << 20) : 0;
    cfg.te = m.integer("arch/te", 0, 1) != 0;
    cfg.kv = m.integer("arch/kv", 0, 1) != 0;
    // models saved before the choice existed masked the empty slots
    cfg.mask_empty = !m.numbers.count("arch/mask_empty") || m.integer("arch/mask_empty", 0, 1);
    cfg.tying = m.integer("arch/layerwise", 0, 1) ? Tying::LayerWise : Tying::Adjacent;
    LoadedMemN2N out;
    out.vocab = data::Vocab::parse(m.text("vocab"), m.file.empty() ? "vocab" : m.file);
    if (out.vocab.size() != cfg.vocab)
      throw DataError("the vocabulary has " + std::to_string(out.vocab.size()) +
                      " words, the model " + std::to_string(cfg.vocab));
    for (const std::string& s : m.string_list("tasks")) out.tasks.push_back(std::stoi(s));
    const nn::BuildBudget budget(m);  // the configuration must fit the tensors
    out.model = std::make_unique<MemN2N>(cfg, 0);
    nn::get_params(m, out.model->params());
    return out;
  } catch (Error& e) {
    e.locate(m.file);
    throw;
  } catch (const std::logic_error&) {
    throw DataError("bad task list in the model", m.file);
  }
}

LoadedMemN2N load_memn2n(const std::string& path) {
  return load_memn2n(nn::load_model_file(path, kMemN2NKind));
}

}  // namespace attnkit::memory
