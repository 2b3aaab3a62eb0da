/* qs-patterns.c: the quicksort's wall clock on every input pattern of issue 43, in one
 * process, with its spread (min, median, max of many calls), on the GPU machine.
 *   cc -O2 -Iinclude scripts/probes/qs-patterns.c -L<lib> -lgpuprims -o qs-patterns
 *   ./qs-patterns [log2 sizes...]            default 20 24
 *   QS_REPS=31 QS_ONLY="4 values" ./qs-patterns 20     one pattern (e.g. under ncu)
 *   QS_SEED=7 ./qs-patterns                   other random data (default 12345)
 * Each call sorts a fresh copy of the same unsorted keys (gpuprims_buffer_copy, not
 * timed); timed is the call and a context synchronize. Radix sort of the same keys
 * beside it, as a yardstick in the same process. */
#define _POSIX_C_SOURCE 200809L
#include <gpuprims.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static const char *last_error(void) {
  static char buf[512];
  gpuprims_last_error(buf, sizeof buf);
  return buf;
}
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static const char *PATTERNS[] = {"random", "sorted", "reversed", "all equal", "2 values",
                                 "4 values", "16 values", "organ pipe"};

static void fill(uint32_t *q, size_t n, int p, uint64_t seed) {
  uint32_t v[16];
  int distinct = p == 3 ? 1 : p == 4 ? 2 : p == 5 ? 4 : 16;
  for (int k = 0; k < 16; ++k) v[k] = (uint32_t)(mix(&seed) >> 32);
  for (size_t i = 0; i < n; ++i) {
    switch (p) {
      case 0: q[i] = (uint32_t)(mix(&seed) >> 32); break;
      case 1: q[i] = (uint32_t)i; break;
      case 2: q[i] = (uint32_t)(n - 1 - i); break;
      case 7: q[i] = (uint32_t)(i < n / 2 ? i : n - 1 - i); break;
      default: q[i] = v[mix(&seed) % distinct]; break;
    }
  }
}

/* min / median / max of `reps` timed sorts of a fresh copy of src (us). */
static void time_sort(gpuprims_context *ctx, gpuprims_buffer *work, gpuprims_buffer *src, int quick, int reps,
                      double out[3]) {
  double *t = malloc(sizeof(double) * reps);
  for (int r = -3; r < reps; ++r) {
    gpuprims_buffer_copy(work, src);
    gpuprims_context_synchronize(ctx);
    double a = now_us();
    gpuprims_status s = quick ? gpuprims_quicksort(ctx, work, NULL, GPUPRIMS_ORDER_ASCENDING)
                              : gpuprims_radix_sort(ctx, work, NULL, GPUPRIMS_ORDER_ASCENDING);
    gpuprims_context_synchronize(ctx);
    if (s) printf("status %d: %s\n", (int)s, last_error());
    if (r >= 0) t[r] = now_us() - a;
  }
  qsort(t, reps, sizeof(double), cmpd);
  out[0] = t[0], out[1] = t[reps / 2], out[2] = t[reps - 1];
  free(t);
}

int main(int argc, char **argv) {
  gpuprims_context *ctx;
  if (gpuprims_context_create(getenv("QS_HOST") ? GPUPRIMS_BACKEND_HOST : GPUPRIMS_BACKEND_CUDA, 0, &ctx)) {
    printf("no CUDA context: %s\n", last_error());
    return 1;
  }
  int reps = getenv("QS_REPS") ? atoi(getenv("QS_REPS")) : 31;
  const char *only = getenv("QS_ONLY");
  const uint64_t seed = getenv("QS_SEED") ? strtoull(getenv("QS_SEED"), NULL, 0) : 12345;
  int nsizes = argc > 1 ? argc - 1 : 2;
  for (int si = 0; si < nsizes; ++si) {
    int lg = argc > 1 ? atoi(argv[si + 1]) : (si == 0 ? 20 : 24);
    size_t n = (size_t)1 << lg;
    uint32_t *h = malloc(n * 4);
    gpuprims_buffer *src, *work;
    gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, n, &src);
    gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, n, &work);
    for (int p = 0; p < 8; ++p) {
      if (only && strcmp(only, PATTERNS[p])) continue;
      fill(h, n, p, seed + p);
      gpuprims_buffer_write(src, 0, h, n);
      double q[3], rx[3];
      time_sort(ctx, work, src, 1, reps, q);
      time_sort(ctx, work, src, 0, only ? 1 : reps, rx);
      printf("2^%d %-10s quicksort us min %7.1f med %7.1f max %7.1f | radix med %7.1f\n", lg, PATTERNS[p], q[0], q[1],
             q[2], rx[1]);
      fflush(stdout);
    }
    gpuprims_buffer_destroy(src);
    gpuprims_buffer_destroy(work);
    free(h);
  }
  gpuprims_context_destroy(ctx);
  return 0;
}
