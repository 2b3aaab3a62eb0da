/*
 * test_select: gpuprims_select_kth, gpuprims_select_kth_to_buffer and gpuprims_topk for
 * every dtype against a sequential reference: the stable sort of the input as a
 * permutation (test_util.h tu_sort_ref, qsort of (order key, index) pairs). The element of
 * rank k is the input at perm[k] of the ascending sort; top-k in order o is the input at
 * perm[0..k) of the stable sort in o, whose ties come lowest index first, as top-k's must.
 *
 * Sizes 1 to 12289 (tile edges of the CUDA passes), 70001 and 2^20 + 7 (where the CUDA
 * path samples pivots and searches a band), 3,000,017 for u32, f32 and u64. Inputs: random
 * bits (NaNs of both signs included for floats), sorted, reversed, all equal, 4 distinct
 * values, organ pipe, the type's special values (NaNs, infinities, signed zeros, extremes),
 * and for floats -0.0/+0.0 mixtures. Ranks 0, n-1, the lower median and random ones; top-k
 * for k = 1, 100, 2000, n and a random k, both orders, with and without indices. Outputs
 * are poisoned before each call, so an element never written fails; the input is read back
 * and must be unchanged. Every argument error is checked with its status, its message and
 * untouched outputs.
 *
 * GPUPRIMS_TEST_QUICK=1: small sizes and 70001 only (for compute-sanitizer). On the host
 * backend 3,000,017 runs only with GPUPRIMS_TEST_FULL=1.
 *
 * A k-th value compares bitwise, except that any NaN matches any NaN (the CUDA path hands
 * back the canonical NaN: NaNs are one value in the order). Top-k values are copies of
 * input elements and compare bitwise.
 */
#include "test_util.h"

#define BIG_N ((size_t)3000017)
#define POISON 0xA5

enum { P_RANDOM, P_SORTED, P_REVERSED, P_ALL_EQUAL, P_FEW, P_ORGAN, P_SPECIALS, P_ZEROS, NUM_PATTERNS };
static const char *PATTERN_NAMES[NUM_PATTERNS] = {"random bits", "sorted",      "reversed", "all equal",
                                                  "4 distinct",  "organ pipe", "specials", "-0.0/+0.0"};

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  unsigned char *keys, *got, *want, *back;
  uint64_t *got_idx;
  size_t *perm;
  tu_sort_pair *pairs;
  unsigned long calls;
} env_t;


/* Element i of a numeric ramp (integers truncate to the width, floats convert). */
static void put_ramp(const tu_dtype_info *d, void *p, size_t i, int64_t v) {
  if (d->is_float)
    tu_put_f(d->id, p, i, (double)v * 0.5);
  else
    tu_put_bits(d->id, p, i, (uint64_t)v);
}

static void gen(env_t *e, const tu_dtype_info *d, size_t n, int p) {
  tu_rng *r = &e->rng;
  uint64_t mask = tu_width_mask(d->size), v[4];
  size_t i;
  switch (p) {
    case P_RANDOM: tu_fill_bytes(r, e->keys, n * d->size); break;
    case P_SORTED:
      for (i = 0; i < n; i++) put_ramp(d, e->keys, i, (int64_t)i - (int64_t)(n / 2));
      break;
    case P_REVERSED:
      for (i = 0; i < n; i++) put_ramp(d, e->keys, i, (int64_t)(n / 2) - (int64_t)i);
      break;
    case P_ALL_EQUAL:
      v[0] = tu_next(r) & mask;
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, v[0]);
      break;
    case P_FEW:
      for (i = 0; i < 4; i++) v[i] = (i & 1) ? tu_special_bits(d, r) : tu_next(r) & mask;
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, v[tu_below(r, 4)]);
      break;
    case P_ORGAN:
      for (i = 0; i < n; i++) put_ramp(d, e->keys, i, (int64_t)(i < n - i ? i : n - 1 - i));
      break;
    case P_SPECIALS:
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, tu_below(r, 3) ? tu_special_bits(d, r) : tu_next(r) & mask);
      break;
    default: /* P_ZEROS, floats only */
      for (i = 0; i < n; i++) tu_put_f(d->id, e->keys, i, (tu_next(r) & 1) ? -0.0 : 0.0);
      break;
  }
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static gpuprims_buffer *make(env_t *e, gpuprims_dtype t, size_t n, const void *src) {
  gpuprims_buffer *b = NULL;
  if (src)
    TU_REQUIRE_OK(gpuprims_buffer_from_host(e->ctx, t, src, n, &b));
  else
    TU_REQUIRE_OK(gpuprims_buffer_create(e->ctx, t, n, &b));
  return b;
}

