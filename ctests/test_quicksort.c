/*
 * test_quicksort: gpuprims_quicksort (in place, not stable, ascending and descending):
 * sort_test_body.h's tests (the key sequence of the stable reference, compared by order
 * key; the output's (key, value) pairs exactly the input's), then inputs built against
 * the CUDA sample sort's pivot rule (kernels/quicksort.cu), which must still sort, in a
 * bounded number of levels:
 *   - every key the first level samples (4096 evenly spaced positions) is the same
 *     value, the rest random: the sample yields one splitter;
 *   - a sawtooth whose period is the sample's spacing: likewise, every sample equal;
 *   - u64 keys of wildly spread magnitudes (random bits shifted right by 0..63), where
 *     a split by value cuts little at a time;
 *   - two values only, alternating in blocks of the sample's spacing;
 *   - 30,000 distinct keys the sample never sees (none at a sampled position), all in
 *     one bucket, past what the large sort takes (a segment of the next level).
 * With `--level-bound` only these run (CTest runs them so under
 * GPUPRIMS_TUNE=quicksort.max_levels=6: a sort that needs more levels fails).
 *
 * Then inputs whose one oversized bucket the large sort takes as a pair of halves
 * (kernels/quicksort_large.cu), at 2^17 + 5 keys (quick, or the host backend) or 2^20:
 *   - level 1: 7,000 distinct unsampled keys in one bucket of a plain split, about
 *     10,000 to 11,000 with its share of the random keys (between one and two tiles
 *     of 8,192; past two about once in 10^5 inputs at 2^20); then the same 7,000 of
 *     three values, so that the pair's split by rank falls among equal keys;
 *   - level 2: every sampled key the same, 12,000 keys below 256 and a third of the
 *     input spread over [2^24, 2^31) below it: the second level splits that part by
 *     value and the 12,000 make one bucket (the pair on an odd level, whose source is
 *     its destination: the sides are sorted in the alternate buffer and brought home).
 * Short inputs of 8,193 to 16,384 keys (sort_test_body.h's sizes, every dtype) are one
 * such pair as well; at 16,383 and 16,384 keys the cut must fall within a rank or two of
 * the middle, which a sample's median almost never gives, so they take the pair's exact
 * median.
 * Also inputs one step from sorted or reversed (one pair swapped, or equal) at lane,
 * warp and tile boundaries, for the first level's order check.
 * With `--pair-levels N` only the input for level N runs: CTest runs it under
 * GPUPRIMS_TUNE=quicksort.max_levels=N, so it fails unless the pair took that bucket.
 */
#define SORT_NAME "quicksort"
#define SORT_CALL gpuprims_quicksort
#define SORT_STABLE 0
#define SORT_EXTRA_TESTS extra_tests
#define SORT_MAIN shared_main
#include "sort_test_body.h"

/* The keys the first level samples of n (kernels/quicksort_splitters.cu: 512 x 8 keys
 * by src/backend/cuda/quicksort.rs's policy), and the position of sample j. */
#define SAMPLES ((size_t)4096)
static size_t sample_position(size_t j, size_t n) { return (2 * j + 1) * n / (2 * SAMPLES); }

static void run_both_orders(env_t *e, gpuprims_dtype t, size_t n) {
  static const gpuprims_dtype vals[1] = {GPUPRIMS_DTYPE_U32};
  int o;
  for (o = 0; o < 2; o++) run_order(e, tu_dtype(t), n, ORDERS[o], vals, 1);
}

/* From position n/3 on, skipping the sampled positions: keys 0x80000000 + 0, 1, ...,
 * `count` of them, repeating after `values`. */
static void unsampled_cluster(uint32_t *k32, size_t n, size_t count, size_t values) {
  size_t i, j = 0, placed = 0;
  for (i = n / 3; i < n && placed < count; i++) {
    while (j < SAMPLES && sample_position(j, n) < i) j++;
    if (j < SAMPLES && sample_position(j, n) == i) continue;
    k32[i] = 0x80000000u + (uint32_t)(placed++ % values);
  }
}

/* The long inputs of the CUDA pivot rule at their full length: on CUDA (unless
 * GPUPRIMS_TEST_QUICK), or with GPUPRIMS_TEST_FULL=1 (the host backend has no pivot rule:
 * its sort of the keys takes no path by length). */
static int full_length(const env_t *e) {
  return !getenv("GPUPRIMS_TEST_QUICK") && (tu_is_cuda(e->ctx) || getenv("GPUPRIMS_TEST_FULL"));
}

