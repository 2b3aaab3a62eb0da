/* SplitMix64: the bench's seeded random numbers (fast, and the same on every machine). */
#ifndef GPUPRIMS_BENCH_SPLITMIX_H
#define GPUPRIMS_BENCH_SPLITMIX_H

#include <stdint.h>

/* The next number of the sequence whose state is *state. */
static inline uint64_t bench_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#endif
