// The Neural Turing Machine (Graves, Wayne & Danihelka 2014) as a model on the tape: a
// controller (LSTM or feed-forward) reads an input row and the previous read vectors, its
// output drives read and write heads that address an N × M memory by content and location
// (memory/ntm/address.h has the equations in double precision), and the output layer sees the
// controller output and the new read vectors.
//
// One step t, batch 1 (a sequence is a [T, input] matrix):
//   h_t          = controller([x_t, r_{t−1}^1 … r_{t−1}^R])
//   per head     p = W_head h_t + b → k (M), β = softplus, g = σ, s = softmax (2R'+1 shifts),
//                γ = 1 + softplus; a write head also e = σ (M) and a = tanh or linear (M)
//   read heads   w from M_{t−1}, r = w M_{t−1}   (reads come first, then writes, in order)
//   write heads  M ← M ∘ (1 − wᵀ e), M ← M + wᵀ a
//   y_t          = W_out [h_t, r_t^1 … r_t^R] + b  (logits; σ(y) is the output)
//
// Initial state, the choices that decide whether training works:
//   memory   constant: every cell 1e-6 (default: Collier & Beel 2018 found it converges about
//                      twice as fast as the alternatives)
//            random:   U(−1/√(N+M), 1/√(N+M)), drawn once from the seed and kept fixed
//            learned:  the same draw, trained
//   weights  learned: w_0 = softmax(b_0) per head with b_0 trained, drawn N(0, 1) (default:
//                     with constant memory every row looks alike, so a uniform w_0 would stay
//                     uniform forever — the symmetry is broken only by w_0)
//            uniform: 1/N, fixed (only sensible with random or learned memory)
//   reads    r_0 trained per read head, drawn N(0, 0.01²).
//   LSTM     h_0 = c_0 = 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/fields.h"
#include "attnkit/nn/params.h"
#include "attnkit/nn/rnn.h"

namespace attnkit::memory {

struct NtmConfig {
  int64_t input = 9;                // input channels
  int64_t output = 8;               // output channels
  std::string controller = "lstm";  // lstm | feedforward
  int64_t controller_size = 100;
  int controller_layers = 1;
  int read_heads = 1;
  int write_heads = 1;
  int64_t memory_rows = 128;             // N
  int64_t memory_cols = 20;              // M
  int shift_range = 1;                   // R': shifts −R' … +R'
  std::string memory_init = "constant";  // constant | random | learned
  std::string weight_init = "learned";   // learned | uniform
  std::string add_activation = "tanh";   // tanh | linear
  // Each hyper-parameter once (core/fields.h): ntm-train's options, the stored YAML, the
  // loader (input and output come from the data).
  template <class V>
  void fields(V& v) {
    v(controller, {"controller", "KIND", "lstm or feedforward"});
    v(controller_size, {"hidden", "N", "controller units", "controller-size"});
    v(controller_layers, {"layers", "N", "controller layers", "controller-layers"});
    v(read_heads, {"read-heads", "N", "read heads"});
    v(write_heads, {"write-heads", "N", "write heads"});
    v(memory_rows, {"memory-rows", "N", "memory locations N"});
    v(memory_cols, {"memory-cols", "N", "memory width M"});
    v(shift_range, {"shift-range", "R", "shifts -R..+R"});
    v(memory_init, {"memory-init", "KIND", "constant (1e-6), random or learned"});
    v(weight_init, {"weight-init", "KIND", "initial weightings: learned or uniform"});
    v(add_activation, {"add-activation", "KIND", "tanh or linear"});
  }

  // UsageError naming the setting when a value is out of range or unknown.
  void validate() const;
  int64_t shifts() const { return 2 * shift_range + 1; }
  // Values per read / write head produced by the controller: M + 1 + 1 + shifts + 1 (+ 2M).
  int64_t read_head_size() const { return memory_cols + 3 + shifts(); }
  int64_t write_head_size() const { return read_head_size() + 2 * memory_cols; }
};

// What ntm-run --trace saves, one entry per step (T steps).
struct NtmTrace {
  std::vector<Tensor> read_w;   // [R, N] per step
  std::vector<Tensor> write_w;  // [W, N]
  std::vector<Tensor> erase;    // [W, M]
  std::vector<Tensor> add;      // [W, M]
  std::vector<Tensor> reads;    // [R, M]
  std::vector<Tensor> memory;   // [N, M] after the step's writes
};

// The smoothing of |x| in Ntm::forward's write_change: quadratic below about this size.
constexpr float kNtmWriteChangeEps = 0.01f;

class Ntm {
 public:
  // Registers the parameters under "ntm." in ps (initialised from rng).
  Ntm(nn::ParamStore& ps, const NtmConfig& cfg, Rng& rng);
  const NtmConfig& config() const { return cfg_; }

  // Logits [T, output] for inputs [T, input]. With a trace, records every step's heads and
  // memory (the values only). With write_change, also how much the writes changed what was
  // stored, summed over steps, write heads and cells: Σ_t Σ_ij |M_ij| |ΔM_ij| with M the memory
  // before the write, ΔM = wᵀ a − (wᵀ e) ∘ M the change it makes, and each |x| smoothed near 0
  // as √(x² + ε²) − ε, ε = kNtmWriteChangeEps (ntm-train's --write-penalty). Filling empty
  // cells (|M| ≈ 0) is free; overwriting or wearing down stored values costs. A scalar Var.
  ad::Var forward(ad::Tape& t, const Tensor& inputs, NtmTrace* trace = nullptr,
                  ad::Var* write_change = nullptr) const;

  // The parameters an optimiser updates (the fixed random memory is stored but not trained).
  std::vector<ad::Parameter*> trainable() const { return trainable_; }

  // Fused addressing and write ops (memory/ntm/ops.h, the default) or the same equations as
  // about 25 elementary tape ops per head (the reference the tests compare with).
  void set_fused(bool on) { fused_ = on; }

  // One addressing step on the tape (the model's own, exposed for the tests): memory [N, M],
  // key [1, M], beta, gate, gamma [1, 1], shift [1, K], prev [1, N] → w [1, N]. The stages
  // w_c, w_g and w̃ are stored in `stages` when given.
  static ad::Var address(ad::Var memory, ad::Var key, ad::Var beta, ad::Var gate, ad::Var shift,
                         ad::Var gamma, ad::Var prev, std::vector<ad::Var>* stages = nullptr);

 private:
  NtmConfig cfg_;
  std::vector<nn::RecurrentCell> lstm_;
  std::vector<nn::Linear> ff_;
  std::vector<nn::Linear> heads_;     // read heads first, then write heads
  std::vector<nn::Linear> out_;       // one
  ad::Parameter* read0_ = nullptr;    // [R, M]
  ad::Parameter* weight0_ = nullptr;  // [R + W, N] logits (learned)
  ad::Parameter* memory0_ = nullptr;  // [N, M] (random, learned)
  std::vector<ad::Parameter*> trainable_;
  bool fused_ = true;
};

// Wrong bits of thresholded outputs: (logit > 0) != (target > 0.5), counted where mask is 1
// (mask [T] per step or the logits' shape; null: everywhere).
int64_t wrong_bits(const Tensor& logits, const Tensor& target, const Tensor* mask = nullptr);

}  // namespace attnkit::memory
