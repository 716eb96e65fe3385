#include "attnkit/attention/score.h"

#include <cmath>
#include <vector>

#include "attnkit/core/choice.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::attention {

namespace {

std::string dims(int64_t r, int64_t c) {
  return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}

// Copies the rows of m into out [rows, cols], each divided by its Euclidean norm (computed
// in double); a zero row stays zero.
void unit_rows(ConstMat m, float* out) {
  for (int64_t i = 0; i < m.rows; ++i) {
    const float* row = m.data + i * m.ld;
    double ss = 0.0;
    for (int64_t c = 0; c < m.cols; ++c) ss += static_cast<double>(row[c]) * row[c];
    const float inv = ss > 0.0 ? static_cast<float>(1.0 / std::sqrt(ss)) : 0.0f;
    float* o = out + i * m.cols;
    for (int64_t c = 0; c < m.cols; ++c) o[c] = row[c] * inv;
  }
}

// The additive parameter v as a contiguous vector of d_a values, or nullptr when its shape
// is not [d_a], [1, d_a] or [d_a, 1].
const float* additive_v(const Tensor& v, int64_t d_a) {
  if (v.size() != d_a) return nullptr;
  if (v.rank() == 1) return v.data();
  if (v.rank() == 2 && (v.dim(0) == 1 || v.dim(1) == 1)) return v.data();
  return nullptr;
}

void need_shape(const Tensor& t, const char* what, int64_t r, int64_t c, const char* spelled) {
  if (t.rank() != 2 || t.dim(0) != r || t.dim(1) != c)
    throw InputShapeError(std::string(what) + " has shape " + shape_str(t.shape()) + " but needs " +
                              spelled + " = " + dims(r, c),
                          Operand::Params);
}

}  // namespace

ScoreKind parse_score_kind(const std::string& name) {
  return parse_choice<ScoreKind>("score", name,
                                 {
                                     {"dot", ScoreKind::Dot},
                                     {"scaled-dot", ScoreKind::ScaledDot},
                                     {"bilinear", ScoreKind::Bilinear},
                                     {"general", ScoreKind::Bilinear, true},
                                     {"additive", ScoreKind::Additive},
                                     {"concat", ScoreKind::Additive, true},
                                     {"cosine", ScoreKind::Cosine},
                                     {"location", ScoreKind::Location},
                                 });
}

std::string score_kind_name(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::Dot:
      return "dot";
    case ScoreKind::ScaledDot:
      return "scaled-dot";
    case ScoreKind::Bilinear:
      return "bilinear";
    case ScoreKind::Additive:
      return "additive";
    case ScoreKind::Cosine:
      return "cosine";
    case ScoreKind::Location:
      return "location";
  }
  return "?";
}

std::vector<std::string> score_param_names(ScoreKind kind) {
  if (kind == ScoreKind::Bilinear) return {"W"};
  if (kind == ScoreKind::Additive) return {"Wk", "Wq", "v"};
  if (kind == ScoreKind::Location) return {"Wa"};
  return {};
}

void check_scorer(const Scorer& s, int64_t d_q, int64_t d_k, int64_t n_k) {
  switch (s.kind) {
    case ScoreKind::Location:
      if (s.Wa.rank() != 2 || s.Wa.dim(1) != d_q || (n_k >= 0 && s.Wa.dim(0) != n_k))
        throw InputShapeError(
            "location Wa has shape " + shape_str(s.Wa.shape()) + " but needs [n_k, d_q] = " +
                (n_k >= 0 ? dims(n_k, d_q) : "[n_k, " + std::to_string(d_q) + "]"),
            Operand::Params);
      return;
    case ScoreKind::Dot:
    case ScoreKind::ScaledDot:
    case ScoreKind::Cosine:
      if (d_q != d_k)
        throw InputShapeError("Q has " + std::to_string(d_q) + " columns but K has " +
                                  std::to_string(d_k) + " (" + score_kind_name(s.kind) +
                                  " scores need the same width)",
                              Operand::Key);
      return;
    case ScoreKind::Bilinear:
      need_shape(s.W, "bilinear W", d_k, d_q, "[d_k, d_q]");
      return;
    case ScoreKind::Additive: {
      if (s.Wk.rank() != 2)
        throw InputShapeError("additive Wk has shape " + shape_str(s.Wk.shape()) +
                                  " but needs [d_a, d_k] with d_k = " + std::to_string(d_k),
                              Operand::Params);
      const int64_t d_a = s.Wk.dim(0);
      need_shape(s.Wk, "additive Wk", d_a, d_k, "[d_a, d_k]");
      need_shape(s.Wq, "additive Wq", d_a, d_q, "[d_a, d_q]");
      if (!additive_v(s.v, d_a))
        throw InputShapeError("additive v has shape " + shape_str(s.v.shape()) +
                                  " but needs [d_a] = [" + std::to_string(d_a) + "]",
                              Operand::Params);
      return;
    }
  }
}

