// End-To-End Memory Networks (Sukhbaatar, Szlam, Weston, Fergus 2015) and Key-Value Memory
// Networks (Miller et al. 2016) over a memory of sentences, written on the autodiff tape.
//
// A batch holds B questions, each with a memory of up to M sentences of up to J word ids
// (0 = no word; slot 0 is the most recent sentence, then older ones) and a query of up to Jq
// word ids. A sentence x_i is embedded by a table E [V, d] as m_i = Σ_j l_j ⊙ E x_ij, with
// l_j = 1 (bag of words) or a position encoding (J = words of that sentence, j = 1..J,
// k = 1..d): the paper's l_kj = (1 − j/J) − (k/d)(1 − 2j/J), or the authors' Matlab code's
// l_kj = 1 + 4 (k − (d+1)/2)(j − (J+1)/2) / (dJ), which is 2 (paper's) + (J + d + 1 − 2j −
// 2k)/(dJ): weights around 1 (as bag of words) rather than around 1/2; temporal encoding adds a
// learned row T(i) of the sentence's time index (its age; random noise spreads the ages apart).
//
// MemN2N with K hops (adjacent tying, the paper's section 2.2): tables E_0..E_K with
// A^k = E_{k-1}, C^k = E_k, B = A^1, W = C^K (and T_A^k = T_{k-1}, T_C^k = T_k):
//   u^1 = Σ_j l_j B q_j,   p^k = softmax(u^k · m^k_i),   o^k = Σ_i p^k_i c^k_i,
//   u^{k+1} = u^k + o^k,   logits = W (u^K + o^K)   (W [V, d] shares C^K's rows).
// Layer-wise tying: one A, one C (and T_A, T_C) for every hop, separate B and W [V, d], and
// u^{k+1} = H u^k + o^k with a learned H [d, d].
// Key-Value (Miller et al.): key and value embeddings K, Vv of each memory sentence, query
// embedding Q and answer W, shared over hops; q^1 = Q x, p = softmax(q^k · K Φ(x_i)),
// o = Σ p_i Vv Φ(x_i), q^{k+1} = R_k (q^k + o) with a learned R_k [d, d] per hop,
// logits = W q^{K+1}.
// Linear start (`softmax` false) replaces every hop's softmax by the identity (scores used
// as weights directly). Empty slots: by default, as the authors' code, the memory has M
// slots and the empty ones (zero vectors: score 0, nothing to read) take part in the
// softmax, p_i = e^{s_i} / (Σ_j e^{s_j} + (M − n)) over the n sentences: an attention sink
// that lets a hop find "nothing relevant". With mask_empty they get weight exactly 0. How
// a batch is padded never matters (n and M are the question's and the configuration's).
//
// Structured attention over the hops (Kim, Denton, Hoang & Rush 2017, section 4.3;
// `attention` crf): z_k, the memory hop k reads, is one state of a linear-chain CRF over the K
// hops (attention/structured.h's hop chain), with unary potentials θ_k(i) = u^1 · m^k_i and
// pairwise potentials θ_k,k+1(i, j) = c^k_i · m^{k+1}_j: MemN2N's score at hop k+1 with the
// query u^1 + c^k_i of a hard choice z_k = i, cut to first order (learned through the
// embeddings, no weights of its own). The hops' weights are the marginals p(z_k = i) (by
// forward-backward, gradients through its backward), o^k = Σ_i p(z_k = i) c^k_i and
// logits = W (u^1 + Σ_k o^k): the answer state's expectation under the chain. `unary` drops
// the pairwise potentials (independent hops, each a softmax of u^1 · m^k_i: the paper's
// "Unary CRF" column). Both mask the empty slots (no attention sink), need adjacent tying and
// no Key-Value; with linear start each hop's weights are its unary scores (masked).
// `crf-kim`: the authors' binary CRF as their code has it (harvardnlp/struct-attn
// train-qa.lua, create_binarycrf_model; K = 2 only). Tables A (E0: memory keys m and the query
// u), C (E1: keys c of hop 2), C2, C3 (E2, E3: the values of hops 1 and 2), each with its
// temporal rows (T0..T3), a learned U [d, d] with bias U_b [d], and an untied answer table
// W [V, d]; u2 = U u + U_b. The joint of the hops' choices (z1, z2) = (i, j), i ≠ j, both
// filled slots, has the log-potential θ01(i) + θ12(i, j) + θ20(j), with θ01(i) = u·m_i,
// θ12(i, j) = u·m_i + m_i·c_j + u2·c_j, θ20(j) = u2·c_j: during linear start (the code's
// epochs 1-20, and the model kept when the best held-out epoch was one of them: kim_full)
// these as they are, 2 u·m_i + m_i·c_j + 2 u2·c_j; after it the code puts a
// log-softmax on each, and since θ12's is taken over a dimension of size 1 (its [n², 1]
// column) it makes θ12 zero, while θ01's and θ20's only shift the joint by constants: the
// joint is then u·m_i + u2·c_j (still i ≠ j). The hops' weights are the joint's marginals
// (forward-backward); o = Σ_i p(z1 = i) c2_i + Σ_j p(z2 = j) c3_j and logits = W (o + u2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/nn/params.h"