static void poison(gpuprims_buffer *b, size_t n, size_t es, unsigned char *tmp) {
  memset(tmp, POISON, n * es);
  TU_REQUIRE_OK(gpuprims_buffer_write(b, 0, tmp, n));
}

static int same_value(const tu_dtype_info *d, uint64_t want, uint64_t got) {
  if (d->is_float && tu_bits_is_nan(d, want)) return tu_bits_is_nan(d, got);
  return want == got;
}

static void check_input_unchanged(env_t *e, const tu_dtype_info *d, gpuprims_buffer *in, size_t n, const char *what) {
  TU_REQUIRE_OK(gpuprims_buffer_read(in, 0, e->back, n));
  TU_CHECKF(memcmp(e->back, e->keys, n * d->size) == 0, "%s: %s n=%zu: the input changed", what, d->name, n);
}

/* select_kth (and, for one rank per input, select_kth_to_buffer) against the reference. */
static void check_kth(env_t *e, const tu_dtype_info *d, gpuprims_buffer *in, size_t n, const char *what) {
  size_t ks[6], nk = 0, j;
  gpuprims_buffer *one = make(e, d->id, 1, NULL);
  ks[nk++] = 0;
  ks[nk++] = n - 1;
  ks[nk++] = (n - 1) / 2;
  ks[nk++] = (size_t)tu_below(&e->rng, n);
  ks[nk++] = (size_t)tu_below(&e->rng, n < 200 ? n : 200);
  ks[nk++] = n - 1 - (size_t)tu_below(&e->rng, n < 200 ? n : 200);
  for (j = 0; j < nk; j++) {
    uint64_t want = tu_get_bits(d->size, e->keys, e->perm[ks[j]]), got = 0, got2 = 0;
    char w[64], g[64];
    memset(&got, POISON, sizeof got);
    TU_REQUIRE_OK(gpuprims_select_kth(e->ctx, in, ks[j], &got));
    got = tu_get_bits(d->size, &got, 0);
    e->calls++;
    tu_fmt_elem(d->id, &want, w, sizeof w);
    tu_fmt_elem(d->id, &got, g, sizeof g);
    TU_CHECKF(same_value(d, want, got), "select_kth %s n=%zu k=%zu (%s): want %s, got %s", d->name, n, ks[j], what, w, g);
    if (j == 3) {
      poison(one, 1, d->size, e->got);
      TU_REQUIRE_OK(gpuprims_select_kth_to_buffer(e->ctx, in, ks[j], one));
      TU_REQUIRE_OK(gpuprims_buffer_read(one, 0, &got2, 1));
      got2 = tu_get_bits(d->size, &got2, 0);
      e->calls++;
      TU_CHECKF(same_value(d, want, got2), "select_kth_to_buffer %s n=%zu k=%zu (%s)", d->name, n, ks[j], what);
    }
  }
  gpuprims_buffer_destroy(one);
}