PreparedKeys prepare_keys(const Scorer& s, ConstMat k) {
  PreparedKeys p;
  p.k = k;
  if (s.kind == ScoreKind::Cosine) {
    p.derived = Tensor({k.rows, k.cols});
    unit_rows(k, p.derived.data());
  } else if (s.kind == ScoreKind::Additive) {
    if (s.Wk.rank() != 2 || s.Wk.dim(1) != k.cols)
      throw InputShapeError("additive Wk has shape " + shape_str(s.Wk.shape()) +
                                " but needs [d_a, d_k] with d_k = " + std::to_string(k.cols),
                            Operand::Params);
    p.derived = Tensor({s.Wk.dim(0), k.rows});
    gemm(Trans::No, Trans::Yes, 1.0f, mat(s.Wk), k, 0.0f, mat(p.derived));  // Wk Kᵀ
  }
  return p;
}

void score_into(const Scorer& s, ConstMat q, const PreparedKeys& keys, Mat out) {
  const ConstMat k = keys.k;
  check_scorer(s, q.cols, k.cols, k.rows);
  if (out.rows != q.rows || out.cols != k.rows)
    throw ShapeError("scores of Q " + dims(q.rows, q.cols) + " against K " + dims(k.rows, k.cols) +
                     " do not fit into " + dims(out.rows, out.cols));
  switch (s.kind) {
    case ScoreKind::Dot:
      gemm(Trans::No, Trans::Yes, 1.0f, q, k, 0.0f, out);
      return;
    case ScoreKind::Location:
      gemm(Trans::No, Trans::Yes, 1.0f, q, mat(s.Wa), 0.0f, out);  // rows (Wa q_i)ᵀ
      return;
    case ScoreKind::ScaledDot: {
      const float scale =
          k.cols > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(k.cols))) : 1.0f;
      gemm(Trans::No, Trans::Yes, scale, q, k, 0.0f, out);
      return;
    }
    case ScoreKind::Bilinear: {
      Tensor qw({q.rows, k.cols});
      gemm(Trans::No, Trans::Yes, 1.0f, q, mat(s.W), 0.0f, mat(qw));  // rows (W q_i)ᵀ
      gemm(Trans::No, Trans::Yes, 1.0f, mat(qw), k, 0.0f, out);
      return;
    }
    case ScoreKind::Cosine: {
      if (keys.derived.size() != k.rows * k.cols)
        throw Error("cosine scores need keys from prepare_keys()");
      Tensor uq({q.rows, q.cols});
      unit_rows(q, uq.data());
      gemm(Trans::No, Trans::Yes, s.beta, mat(uq), mat(keys.derived), 0.0f, out);
      return;
    }
    case ScoreKind::Additive: {
      const int64_t d_a = s.Wk.dim(0), n_k = k.rows;
      if (keys.derived.rank() != 2 || keys.derived.dim(0) != d_a || keys.derived.dim(1) != n_k)
        throw Error("additive scores need keys from prepare_keys()");
      Tensor pq({q.rows, d_a});
      gemm(Trans::No, Trans::Yes, 1.0f, q, mat(s.Wq), 0.0f, mat(pq));  // Q Wqᵀ
      const float* v = additive_v(s.v, d_a);
      // Row i: s_i = Σ_c v_c tanh(pq_ic + (Wk Kᵀ)_c), the inner loop running over the keys
      // (contiguous and independent, so it vectorises).
      for (int64_t i = 0; i < q.rows; ++i) {
        float* row = out.data + i * out.ld;
        for (int64_t j = 0; j < n_k; ++j) row[j] = 0.0f;
        for (int64_t c = 0; c < d_a; ++c) {
          const float a = pq.data()[i * d_a + c], vc = v[c];
          const float* b = keys.derived.data() + c * n_k;
          for (int64_t j = 0; j < n_k; ++j) row[j] += vc * detail::fast_tanh(a + b[j]);
        }
      }
      return;
    }
  }
}

Tensor score(const Scorer& s, const Tensor& q, const Tensor& k) {
  if (q.rank() != 2)
    throw InputShapeError("Q must be a matrix, got shape " + shape_str(q.shape()), Operand::Query);
  if (k.rank() != 2)
    throw InputShapeError("K must be a matrix, got shape " + shape_str(k.shape()), Operand::Key);
  check_scorer(s, q.dim(1), k.dim(1), k.dim(0));
  Tensor out({q.dim(0), k.dim(0)});
  score_into(s, mat(q), prepare_keys(s, mat(k)), mat(out));
  return out;
}

}  // namespace attnkit::attention
