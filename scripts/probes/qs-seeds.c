/* qs-seeds.c: which `gpuprims_bench --seed` values make a 2^20 quicksort row draw a
 * first-level bucket of more than one large sort's tile (8,192 keys), the case the
 * large sort takes as a pair of halves (kernels/quicksort_large.cu). It replays the
 * tour's seed and fill (bench/tour.c) and qs_splitters' sample rule (4,096 evenly
 * spaced keys, every 16th of them sorted a splitter), on the host: the rule of every
 * input since 2026-11-27 (from 2026-11-23 to then, inputs up to 2^20 sampled 8,192).
 *   cc -O2 scripts/probes/qs-seeds.c -o qs-seeds && ./qs-seeds u32|f32 [first] [count]
 * Prints each seed with its largest bucket, "PAIR" where it passes 8,192: bench with
 * `--only "quicksort keys f32" --sizes 1048576 --seed S` for a run that has a pair or
 * none. Tied to the tour's row order (ROW_U32, ROW_F32 below) and fill. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_U32 = 18, ROW_F32 = 27 };  /* indices of the rows in tour.c's ROWS */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  enum { N = 1 << 20, SAMPLES = 4096, BUCKETS = 256, STEP = SAMPLES / BUCKETS, TILE = 8192 };
  const int f32 = argc > 1 && strcmp(argv[1], "f32") == 0;
  const uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 0) : 1, count = argc > 3 ? strtoull(argv[3], NULL, 0) : 20;
  uint32_t *keys = malloc(sizeof *keys * N), sample[SAMPLES], splitters[BUCKETS - 1];
  static size_t size[BUCKETS];
  uint64_t seed;
  if (!keys || argc < 2 || (!f32 && strcmp(argv[1], "u32") != 0)) {
    fprintf(stderr, "usage: qs-seeds u32|f32 [first] [count]\n");
    return 2;
  }
  for (seed = first; seed < first + count; seed++) {
    /* tour.c: the row's seed, then FILL_BITS (u32) or FILL_SORT_F32 (finite, nonzero) */
    uint64_t s = seed ^ ((uint64_t)((f32 ? ROW_F32 : ROW_U32) + 1) * 0xD1B54A32D192ED03ull) ^ ((uint64_t)N << 7);
    size_t i, b, largest = 0;
    for (i = 0; i < N; i++) {
      uint32_t k;
      if (f32) {
        do k = (uint32_t)(splitmix64(&s) >> 32);
        while ((k & 0x7f800000u) == 0x7f800000u || (k & 0x7fffffffu) == 0);
        k = (k & 0x80000000u) ? ~k : k | 0x80000000u;  /* the ordered pattern */
      } else {
        k = (uint32_t)(splitmix64(&s) >> 32);
      }
      keys[i] = k;
    }
    /* qs_splitters: the sample, sorted; every STEP-th key a splitter */
    for (i = 0; i < SAMPLES; i++) sample[i] = keys[(2 * i + 1) * (size_t)N / (2 * SAMPLES)];
    qsort(sample, SAMPLES, sizeof *sample, cmp_u32);
    for (b = 0; b + 1 < BUCKETS; b++) splitters[b] = sample[(b + 1) * STEP - 1];
    /* a key's bucket: how many splitters lie below it */
    memset(size, 0, sizeof size);
    for (i = 0; i < N; i++) {
      size_t lo = 0, hi = BUCKETS - 1;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (splitters[mid] < keys[i]) lo = mid + 1;
        else hi = mid;
      }
      size[lo]++;
    }
    for (b = 0; b < BUCKETS; b++) largest = size[b] > largest ? size[b] : largest;
    printf("seed %llu: largest bucket %zu%s\n", (unsigned long long)seed, largest, largest > TILE ? " PAIR" : "");
  }
  free(keys);
  return 0;
}