static void check_topk(env_t *e, const tu_dtype_info *d, gpuprims_buffer *in, size_t n, gpuprims_order o,
                       const char *what) {
  size_t ks[5], nk = 0, j, i;
  ks[nk++] = 1;
  if (n >= 100) ks[nk++] = 100;
  if (n >= 2000) ks[nk++] = 2000;
  ks[nk++] = n;
  ks[nk++] = 1 + (size_t)tu_below(&e->rng, n);
  for (j = 0; j < nk; j++) {
    size_t k = ks[j];
    int with_idx = (int)((j + e->calls) % 2 == 0) || k == n;
    gpuprims_buffer *vals = make(e, d->id, k, NULL), *idx = with_idx ? make(e, GPUPRIMS_DTYPE_U64, k, NULL) : NULL;
    poison(vals, k, d->size, e->got);
    if (idx) poison(idx, k, 8, e->got);
    TU_REQUIRE_OK(gpuprims_topk(e->ctx, in, k, o, vals, idx));
    e->calls++;
    TU_REQUIRE_OK(gpuprims_buffer_read(vals, 0, e->got, k));
    tu_gather(e->keys, d->size, e->perm, k, e->want);
    i = tu_first_diff(e->want, e->got, d->size, k);
    if (i < k) {
      uint64_t wv = tu_get_bits(d->size, e->want, i), gv = tu_get_bits(d->size, e->got, i);
      char w[64], g[64];
      tu_fmt_elem(d->id, &wv, w, sizeof w);
      tu_fmt_elem(d->id, &gv, g, sizeof g);
      TU_CHECKF(0, "topk %s %s n=%zu k=%zu (%s): value %zu: want %s, got %s", d->name, tu_order_name(o), n, k, what,
                i, w, g);
    } else {
      TU_CHECK(1);
    }
    if (idx) {
      TU_REQUIRE_OK(gpuprims_buffer_read(idx, 0, e->got_idx, k));
      for (i = 0; i < k && e->got_idx[i] == (uint64_t)e->perm[i]; i++) {
      }
      TU_CHECKF(i == k, "topk %s %s n=%zu k=%zu (%s): index %zu: want %zu, got %llu", d->name, tu_order_name(o), n, k,
                what, i, i < k ? e->perm[i] : 0, i < k ? (unsigned long long)e->got_idx[i] : 0ull);
    }
    gpuprims_buffer_destroy(vals);
    gpuprims_buffer_destroy(idx);
  }
}

static void run_case(env_t *e, const tu_dtype_info *d, size_t n, int p, int topk) {
  gpuprims_buffer *in;
  const char *what = PATTERN_NAMES[p];
  gen(e, d, n, p);
  in = make(e, d->id, n, e->keys);
  tu_sort_ref(d->id, e->keys, n, GPUPRIMS_ORDER_ASCENDING, e->perm, e->pairs);
  check_kth(e, d, in, n, what);
  if (topk) {
    check_topk(e, d, in, n, GPUPRIMS_ORDER_ASCENDING, what);
    tu_sort_ref(d->id, e->keys, n, GPUPRIMS_ORDER_DESCENDING, e->perm, e->pairs);
    check_topk(e, d, in, n, GPUPRIMS_ORDER_DESCENDING, what);
  }
  check_input_unchanged(e, d, in, n, what);
  gpuprims_buffer_destroy(in);
}

/* ------------------------------------------------------------------------------------- */
/* Errors: each with its status, and outputs and input untouched                          */
/* ------------------------------------------------------------------------------------- */

