/*
 * test_repro_radix_then_reduce: the reproducer of wrong results after a radix sort
 * (repro/wrong_results_after_radix_sort.c) as a test.
 *
 * Seen on CUDA (an H200), 3 times out of 3: on a fresh context, a radix sort of 2^20 random
 * u32, then exactly 4 small reduce_to_buffer calls, then a call on 2^20 i32 went wrong:
 * reduce (SUM) 622598 instead of 51920072; scan (SUM, inclusive) element 532480 146
 * instead of 26374035; top-k (k = n/2, indices) equal values out of index order. With 0
 * to 15 reductions in between only 4 failed; select_kth was right every time. Suspected:
 * the radix sort's look-back words, tagged 2 * epoch + flag in memory the context's calls
 * share, carried a later call's epoch.
 *
 * Each trial: a fresh context (AUTO), a radix sort of 2^20 random u32, j = 0..15
 * reduce_to_buffer calls (SUM of 1000 i32, into one buffer), then one of scan, top-k,
 * select_kth, reduce over 2^20 i32 in [0, 100), checked against a sequential reference.
 * Only then (so as not to change the sequence) the radix sort's keys and the reductions'
 * result are read back and checked too. Trials per (primitive, j): 3 on CUDA, 1 on the host
 * backend (which has no such shared state: there the test checks itself);
 * GPUPRIMS_REPRO_TRIALS overrides. Prints, per primitive, the j at which it went wrong.
 * GPUPRIMS_TEST_QUICK=1, and the host backend unless GPUPRIMS_TEST_FULL=1: j = 0, 3, 4 and 5
 * only.
 */
#include "test_util.h"

#define N ((size_t)1 << 20)
#define SMALL 1000
#define MAX_J 16

enum { P_SCAN, P_TOPK, P_SELECT, P_REDUCE, NUM_PRIMS };
static const char *const PRIM_NAMES[NUM_PRIMS] = {"scan (SUM, inclusive)", "topk (k = n/2, indices)",
                                                   "select_kth (k = n/3)", "reduce (SUM)"};

/* The inputs and their references, the same for every trial. */
typedef struct {
  uint32_t *keys, *sorted_keys;
  int32_t *in, *got;
  size_t *perm;      /* the stable ascending order of in: top-k's values and indices */
  uint64_t *got_idx;
  int32_t small_sum; /* SUM of in[0..SMALL) */
} data_t;

static data_t D;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void make_data(uint64_t seed) {
  tu_rng r;
  size_t i;
  tu_rng_seed(&r, seed);
  D.keys = (uint32_t *)tu_xmalloc(N * 4);
  D.sorted_keys = (uint32_t *)tu_xmalloc(N * 4);
  D.in = (int32_t *)tu_xmalloc(N * 4);
  D.got = (int32_t *)tu_xmalloc(N * 4);
  D.perm = (size_t *)tu_xmalloc(N * sizeof(size_t));
  D.got_idx = (uint64_t *)tu_xmalloc(N / 2 * 8);
  tu_fill_bytes(&r, D.keys, N * 4);
  for (i = 0; i < N; i++) D.in[i] = (int32_t)tu_below(&r, 100);
  memcpy(D.sorted_keys, D.keys, N * 4);
  qsort(D.sorted_keys, N, 4, cmp_u32);
  tu_sort_ref(GPUPRIMS_DTYPE_I32, D.in, N, GPUPRIMS_ORDER_ASCENDING, D.perm, NULL);
  D.small_sum = 0;
  for (i = 0; i < SMALL; i++) D.small_sum += D.in[i];
}

static void free_data(void) {
  free(D.keys);
  free(D.sorted_keys);
  free(D.in);
  free(D.got);
  free(D.perm);
  free(D.got_idx);
}

/* One trial's buffers on its own context. */
typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *keys, *x, *y, *small, *r;
} trial_t;

