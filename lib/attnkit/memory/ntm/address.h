// The Neural Turing Machine's addressing and memory equations (Graves, Wayne & Danihelka 2014,
// section 3), one step in double precision: the reference that `ntm-address` prints and the
// unit tests check the trainable model (memory/ntm/model.h) against.
//
//   content        w_c(i)  = softmax_i(β · cos(k, M_i))
//   interpolation  w_g     = g · w_c + (1 − g) · w_{t−1}
//   shift          w̃(i)   = Σ_j w_g(j) · s((i − j) mod N)      s over shifts −R … +R
//   sharpening     w(i)    = softmax_i(γ · ln(w̃(i) + floor))  (= w̃^γ / Σ w̃^γ, stably)
//   read           r       = Σ_i w(i) M_i
//   erase, add     M_i ← M_i ∘ (1 − w(i) e),  then  M_i ← M_i + w(i) a
//
// cos(u, v) = u·v / (‖u‖ε ‖v‖ε) with ‖u‖ε = √(u·u + eps): a zero row or key has cosine 0 with
// everything, so zero memory gives a uniform w_c instead of NaN. Sharpening works on logs with
// a floor, so γ = 50 does not underflow to 0/0 and β = 100 does not overflow.
#pragma once

#include <cstdint>
#include <vector>

namespace attnkit::memory {

constexpr double kNtmCosineEps = 1e-8;      // inside the norms of the cosine
constexpr double kNtmSharpenFloor = 1e-12;  // added to w̃ before its logarithm

struct AddressStages {
  std::vector<double> wc, wg, wshift, w;  // each of N
};

// One addressing step. memory is N × M row-major; key has M values; shift 2R + 1 values
// (weights of shifts −R … +R, R < N); prev N values. Sizes that do not fit are a ShapeError
// naming them; a non-finite input, β < 0, g outside [0, 1], γ < 1 or a negative shift or
// previous weight is a DataError. The shift and previous weightings are used as given (not
// renormalised): ntm-address shows what the equations do with them.
AddressStages ntm_address(const std::vector<double>& memory, int64_t n, int64_t m,
                          const std::vector<double>& key, double beta, double gate,
                          const std::vector<double>& shift, double gamma,
                          const std::vector<double>& prev);

// Cosine similarity as above.
double ntm_cosine(const double* u, const double* v, int64_t m);

// r = Σ_i w(i) M_i (M values).
std::vector<double> ntm_read(const std::vector<double>& memory, int64_t n, int64_t m,
                             const std::vector<double>& w);

// Erase then add, in place.
void ntm_write(std::vector<double>& memory, int64_t n, int64_t m, const std::vector<double>& w,
               const std::vector<double>& erase, const std::vector<double>& add);

}  // namespace attnkit::memory
