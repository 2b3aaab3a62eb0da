/* Small helpers every part of the bench tour uses: seeded random numbers, sorting
 * timings for their median, progress lines. */
#ifndef GPUPRIMS_BENCH_UTIL_H
#define GPUPRIMS_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/* SplitMix64: the next number of the sequence whose state is *state (fast, and the same
 * on every machine). */
static inline uint64_t bench_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* qsort comparator of doubles, ascending (timings, for their median). */
static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A progress line on stderr (the tables go to stdout, at the end). */
static inline void bench_progress(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("gpuprims_bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
  va_end(ap);
}

#endif
