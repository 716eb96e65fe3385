#include "attnkit/core/rng.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "attnkit/core/error.h"

namespace attnkit {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Rng::uniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

void Rng::fill_u32(uint32_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const uint64_t r = next();
    out[i] = static_cast<uint32_t>(r);
    out[i + 1] = static_cast<uint32_t>(r >> 32);
  }
  if (i < n) out[i] = static_cast<uint32_t>(next());
}

double Rng::uniform_double() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform_double();  // (0, 1]: log is finite
  const double u2 = uniform_double();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * 3.14159265358979323846 * u2;
  spare_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

uint64_t Rng::below(uint64_t n) {
  // Lemire 2019: multiply-shift with rejection of the biased low range.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

std::string Rng::state() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "xoshiro256** %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64, s_[0],
                s_[1], s_[2], s_[3]);
  std::string out = buf;
  if (has_spare_) {
    uint64_t bits;
    std::memcpy(&bits, &spare_, sizeof bits);
    std::snprintf(buf, sizeof buf, " %016" PRIx64, bits);
    out += buf;
  } else {
    out += " -";
  }
  return out;
}

void Rng::set_state(const std::string& text) {
  std::istringstream in(text);
  std::string name, words[5], extra;
  in >> name >> words[0] >> words[1] >> words[2] >> words[3] >> words[4];
  if (name != "xoshiro256**" || !in || (in >> extra))
    throw DataError("bad random-number generator state '" + text.substr(0, 120) + "'");
  auto hex = [&](const std::string& w) {
    if (w.size() != 16 || w.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw DataError("bad random-number generator state '" + text.substr(0, 120) + "'");
    return static_cast<uint64_t>(std::strtoull(w.c_str(), nullptr, 16));
  };
  uint64_t s[4];
  for (int i = 0; i < 4; ++i) s[i] = hex(words[i]);
  if ((s[0] | s[1] | s[2] | s[3]) == 0)
    throw DataError("bad random-number generator state (all zero)");
  bool spare = words[4] != "-";
  double spare_value = 0.0;
  if (spare) {
    const uint64_t bits = hex(words[4]);
    std::memcpy(&spare_value, &bits, sizeof bits);
  }
  for (int i = 0; i < 4; ++i) s_[i] = s[i];
  has_spare_ = spare;
  spare_ = spare_value;
}

}  // namespace attnkit
