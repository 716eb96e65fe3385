// Branch-free exp and tanh that the compiler can vectorise (plain float arithmetic, no libm
// calls), and lane-wise dot products: for the softmax, the additive score, the losses, the
// recurrent cells and the optimisers. Internal to the library (not installed as an API).
#pragma once

#include <cstdint>
#include <cstring>

namespace attnkit::fastmath {

// The bits of a float. Range tests below compare bits as integers: a float comparison may
// trap (-ftrapping-math, GCC's default), and that keeps GCC from vectorising a loop with one.
inline uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
// c ? a : b without a branch (bit masks), so loops around it vectorise.
inline float select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  const uint32_t r = (float_bits(a) & m) | (float_bits(b) & ~m);
  float f;
  std::memcpy(&f, &r, sizeof f);
  return f;
}
// x < t for a negative threshold t (also true for -inf and a negative NaN).
inline bool below_negative(float x, float t) { return float_bits(x) > float_bits(t); }
// x > t for a positive threshold t.
inline bool above_positive(float x, float t) {
  return static_cast<int32_t>(float_bits(x)) > static_cast<int32_t>(float_bits(t));
}

// e^x with a relative error of about 2 ulp (Cephes expf: range reduction by ln 2 split into
// two constants, degree-5 polynomial, scale by 2^n through the exponent bits). x below
// -87.33 (e^x under the smallest normal float, -inf included) gives exactly 0; x above 88
// gives e^88. Rounding to the nearest n uses the 1.5·2^23 trick, so it needs the default
// rounding mode and no -ffast-math.
inline float fast_exp(float x) {
  const float lo = -87.3365447504f, hi = 88.0f;
  const bool under = below_negative(x, lo);
  float xc = select(under, lo, x);
  xc = select(above_positive(x, hi), hi, xc);
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
  return select(under, 0.0f, y);
}

// The same for double: e^x to about 1 ulp (Cephes exp: x = n ln 2 + r with ln 2 split in two,
// the Padé form 1 + 2 r P(r²) / (Q(r²) - r P(r²)), scale by 2^n through the exponent bits).
// x below -708 (-inf included) gives exactly 0, x above 709 gives e^709. No libm call, so a
// loop over it vectorises (the structured attention's linear-space passes).
inline uint64_t double_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline double select_double(bool c, double a, double b) {
  const uint64_t m = 0u - static_cast<uint64_t>(c);
  const uint64_t r = (double_bits(a) & m) | (double_bits(b) & ~m);
  double f;
  std::memcpy(&f, &r, sizeof f);
  return f;
}
inline double fast_exp_double(double x) {
  const double lo = -708.0, hi = 709.0, magic = 6755399441055744.0;  // 1.5 · 2^52
  const bool under = double_bits(x) > double_bits(lo);               // x < lo (negative lo)
  const bool over = static_cast<int64_t>(double_bits(x)) > static_cast<int64_t>(double_bits(hi));
  double xc = select_double(under, lo, x);
  xc = select_double(over, hi, xc);
  double fx = xc * 1.4426950408889634073599 + magic;  // n = round(x / ln 2) in the low bits
  const int64_t n = static_cast<int64_t>(double_bits(fx) - double_bits(magic));
  fx -= magic;
  double r = xc - fx * 6.93145751953125E-1;
  r = r - fx * 1.42860682030941723212E-6;
  const double z = r * r;
  const double p = r * ((1.26177193074810590878E-4 * z + 3.02994407707441961300E-2) * z +
                        9.99999999999999999910E-1);
  const double q = ((3.00198505138664455042E-6 * z + 2.52448340349684104192E-3) * z +
                    2.27265548208155028766E-1) *
                       z +
                   2.00000000000000000009E0;
  double y = 1.0 + 2.0 * (p / (q - p));
  const uint64_t bits = static_cast<uint64_t>(n + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  y *= scale;
  return select_double(under, 0.0, y);
}

// tanh x = (e^2x - 1) / (e^2x + 1) with |x| clamped to 9 (tanh 9 rounds to 1 in float);
// absolute error below 1e-7.
inline float fast_tanh(float x) {
  float xc = select(below_negative(x, -9.0f), -9.0f, x);
  xc = select(above_positive(x, 9.0f), 9.0f, xc);
  const float t = fast_exp(2.0f * xc);
  return (t - 1.0f) / (t + 1.0f);
}

// Reductions the compiler can vectorise without -ffast-math: 16 partial results (one AVX-512
// register, or two or four narrower ones) combined in a fixed order at the end, so the
// result depends only on n and the values, never on threads or timing.
constexpr int kLanes = 16;

// Σ x_i y_i over n floats.
inline float lane_dot(const float* x, const float* y, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l] * y[i + l];
  for (int l = 0; i < n; ++i, ++l) acc[l] += x[i] * y[i];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// Σ x_i over n floats, accumulated in double.
inline double lane_sum(const float* x, int64_t n) {
  double acc[kLanes / 2] = {};
  int64_t i = 0;
  for (; i + kLanes / 2 <= n; i += kLanes / 2)
    for (int l = 0; l < kLanes / 2; ++l) acc[l] += static_cast<double>(x[i + l]);
  for (int l = 0; i < n; ++i, ++l) acc[l] += static_cast<double>(x[i]);
  for (int w = kLanes / 4; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// Σ x_i y_i over n floats, accumulated in double (the lanes and order of lane_sum).
inline double lane_dot_double(const float* x, const float* y, int64_t n) {
  double acc[kLanes / 2] = {};
  int64_t i = 0;
  for (; i + kLanes / 2 <= n; i += kLanes / 2)
    for (int l = 0; l < kLanes / 2; ++l) acc[l] += static_cast<double>(x[i + l]) * y[i + l];
  for (int l = 0; i < n; ++i, ++l) acc[l] += static_cast<double>(x[i]) * y[i];
  for (int w = kLanes / 4; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// max x_i over n >= 1 floats (NaNs not propagated reliably: callers feed finite or -inf).
inline float lane_max(const float* x, int64_t n) {
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
  for (int l = 0; i < n; ++i, ++l) acc[l] = x[i] > acc[l] ? x[i] : acc[l];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] = acc[l + w] > acc[l] ? acc[l + w] : acc[l];
  return acc[0];
}

}  // namespace attnkit::fastmath

// The attention code's own name for them.
namespace attnkit::attention::detail {
using namespace attnkit::fastmath;
}  // namespace attnkit::attention::detail
