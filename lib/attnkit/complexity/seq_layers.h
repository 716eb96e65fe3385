// Three ways to let the positions of a sequence X [N, d] exchange information — the
// comparison of d2l's "Comparing CNNs, RNNs, and Self-Attention" (exercise 8-3) — as forward
// passes whose cost can be timed:
//
//   self-attention  Y = softmax(X Xᵀ / √d) X                    O(N²·d), path length O(1)
//   convolution     Y_i = b + Σ_t X_{i + t - ⌊k/2⌋} W_t  (zero   O(k·N·d²), path length
//                   padding, d channels in and out, k taps)      O(N/k), O(log_k N) dilated
//   recurrence      H_i = tanh(X_i W_x + H_{i-1} W_h + b)       O(N·d²), path length O(N)
//
// The attention is the attention proper (through the streaming kernel, fused.h), without
// the d x d projections of a full layer: the N²·d term the comparison is about. The
// convolution is k gemms [N, d] x [d, d] on shifted rows; the recurrence one gemm for the
// inputs, then N sequential steps of a matrix-vector product.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/tensor.h"

namespace attnkit::complexity {

enum class SeqLayer { Attention, Conv, Rnn };
// "attention", "conv", "rnn"; anything else is a ChoiceError.
SeqLayer parse_seq_layer(const std::string& name);
std::string seq_layer_name(SeqLayer layer);

// Self-attention of X [N, d] with itself (queries = keys = values = X), scaled dot product.
Tensor self_attention(const Tensor& x);

// 1-D convolution of X [N, d] with weights w [k, d, d_out] (tap t maps input channels to
// output channels) and bias b [d_out], zero padding so that Y [N, d_out] is aligned with X:
// Y_i = b + Σ_t X_{i + (t - ⌊k/2⌋)·dilation} W_t. Throws ShapeError on mismatched shapes.
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, int64_t dilation = 1);

// Elman recurrence over the rows of X [N, d_in]: H_i = tanh(X_i W_x + H_{i-1} W_h + b),
// H_{-1} = 0, with w_x [d_in, d_h], w_h [d_h, d_h], b [d_h]; returns H [N, d_h].
Tensor rnn(const Tensor& x, const Tensor& w_x, const Tensor& w_h, const Tensor& b);

// The largest number of layers (attention, convolution) or steps (recurrence) a signal needs
// to travel between any two of N positions: attention 1; a stack of convolutions with kernel
// k (each layer widens the reach by k - 1): ⌈(N - 1)/(k - 1)⌉; dilated (dilation k^l at
// layer l, reach k^L after L layers): ⌈log_k N⌉; recurrence N - 1. N = 1 gives 0. Throws
// UsageError for k < 2 with a convolution.
int64_t max_path_length(SeqLayer layer, int64_t n, int64_t kernel, bool dilated = false);

// A layer with random weights (normal, std 1/√d, from seed) timed on X [N, d] (normal, from
// seed): the best wall-clock seconds of `repeat` forward passes. The result of the last pass
// is kept in *out when out is not null. With `flops`, one more pass first counts the
// floating-point operations of the matrix products the layer makes (core/blas.h's counter:
// 2mnk a gemm, 2mk a gemv): a measure of its cost that, unlike the time, does not depend on
// the machine, its load, the threads or the BLAS kernel.
double time_layer(SeqLayer layer, int64_t n, int64_t d, int64_t kernel, int repeat, uint64_t seed,
                  Tensor* out = nullptr, uint64_t* flops = nullptr);

}  // namespace attnkit::complexity