/* The input whose one oversized bucket becomes a pair of halves on level `level` (1 or
 * 2; see the top), sorted both ways with and without values. */
static void pair_of_halves(env_t *e, int level) {
  const size_t n = full_length(e) ? (size_t)1 << 20 : ((size_t)1 << 17) + 5;
  uint32_t *k32 = (uint32_t *)(void *)e->keys;
  size_t i, j;
  if (level == 1) {
    tu_fill_bytes(&e->rng, e->keys, n * 4);
    unsampled_cluster(k32, n, 7000, 7000);
    snprintf(e->what, sizeof e->what, "7000 distinct unsampled keys in one bucket (a pair on level 1), n=%zu", n);
    run_both_orders(e, GPUPRIMS_DTYPE_U32, n);
    /* The same bucket of three values: the pair's split by rank falls among ties. */
    tu_fill_bytes(&e->rng, e->keys, n * 4);
    unsampled_cluster(k32, n, 7000, 3);
    snprintf(e->what, sizeof e->what, "7000 unsampled keys of 3 values in one bucket (a pair on level 1), n=%zu", n);
  } else {
    const size_t tiny = 12000, spread = n / 3;
    for (i = 0, j = 0; i < n; i++) {
      if (j < SAMPLES && sample_position(j, n) == i) {
        k32[i] = 0x80000000u;
        j++;
      } else if (i - j < tiny) {
        k32[i] = (uint32_t)tu_below(&e->rng, 256);
      } else if (i - j < tiny + spread) {
        k32[i] = (1u << 24) + (uint32_t)tu_below(&e->rng, (1u << 31) - (1u << 24));
      } else {
        k32[i] = 0x80000001u + (uint32_t)tu_below(&e->rng, 0x7fffffffu);
      }
    }
    snprintf(e->what, sizeof e->what, "12000 keys below 256 in one bucket of a split by value (a pair on level 2), n=%zu",
             n);
  }
  run_both_orders(e, GPUPRIMS_DTYPE_U32, n);
}

static void against_the_pivot_rule(env_t *e) {
  const size_t n = full_length(e) ? BIG_N : ((size_t)1 << 17) + 5;
  const size_t spacing = n / SAMPLES;
  size_t i, j;
  uint32_t *k32 = (uint32_t *)(void *)e->keys;
  uint64_t *k64 = (uint64_t *)(void *)e->keys;
  double t0 = seconds();
  unsigned long before = e->sorts;

  tu_fill_bytes(&e->rng, e->keys, n * 4);
  for (j = 0; j < SAMPLES; j++) k32[sample_position(j, n)] = 0x5a5a5a5au;
  snprintf(e->what, sizeof e->what, "every sampled key 0x5a5a5a5a, the rest random");
  run_both_orders(e, GPUPRIMS_DTYPE_U32, n);

  for (i = 0; i < n; i++) k32[i] = (uint32_t)(i % spacing);
  snprintf(e->what, sizeof e->what, "sawtooth of period %zu (the sample's spacing)", spacing);
  run_both_orders(e, GPUPRIMS_DTYPE_U32, n);

  for (i = 0; i < n; i++) k64[i] = tu_next(&e->rng) >> (tu_next(&e->rng) % 64);
  snprintf(e->what, sizeof e->what, "u64 random bits shifted right by 0..63");
  run_both_orders(e, GPUPRIMS_DTYPE_U64, n);

  for (i = 0; i < n; i++) k32[i] = (uint32_t)((i / spacing) % 2 ? 7 : 3);
  snprintf(e->what, sizeof e->what, "3 and 7 alternating in blocks of %zu", spacing);
  run_both_orders(e, GPUPRIMS_DTYPE_U32, n);

  tu_fill_bytes(&e->rng, e->keys, n * 4);
  unsampled_cluster(k32, n, 30000, 30000);
  snprintf(e->what, sizeof e->what, "30000 distinct keys in one bucket, none sampled");
  run_both_orders(e, GPUPRIMS_DTYPE_U32, n);

  printf("test_quicksort: inputs against the pivot rule, n=%zu: %lu sorts (%.1f s)\n", n, e->sorts - before,
         seconds() - t0);
}

/* Inputs one step from being in order, for the first level's order check (qs_count
 * compares each key with the next: across lanes, rows of a warp, warps and tiles of
 * 4,096 keys): distinct ascending keys with one adjacent pair swapped, or one pair
 * made equal, at such boundaries; each sorted both ways, so descending sees them one
 * step from reversed. And sorted floats with +0.0 right before -0.0 (out of the total
 * order, though equal as numbers), floats descending through +0.0 then -0.0 (exactly
 * reversed), and u64 keys one swap from sorted at their own warp and tile boundaries. */
