// Attention scores s_ij of every query q_i (a row of Q, [n_q, d_q]) against every key k_j
// (a row of K, [n_k, d_k]), as an [n_q, n_k] matrix. Every matrix product goes through the
// BLAS boundary (core/blas.h).
//
//   dot         s_ij = q_i · k_j                          Q Kᵀ, needs d_q = d_k
//   scaled-dot  s_ij = q_i · k_j / √d_k                   Vaswani et al. 2017
//   bilinear    s_ij = k_jᵀ W q_i,  W [d_k, d_q]          Luong "general": (Q Wᵀ) Kᵀ
//   additive    s_ij = vᵀ tanh(Wk k_j + Wq q_i)           Bahdanau: Wk [d_a, d_k],
//                                                         Wq [d_a, d_q], v [d_a]
//   cosine      s_ij = β cos(q_i, k_j)                    NTM content addressing; a zero
//                                                         vector has cosine 0 with anything
//   location    s_ij = (Wa q_i)_j,  Wa [n_k, d_q]         Luong's location-based score: the
//                                                         keys' contents are not used
// Luong's names are aliases: "general" = bilinear, "concat" = additive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/tensor.h"

namespace attnkit::attention {

enum class ScoreKind { Dot, ScaledDot, Bilinear, Additive, Cosine, Location };

// "dot", "scaled-dot", "bilinear" (or "general"), "additive" (or "concat"), "cosine",
// "location"; anything else is a ChoiceError (core/choice.h).
ScoreKind parse_score_kind(const std::string& name);
std::string score_kind_name(ScoreKind kind);
// The parameter arrays a score takes, by name: {"W"} for bilinear, {"Wk", "Wq", "v"} for
// additive, {"Wa"} for location, none for the others.
std::vector<std::string> score_param_names(ScoreKind kind);

// The operand an input shape error is blamed on (a tool attaches that operand's file).
enum class Operand { Query, Key, Value, Mask, Params };

// A ShapeError about inputs that do not fit together; operand() is the one blamed (the
// second of the two named: K against Q, V against K, the mask against the scores, a
// parameter array against Q or K).
class InputShapeError : public ShapeError {
 public:
  InputShapeError(const std::string& what, Operand operand) : ShapeError(what), op_(operand) {}
  Operand operand() const { return op_; }

 private:
  Operand op_;
};

// Where each operand of an attention call came from (file names; empty when not given).
struct OperandFiles {
  std::string query, key, value, mask, params;
  const std::string& of(Operand op) const {
    switch (op) {
      case Operand::Query:
        return query;
      case Operand::Key:
        return key;
      case Operand::Value:
        return value;
      case Operand::Mask:
        return mask;
      default:
        return params;
    }
  }
};

// Runs f() and gives its errors their file: an InputShapeError the file of the operand it
// blames, any other DataError (mask values other than 0/1) the mask file, when there is one.
template <class F>
auto locating_operands(const OperandFiles& files, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (InputShapeError& e) {
    e.locate(files.of(e.operand()));
    throw;
  } catch (DataError& e) {
    if (!files.mask.empty()) e.locate(files.mask);
    throw;
  }
}

// A scoring function and its parameters. Unused arrays stay empty.
struct Scorer {
  ScoreKind kind = ScoreKind::ScaledDot;
  float beta = 1.0f;  // cosine: β, the sharpness
  Tensor W;           // bilinear: [d_k, d_q]
  Tensor Wk;          // additive: [d_a, d_k]
  Tensor Wq;          // additive: [d_a, d_q]
  Tensor v;           // additive: [d_a] (also [1, d_a] or [d_a, 1])
  Tensor Wa;          // location: [n_k, d_q]
};

// Checks that queries of d_q columns and keys of d_k columns fit the scorer; throws
// InputShapeError naming both shapes ("Q has 64 columns but K has 63", "bilinear W has shape
// [3, 5] but needs [d_k, d_q] = [4, 5]"). n_k < 0 skips the location score's check of Wa's
// rows (done again by score_into).
void check_scorer(const Scorer& scorer, int64_t d_q, int64_t d_k, int64_t n_k = -1);

// Key-side work done once per key matrix and reused for every block of queries: unit rows
// for cosine, K Wkᵀ [n_k, d_a] for additive, nothing for the others.
struct PreparedKeys {
  ConstMat k{nullptr, 0, 0, 1};  // the keys as given
  Tensor derived;                // unit keys (cosine) or Wk Kᵀ (additive)
};
// Throws InputShapeError (via check_scorer) when k does not fit the scorer.
PreparedKeys prepare_keys(const Scorer& scorer, ConstMat k);

// s = scores of the queries q [n_q, d_q] against prepared keys; s is [n_q, n_k]. Throws
// InputShapeError on mismatched shapes.
void score_into(const Scorer& scorer, ConstMat q, const PreparedKeys& keys, Mat s);

// Scores of one query matrix against one key matrix: [n_q, n_k].
Tensor score(const Scorer& scorer, const Tensor& q, const Tensor& k);

}  // namespace attnkit::attention