namespace attnkit::memory {

enum class Tying { Adjacent, LayerWise };
// The position encoding's form (see the header comment).
enum class PeForm { Paper, Code };
// "paper" / "code"; ChoiceError otherwise.
PeForm parse_pe_form(const std::string& text);
const char* pe_form_name(PeForm f);
// "adjacent" / "layerwise" (or "layer-wise"); ChoiceError otherwise.
Tying parse_tying(const std::string& text);
const char* tying_name(Tying t);
// How the hops attend (see the header comment).
enum class HopAttention { Softmax, Unary, Crf, CrfKim };
// "softmax" / "unary" / "crf" / "crf-kim"; ChoiceError otherwise.
HopAttention parse_hop_attention(const std::string& text);
const char* hop_attention_name(HopAttention a);

struct MemN2NConfig {
  int64_t vocab = 0;              // V: word ids 0..V-1 (0 is "no word")
  int64_t dim = 20;               // d: embedding size
  int hops = 3;                   // K: 1..10
  int64_t memory = 50;            // M: the last M sentences of a story
  bool pe = false;                // position encoding (else bag of words)
  PeForm pe_form = PeForm::Code;  // its form (models saved before it existed: Paper)
  // J of the position encoding: 0, each sentence's own word count (the paper); else this
  // fixed J for every sentence and query, with word j at its position in the sentence, and
  // with te the temporal rows weighted as a word at j = J (the authors' code: sentences
  // padded to the data's longest, the time word last).
  int64_t pe_words = 0;
  bool te = false;  // temporal encoding
  Tying tying = Tying::Adjacent;
  bool kv = false;          // the Key-Value variant (its own weights; tying unused)
  bool mask_empty = false;  // empty slots get no weight (models saved before: true)
  float init_std = 0.1f;    // weights drawn from N(0, init_std²)
  HopAttention attention = HopAttention::Softmax;  // (models saved before: softmax)
  // crf-kim only: the model keeps the linear-start potentials (2 u·m_i + m_i·c_j + 2 u2·c_j)
  // after training, as the authors' code does when its best held-out epoch was one of linear
  // start (its kept copy of the net has no log-softmaxes yet); set by --keep-best.
  bool kim_full = false;
  // Rows of the temporal tables: ages 0..time_rows-1 (M plus room for random noise).
  int64_t time_rows() const { return memory + memory / 10 + 1; }
};

// The position-encoding weights [J, d]: row j-1, column k-1 holds l_kj of that form.
Tensor position_encoding(int64_t J, int64_t d, PeForm form = PeForm::Paper);

// Σ_j l_j ⊙ table[ids_j] over each row of `ids` (rows of `J` ids, 0 = no word, skipped; the
// words of a row need not be contiguous, j counts the words) → lead + [d], one op on the tape.
// With pe, l_j is the position encoding (of `form`) for that row's word count; otherwise 1.
// Ids outside [0, V) are a DataError.
// With fixed_J > 0 the encoding's J is fixed_J for every row (see MemN2NConfig::pe_words).
ad::Var encode_sentences(ad::Var table, const std::vector<int32_t>& ids, int64_t J, Shape lead,
                         bool pe, PeForm form = PeForm::Paper, int64_t fixed_J = 0);

// One batch of questions in ids (see the header comment).
struct MemBatch {
  int64_t B = 0, M = 0, J = 0, Jq = 0;
  std::vector<int32_t> story;   // [B, M, J]
  std::vector<int32_t> time;    // [B, M]: each slot's age (row of the temporal tables)
  Tensor mask;                  // [B, M]: 1 where a slot holds a sentence
  std::vector<int32_t> query;   // [B, Jq]
  std::vector<int32_t> answer;  // [B]: answer ids (targets)
};

class MemN2N {
 public:
  // Creates the parameters, initialised from N(0, init_std²) with `seed`. UsageError on a
  // configuration out of range (vocab < 2, dim < 1, hops outside 1..10, memory < 1).
  MemN2N(const MemN2NConfig& cfg, uint64_t seed);
  MemN2N(const MemN2N&) = delete;
  MemN2N& operator=(const MemN2N&) = delete;

  // Answer logits [B, V]. softmax = false is linear start. With `attention`, each hop's
  // weights over the memory slots ([B, M]) are appended.
  ad::Var forward(ad::Tape& t, const MemBatch& b, bool softmax,
                  std::vector<ad::Var>* attention = nullptr) const;

  // The weights as the authors' code holds them, for per-weight gradient clipping: each word
  // table with its temporal rows (there, time words of the same lookup table), then every
  // other matrix alone.
  std::vector<std::vector<ad::Parameter*>> weight_groups() const;

  const MemN2NConfig& config() const { return cfg_; }
  // crf-kim's potentials after training (MemN2NConfig::kim_full).
  void set_kim_full(bool full) { cfg_.kim_full = full; }
  nn::ParamStore& params() { return ps_; }
  const nn::ParamStore& params() const { return ps_; }

 private:
  ad::Var memory_embedding(ad::Tape& t, const MemBatch& b, ad::Parameter* table,
                           ad::Parameter* time) const;
  ad::Var hop(ad::Tape& t, const MemBatch& b, ad::Var u, ad::Var m, ad::Var c, bool softmax,
              std::vector<ad::Var>* attention) const;
  ad::Var structured_forward(ad::Tape& t, const MemBatch& b, bool softmax,
                             std::vector<ad::Var>* attention) const;
  ad::Var kim_forward(ad::Tape& t, const MemBatch& b, bool softmax,
                      std::vector<ad::Var>* attention) const;
  MemN2NConfig cfg_;
  nn::ParamStore ps_;
  // Adjacent: E_0..E_K, T_0..T_K (crf-kim: E0..E3, T0..T3, then W, U, U_b in mats_).
  // Layer-wise: A, C, B, W, T_A, T_C, H.
  // Key-Value: Q, K, Vv, W, T_K, T_V, R_1..R_K.
  std::vector<ad::Parameter*> tables_, times_, mats_;
};

}  // namespace attnkit::memory