static void nearly_in_order(env_t *e) {
  static const size_t at[] = {0, 30, 31, 32, 511, 512, 4095, 4096, 8191, 12287, 50000, 100001};
  static const size_t at8[] = {255, 256, 2047, 2048, 4095, 100001};
  const size_t n = 100003;
  uint32_t *k32 = (uint32_t *)(void *)e->keys;
  uint64_t *k64 = (uint64_t *)(void *)e->keys;
  float *f32 = (float *)(void *)e->keys;
  size_t a, i;
  double t0 = seconds();
  unsigned long before = e->sorts;
  for (a = 0; a < TU_ARRAY_LEN(at); a++) {
    const size_t p = at[a];
    for (i = 0; i < n; i++) k32[i] = (uint32_t)(3 * i);
    k32[p] = 3 * (uint32_t)p + 4; /* past its successor: one inversion */
    snprintf(e->what, sizeof e->what, "ascending but keys %zu and %zu swapped, n=%zu", p, p + 1, n);
    run_both_orders(e, GPUPRIMS_DTYPE_U32, n);
    for (i = 0; i < n; i++) k32[i] = (uint32_t)(3 * i);
    k32[p + 1] = k32[p]; /* in order, but not strictly reversed read backwards */
    snprintf(e->what, sizeof e->what, "ascending but keys %zu and %zu equal, n=%zu", p, p + 1, n);
    run_both_orders(e, GPUPRIMS_DTYPE_U32, n);
  }
  for (i = 0; i < n; i++) f32[i] = (float)i - (float)(n / 2);
  f32[n / 2] = 0.0f;
  f32[n / 2 + 1] = -0.0f;
  snprintf(e->what, sizeof e->what, "ascending floats with +0.0 right before -0.0, n=%zu", n);
  run_both_orders(e, GPUPRIMS_DTYPE_F32, n);
  /* Strictly decreasing through +0.0 then -0.0 (1, +0, -0, -1): exactly reversed. */
  for (i = 0; i < n; i++) f32[i] = i <= n / 2 ? (float)(n / 2 - i) : -(float)(i - n / 2 - 1);
  f32[n / 2 + 1] = -0.0f;
  snprintf(e->what, sizeof e->what, "descending floats through +0.0 then -0.0, n=%zu", n);
  run_both_orders(e, GPUPRIMS_DTYPE_F32, n);
  /* 8-byte keys: 8 a thread, warps of 256 keys, tiles of 2,048. */
  for (a = 0; a < TU_ARRAY_LEN(at8); a++) {
    const size_t p = at8[a];
    for (i = 0; i < n; i++) k64[i] = 3 * (uint64_t)i;
    k64[p] = 3 * (uint64_t)p + 4;
    snprintf(e->what, sizeof e->what, "u64 ascending but keys %zu and %zu swapped, n=%zu", p, p + 1, n);
    run_both_orders(e, GPUPRIMS_DTYPE_U64, n);
  }
  printf("test_quicksort: inputs one step from in order: %lu sorts (%.1f s)\n", e->sorts - before, seconds() - t0);
}

static void extra_tests(env_t *e) {
  double t0;
  unsigned long before;
  against_the_pivot_rule(e);
  nearly_in_order(e);
  t0 = seconds();
  before = e->sorts;
  pair_of_halves(e, 1);
  pair_of_halves(e, 2);
  printf("test_quicksort: oversized buckets taken as pairs of halves: %lu sorts (%.1f s)\n", e->sorts - before,
         seconds() - t0);
}

int main(int argc, char **argv) {
  env_t e;
  const int level_bound = argc == 2 && strcmp(argv[1], "--level-bound") == 0;
  const int pair_levels = argc == 3 && strcmp(argv[1], "--pair-levels") == 0 ? atoi(argv[2]) : 0;
  if (!level_bound && pair_levels != 1 && pair_levels != 2) {
    if (argc > 1) {
      fprintf(stderr, "usage: test_quicksort [--level-bound | --pair-levels 1|2]\n");
      return 2;
    }
    return shared_main();
  }
  tu_rng_seed(&e.rng, tu_init(level_bound ? "test_quicksort --level-bound" : "test_quicksort --pair-levels"));
  e.ctx = tu_open_context();
  env_alloc(&e);
  if (level_bound) against_the_pivot_rule(&e);
  else pair_of_halves(&e, pair_levels);
  env_free(&e);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
