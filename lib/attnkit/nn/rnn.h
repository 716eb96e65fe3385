// Recurrent cells (PyTorch's equations and gate order, so weights carry over) and
// multi-layer, optionally bi-directional encoders over a padded batch.
//
//   RNN   h' = tanh(W_ih x + W_hh h + b)
//   GRU   r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
//         n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 - z) ⊙ n + z ⊙ h
//   LSTM  i, f, g, o = σ, σ, tanh, σ of (W_ih x + W_hh h + b) split in that order;
//         c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
//
// Parameters (n inputs, m hidden units):
//   RNN   W_ih [m, n], W_hh [m, m], b [m]                  m(n + m + 1)
//   GRU   W_ih [3m, n], W_hh [3m, m], b_ih [3m], b_hh [3m] 3m(n + m + 2)
//   LSTM  W_ih [4m, n], W_hh [4m, m], b [4m]               4m(n + m + 1)
// PyTorch keeps two bias vectors b_ih and b_hh for all three; only their sum matters for the
// RNN and the LSTM's output, so those keep one (load_pytorch adds them), while the GRU needs
// both (b_hn sits inside r ⊙ (...)). Initialisation as PyTorch: U(-1/√m, 1/√m) (the single
// bias: the sum of two such draws). Training is not indifferent to the split, though: the
// two copies get the same gradient and each takes its own optimiser step, so PyTorch's sum
// moves twice as far per step (Adam: about 2·lr instead of lr) and the gradient norm that
// clipping sees counts it twice. The single bias therefore has copies = 2 (ad::Parameter),
// which makes nn's optimisers and grad_norm train it exactly as the pair (without weight
// decay); set_bias_copies(1) trains it as one vector instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/nn/layers.h"

namespace attnkit::nn {

enum class CellKind { RNN, GRU, LSTM };
CellKind parse_cell_kind(const std::string& name);  // "rnn", "gru", "lstm"; ChoiceError otherwise

struct State {
  Var h;  // [B, m]
  Var c;  // [B, m], LSTM only
};

class RecurrentCell {
 public:
  RecurrentCell(ParamStore& ps, const std::string& name, CellKind kind, int64_t input,
                int64_t hidden, Rng& rng);
  CellKind kind() const { return kind_; }
  int64_t input_size() const { return input_; }
  int64_t hidden_size() const { return hidden_; }
  int64_t gates() const;  // 1, 3, 4

  // Zero state for a batch of B.
  State zero_state(Tape& t, int64_t batch) const;
  // The input side of the gates for any number of steps at once (one gemm): x [..., n] →
  // [..., gates·m] = W_ih x + b (GRU: + b_ih).
  Var project(Tape& t, Var x) const;
  // One step from a projected input xp [B, gates·m].
  State step(Tape& t, Var xp, const State& s) const;
  // One step from a raw input x [B, n].
  State operator()(Tape& t, Var x, const State& s) const { return step(t, project(t, x), s); }

  // Sets the weights from PyTorch's weight_ih, weight_hh, bias_ih, bias_hh (same shapes as
  // torch.nn.RNNCell/GRUCell/LSTMCell). ShapeError on a mismatch.
  void load_pytorch(const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh);
  // RNN, LSTM: how many bias copies the single bias b trains as (default 2, PyTorch's pair
  // b_ih + b_hh; 1: one vector). No effect on a GRU (it keeps both). UsageError if n < 1.
  void set_bias_copies(int n);
  // RNN, LSTM: on a recording tape, the products by W_ih and W_hh use their transposes made
  // once per tape (Tape::param_t; ad::linear's wt, ad::addmm_t): about twice as fast for a
  // batch of a few rows stepped one step at a time. Same values up to rounding.
  void set_transposed_products(bool on) { transposed_ = on; }

  ad::Parameter* W_ih;
  ad::Parameter* W_hh;
  ad::Parameter* b;               // RNN, LSTM: the bias; GRU: b_ih
  ad::Parameter* b_hh = nullptr;  // GRU only

 private:
  CellKind kind_;
  int64_t input_, hidden_;
  bool transposed_ = false;
};

struct EncoderOptions {
  CellKind kind = CellKind::LSTM;
  int64_t input = 0, hidden = 0;
  int layers = 1;
  bool bidirectional = false;
  float dropout = 0.0f;  // between layers (training only)
};

// A stack of recurrent layers over a padded batch x [B, T, n] with lengths[b] <= T real
// steps per item. Layer l's cells are named `name.l<l>` and (backward direction)
// `name.l<l>_reverse`. The reverse direction reads each item from its own last real step.
class RecurrentEncoder {
 public:
  RecurrentEncoder(ParamStore& ps, const std::string& name, const EncoderOptions& opt, Rng& rng);
  struct Output {
    Var outputs;               // [B, T, dirs·m]: the last layer's h per step; 0 at padding
    std::vector<State> final;  // per layer and direction (index l·dirs + d): the state after
                               // each item's last real step (reverse: after step 0)
  };
  // lengths: one per batch item, each in [1, T]; DataError otherwise.
  Output operator()(Tape& t, Var x, const std::vector<int64_t>& lengths) const;
  // Inference with a table of inputs (a GRU encoder; Error otherwise): the first layer's
  // input projections of the rows of x [N, n] for every direction at once, [N, dirs·3m]
  // (W_ih x + b_ih of each direction in turn, one product).
  Tensor input_projections(const Tensor& x) const;
  // operator() from the first layer's input projections p [B, T, dirs·3m] (rows of
  // input_projections' table, gathered) instead of its input, on a tape that is not
  // recording (Error otherwise). The same sums as operator()'s, so the same values up to
  // rounding: BLAS may order a row's sum differently in a product of another shape.
  Output projected(Tape& t, Var p, const std::vector<int64_t>& lengths) const;
  const EncoderOptions& options() const { return opt_; }
  int directions() const { return opt_.bidirectional ? 2 : 1; }
  const RecurrentCell& cell(int layer, int dir) const {
    return cells_[static_cast<size_t>(layer * directions() + dir)];
  }

 private:
  // A GRU encoder on a tape not recording: the layers by ad::gru_layer_forward, batch-major
  // throughout; layer 0 from p0 [B, T, dirs·3m] when valid, else from x.
  Output gru_forward(Tape& t, Var x, Var p0, const std::vector<int64_t>& lengths) const;
  EncoderOptions opt_;
  std::vector<RecurrentCell> cells_;
};

}  // namespace attnkit::nn