/* The primitive's result against the reference: 0 when right, else 1 with why. */
static int check_scan(trial_t *t, char *why, size_t wl) {
  TU_REQUIRE_OK(gpuprims_scan(t->ctx, t->x, t->y, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
  TU_REQUIRE_OK(gpuprims_buffer_read(t->y, 0, D.got, N));
  return tu_check_scan(GPUPRIMS_DTYPE_I32, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE, D.in, N, D.got, 0, why, wl) != 0;
}

/* Top-k's ties come lowest index first: exactly the stable order's first n/2. */
static int check_topk(trial_t *t, char *why, size_t wl) {
  gpuprims_buffer *vals = tu_buffer_create(t->ctx, GPUPRIMS_DTYPE_I32, N / 2);
  gpuprims_buffer *idx = tu_buffer_create(t->ctx, GPUPRIMS_DTYPE_U64, N / 2);
  size_t i;
  TU_REQUIRE_OK(gpuprims_topk(t->ctx, t->x, N / 2, GPUPRIMS_ORDER_ASCENDING, vals, idx));
  TU_REQUIRE_OK(gpuprims_buffer_read(vals, 0, D.got, N / 2));
  TU_REQUIRE_OK(gpuprims_buffer_read(idx, 0, D.got_idx, N / 2));
  gpuprims_buffer_destroy(vals);
  gpuprims_buffer_destroy(idx);
  for (i = 0; i < N / 2 && D.got[i] == D.in[D.perm[i]] && D.got_idx[i] == (uint64_t)D.perm[i]; i++) {
  }
  if (i < N / 2)
    snprintf(why, wl, "place %zu: value %ld index %llu, expected value %ld index %zu", i, (long)D.got[i],
             (unsigned long long)D.got_idx[i], (long)D.in[D.perm[i]], D.perm[i]);
  return i < N / 2;
}

static int check_select(trial_t *t, char *why, size_t wl) {
  int32_t v = -1, want = D.in[D.perm[N / 3]];
  TU_REQUIRE_OK(gpuprims_select_kth(t->ctx, t->x, N / 3, &v));
  if (v != want) snprintf(why, wl, "got %ld, expected %ld", (long)v, (long)want);
  return v != want;
}

static int check_reduce(trial_t *t, char *why, size_t wl) {
  int32_t v = -1;
  TU_REQUIRE_OK(gpuprims_reduce(t->ctx, t->x, GPUPRIMS_OP_SUM, &v));
  return tu_check_reduce(GPUPRIMS_DTYPE_I32, GPUPRIMS_OP_SUM, D.in, N, &v, 0, why, wl) != 0;
}

/* After the primitive: the radix sort's keys, and the last reduction's result. */
static int check_before(trial_t *t, int j, char *why, size_t wl) {
  int32_t r = -1;
  size_t i;
  TU_REQUIRE_OK(gpuprims_buffer_read(t->keys, 0, D.got, N));
  i = tu_first_diff(D.sorted_keys, D.got, 4, N);
  if (i < N) {
    snprintf(why, wl, "the radix sort's keys: index %zu differs", i);
    return 1;
  }
  TU_REQUIRE_OK(gpuprims_buffer_read(t->r, 0, &r, 1));
  if (j > 0 && r != D.small_sum) {
    snprintf(why, wl, "reduce_to_buffer: got %ld, expected %ld", (long)r, (long)D.small_sum);
    return 1;
  }
  return 0;
}

/* One trial on a fresh context: radix sort, j reductions, then the primitive; 1 if wrong. */
static int trial(int prim, int j, char *why, size_t wl) {
  trial_t t;
  int q, bad;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &t.ctx));
  t.keys = tu_buffer_from_host(t.ctx, GPUPRIMS_DTYPE_U32, D.keys, N);
  t.x = tu_buffer_from_host(t.ctx, GPUPRIMS_DTYPE_I32, D.in, N);
  t.y = tu_buffer_create(t.ctx, GPUPRIMS_DTYPE_I32, N);
  t.small = tu_buffer_from_host(t.ctx, GPUPRIMS_DTYPE_I32, D.in, SMALL);
  t.r = tu_buffer_create(t.ctx, GPUPRIMS_DTYPE_I32, 1);
  TU_REQUIRE_OK(gpuprims_radix_sort(t.ctx, t.keys, NULL, GPUPRIMS_ORDER_ASCENDING));
  for (q = 0; q < j; q++) TU_REQUIRE_OK(gpuprims_reduce_to_buffer(t.ctx, t.small, GPUPRIMS_OP_SUM, t.r));
  switch (prim) {
    case P_SCAN: bad = check_scan(&t, why, wl); break;
    case P_TOPK: bad = check_topk(&t, why, wl); break;
    case P_SELECT: bad = check_select(&t, why, wl); break;
    default: bad = check_reduce(&t, why, wl); break;
  }
  if (!bad) bad = check_before(&t, j, why, wl);
  gpuprims_buffer_destroy(t.keys);
  gpuprims_buffer_destroy(t.x);
  gpuprims_buffer_destroy(t.y);
  gpuprims_buffer_destroy(t.small);
  gpuprims_buffer_destroy(t.r);
  gpuprims_context_destroy(t.ctx);
  return bad;
}

/* Every j for one primitive (quick: 0, 3, 4 and 5, around the 4 that failed); prints the j
 * at which it went wrong. */
static void run_prim(int prim, int trials, int quick) {
  char why[256], first[256] = "", line[512];
  int j, k, len = snprintf(line, sizeof line, "%-24s wrong at j =", PRIM_NAMES[prim]);
  for (j = 0; j < MAX_J; j++) {
    int bad = 0;
    if (quick && j != 0 && (j < 3 || j > 5)) continue;
    for (k = 0; k < trials; k++) {
      why[0] = '\0';
      if (!TU_CHECKF(!trial(prim, j, why, sizeof why), "%s after a radix sort and %d reduce_to_buffer calls: %s",
                     PRIM_NAMES[prim], j, why))
        if (!bad++ && !first[0]) snprintf(first, sizeof first, "%s", why);
    }
    if (bad && len > 0 && (size_t)len < sizeof line)
      len += snprintf(line + len, sizeof line - (size_t)len, " %d (%d/%d)", j, bad, trials);
  }
  printf("%s: %s%s%s\n", tu_state.name, line, first[0] ? "; e.g. " : " none", first);
  fflush(stdout);
}

int main(void) {
  uint64_t seed = tu_init("test_repro_radix_then_reduce");
  gpuprims_context *ctx = tu_open_context(); /* exits 77 when GPUPRIMS_BACKEND=cuda has no device */
  int trials = tu_is_cuda(ctx) ? 3 : 1, prim;
  /* The host backend keeps no state from call to call: there every j only repeats j = 0
   * (GPUPRIMS_TEST_FULL=1 runs them all there too). */
  const int quick = getenv("GPUPRIMS_TEST_QUICK") != NULL || (!tu_is_cuda(ctx) && !getenv("GPUPRIMS_TEST_FULL"));
  const char *env = getenv("GPUPRIMS_REPRO_TRIALS");
  gpuprims_context_destroy(ctx);
  if (env && *env) trials = atoi(env);
  make_data(seed);
  printf("%s: fresh context, radix sort of 2^20 u32, j = %s reduce_to_buffer calls, then the primitive "
         "(%d trial%s each)\n",
         tu_state.name, quick ? "0, 3, 4, 5" : "0..15", trials, trials == 1 ? "" : "s");
  for (prim = 0; prim < NUM_PRIMS; prim++) run_prim(prim, trials, quick);
  free_data();
  return tu_finish();
}
