/* topk-steps.c: the wall clock of gpuprims_topk (f32, descending) and of select_kth at
 * small sizes, where the call is a chain of dependent launches, on the GPU machine.
 *   cc -O2 -Iinclude scripts/probes/topk-steps.c -L<lib> -lgpuprims -o topk-steps
 *   ./topk-steps [log2 sizes...]                 default 20 24
 *   TOPK_REPS=5 TOPK_ONLY="k=65536 +indices" ./topk-steps 20    one row (e.g. under ncu,
 *       `ncu --metrics gpu__time_duration.sum`: each kernel's time, to set beside the wall)
 *   TOPK_KS="1 100 2048" ./topk-steps 20          other ks (default 100 65536)
 *   TOPK_PTRS=1: each input's device address (the 2^28 band's rate moves with the layout)
 *   TOPK_U64=1: u64 keys (random bits) instead of f32
 * Timed: the call and a context synchronize; min and median of TOPK_REPS (default 41). */
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
static void fail(const char *what) {
  char buf[512];
  gpuprims_last_error(buf, sizeof buf);
  fprintf(stderr, "%s: %s\n", what, buf);
  exit(1);
}

/* One row: k = 0 means select_kth of the median; seg: the same top-k as one row of
 * gpuprims_segmented_topk. */
static gpuprims_dtype key_dtype(void) { return getenv("TOPK_U64") ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_F32; }

static void row(gpuprims_context *ctx, gpuprims_buffer *in, size_t n, size_t k, int indices, int reps, int seg) {
  char label[64];
  gpuprims_buffer *vals = NULL, *idx = NULL;
  double *t = malloc(sizeof(double) * (size_t)reps);
  const char *only = getenv("TOPK_ONLY");
  uint64_t value; /* room for either key */
  int r;
  if (k) snprintf(label, sizeof label, "%s k=%zu%s", seg ? "segtopk 1 row" : "topk", k, indices ? " +indices" : "");
  else snprintf(label, sizeof label, "select_kth median");
  if (only && !strstr(label, only)) { free(t); return; }
  if (k && (gpuprims_buffer_create(ctx, key_dtype(), k, &vals) ||
            (indices && gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, k, &idx))))
    fail("buffers");
  for (r = -3; r < reps; r++) {
    double t0 = now_us();
    gpuprims_status s =
        !k    ? gpuprims_select_kth(ctx, in, (n - 1) / 2, &value)
        : seg ? gpuprims_segmented_topk(ctx, in, NULL, n, k, NULL, GPUPRIMS_ORDER_DESCENDING, vals, idx)
              : gpuprims_topk(ctx, in, k, GPUPRIMS_ORDER_DESCENDING, vals, idx);
    if (s || gpuprims_context_synchronize(ctx)) fail(label);
    if (r >= 0) t[r] = now_us() - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmpd);
  printf("2^%-2d %s%-24s min %8.1f us  median %8.1f us\n", __builtin_ctzll(n), getenv("TOPK_U64") ? "u64 " : "", label, t[0], t[reps / 2]);
  gpuprims_buffer_destroy(vals);
  gpuprims_buffer_destroy(idx);
  free(t);
}

int main(int argc, char **argv) {
  gpuprims_context *ctx;
  int reps = getenv("TOPK_REPS") ? atoi(getenv("TOPK_REPS")) : 41, a;
  int logs[8] = {20, 24}, nlogs = 2;
  if (argc > 1) for (nlogs = 0, a = 1; a < argc && nlogs < 8; a++) logs[nlogs++] = atoi(argv[a]);
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &ctx)) fail("context");
  for (a = 0; a < nlogs; a++) {
    size_t n = (size_t)1 << logs[a], i;
    int wide = key_dtype() == GPUPRIMS_DTYPE_U64;
    float *h = malloc(n * 4);
    uint64_t *h64 = wide ? malloc(n * 8) : NULL;
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(a + 1);
    gpuprims_buffer *in;
    for (i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      h[i] = (float)((double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      if (wide) h64[i] = x;
    }
    if (gpuprims_buffer_from_host(ctx, key_dtype(), wide ? (void *)h64 : (void *)h, n, &in)) fail("input");
    if (getenv("TOPK_PTRS")) { /* where the input lies: the 2^28 band's rate moves with the layout */
      void *p = NULL;
      if (gpuprims_buffer_device_ptr(in, &p) == GPUPRIMS_STATUS_OK) printf("2^%d input at %p\n", logs[a], p);
    }
    const char *ks = getenv("TOPK_KS") ? getenv("TOPK_KS") : "100 65536";
    char *end;
    row(ctx, in, n, 0, 0, reps, 0);
    for (unsigned long long k = strtoull(ks, &end, 10); end != ks; ks = end, k = strtoull(ks, &end, 10))
      for (int seg = 0; seg < 2; seg++)
        if (k >= 1 && k <= n) row(ctx, in, n, (size_t)k, 0, reps, seg), row(ctx, in, n, (size_t)k, 1, reps, seg);
    gpuprims_buffer_destroy(in);
    free(h);
    free(h64);
  }
  gpuprims_context_destroy(ctx);
  return 0;
}
