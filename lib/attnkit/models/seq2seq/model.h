// Sequence-to-sequence models on the tape (autodiff + nn): an RNN encoder-decoder with
// optional attention, and the Transformer. Both train on padded, length-grouped batches
// (data/batch.h) with teacher forcing and decode one sentence at a time, greedily or with a
// beam, returning each translation's cross-attention matrix (its alignment).
//
// RNN encoder-decoder (--type rnn). Embeddings E, hidden size H, `layers` layers of GRU or
// LSTM cells; the encoder may be bi-directional, in which case its outputs (2H) are projected
// to H ("memory", one Linear without bias) and each layer's final forward and backward
// states are joined by a "bridge" Linear(2H → H) (tanh for h, none for the LSTM's c) to
// initialise the decoder; a one-directional encoder hands its final states over as they are.
// The attention kinds, for decoder state h and encoder memory m_s (both H):
//   none           no attention: the decoder reads its previous token only, the output
//                  layer reads h_t (Sutskever et al. 2014, the textbook's 10.7).
//   bahdanau       additive, Bahdanau et al. 2015 as in the textbook (11.4): the query is
//                  the top layer's previous state h_{t-1}; score = vᵀ tanh(W_k m_s + W_q
//                  h_{t-1}); the context c_t joins the token embedding as the RNN's input;
//                  output layer reads [h_t; c_t].
//   luong-dot      Luong et al. 2015 global attention with the current state h_t:
//   luong-general    dot: h_tᵀ m_s, general: h_tᵀ W_a m_s, concat: vᵀ tanh(W [h_t; m_s]);
//   luong-concat     h̃_t = tanh(W_c [c_t; h_t]) is the attentional state the output layer
//                  reads. With input feeding (default) h̃_{t-1} joins the next step's input.
//   structured     segmentation attention (Kim, Denton, Hoang & Rush 2017, section 4.2; their
//                  code's --attn crf): luong-general's scores s_j = h_tᵀ W_a m_j are the unary
//                  potentials of a linear-chain CRF over binary selections z_1..z_S of the
//                  source (attention/structured.h), with one learned 2 x 2 pairwise potential
//                  shared by every link ("attention.pairwise", zeros at the start). The
//                  weights are the marginals p(z_j = 1) normalised to sum to λ = 2 (their
//                  code's -lambda; rows that sum below 1e-10 are scaled as if they summed to
//                  1e-10); the rest is luong-general's. The alignment a translation returns
//                  is the marginals p(z_j = 1) themselves (the segments).
//   sigmoid        the paper's baseline: weights σ(s_j), independent and not normalised.
//   syntactic      syntactic attention (Kim et al. 2017, sections 3.2 and 5.1): a projective
//                  dependency CRF over the source words per decoder step, its arc potentials
//                  A[i, j] = Σ_k (W_h m_i)_k (W_g h_t + b_g)_k (W_m m_j)_k (word i heads j),
//                  A[j, j] = s_j (the root heads j) with luong-general's s_j = h_tᵀ W_a m_j;
//                  the marginals p(z_ij) by Eisner's inside-outside give each word its soft
//                  parent par_j = Σ_i p(z_ij) m_i; the context is Σ_j p_j [m_j ; par_j] with
//                  p_j = softmax(s)_j, and h̃_t = tanh(W_c [c_t; h_t]) as luong-*'s
//                  (ad::syntactic_attention). The alignment is p; Seq2Seq::syntactic_arcs
//                  gives a translation's potentials A per step (seq2seq-translate --trace).
// Padded source positions get weight exactly 0. Dropout (training only) is applied to the
// embeddings, between recurrent layers and before the output layer.
// Teacher forcing: with ratio r < 1 each target row feeds, at each step after the first, the
// gold previous token with probability r and the model's own previous argmax otherwise
// (scheduled sampling, drawn from the tape's Rng); r = 1 (the default) is pure teacher
// forcing and computes all output logits in one product.
//
// Transformer (--type transformer): Vaswani et al. 2017, post-norm layers (nn/transformer.h),
// embeddings scaled by √d_model plus the sinusoidal encoding (posenc, interleaved layout),
// dropout after that and inside each layer, padding masks on the source, a causal mask in the
// decoder's self-attention. With shared embeddings the source and target use one table
// (the vocabularies must then be one and the same) that is also the output projection
// (Press & Wolf 2017; the paper's 3.4); otherwise three separate matrices.
// The alignment of a translation is the last decoder layer's cross-attention, averaged over
// the heads.
//
// Decoding (both types): the source ends with <eos> (as in training); the target starts with
// <bos> and ends at <eos> or after max_length tokens. Greedy takes the argmax each step. Beam
// search keeps the `beam` best partial translations by summed log-probability; a hypothesis
// that emits <eos> is finished; the search ends when `beam` hypotheses are finished or at
// max_length, and the best finished one (else the best unfinished) by
//   score = log P(y | x) / lp(y),  lp(y) = ((5 + |y|) / 6)^α   (Wu et al. 2016, eq. 14)
// is returned, |y| counting the emitted tokens with <eos>. α = 0 ranks by raw log-probability
// (favouring short outputs); α = 1 is the simple per-token normalisation up to the constant 5.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/data/batch.h"
#include "attnkit/nn/rnn.h"
#include "attnkit/nn/transformer.h"

