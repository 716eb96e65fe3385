/* sgemm C = A op(B) (row-major, A [M, K], C [M, N], op(B) = B [K, N] or, with T, B^T for B
 * [N, K]; alpha 1, beta 0) through one BLAS library, chosen at build time: -DUSE_DNNL (oneDNN's
 * dnnl_sgemm), -DUSE_BLIS (BLIS's typed API), else OpenBLAS's cblas_sgemm.
 * bench/blas-backends.sh builds the three and runs them side by side.
 *   blas-backends-LIB MxNxK[T] SECONDS  -> one TSV line: lib shape threads gflops checksum
 *       (best of 5 timings of at least SECONDS / 5 each); threads from the environment
 *       (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, BLIS_NUM_THREADS)
 * Inputs uniform in [0, 1); a checksum of C is printed last, so the work cannot be skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(USE_DNNL)
#include <oneapi/dnnl/dnnl.h>
#define LIB "onednn"
#elif defined(USE_BLIS)
#include <blis.h>
#define LIB "blis"
#else
#include <cblas.h>
#define LIB "openblas"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void gemm(int m, int n, int k, int tb, const float* a, const float* b, float* c) {
  const int ldb = tb ? k : n;
#if defined(USE_DNNL)
  dnnl_sgemm('N', tb ? 'T' : 'N', m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, n);
#elif defined(USE_BLIS)
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n, k, &one, (float*)a, k,
            1, (float*)b, ldb, 1, &zero, c, n, 1);
#else
  cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, k, b,
              ldb, 0.0f, c, n);
#endif
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: blas-backends-" LIB " MxNxK[T] SECONDS\n");
    return 2;
  }
  int m = 0, n = 0, k = 0, used = 0;
  const double seconds = atof(argv[2]);
  if (sscanf(argv[1], "%dx%dx%d%n", &m, &n, &k, &used) != 3 || m < 1 || n < 1 || k < 1 ||
      (argv[1][used] != 0 && (argv[1][used] != 'T' || argv[1][used + 1] != 0)) || seconds <= 0) {
    fprintf(stderr, "blas-backends: a shape MxNxK[T] and positive SECONDS, not '%s' '%s'\n",
            argv[1], argv[2]);
    return 2;
  }
  const int tb = argv[1][used] == 'T';
  float *a = malloc(4 * (size_t)m * k), *b = malloc(4 * (size_t)k * n), *c = malloc(4 * (size_t)m * n);
  if (!a || !b || !c) return 1;
  srand(1);
  for (size_t i = 0; i < (size_t)m * k; ++i) a[i] = rand() / (RAND_MAX + 1.0f);
  for (size_t i = 0; i < (size_t)k * n; ++i) b[i] = rand() / (RAND_MAX + 1.0f);
  gemm(m, n, k, tb, a, b, c); /* warm-up: the libraries' buffers and threads */
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const double t0 = now();
    int reps = 0;
    do {
      gemm(m, n, k, tb, a, b, c);
      ++reps;
    } while (now() - t0 < seconds / 5);
    const double per = (now() - t0) / reps;
    if (per < best) best = per;
  }
  double check = 0;
  for (size_t i = 0; i < (size_t)m * n; i += 97) check += c[i];
  const char* th = getenv("OMP_NUM_THREADS");
  printf("%s\t%s\t%s\t%.1f\t%.6g\n", LIB, argv[1], th ? th : "-",
         2.0 * m * n * (double)k / best / 1e9, check);
  free(a);
  free(b);
  free(c);
  return 0;
}
