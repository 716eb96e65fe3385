#include "attnkit/models/seq2seq/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/seq2seq/detail.h"
#include "attnkit/nn/params.h"

namespace attnkit::models {

ModelType parse_model_type(const std::string& s) {
  return parse_choice<ModelType>("model type", s,
                                 {
                                     {"rnn", ModelType::RNN},
                                     {"transformer", ModelType::Transformer},
                                 });
}
const char* model_type_name(ModelType t) { return t == ModelType::RNN ? "rnn" : "transformer"; }

AttentionKind parse_attention(const std::string& s) {
  return parse_choice<AttentionKind>("attention", s,
                                     {
                                         {"none", AttentionKind::None},
                                         {"bahdanau", AttentionKind::Bahdanau},
                                         {"luong-dot", AttentionKind::LuongDot},
                                         {"luong-general", AttentionKind::LuongGeneral},
                                         {"luong-concat", AttentionKind::LuongConcat},
                                         {"structured", AttentionKind::Structured},
                                         {"sigmoid", AttentionKind::Sigmoid},
                                         {"syntactic", AttentionKind::Syntactic},
                                     });
}
const char* attention_name(AttentionKind a) {
  switch (a) {
    case AttentionKind::None:
      return "none";
    case AttentionKind::Bahdanau:
      return "bahdanau";
    case AttentionKind::LuongDot:
      return "luong-dot";
    case AttentionKind::LuongGeneral:
      return "luong-general";
    case AttentionKind::LuongConcat:
      return "luong-concat";
    case AttentionKind::Structured:
      return "structured";
    case AttentionKind::Sigmoid:
      return "sigmoid";
    case AttentionKind::Syntactic:
      return "syntactic";
  }
  return "?";
}
const char* cell_name(nn::CellKind k) {
  return k == nn::CellKind::LSTM ? "lstm" : k == nn::CellKind::GRU ? "gru" : "rnn";
}

namespace {
bool to_bool(const std::map<std::string, std::string>& m, const std::string& k, bool dflt) {
  auto it = m.find(k);
  if (it == m.end()) return dflt;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  throw UsageError("model setting '" + k + "': '" + it->second + "' is not true or false");
}
}  // namespace

void Seq2SeqConfig::upgrade_keys(std::map<std::string, std::string>& m) {
  for (const char* k : {"src_vocab", "tgt_vocab", "d_model", "d_ff", "shared_embeddings"}) {
    auto it = m.find(k);
    if (it == m.end()) continue;
    std::string key = k;
    std::replace(key.begin(), key.end(), '_', '-');
    m.emplace(key, it->second);
  }
  if (auto it = m.find("input_feeding"); it != m.end() && !m.count("no-input-feeding"))
    m["no-input-feeding"] = to_bool(m, "input_feeding", true) ? "false" : "true";
}

void Seq2SeqConfig::validate() const {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw UsageError(what);
  };
  need(src_vocab > data::Vocab::kReserved && tgt_vocab > data::Vocab::kReserved,
       "the vocabularies must hold more than the 4 reserved tokens");
  need(dropout >= 0.0f && dropout < 1.0f, "dropout must be in [0, 1)");
  need(layers >= 1 && layers <= 64, "layers must be in [1, 64]");
  if (type == ModelType::RNN) {
    need(embed >= 1 && hidden >= 1, "embed and hidden must be at least 1");
  } else {
    need(d_model >= 2 && d_model % 2 == 0,
         "hidden (the Transformer's width) must be even and at least 2");
    need(heads >= 1 && d_model % heads == 0, "heads (" + std::to_string(heads) +
                                                 ") must divide the width (hidden, " +
                                                 std::to_string(d_model) + ")");
    need(d_ff >= 1, "ff must be at least 1");
    need(!shared_embeddings || src_vocab == tgt_vocab,
         "shared embeddings need one vocabulary for source and target");
  }
}

std::unique_ptr<Seq2Seq> Seq2Seq::create(const Seq2SeqConfig& config, uint64_t seed) {
  config.validate();
  if (config.type == ModelType::RNN) return detail::make_rnn(config, seed);
  return detail::make_transformer(config, seed);
}

data::Batch batch_rows(const data::Batch& b, int64_t begin, int64_t end) {
  if (begin < 0 || end < begin || end > b.size())
    throw ShapeError("batch rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") of a batch of " + std::to_string(b.size()));
  data::Batch o;
  auto rows_of = [&](const data::TokenMatrix& m, const std::vector<int32_t>& len,
                     data::TokenMatrix& out, std::vector<int32_t>& out_len) {
    int64_t cols = 0;
    for (int64_t r = begin; r < end; ++r)
      cols = std::max<int64_t>(cols, len[static_cast<size_t>(r)]);
    cols = std::min(cols, m.cols);
    out.rows = end - begin;
    out.cols = cols;
    out.ids.resize(static_cast<size_t>(out.rows * cols));
    for (int64_t r = begin; r < end; ++r)
      for (int64_t j = 0; j < cols; ++j) out.at(r - begin, j) = m.at(r, j);
    out_len.assign(len.begin() + begin, len.begin() + end);
  };
  rows_of(b.source, b.source_len, o.source, o.source_len);
  rows_of(b.target, b.target_len, o.target, o.target_len);
  if (static_cast<int64_t>(b.index.size()) >= end)
    o.index.assign(b.index.begin() + begin, b.index.begin() + end);
  return o;
}

