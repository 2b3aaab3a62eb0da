/* counting-ab.c: the counting sort (u8 and u16 keys alone) as wall clock of
 * gpuprims_radix_sort + synchronize, the input restored before each call, median of 15
 * after 3 warm-ups, the result checked sorted; run it once per library build to compare
 * them (docs/benchmarks/radix-sort.md, 2026-11-28, thirteenth session).
 *
 *   cc -O2 -Iinclude scripts/probes/counting-ab.c -o counting-ab -L<lib dir> -l:libgpuprims.so
 *   LD_LIBRARY_PATH=<lib dir> ./counting-ab [log2 n, default 28] [calls, default 18: fewer
 *   print no time, for ncu]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include "gpuprims.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
#define CK(x) do { gpuprims_status s_ = (x); if (s_) { char m_[512]; gpuprims_last_error(m_, sizeof m_); printf("%s: %s\n", #x, m_); exit(1); } } while (0)
static int reps = 18;
static void row(gpuprims_context *ctx, gpuprims_dtype dt, size_t esz, size_t n, const char *name) {
  unsigned char *h = malloc(n * esz);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n * esz; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; h[i] = (unsigned char)(x >> 24); }
  gpuprims_buffer *src, *work;
  CK(gpuprims_buffer_from_host(ctx, dt, h, n, &src));
  CK(gpuprims_buffer_from_host(ctx, dt, h, n, &work));
  double t[18];
  for (int r = 0; r < reps; r++) {
    CK(gpuprims_buffer_copy(work, src));
    CK(gpuprims_context_synchronize(ctx));
    double a = now();
    CK(gpuprims_radix_sort(ctx, work, NULL, GPUPRIMS_ORDER_ASCENDING));
    CK(gpuprims_context_synchronize(ctx));
    t[r] = now() - a;
  }
  CK(gpuprims_buffer_read(work, 0, h, n));
  int ok = 1;
  for (size_t i = 1; i < n && ok; i++)
    ok = esz == 1 ? h[i - 1] <= h[i] : ((uint16_t *)h)[i - 1] <= ((uint16_t *)h)[i];
  if (reps < 18) { printf("%s n=%zu %s\n", name, n, ok ? "sorted" : "NOT SORTED"); goto out; }
  qsort(t + 3, 15, sizeof(double), cmp);
  printf("%-8s n=%zu  median %.4f ms  min %.4f ms  %s\n", name, n, t[3 + 7] * 1e3, t[3] * 1e3, ok ? "sorted" : "NOT SORTED");
out:
  gpuprims_buffer_destroy(src); gpuprims_buffer_destroy(work); free(h);
}
int main(int argc, char **argv) {
  gpuprims_context *ctx;
  size_t n = (size_t)1 << (argc > 1 ? atoi(argv[1]) : 28);
  if (argc > 2 && atoi(argv[2]) < 18) reps = atoi(argv[2]);  /* at most the 18 of t[] */
  CK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx));
  row(ctx, GPUPRIMS_DTYPE_U8, 1, n, "u8");
  row(ctx, GPUPRIMS_DTYPE_U16, 2, n, "u16");
  row(ctx, GPUPRIMS_DTYPE_U8, 1, n, "u8");
  gpuprims_context_destroy(ctx);
  return 0;
}
