// The differentiable operations of the tape (tape.h). Every op computes its value at once
// (eagerly) and records a backward function; every matrix product goes through core/blas.h.
// Shapes that do not fit throw ShapeError naming both shapes. Inputs must be Vars of the
// same tape. "Rows" below are the vectors along the last dimension.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/tensor.h"

namespace attnkit::ad {

// ---- matrix products
// op(a) op(b) with op = transpose when ta / tb. a [m, k] times b [k, n] → [m, n]; a rank-3
// batch [B, m, k] times b [B, k, n] (or a shared rank-2 b, or a shared rank-2 a) → [B, m, n].
Var matmul(Var a, Var b, bool ta = false, bool tb = false);
// c + op(a) op(b), one node (a recurrent step: input projection plus h W_hhᵀ); c has the
// product's shape.
Var addmm(Var c, Var a, Var b, bool ta = false, bool tb = false);
// x Wᵀ + b: x [..., in], w [out, in], b [out] (optional) → [..., out]. The layer product.
// wt (optional): wᵀ [in, out] (Tape::param_t(w's parameter)), for the forward product
// computed as x · wt: OpenBLAS's small-matrix kernels take that form for a few rows at about
// twice the speed of x · wᵀ (packing w for every call). The same values up to rounding; the
// backward (and the gradient, which goes to w) is the same either way.
Var linear(Var x, Var w, Var b = Var(), Var wt = Var());
// c + a wᵀ for a [m, k], w [n, k] (addmm(c, a, w, false, true)) with the product computed as
// a · wt, wt = wᵀ [k, n] (Tape::param_t), as linear's wt; the gradient goes to w.
Var addmm_t(Var c, Var a, Var w, Var wt);

// ---- elementwise, with NumPy broadcasting (shapes aligned on the right, a dimension of 1
// stretches): a bias row [n] against [..., n], a per-row value [..., 1], a scalar [] or [1].
Var add(Var a, Var b);
Var sub(Var a, Var b);
Var mul(Var a, Var b);
Var div(Var a, Var b);
// a^b elementwise for a >= 0 (the NTM's sharpening w^γ with γ per row [..., 1]); the
// derivative in b uses ln a and is taken as 0 where a = 0.
Var pow(Var a, Var b);
Var add(Var a, float s);
Var mul(Var a, float s);
Var neg(Var a);

Var tanh(Var x);
Var sigmoid(Var x);
Var relu(Var x);
// The Gaussian error linear unit x Φ(x) = x (1 + erf(x/√2)) / 2 (Hendrycks & Gimpel 2016; the
// exact form, torch.nn.functional.gelu's default), derivative Φ(x) + x φ(x).
Var gelu(Var x);
Var softplus(Var x);  // ln(1 + e^x), stable for large |x|
Var exp(Var x);
Var log(Var x);   // x > 0
Var sqrt(Var x);  // x > 0
Var square(Var x);

// ---- rows (last dimension)
// Softmax of each row (max subtracted, sum in double; the attention library's softmax_rows).
Var softmax(Var x);
Var log_softmax(Var x);
// Softmax where mask (0/1, x's shape, or [rows_per_item..., n] repeated over leading
// dimensions: its size must divide x's) is 0: those weights are exactly 0; a row with every
// entry masked is all zeros, never NaN.
Var masked_softmax(Var x, const Tensor& mask);
// Cosine similarity of every row of a [..., n, d] with every row of b [..., m, d] → [..., n, m]
// (a, b rank 2, or rank 3 with the same batch): a·b / (‖a‖ε ‖b‖ε), ‖v‖ε = √(v·v + eps), so a
// zero row has cosine 0 with anything.
Var cosine(Var a, Var b, float eps = 1e-8f);
// Layer normalisation of each row: (x - mean) / √(var + eps) · gain + bias (population
// variance, in double); gain and bias [n] are optional.
Var layer_norm(Var x, Var gain = Var(), Var bias = Var(), float eps = 1e-5f);
// x / (row sum + eps), rows of non-negative weights.
Var normalize_rows(Var x, float eps = 0.0f);
// Circular convolution of each row w [..., N] with a shift kernel s [..., K] (one kernel per
// row, or one [K] for all): out_i = Σ_k s_k w_{(i - k + K/2) mod N}, i.e. s_k is the weight
// of a shift by k - K/2 (K = 3: shifts -1, 0, +1). K <= N.
Var circular_conv(Var w, Var s);

// Additive (Bahdanau) scores, fused: s[b, t] = Σ_a v_a tanh(keys[b, t, a] + q[b, a]) for keys
// [B, T, a] (the keys already projected, Wk k), q [B, a] (the projected query) and v [a]
// → [B, T]. One pass, no [B, T, a] intermediates on the tape besides the saved tanh.
// q [M, B, a] scores M queries per item at once (e.g. every decoder step under teacher
// forcing): s[m, b, t] = Σ_a v_a tanh(keys[b, t, a] + q[m, b, a]) → [M, B, T].
// skip (empty, or one flag per score in the output's order): a flagged score is not
// computed; it is the constant 0 (no gradient), for positions a mask closes anyway (the
// pointer network's: their probability is exactly 0 whatever the score).
Var additive_scores(Var keys, Var q, Var v, const std::vector<uint8_t>& skip = {});

// ---- reductions (sums accumulated in double)
Var sum(Var x);        // → shape []
Var mean(Var x);       // → shape []
Var sum_last(Var x);   // [..., n] → [..., 1]
Var mean_last(Var x);  // [..., n] → [..., 1]

// ---- indexing and shapes (axis < 0 counts from the end)
// Rows of table [V, d] at ids → [ids.size(), d], or lead + [d] when lead is given (its
// element count must be ids.size()). Backward scatter-adds. Ids outside [0, V) are a
// DataError.
Var embedding(Var table, const std::vector<int32_t>& ids, Shape lead = {});
Var concat(const std::vector<Var>& xs, int axis);
Var stack(const std::vector<Var>& xs, int axis);  // new dimension at `axis`
Var slice(Var x, int axis, int64_t begin, int64_t end);
Var index(Var x, int64_t i);  // x[i] along the first dimension
Var reshape(Var x, Shape shape);
Var transpose(Var x);                              // swaps the last two dimensions
Var permute(Var x, const std::vector<int>& perm);  // out dim i = x dim perm[i]

// ---- rows by flags (recurrences over padded batches); keep has one flag per row of a
// [rows, n] operand (rows = product of the leading dimensions).
Var select_rows(const std::vector<uint8_t>& keep, Var a, Var b);  // keep ? a : b
Var mask_rows(Var x, const std::vector<uint8_t>& keep);           // keep ? x : 0

// ---- fused recurrent pointwise steps (nn/rnn.h)
// LSTM gate activations of g [B, 4h] in PyTorch order i, f, g, o: σ, σ, tanh, σ.
Var lstm_gates(Var g);
// c' = f ⊙ c + i ⊙ g from activated gates a [B, 4h] and c [B, h].
Var lstm_cell_c(Var a, Var c);
// h' = o ⊙ tanh(c') from activated gates a [B, 4h] and c' [B, h].
Var lstm_cell_h(Var a, Var c);
// A whole LSTM layer over T steps in one node, from the input projections p [T, B, 4h]
// (W_ih x_t + b for every step, computed before in one product), the initial state h0, c0
// [B, h] and whh [4h, h]. Step s (in the order 0..T-1, or T-1..0 when reverse) is the
// composition lstm_cell_h(a, lstm_cell_c(a, c)) with a = lstm_gates(addmm(p[s], h, whh, false,
// true)). keep (empty: every step of every row; else T·B flags, keep[s·B + b]): a step whose
// flag is 0 leaves row b's state unchanged and outputs 0 there (padded batches, as
// select_rows/mask_rows). → [T + 2, B, h]: rows 0..T-1 the outputs h_s, row T the final h,
// row T+1 the final c. Backward runs the recurrence in one pass and takes whh's gradient as
// ONE product over all steps (Σ_s dg_sᵀ h_{s-1}, k = T·B) instead of T products with k = B.
Var lstm_sequence(Var p, Var h0, Var c0, Var whh, const std::vector<uint8_t>& keep = {},
                  bool reverse = false);
// GRU step (PyTorch): xp = W_ih x + b_ih, hp = W_hh h + b_hh, both [B, 3h] in order r, z, n;
// r = σ(xp_r + hp_r), z = σ(xp_z + hp_z), n = tanh(xp_n + r ⊙ hp_n), h' = (1 - z) ⊙ n + z ⊙ h.
Var gru_cell(Var xp, Var hp, Var h);
// Forward only (inference, on a tape that is not recording; Error otherwise): a whole GRU
// layer over T steps from the input projections (W_ih x + b_ih for every step, batch-major):
// the 3h columns from p_col of p [B, T, K] (a table of both directions' projections is read
// in place), W_hh [3h, h] and b_hh [3h], with the same bits as the steps gru_cell(p[:, s],
// linear(h, W_hh, b_hh), h) that nn::RecurrentEncoder records, but no node, no copy of a
// step's slice and nothing saved. keep as lstm_sequence's (T·B flags, keep[s·B + b]; a padded
// step keeps the row's state and outputs 0). h [B, h]: the initial state in, the final state
// out. Step s of row b is written to out + (b·T + s)·out_stride (h floats), so that the
// caller's [B, T, ·] output (both directions side by side) needs no further copy.
void gru_layer_forward(Tape& t, const Tensor& p, int64_t p_col, const Tensor& whh,
                       const Tensor& bhh, const std::vector<uint8_t>& keep, bool reverse, Tensor& h,
                       float* out, int64_t out_stride);

// ---- images [N, C, H, W] (PyTorch's layout and semantics; ops_conv.cpp)
struct Conv2dOptions {
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  void validate() const;  // strides and dilations >= 1, padding >= 0 (ShapeError)
};
// Cross-correlation, as torch.nn.functional.conv2d: x [N, C, H, W], w [O, C, kh, kw], b [O]
// (optional) → [N, O, Ho, Wo], Ho = (H + 2 pad - dil (kh - 1) - 1) / stride + 1 (floor);
// zero padding. im2col + one gemm per image.
Var conv2d(Var x, Var w, Var b = Var(), const Conv2dOptions& o = {});
// Square windows of `kernel`, stride (0: = kernel) and zero-free padding (at most kernel/2;
// padded cells never win a max and count in an average's divisor, as PyTorch's defaults
// count_include_pad=True and ceil_mode=False). Max pooling's gradient goes to the first
// maximum of a window in row-major order; a NaN in a window wins.
Var max_pool2d(Var x, int64_t kernel, int64_t stride = 0, int64_t padding = 0);
Var avg_pool2d(Var x, int64_t kernel, int64_t stride = 0, int64_t padding = 0);
// Batch normalisation of each channel of x [N, C, H, W], as torch.nn.functional.batch_norm:
// training uses the batch's mean and biased variance over N, H, W and moves the running
// statistics [C] (mean; the unbiased variance) by `momentum` towards them; otherwise the
// running statistics are used. y = (x - mean) / sqrt(var + eps) · gamma + beta, gamma and
// beta [C] optional. Gradients reach x (through the batch statistics when training), gamma
// and beta.
Var batch_norm2d(Var x, Var gamma, Var beta, Tensor& running_mean, Tensor& running_var,
                 bool training, float momentum = 0.1f, float eps = 1e-5f);

// ---- regularisation: inverted dropout with the tape's Rng; identity (the same Var) when
// the tape is not training or p = 0. Element i is dropped (0) when the i-th 32-bit draw of
// Rng::fill_u32 is below round(p·2^32), else scaled by 1/(1-p).
Var dropout(Var x, float p);

// ---- operators
inline Var operator+(Var a, Var b) { return add(a, b); }
inline Var operator-(Var a, Var b) { return sub(a, b); }
inline Var operator*(Var a, Var b) { return mul(a, b); }
inline Var operator/(Var a, Var b) { return div(a, b); }
inline Var operator-(Var a) { return neg(a); }
inline Var operator+(Var a, float s) { return add(a, s); }
inline Var operator+(float s, Var a) { return add(a, s); }
inline Var operator-(Var a, float s) { return add(a, -s); }
inline Var operator-(float s, Var a) { return add(neg(a), s); }
inline Var operator*(Var a, float s) { return mul(a, s); }
inline Var operator*(float s, Var a) { return mul(a, s); }

}  // namespace attnkit::ad