namespace attnkit::models {

enum class ModelType { RNN, Transformer };
enum class AttentionKind {
  None,
  Bahdanau,
  LuongDot,
  LuongGeneral,
  LuongConcat,
  Structured,
  Sigmoid,
  Syntactic
};

ModelType parse_model_type(const std::string& s);  // "rnn", "transformer"; ChoiceError
const char* model_type_name(ModelType t);
AttentionKind parse_attention(const std::string& s);  // none, bahdanau, luong-dot, ...
const char* attention_name(AttentionKind a);
const char* cell_name(nn::CellKind k);

struct Seq2SeqConfig {
  ModelType type = ModelType::RNN;
  int64_t src_vocab = 0, tgt_vocab = 0;
  float dropout = 0.0f;
  int layers = 1;
  // rnn
  nn::CellKind cell = nn::CellKind::LSTM;
  int64_t embed = 64, hidden = 128;
  bool bidirectional = false;
  AttentionKind attention = AttentionKind::Bahdanau;
  bool input_feeding = true;
  // transformer
  int64_t d_model = 128, heads = 4, d_ff = 512;
  bool shared_embeddings = false;

  // Renames the keys of files written before the keys were seq2seq-train's option names
  // ('_' for '-', input_feeding for its negation); the loader calls it on such files.
  static void upgrade_keys(std::map<std::string, std::string>& m);
  // Throws UsageError when sizes are out of range or inconsistent.
  void validate() const;
};

struct DecodeOptions {
  int beam = 1;                 // 1: greedy
  double length_penalty = 0.0;  // α of Wu et al.'s lp
  int64_t max_length = 50;      // target tokens emitted, <eos> included
  int64_t min_length = 0;       // <eos> is not emitted before this many tokens (benchmarks)
  // Transformer: keep each decoder layer's self-attention keys and values from step to step
  // and the cross-attention's keys and values of the source (computed once a sentence), so
  // a step costs the same at every position. false recomputes the whole prefix every step
  // (the same translations; the tests compare them).
  bool kv_cache = true;
};

struct Translation {
  std::vector<int32_t> tokens;  // without <bos>; ends with <eos> unless cut at max_length
  double log_prob = 0.0;        // log P(tokens | source)
  double score = 0.0;           // log_prob / lp
  Tensor attention;             // [tokens.size(), source length]: one row per emitted token
};

class Seq2Seq {
 public:
  virtual ~Seq2Seq() = default;
  // A model of `config`, parameters registered in its own store and drawn from rng.
  static std::unique_ptr<Seq2Seq> create(const Seq2SeqConfig& config, uint64_t seed);

  const Seq2SeqConfig& config() const { return cfg_; }
  nn::ParamStore& params() { return ps_; }
  const nn::ParamStore& params() const { return ps_; }

  // Mean cross-entropy (label smoothing ε) per target token of a batch, teacher forced as
  // described above. tokens (if given) receives the number of target tokens predicted.
  virtual ad::Var loss(ad::Tape& t, const data::Batch& batch, float label_smoothing = 0.0f,
                       float teacher_forcing = 1.0f, int64_t* tokens = nullptr) const = 0;

  // Translates one source sentence (ids ending with <eos>). Uses its own evaluation tape.
  Translation translate(const std::vector<int32_t>& source, const DecodeOptions& opt) const;

  // ---- incremental decoding interface (used by translate; beam rows are batch rows)
  struct Memory;  // the encoded source
  struct State;   // per-row decoder state
  virtual void encode(ad::Tape& t, const std::vector<int32_t>& source, Memory& mem) const = 0;
  virtual void start(ad::Tape& t, const Memory& mem, State& s) const = 0;
  // Log-probabilities [K, V] of the next token for K rows after reading `prev` (one token a
  // row), and the rows' attention over the source [K, S]; advances s.
  virtual void step(ad::Tape& t, const Memory& mem, State& s, const std::vector<int32_t>& prev,
                    Tensor& log_probs, Tensor& attention) const = 0;
  // Keeps rows `rows` of s (in that order; rows may repeat).
  virtual void reorder(State& s, const std::vector<int64_t>& rows) const = 0;

  // Syntactic attention: the arc potentials [T, S, S] of the dependency CRF at each of the T
  // decoder steps that emit `tokens` (a translation's, or any target's: teacher forced) after
  // `source` (ids ending with <eos>). UsageError for a model of another attention.
  virtual Tensor syntactic_arcs(const std::vector<int32_t>& source,
                                const std::vector<int32_t>& tokens) const;

 protected:
  explicit Seq2Seq(const Seq2SeqConfig& c) : cfg_(c) {}
  Seq2SeqConfig cfg_;
  nn::ParamStore ps_;
};

struct Seq2Seq::Memory {
  std::vector<Tensor> v;  // model-specific encoded tensors (values; the tape is cleared)
  int64_t length = 0;     // source length S
};
struct Seq2Seq::State {
  std::vector<Tensor> v;        // model-specific per-row tensors, first dimension = rows
  std::vector<int32_t> prefix;  // rows × steps so far (Transformer: the tokens read)
  int64_t rows = 1, steps = 0;
  bool kv_cache = true;  // DecodeOptions::kv_cache (Transformer: v holds the caches)
};

// Rows `rows` of t (first dimension), in that order.
Tensor take_rows(const Tensor& t, const std::vector<int64_t>& rows);

// Rows [begin, end) of a batch, the columns trimmed to the longest source and target among
// them.
data::Batch batch_rows(const data::Batch& b, int64_t begin, int64_t end);

}  // namespace attnkit::models
