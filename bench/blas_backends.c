/* sgemm C = A B (row-major, n x n, alpha 1, beta 0) through one BLAS library, chosen at build
 * time: -DUSE_DNNL (oneDNN's dnnl_sgemm), -DUSE_BLIS (BLIS's typed API), else OpenBLAS's
 * cblas_sgemm. bench/blas-backends.sh builds the three and runs them side by side.
 *   blas-backends-LIB N SECONDS   -> one TSV line: lib n threads gflops (best of 5 timings of
 *                                   at least SECONDS / 5 each); threads from the environment
 *                                   (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, BLIS_NUM_THREADS)
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

static void gemm(int n, const float* a, const float* b, float* c) {
#if defined(USE_DNNL)
  dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
#elif defined(USE_BLIS)
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, (float*)a, n, 1, (float*)b, n,
            1, &zero, c, n, 1);
#else
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
#endif
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: blas-backends-" LIB " N SECONDS\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  const double seconds = atof(argv[2]);
  if (n < 1 || seconds <= 0) {
    fprintf(stderr, "blas-backends: N and SECONDS must be positive\n");
    return 2;
  }
  const size_t nn = (size_t)n * (size_t)n;
  float *a = malloc(4 * nn), *b = malloc(4 * nn), *c = malloc(4 * nn);
  if (!a || !b || !c) return 1;
  srand(1);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = rand() / (RAND_MAX + 1.0f);
    b[i] = rand() / (RAND_MAX + 1.0f);
  }
  gemm(n, a, b, c); /* warm-up: the libraries' buffers and threads */
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const double t0 = now();
    int k = 0;
    do {
      gemm(n, a, b, c);
      ++k;
    } while (now() - t0 < seconds / 5);
    const double per = (now() - t0) / k;
    if (per < best) best = per;
  }
  double check = 0;
  for (size_t i = 0; i < nn; i += 97) check += c[i];
  const char* th = getenv("OMP_NUM_THREADS");
  printf("%s\t%d\t%s\t%.1f\t%.6g\n", LIB, n, th ? th : "-", 2.0 * n * n * (double)n / best / 1e9,
         check);
  free(a);
  free(b);
  free(c);
  return 0;
}