Tensor take_rows(const Tensor& t, const std::vector<int64_t>& rows) {
  Shape s = t.shape();
  const int64_t n = s.empty() ? 1 : s[0];
  const int64_t per = n ? t.size() / n : 0;
  s[0] = static_cast<int64_t>(rows.size());
  Tensor out(s);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n) throw ShapeError("take_rows: row out of range");
    std::memcpy(out.data() + static_cast<int64_t>(i) * per, t.data() + rows[i] * per,
                sizeof(float) * static_cast<size_t>(per));
  }
  return out;
}

namespace {
struct Hyp {
  std::vector<int32_t> tokens;
  std::vector<float> attention;  // tokens.size() rows of S
  double log_prob = 0.0;
};
double penalised(double log_prob, size_t len, double alpha) {
  if (alpha == 0.0) return log_prob;
  return log_prob / std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}
}  // namespace

Tensor Seq2Seq::syntactic_arcs(const std::vector<int32_t>&, const std::vector<int32_t>&) const {
  throw UsageError(
      std::string("the model's attention is ") +
      (cfg_.type == ModelType::RNN ? attention_name(cfg_.attention) : "a Transformer's") +
      ", not syntactic: it has no arc potentials");
}

Translation Seq2Seq::translate(const std::vector<int32_t>& source, const DecodeOptions& opt) const {
  if (opt.beam < 1) throw UsageError("beam must be at least 1");
  if (opt.max_length < 1) throw UsageError("max-length must be at least 1");
  if (source.empty()) throw DataError("empty source sentence");
  ad::Tape t(0);
  t.set_training(false);
  t.set_recording(false);
  Memory mem;
  encode(t, source, mem);
  t.clear();
  State s;
  start(t, mem, s);
  s.kv_cache = opt.kv_cache;
  t.clear();
  const int64_t S = mem.length;
  const size_t K = static_cast<size_t>(opt.beam);
  std::vector<Hyp> active(1), finished;
  Tensor logp, att;
  struct Cand {
    double lp;
    size_t row;
    int32_t tok;
  };
  std::vector<Cand> cands;
  for (int64_t step = 0; step < opt.max_length && !active.empty(); ++step) {
    std::vector<int32_t> prev(active.size());
    for (size_t k = 0; k < active.size(); ++k)
      prev[k] = active[k].tokens.empty() ? data::Vocab::kBos : active[k].tokens.back();
    this->step(t, mem, s, prev, logp, att);
    t.clear();
    const int64_t V = logp.dim(1);
    cands.clear();
    for (size_t k = 0; k < active.size(); ++k) {
      const float* row = logp.data() + static_cast<int64_t>(k) * V;
      // The K best tokens of this row (ties: the lower id), never <pad>/<bos>.
      std::vector<int32_t> ids;
      for (int32_t v = 0; v < V; ++v) {
        if (v == data::Vocab::kPad || v == data::Vocab::kBos) continue;
        if (v == data::Vocab::kEos && step + 1 < opt.min_length) continue;
        ids.push_back(v);
      }
      const size_t take = std::min(K, ids.size());
      std::partial_sort(
          ids.begin(), ids.begin() + static_cast<long>(take), ids.end(),
          [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      for (size_t j = 0; j < take; ++j)
        cands.push_back({active[k].log_prob + row[ids[j]], k, ids[j]});
    }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Cand& a, const Cand& b) { return a.lp > b.lp; });
    std::vector<Hyp> next;
    std::vector<int64_t> rows;
    for (const Cand& c : cands) {
      if (next.size() == K || finished.size() == K) break;
      Hyp h = active[c.row];
      h.tokens.push_back(c.tok);
      h.log_prob = c.lp;
      h.attention.insert(h.attention.end(), att.data() + static_cast<int64_t>(c.row) * S,
                         att.data() + static_cast<int64_t>(c.row + 1) * S);
      if (c.tok == data::Vocab::kEos) {
        finished.push_back(std::move(h));
      } else {
        next.push_back(std::move(h));
        rows.push_back(static_cast<int64_t>(c.row));
      }
    }
    if (finished.size() >= K) break;
    active = std::move(next);
    if (!active.empty()) reorder(s, rows);
  }
  const std::vector<Hyp>& pool = finished.empty() ? active : finished;
  size_t best = 0;
  double best_score = -INFINITY;
  for (size_t i = 0; i < pool.size(); ++i) {
    const double sc = penalised(pool[i].log_prob, pool[i].tokens.size(), opt.length_penalty);
    if (sc > best_score) best_score = sc, best = i;
  }
  Translation out;
  if (pool.empty()) return out;
  const Hyp& h = pool[best];
  out.tokens = h.tokens;
  out.log_prob = h.log_prob;
  out.score = best_score;
  out.attention = Tensor({static_cast<int64_t>(h.tokens.size()), S}, h.attention);
  return out;
}

}  // namespace attnkit::models

namespace attnkit::models::detail {

void split_target(const data::Batch& b, bool time_major, std::vector<int32_t>& in,
                  std::vector<int32_t>& out) {
  const int64_t B = b.target.rows, T = b.target.cols - 1;
  if (T < 1) throw DataError("a target batch needs at least <bos> and <eos>");
  in.assign(static_cast<size_t>(B * T), 0);
  out.assign(static_cast<size_t>(B * T), 0);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t k = 0; k < T; ++k) {
      const size_t i = static_cast<size_t>(time_major ? k * B + r : r * T + k);
      in[i] = b.target.at(r, k);
      out[i] = b.target.at(r, k + 1);
    }
}

bool source_lengths(const data::Batch& b, std::vector<int64_t>& lengths) {
  lengths.assign(b.source_len.begin(), b.source_len.end());
  bool padded = false;
  for (int64_t l : lengths) padded |= l < b.source.cols;
  return padded;
}

}  // namespace attnkit::models::detail
