/* probe-launch.c: where the time of a small call goes, on the GPU machine.
 *   cc -O2 -Iinclude scripts/probes/probe-launch.c -L<lib> -lgpuprims -o probe && ./probe [n]
 * Prints, for gpuprims_reduce_to_buffer (sum i32) and gpuprims_scan (sum i32):
 *   host µs per call issued back to back (the API's own cost, GPU permitting),
 *   and the median wall time of one call followed by a synchronize. */
#include <gpuprims.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static void check(int status, const char *what) {
  char msg[512];
  if (status == GPUPRIMS_STATUS_OK) return;
  gpuprims_last_error(msg, sizeof msg);
  printf("%s: %s\n", what, msg);
  exit(1);
}
#define CK(x) check((x), #x)

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], 0, 0) : (1u << 20);
  gpuprims_context *ctx;
  gpuprims_buffer *in, *out, *one;
  CK(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &ctx));
  CK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_I32, n, &in));
  CK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_I32, n, &out));
  CK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_I32, 1, &one));
  for (int which = 0; which < 2; ++which) {
    const char *name = which ? "scan sum i32" : "reduce_to_buffer sum i32";
#define CALL() (which ? gpuprims_scan(ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE) \
                      : gpuprims_reduce_to_buffer(ctx, in, GPUPRIMS_OP_SUM, one))
    for (int i = 0; i < 50; ++i) CK(CALL());
    CK(gpuprims_context_synchronize(ctx));
    enum { BURST = 2000, REPS = 301 };
    double t0 = now_us();
    for (int i = 0; i < BURST; ++i) CK(CALL());
    double t1 = now_us();
    CK(gpuprims_context_synchronize(ctx));
    double t2 = now_us();
    static double w[REPS];
    for (int i = 0; i < REPS; ++i) {
      double a = now_us();
      CK(CALL());
      CK(gpuprims_context_synchronize(ctx));
      w[i] = now_us() - a;
    }
    qsort(w, REPS, sizeof w[0], cmp);
    printf("%-26s n=%zu  issue %.2f us/call, burst incl. drain %.2f us/call, call+sync median %.2f us (p10 %.2f)\n",
           name, n, (t1 - t0) / BURST, (t2 - t0) / BURST, w[REPS / 2], w[REPS / 10]);
  }
  return 0;
}
