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
 *   - a cluster of distinct keys the sample never sees (none at a sampled position),
 *     all in one bucket: 6,000 (past one large sort's tile at the quick size, so it
 *     takes two, merged) and 30,000 (past two: a segment of the next level).
 * With `--level-bound` only these run (CTest runs them so under
 * GPUPRIMS_TUNE=quicksort.max_levels=6: a sort that needs more levels fails).
 */
#define SORT_NAME "quicksort"
#define SORT_CALL gpuprims_quicksort
#define SORT_STABLE 0
#define SORT_EXTRA_TESTS against_the_pivot_rule
#define SORT_MAIN shared_main
#include "sort_test_body.h"

/* The positions the first level samples (kernels/quicksort.cu: qs_splitters). */
#define SAMPLES 4096
static size_t sample_position(size_t j, size_t n) { return (2 * j + 1) * n / (2 * SAMPLES); }

static void run_both_orders(env_t *e, gpuprims_dtype t, size_t n) {
  static const gpuprims_dtype vals[1] = {GPUPRIMS_DTYPE_U32};
  int o;
  for (o = 0; o < 2; o++) run_order(e, tu_dtype(t), n, ORDERS[o], vals, 1);
}

static void against_the_pivot_rule(env_t *e) {
  const int quick = getenv("GPUPRIMS_TEST_QUICK") != NULL;
  const size_t n = quick ? ((size_t)1 << 17) + 5 : BIG_N;
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

  {
    static const size_t clusters[2] = {6000, 30000};
    int c;
    for (c = 0; c < 2; c++) {
      size_t placed = 0;
      tu_fill_bytes(&e->rng, e->keys, n * 4);
      /* Positions from n/3 on, skipping the sampled ones: keys 0x80000000 + 0, 1, ... */
      for (i = n / 3, j = 0; i < n && placed < clusters[c]; i++) {
        while (j < SAMPLES && sample_position(j, n) < i) j++;
        if (j < SAMPLES && sample_position(j, n) == i) continue;
        k32[i] = 0x80000000u + (uint32_t)placed++;
      }
      snprintf(e->what, sizeof e->what, "%zu distinct keys in one bucket, none sampled", placed);
      run_both_orders(e, GPUPRIMS_DTYPE_U32, n);
    }
  }

  printf("test_quicksort: inputs against the pivot rule, n=%zu: %lu sorts (%.1f s)\n", n, e->sorts - before,
         seconds() - t0);
}

int main(int argc, char **argv) {
  env_t e;
  if (argc < 2 || strcmp(argv[1], "--level-bound") != 0) return shared_main();
  tu_rng_seed(&e.rng, tu_init("test_quicksort --level-bound"));
  e.ctx = tu_open_context();
  env_alloc(&e);
  against_the_pivot_rule(&e);
  env_free(&e);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
