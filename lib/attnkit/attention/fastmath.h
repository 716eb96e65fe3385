// Branch-free exp and tanh that the compiler can vectorise (plain float arithmetic, no libm
// calls), for the softmax and the additive score. Internal to lib/attnkit/attention.
#pragma once

#include <cstdint>
#include <cstring>

namespace attnkit::attention::detail {

// e^x with a relative error of about 2 ulp (Cephes expf: range reduction by ln 2 split into
// two constants, degree-5 polynomial, scale by 2^n through the exponent bits). x below
// -87.33 (e^x under the smallest normal float, -inf included) gives exactly 0; x above 88
// gives e^88. Rounding to the nearest n uses the 1.5·2^23 trick, so it needs the default
// rounding mode and no -ffast-math.
inline float fast_exp(float x) {
  const float lo = -87.3365447504f, hi = 88.0f;
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  float fx = xc * 1.44269504088896341f + 12582912.0f;
  fx -= 12582912.0f;
  float r = xc - fx * 0.693359375f;
  r = r - fx * -2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(fx) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  y *= scale;
  return x < lo ? 0.0f : y;
}

// tanh x = (e^2x - 1) / (e^2x + 1) with |x| clamped to 9 (tanh 9 rounds to 1 in float);
// absolute error below 1e-7.
inline float fast_tanh(float x) {
  float xc = x < -9.0f ? -9.0f : x;
  xc = xc > 9.0f ? 9.0f : xc;
  const float t = fast_exp(2.0f * xc);
  return (t - 1.0f) / (t + 1.0f);
}

}  // namespace attnkit::attention::detail
