#include "attnkit/core/blas.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>

#include "attnkit/core/error.h"
#include "attnkit/core/helpers.h"

namespace attnkit {

namespace {

std::string dims(ConstMat m) {
  return "[" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + "]";
}

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_flops{0};

void count(int64_t flops) {
  if (g_counting.load(std::memory_order_relaxed))
    g_flops.fetch_add(static_cast<uint64_t>(flops), std::memory_order_relaxed);
}

std::atomic<bool> g_recording{false};
std::mutex g_record_mutex;
std::vector<GemmCall> g_calls;

void record(const GemmCall& c) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_record_mutex);
  g_calls.push_back(c);
}

void check_view(ConstMat m, const char* name) {
  if (m.rows < 0 || m.cols < 0 || m.ld < std::max<int64_t>(1, m.cols))
    throw ShapeError(std::string("invalid matrix view ") + name + " " + dims(m) +
                     " with leading dimension " + std::to_string(m.ld));
}

}  // namespace

ConstMat mat(const Tensor& t) {
  if (t.rank() == 2) return {t.data(), t.dim(0), t.dim(1), std::max<int64_t>(1, t.dim(1))};
  if (t.rank() == 1) return {t.data(), 1, t.dim(0), std::max<int64_t>(1, t.dim(0))};
  throw ShapeError("expected a matrix, got shape " + shape_str(t.shape()));
}

Mat mat(Tensor& t) {
  ConstMat m = mat(static_cast<const Tensor&>(t));
  return {t.data(), m.rows, m.cols, m.ld};
}

ConstMat mat(const Tensor& t, int64_t b) {
  if (t.rank() != 3) {
    if (b == 0) return mat(t);
    throw ShapeError("expected a batch of matrices, got shape " + shape_str(t.shape()));
  }
  if (b < 0 || b >= t.dim(0))
    throw ShapeError("batch item " + std::to_string(b) + " out of range for shape " +
                     shape_str(t.shape()));
  int64_t r = t.dim(1), c = t.dim(2);
  return {t.data() + b * r * c, r, c, std::max<int64_t>(1, c)};
}

Mat mat(Tensor& t, int64_t b) {
  ConstMat m = mat(static_cast<const Tensor&>(t), b);
  return {const_cast<float*>(m.data), m.rows, m.cols, m.ld};
}

void gemm(Trans ta, Trans tb, float alpha, ConstMat a, ConstMat b, float beta, Mat c) {
  check_view(a, "A");
  check_view(b, "B");
  check_view(c, "C");
  const bool at = ta == Trans::Yes, bt = tb == Trans::Yes;
  const int64_t m = at ? a.cols : a.rows, k = at ? a.rows : a.cols;
  const int64_t kb = bt ? b.cols : b.rows, n = bt ? b.rows : b.cols;
  if (k != kb || c.rows != m || c.cols != n)
    throw ShapeError("gemm: op(A) " + std::string("[") + std::to_string(m) + ", " +
                     std::to_string(k) + "] times op(B) [" + std::to_string(kb) + ", " +
                     std::to_string(n) + "] into C " + dims(c));
  if (m == 0 || n == 0) return;
  count(2 * m * n * k);
  record({at, bt, m, n, k, beta != 0.0f, false});
  if (k == 0) {  // BLAS leaves C untouched only for beta = 1: make it explicit
    // (beta = 0 writes zeros without reading C, as BLAS does: C may be unwritten memory)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c.data[i * c.ld + j] = beta == 0.0f ? 0.0f : c.data[i * c.ld + j] * beta;
    return;
  }
  auto product = [&](int64_t mm, int64_t nn, const float* pa, const float* pb, float* pc) {
    cblas_sgemm(CblasRowMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(mm), static_cast<blasint>(nn), static_cast<blasint>(k), alpha,
                pa, static_cast<blasint>(a.ld), pb, static_cast<blasint>(b.ld), beta, pc,
                static_cast<blasint>(c.ld));
  };
  const GemmPanels p = split_products() ? gemm_panels(m, n, k) : GemmPanels{};
  if (p.rows > 0) {  // op(A)'s rows [i0, i0 + rows): A's rows, or Aᵀ's (A's columns)
    parallel_chunks((m + p.rows - 1) / p.rows, [&](int64_t q) {
      const int64_t i0 = q * p.rows, mm = std::min(p.rows, m - i0);
      product(mm, n, at ? a.data + i0 : a.data + i0 * a.ld, b.data, c.data + i0 * c.ld);
    });
  } else if (p.cols > 0) {  // op(B)'s columns [j0, j0 + cols)
    parallel_chunks((n + p.cols - 1) / p.cols, [&](int64_t q) {
      const int64_t j0 = q * p.cols, nn = std::min(p.cols, n - j0);
      product(m, nn, a.data, bt ? b.data + j0 * b.ld : b.data + j0, c.data + j0);
    });
  } else {
    product(m, n, a.data, b.data, c.data);
  }
}

