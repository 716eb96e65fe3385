// Seeded random numbers that are the same on every machine and compiler: no <random>
// distributions (their algorithms are implementation-defined).
//
// Algorithm: xoshiro256** (Blackman & Vigna 2018) whose 256-bit state is filled from the
// 64-bit seed by four steps of SplitMix64. uniform() takes the top 24 bits of a draw
// (exact float in [0, 1)); uniform_double() the top 53 bits; normal() is the Box–Muller
// transform in double precision, u1 = 1 - uniform_double() in (0, 1], u2 = uniform_double(),
// giving r·cos(2πu2) and then r·sin(2πu2) from the same pair; below(n) is Lemire's
// unbiased multiply-and-reject method.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next();             // 64 random bits
  float uniform();             // [0, 1), multiples of 2^-24
  double uniform_double();     // [0, 1), multiples of 2^-53
  double normal();             // standard normal
  uint64_t below(uint64_t n);  // uniform in [0, n); n > 0
  // n uniform 32-bit draws, two from each next() (its low half, then its high half; an odd n
  // leaves the last high half unused). In bulk, for dropout masks: a few times faster than
  // n calls of uniform().
  void fill_u32(uint32_t* out, int64_t n);

  // The whole state as text ("xoshiro256** S0 S1 S2 S3 SPARE", hex words; SPARE is the
  // cached second Box–Muller value as its 64 bits, or "-" when there is none), so that a
  // checkpoint resumes the stream exactly. set_state() throws DataError on malformed text.
  std::string state() const;
  void set_state(const std::string& text);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace attnkit