static void errors(env_t *e) {
  const float src[5] = {3.0f, 1.0f, 4.0f, 1.0f, 5.0f};
  gpuprims_context *other = NULL;
  gpuprims_buffer *in = make(e, GPUPRIMS_DTYPE_F32, 5, src), *empty = make(e, GPUPRIMS_DTYPE_F32, 0, NULL);
  gpuprims_buffer *v3 = make(e, GPUPRIMS_DTYPE_F32, 3, NULL), *v2 = make(e, GPUPRIMS_DTYPE_F32, 2, NULL);
  gpuprims_buffer *i3 = make(e, GPUPRIMS_DTYPE_U64, 3, NULL), *i3s = make(e, GPUPRIMS_DTYPE_I64, 3, NULL);
  gpuprims_buffer *u3 = make(e, GPUPRIMS_DTYPE_U32, 3, NULL), *one = make(e, GPUPRIMS_DTYPE_F32, 1, NULL);
  gpuprims_buffer *one_i = make(e, GPUPRIMS_DTYPE_I32, 1, NULL), *two = make(e, GPUPRIMS_DTYPE_F32, 2, NULL);
  gpuprims_buffer *foreign = NULL;
  float out = -7.0f, back[5];
  const float marks[3] = {-1.0f, -2.0f, -3.0f};
  uint64_t imarks[3] = {11, 12, 13}, iback[3];
  char msg[256];

  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &other));
  TU_REQUIRE_OK(gpuprims_buffer_create(other, GPUPRIMS_DTYPE_F32, 3, &foreign));
  TU_REQUIRE_OK(gpuprims_buffer_write(v3, 0, marks, 3));
  TU_REQUIRE_OK(gpuprims_buffer_write(i3, 0, imarks, 3));

  TU_EXPECT_STATUS(gpuprims_select_kth(NULL, in, 0, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, NULL, 0, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, in, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, in, 5, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(strstr(msg, "gpuprims_select_kth") && strstr(msg, "k = 5"), "message names the call and k: \"%s\"", msg);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, in, UINT64_MAX, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, empty, 0, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth(other, in, 0, &out), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_CHECKF(out == -7.0f, "out written by a failed select_kth: %g", (double)out);
  TU_EXPECT_STATUS(gpuprims_select_kth(e->ctx, (const gpuprims_buffer *)(void *)e->ctx, 0, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);

  TU_EXPECT_STATUS(gpuprims_select_kth_to_buffer(e->ctx, in, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth_to_buffer(e->ctx, in, 5, one), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_select_kth_to_buffer(e->ctx, in, 0, one_i), GPUPRIMS_STATUS_TYPE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_select_kth_to_buffer(e->ctx, in, 0, two), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_select_kth_to_buffer(e->ctx, in, 0, foreign), GPUPRIMS_STATUS_CONTEXT_MISMATCH);

  TU_EXPECT_STATUS(gpuprims_topk(NULL, in, 3, GPUPRIMS_ORDER_ASCENDING, v3, i3), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, NULL, 3, GPUPRIMS_ORDER_ASCENDING, v3, i3), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, GPUPRIMS_ORDER_ASCENDING, NULL, i3), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 6, GPUPRIMS_ORDER_ASCENDING, v3, i3), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, 77u, v3, i3), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, GPUPRIMS_ORDER_ASCENDING, u3, i3), GPUPRIMS_STATUS_TYPE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, GPUPRIMS_ORDER_ASCENDING, v3, i3s), GPUPRIMS_STATUS_TYPE_MISMATCH);
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(strstr(msg, "out_indices") != NULL, "message names out_indices: \"%s\"", msg);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, GPUPRIMS_ORDER_ASCENDING, v2, i3), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 2, GPUPRIMS_ORDER_ASCENDING, v2, i3), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 3, GPUPRIMS_ORDER_ASCENDING, foreign, i3),
                   GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 5, GPUPRIMS_ORDER_ASCENDING, in, NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_topk(e->ctx, in, 0, GPUPRIMS_ORDER_ASCENDING, empty, NULL), GPUPRIMS_STATUS_OK);

  TU_REQUIRE_OK(gpuprims_buffer_read(v3, 0, back, 3));
  TU_CHECKF(memcmp(back, marks, sizeof marks) == 0, "out_values written by a failed topk");
  TU_REQUIRE_OK(gpuprims_buffer_read(i3, 0, iback, 3));
  TU_CHECKF(memcmp(iback, imarks, sizeof imarks) == 0, "out_indices written by a failed topk");
  TU_REQUIRE_OK(gpuprims_buffer_read(in, 0, back, 5));
  TU_CHECKF(memcmp(back, src, sizeof src) == 0, "input changed by failed calls");

  gpuprims_buffer_destroy(foreign);
  gpuprims_context_destroy(other);
  gpuprims_buffer_destroy(in);
  gpuprims_buffer_destroy(empty);
  gpuprims_buffer_destroy(v3);
  gpuprims_buffer_destroy(v2);
  gpuprims_buffer_destroy(i3);
  gpuprims_buffer_destroy(i3s);
  gpuprims_buffer_destroy(u3);
  gpuprims_buffer_destroy(one);
  gpuprims_buffer_destroy(one_i);
  gpuprims_buffer_destroy(two);
}