GemmPanels gemm_panels(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kRows = 64, kCols = 128, kMinFlops = int64_t{1} << 22;
  if (2 * m * n * k < kMinFlops) return {};
  if (m >= 2 * kRows) return {kRows, 0};
  if (n >= 2 * kCols) return {0, kCols};
  return {};
}

void gemv(Trans ta, float alpha, ConstMat a, const float* x, int64_t nx, float beta, float* y,
          int64_t ny) {
  check_view(a, "A");
  const bool at = ta == Trans::Yes;
  const int64_t m = at ? a.cols : a.rows, k = at ? a.rows : a.cols;
  if (nx != k || ny != m)
    throw ShapeError("gemv: op(A) [" + std::to_string(m) + ", " + std::to_string(k) +
                     "] times x [" + std::to_string(nx) + "] into y [" + std::to_string(ny) + "]");
  if (m == 0) return;
  count(2 * m * k);
  record({at, false, m, 1, k, beta != 0.0f, true});
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) y[i] = beta == 0.0f ? 0.0f : y[i] * beta;
    return;
  }
  cblas_sgemv(CblasRowMajor, at ? CblasTrans : CblasNoTrans, static_cast<blasint>(a.rows),
              static_cast<blasint>(a.cols), alpha, a.data, static_cast<blasint>(a.ld), x, 1, beta,
              y, 1);
}

float dot(int64_t n, const float* x, const float* y) {
  if (n <= 0) return 0.0f;
  return cblas_sdot(static_cast<blasint>(n), x, 1, y, 1);
}

void axpy(int64_t n, float alpha, const float* x, float* y) {
  if (n <= 0) return;
  cblas_saxpy(static_cast<blasint>(n), alpha, x, 1, y, 1);
}

void blas_count_flops(bool on) {
  if (on) g_flops.store(0, std::memory_order_relaxed);
  g_counting.store(on, std::memory_order_relaxed);
}

uint64_t blas_flops() { return g_flops.load(std::memory_order_relaxed); }

void blas_add_flops(int64_t flops) { count(flops); }

void blas_record_calls(bool on) {
  std::lock_guard<std::mutex> lock(g_record_mutex);
  if (on) g_calls.clear();
  g_recording.store(on, std::memory_order_relaxed);
}

std::vector<GemmCall> blas_recorded_calls() {
  std::lock_guard<std::mutex> lock(g_record_mutex);
  return g_calls;
}

std::string blas_core() {
  const char* s = openblas_get_corename();
  return s ? s : "unknown";
}

std::string blas_config() {
  const char* s = openblas_get_config();
  return s ? s : "unknown";
}

void blas_set_threads(int n) { openblas_set_num_threads(std::max(1, n)); }

int blas_threads() { return openblas_get_num_threads(); }

std::string preferred_blas_core() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  if (__builtin_cpu_supports("avx")) return "Sandybridge";
#endif
  return "";
}

namespace {
// SIMD level of an OpenBLAS x86 core name: 3 AVX-512, 2 AVX2, 1 AVX, 0 older or unknown.
int simd_level(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const char* n : {"skylakex", "cooperlake", "sapphirerapids"})
    if (name == n) return 3;
  for (const char* n : {"haswell", "zen", "skylake"})
    if (name == n) return 2;
  for (const char* n : {"sandybridge", "bulldozer", "piledriver", "steamroller", "excavator"})
    if (name == n) return 1;
  return 0;
}
}  // namespace

bool blas_core_is_weaker(const std::string& running, const std::string& preferred) {
  return !preferred.empty() && simd_level(running) < simd_level(preferred);
}

}  // namespace attnkit
