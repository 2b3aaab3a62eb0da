/* probe-wait.c: the wall clock of whole calls that wait, on the GPU machine.
 *   cc -O2 -Iinclude scripts/probes/probe-wait.c -L<lib> -lgpuprims -o probe-wait && ./probe-wait
 * Prints the median of 301 calls of gpuprims_segmented_select (u16 rows of random
 * length 1..100, lower medians) at 32 to 100,000 rows, and of gpuprims_reduce (sum u32,
 * value to the host) of 1 to 2^20 elements: one kernel and the wait, the floor of any
 * call that waits. */
#define _POSIX_C_SOURCE 200809L
#include <gpuprims.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static uint64_t sm(uint64_t *s) { uint64_t z = (*s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
#define REPS 301
int main(void) {
  gpuprims_context *ctx; double t[REPS];
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &ctx)) { printf("no ctx\n"); return 1; }
  size_t counts[] = {32, 1000, 10000, 100000};
  for (int c = 0; c < 4; c++) {
    size_t nrows = counts[c]; uint64_t s = 7; uint32_t *off = malloc((nrows + 1) * 4); off[0] = 0;
    for (size_t i = 0; i < nrows; i++) off[i + 1] = off[i] + 1 + sm(&s) % 100;
    size_t n = off[nrows]; uint16_t *v = malloc(n * 2); for (size_t i = 0; i < n; i++) v[i] = (uint16_t)sm(&s);
    gpuprims_buffer *bv, *bo, *bout;
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U16, v, n, &bv);
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, off, nrows + 1, &bo);
    gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U16, nrows, &bout);
    for (int r = 0; r < 20; r++) gpuprims_segmented_select(ctx, bv, bo, NULL, bout);
    for (int r = 0; r < REPS; r++) { double a = now_us(); if (gpuprims_segmented_select(ctx, bv, bo, NULL, bout)) printf("fail\n"); t[r] = now_us() - a; }
    qsort(t, REPS, sizeof(double), cmpd);
    printf("segsel u16 %7zu rows: median %.1f us, p10 %.1f, p90 %.1f\n", nrows, t[REPS / 2], t[REPS / 10], t[REPS * 9 / 10]);
    gpuprims_buffer_destroy(bv); gpuprims_buffer_destroy(bo); gpuprims_buffer_destroy(bout); free(off); free(v);
  }
  size_t rn[] = {1, 1024, 1 << 20};
  for (int c = 0; c < 3; c++) {
    gpuprims_buffer *b; uint32_t *x = calloc(rn[c], 4); uint64_t out;
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, x, rn[c], &b);
    for (int r = 0; r < 20; r++) gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &out);
    for (int r = 0; r < REPS; r++) { double a = now_us(); gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &out); t[r] = now_us() - a; }
    qsort(t, REPS, sizeof(double), cmpd);
    printf("reduce u32 sum %7zu: median %.1f us, p10 %.1f\n", rn[c], t[REPS / 2], t[REPS / 10]);
    gpuprims_buffer_destroy(b); free(x);
  }
  gpuprims_context_destroy(ctx);
  return 0;
}