int main(void) {
  env_t e;
  const tu_dtype_info *d = tu_dtypes();
  static const size_t sizes[] = {1,    2,    3,    7,    31,   32,   33,   100,  255,  256,  257,
                                 1000, 4095, 4096, 4097, 8191, 8192, 8193, 12289, 70001};
  static const gpuprims_dtype big[3] = {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_U64};
  size_t si;
  int i, p, big_n;
  uint64_t seed = tu_init("test_select");

  tu_rng_seed(&e.rng, seed);
  e.ctx = tu_open_context();
  /* The host backend's selection and sort take no path by length that 2^20 + 7 does not:
   * there 3,000,017 only repeats it (GPUPRIMS_TEST_FULL=1 runs it there too). */
  big_n = tu_is_cuda(e.ctx) || getenv("GPUPRIMS_TEST_FULL") != NULL;
  e.keys = (unsigned char *)tu_xmalloc(BIG_N * 8);
  e.got = (unsigned char *)tu_xmalloc(BIG_N * 8);
  e.want = (unsigned char *)tu_xmalloc(BIG_N * 8);
  e.back = (unsigned char *)tu_xmalloc(BIG_N * 8);
  e.got_idx = (uint64_t *)tu_xmalloc(BIG_N * 8);
  e.perm = (size_t *)tu_xmalloc(BIG_N * sizeof(size_t));
  e.pairs = (tu_sort_pair *)tu_xmalloc(BIG_N * sizeof(tu_sort_pair));
  e.calls = 0;

  errors(&e);
  printf("test_select: errors checked\n");

  if (getenv("GPUPRIMS_TEST_QUICK")) {
    /* small sizes, and one that takes the band path: for compute-sanitizer runs */
    for (i = 0; i < TU_NUM_DTYPES; i++)
      for (p = 0; p < NUM_PATTERNS; p++) {
        if (p == P_ZEROS && !d[i].is_float) continue;
        run_case(&e, &d[i], sizes[(size_t)tu_below(&e.rng, TU_ARRAY_LEN(sizes) - 1)], p, 1);
        if (p == P_RANDOM || p == P_FEW || p == P_SORTED) run_case(&e, &d[i], 70001, p, 1);
      }
    printf("test_select: quick run, %lu calls\n", e.calls);
  } else {
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    unsigned long before = e.calls;
    double t0 = seconds(), t1;
    for (si = 0; si < TU_ARRAY_LEN(sizes); si++)
      for (p = 0; p < NUM_PATTERNS; p++)
        if (p != P_ZEROS || d[i].is_float) run_case(&e, &d[i], sizes[si], p, 1);
    t1 = seconds();
    for (p = 0; p < NUM_PATTERNS; p++)
      if (p != P_ZEROS || d[i].is_float) run_case(&e, &d[i], ((size_t)1 << 20) + 7, p, p == P_RANDOM || p == P_FEW);
    printf("test_select: %-3s every input kind, sizes 1 to 2^20+7: %lu calls (%.1f s, 2^20+7: %.1f s)\n", d[i].name,
           e.calls - before, seconds() - t0, seconds() - t1);
    fflush(stdout);
  }
  if (big_n) {
    double t0 = seconds();
    for (i = 0; i < 3; i++) {
      run_case(&e, tu_dtype(big[i]), BIG_N, P_RANDOM, 1);
      run_case(&e, tu_dtype(big[i]), BIG_N, P_FEW, 0);
    }
    printf("test_select: n=%zu for u32, f32, u64 (%.1f s)\n", BIG_N, seconds() - t0);
  }
  }

  gpuprims_context_destroy(e.ctx);
  free(e.keys);
  free(e.got);
  free(e.want);
  free(e.back);
  free(e.got_idx);
  free(e.perm);
  free(e.pairs);
  return tu_finish();
}
