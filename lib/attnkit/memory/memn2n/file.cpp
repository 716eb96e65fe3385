#include "attnkit/memory/memn2n/file.h"

#include <functional>
#include <utility>

#include "attnkit/core/error.h"
#include "attnkit/nn/build_budget.h"
#include "attnkit/nn/params.h"
#include "attnkit/train/load.h"

namespace attnkit::memory {

namespace {

// One architecture number of the model file ("arch/<key>", a whole number in [lo, hi]).
// A file that lacks an optional one (written before it existed) loads with `absent`.
struct ArchField {
  const char* key = nullptr;
  int64_t lo = 0, hi = 0;
  bool optional = false;
  int64_t absent = 0;
  bool omit_absent = false;  // not written when the value is `absent` (files stay as before)
  std::function<int64_t()> get;
  std::function<void(int64_t)> set;
};

// Every stored hyper-parameter of the Config, each key once: put_memn2n writes this list and
// load_memn2n reads it.
std::vector<ArchField> arch_fields(MemN2NConfig& c) {
  auto number = [](int64_t& m) {
    return std::make_pair(std::function<int64_t()>([&m] { return m; }),
                          std::function<void(int64_t)>([&m](int64_t v) { m = v; }));
  };
  auto flag = [](bool& m) {
    return std::make_pair(std::function<int64_t()>([&m] { return int64_t{m}; }),
                          std::function<void(int64_t)>([&m](int64_t v) { m = v != 0; }));
  };
  auto field = [](const char* key, int64_t lo, int64_t hi,
                  std::pair<std::function<int64_t()>, std::function<void(int64_t)>> io) {
    ArchField f;
    f.key = key, f.lo = lo, f.hi = hi;
    f.get = std::move(io.first), f.set = std::move(io.second);
    return f;
  };
  auto optional = [](ArchField f, int64_t absent, bool omit = false) {
    f.optional = true, f.absent = absent, f.omit_absent = omit;
    return f;
  };
  return {
      field("vocab", 2, 1 << 24, number(c.vocab)),
      field("dim", 1, 1 << 16, number(c.dim)),
      field("hops", 1, 10,
            {[&c] { return int64_t{c.hops}; }, [&c](int64_t v) { c.hops = static_cast<int>(v); }}),
      field("memory", 1, 1 << 20, number(c.memory)),
      field("pe", 0, 1, flag(c.pe)),
      // models saved before the form was a choice used the paper's
      optional(field("pe_code", 0, 1,
                     {[&c] { return int64_t{c.pe_form == PeForm::Code}; },
                      [&c](int64_t v) { c.pe_form = v ? PeForm::Code : PeForm::Paper; }}),
               0),
      // models saved before it existed: each sentence's own J
      optional(field("pe_words", 0, 1 << 20, number(c.pe_words)), 0),
      field("te", 0, 1, flag(c.te)),
      field("kv", 0, 1, flag(c.kv)),
      // models saved before the choice existed masked the empty slots
      optional(field("mask_empty", 0, 1, flag(c.mask_empty)), 1),
      field("layerwise", 0, 1,
            {[&c] { return int64_t{c.tying == Tying::LayerWise}; },
             [&c](int64_t v) { c.tying = v ? Tying::LayerWise : Tying::Adjacent; }}),
      // 0 softmax, 1 unary, 2 crf, 3 crf-kim; not written for softmax (those files are as
      // before)
      optional(field("attention", 0, 3,
                     {[&c] { return static_cast<int64_t>(c.attention); },
                      [&c](int64_t v) { c.attention = static_cast<HopAttention>(v); }}),
               0, true),
      // crf-kim's linear-start potentials kept (model.h); not written when 0
      optional(field("kim_full", 0, 1, flag(c.kim_full)), 0, true),
  };
}

}  // namespace

void put_memn2n(nn::ModelFile& m, const MemN2NConfig& cfg, const data::Vocab& vocab,
                const std::vector<int>& tasks) {
  m.kind = kMemN2NKind;
  MemN2NConfig c = cfg;
  for (const ArchField& f : arch_fields(c)) {
    const int64_t v = f.get();
    if (!(f.omit_absent && v == f.absent)) m.set_arch(f.key, v);
  }
  m.texts["vocab"] = vocab.format();
  std::vector<std::string> t;
  for (int x : tasks) t.push_back(std::to_string(x));
  m.strings["tasks"] = t;
}

namespace {

// Everything of `m` but its file, from `f`.
void read_memn2n(const nn::ModelFile& f, LoadedMemN2N& m) {
  const std::string& path = f.file;
  train::in_file(path, [&] {
    if (f.kind != kMemN2NKind) throw DataError("is a " + f.kind + " model, expected memn2n");
    for (const ArchField& a : arch_fields(m.config))
      a.set(a.optional && !f.numbers.count(std::string("arch/") + a.key)
                ? a.absent
                : f.arch(a.key, a.lo, a.hi));
    m.vocab = data::Vocab::parse(f.text("vocab"), path.empty() ? "vocab" : path);
    if (m.vocab.size() != m.config.vocab)
      throw DataError("the vocabulary has " + std::to_string(m.vocab.size()) +
                      " words, the model " + std::to_string(m.config.vocab));
    try {
      for (const std::string& s : f.string_list("tasks")) m.tasks.push_back(std::stoi(s));
    } catch (const std::logic_error&) {
      throw DataError("bad task list in the model");
    }
    const nn::BuildBudget budget(f);  // the configuration must fit the tensors
    m.model = std::make_unique<MemN2N>(m.config, 0);
    nn::get_params(f, m.model->params());
  });
}

}  // namespace

LoadedMemN2N load_memn2n(const nn::ModelFile& f) {
  return train::load_read<LoadedMemN2N>(f, read_memn2n);
}

LoadedMemN2N load_memn2n(const std::string& path) {
  return train::load_path<LoadedMemN2N>(path, kMemN2NKind, read_memn2n);
}

}  // namespace attnkit::memory
