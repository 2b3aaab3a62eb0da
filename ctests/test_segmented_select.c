/*
 * test_segmented_select: gpuprims_segmented_select for every dtype against a sequential
 * reference: each row's keys sorted in C under the total order (test_util.h tu_sort_key:
 * -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every NaN one value), the element of rank
 * k read from there.
 *
 * Rows: random lengths 1..100, 1..5000, the edges of the CUDA length classes (192, 193,
 * 1024, 1025, 4096, 4097, 8192, 8193, among others) and a few long rows mixed in; the first
 * row starts past 0 and the last ends before the buffer does. Then short rows only (up to
 * 256: on CUDA a warp's up to 192, a block's above). Then 300,000 rows of 1..100 (u16 and
 * f32: on CUDA more than a resident grid takes, so they are staged). Row contents: random
 * bits, the type's special values (NaNs of both signs, infinities, signed zeros,
 * extremes) among random ones, all equal, 4 distinct values, a ramp. Offsets U32 and
 * U64; ranks NULL (lower median), all 0, each row's last, random (U32 and U64). `out` is
 * poisoned before every call, so an element never written fails; values must come back
 * unchanged.
 *
 * Errors: every bad row (offsets decreasing, a row past the end of values, an empty row,
 * a rank past its row) is INVALID_ARGUMENT whose message names the first bad row, with
 * out untouched, also when a later block of rows holds another bad row; wrong dtypes
 * (TYPE_MISMATCH), lengths (SIZE_MISMATCH), NULLs, another context's buffers, out sharing
 * memory with an input.
 *
 * GPUPRIMS_TEST_QUICK=1: fewer rows and shorter long rows (for compute-sanitizer).
 */
#include "test_util.h"

#define POISON 0xA5

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  int quick;
} env_t;


static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The main run's rows: short ones with a mid one every few, the class edges among them,
 * a few long ones; the first starts past 0 and the last ends before the values do. */
static tu_layout make_layout(env_t *e) {
  static const size_t edges[] = {1, 2, 31, 32, 33, 191, 192, 193, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193};
  tu_layout l = tu_layout_new(1 + tu_below(&e->rng, 40)); /* a gap before the first row */
  size_t i, shorts = e->quick ? 300 : 3000, mids = e->quick ? 20 : 200;
  for (i = 0; i < shorts + mids; i++) {
    /* mixed, not sorted by length: a mid row every few short ones */
    size_t n = (i % (shorts / mids + 1) == 0) ? 1 + (size_t)tu_below(&e->rng, 5000) : 1 + (size_t)tu_below(&e->rng, 100);
    tu_layout_add(&l, n);
    if (i % 97 == 5) tu_layout_add(&l, edges[(i / 97) % TU_ARRAY_LEN(edges)]);
  }
  for (i = 0; i < TU_ARRAY_LEN(edges); i++) tu_layout_add(&l, edges[i]);
  tu_layout_add(&l, e->quick ? 9000 : 70001);
  tu_layout_add(&l, 3);
  tu_layout_add(&l, e->quick ? 20000 : 300007);
  tu_layout_add(&l, 1);
  l.len = (size_t)l.offsets[l.nrows] + 1 + tu_below(&e->rng, 40); /* rows cover part of the buffer */
  return l;
}

/* Short rows only (up to 256 elements: on CUDA up to 192 a warp's, the rest a block's),
 * the edges 1, 31..33, 63..65, 191..193, 255, 256 among random lengths. */
static tu_layout make_short_layout(env_t *e) {
  static const size_t edges[] = {1, 2, 31, 32, 33, 63, 64, 65, 191, 192, 193, 255, 256};
  tu_layout l = tu_layout_new(tu_below(&e->rng, 3));
  size_t i, rows = e->quick ? 200 : 2000;
  for (i = 0; i < rows; i++)
    tu_layout_add(&l, i % 7 == 3 ? edges[(i / 7) % TU_ARRAY_LEN(edges)] : 1 + (size_t)tu_below(&e->rng, 256));
  l.len = (size_t)l.offsets[l.nrows] + tu_below(&e->rng, 3);
  return l;
}

/* Many short rows (1..100 elements): more than the selecting warps of a grid resident
 * at once take on an H100 (32 rows a warp), so the CUDA backend stages the answers
 * and copies them in a second launch, where smaller calls have each warp write its
 * own. Quick runs keep a few thousand. */
static tu_layout make_many_layout(env_t *e) {
  tu_layout l = tu_layout_new(0);
  size_t i, rows = e->quick ? 3000 : 300000;
  for (i = 0; i < rows; i++) tu_layout_add(&l, 1 + (size_t)tu_below(&e->rng, 100));
  l.len = (size_t)l.offsets[l.nrows];
  return l;
}

enum { R_MEDIAN, R_ZERO, R_LAST, R_RANDOM, NUM_RANKS };
static const char *RANK_NAMES[NUM_RANKS] = {"median (ks NULL)", "ranks 0", "ranks len-1", "random ranks"};

static void check_dtype(env_t *e, const tu_dtype_info *d, const tu_layout *l) {
  const size_t es = d->size, nrows = l->nrows, len = l->len;
  unsigned char *values = (unsigned char *)tu_xmalloc(len * es), *back = (unsigned char *)tu_xmalloc(len * es);
  unsigned char *got = (unsigned char *)tu_xmalloc(nrows * es);
  uint64_t *sorted = (uint64_t *)tu_xmalloc(len * sizeof(uint64_t)), *ranks = (uint64_t *)tu_xmalloc(nrows * 8);
  gpuprims_buffer *vb, *out;
  size_t row, i;
  int ow, rk;
  tu_fill_bytes(&e->rng, values, len * es); /* the gaps too */
  for (row = 0; row < nrows; row++) tu_fill_row(&e->rng, d, values, (size_t)l->offsets[row], (size_t)l->offsets[row + 1], 0);
  /* the reference: each row's order keys, sorted */
  for (i = 0; i < len; i++) sorted[i] = tu_sort_key(d, tu_get_bits(es, values, i));
  for (row = 0; row < nrows; row++)
    qsort(sorted + l->offsets[row], (size_t)tu_row_n(l, row), 8, cmp_u64);
  vb = tu_buffer_from_host(e->ctx, d->id, values, len);
  out = tu_buffer_create(e->ctx, d->id, nrows);
  for (ow = 0; ow < 2; ow++) {
    const gpuprims_dtype ot = ow ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
    gpuprims_buffer *ob = tu_index_buffer(e->ctx, ot, l->offsets, nrows + 1);
    for (rk = 0; rk < NUM_RANKS; rk++) {
      /* random ranks come as U32 with U32 offsets, U64 with U64 ones; the others the opposite */
      const gpuprims_dtype kt = (rk == R_RANDOM) == (ow == 1) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
      gpuprims_buffer *kb = NULL;
      size_t bad = 0;
      for (row = 0; row < nrows; row++) {
        uint64_t n = tu_row_n(l, row);
        ranks[row] = rk == R_MEDIAN ? (n - 1) / 2 : rk == R_ZERO ? 0 : rk == R_LAST ? n - 1 : tu_below(&e->rng, n);
      }
      if (rk != R_MEDIAN) kb = tu_index_buffer(e->ctx, kt, ranks, nrows);
      tu_poison(out, nrows, es);
      if (!TU_CHECKF(gpuprims_segmented_select(e->ctx, vb, ob, kb, out) == GPUPRIMS_STATUS_OK,
                     "%s, offsets %s, %s: the call failed (%zu rows over %zu elements; its error below)", d->name,
                     ow ? "u64" : "u32", RANK_NAMES[rk], nrows, len)) {
        gpuprims_buffer_destroy(kb); /* no rows to compare: the error is the finding */
        continue;
      }
      TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, nrows));
      for (row = 0; row < nrows; row++) {
        uint64_t want = sorted[l->offsets[row] + ranks[row]], have = tu_sort_key(d, tu_get_bits(es, got, row));
        if (want != have && bad++ < 3) {
          TU_CHECKF(0,
                    "%s, offsets %s, %s (%s): row %zu of %zu (begin %llu) %zu elements, rank %llu: order key 0x%llx "
                    "(raw 0x%llx%s), expected 0x%llx",
                    d->name, ow ? "u64" : "u32", RANK_NAMES[rk], rk == R_MEDIAN ? "-" : kt == GPUPRIMS_DTYPE_U64 ? "u64" : "u32",
                    row, nrows, (unsigned long long)l->offsets[row], (size_t)tu_row_n(l, row),
                    (unsigned long long)ranks[row], (unsigned long long)have,
                    (unsigned long long)tu_get_bits(es, got, row),
                    tu_get_bits(es, got, row) == (tu_width_mask(es) & 0xA5A5A5A5A5A5A5A5ull) ? ": the poison, never written" : "",
                    (unsigned long long)want);
        }
      }
      TU_CHECKF(bad == 0, "%s, offsets %s, %s: %zu of %zu rows wrong", d->name, ow ? "u64" : "u32", RANK_NAMES[rk], bad,
                nrows);
      gpuprims_buffer_destroy(kb);
    }
    gpuprims_buffer_destroy(ob);
  }
  TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, back, len));
  TU_CHECKF(memcmp(back, values, len * es) == 0, "%s: values changed", d->name);
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(out);
  free(values);
  free(back);
  free(got);
  free(sorted);
  free(ranks);
}

/* A call expected to fail with `want`, whose message contains `needle`, leaving out as poisoned. */
static void expect_fault(env_t *e, gpuprims_buffer *vb, gpuprims_buffer *ob, gpuprims_buffer *kb, gpuprims_buffer *out,
                         size_t nrows, size_t es, gpuprims_status want, const char *needle, const char *what) {
  char err[512];
  unsigned char *got = (unsigned char *)tu_xmalloc(nrows * es);
  size_t i, touched = 0;
  tu_poison(out, nrows, es);
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, vb, ob, kb, out), want);
  tu_last_error_text(err, sizeof err);
  TU_CHECKF(strstr(err, needle) != NULL, "%s: the message \"%s\" does not name \"%s\"", what, err, needle);
  TU_CHECKF(strstr(err, "gpuprims_segmented_select") != NULL, "%s: the message \"%s\" does not name the call", what, err);
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, nrows));
  for (i = 0; i < nrows * es; i++) touched += got[i] != POISON;
  TU_CHECKF(touched == 0, "%s: out was written (%zu bytes)", what, touched);
  free(got);
}

/* offsets (as U32 and as U64) with a fault at row `row_bad`; ks optional. */
static void bad_rows_case(env_t *e, const uint64_t *offsets, size_t nrows, size_t len, const uint64_t *ks,
                          size_t row_bad, const char *what) {
  const tu_dtype_info *d = tu_dtype(GPUPRIMS_DTYPE_F32);
  float *values = (float *)tu_xmalloc(len * 4);
  gpuprims_buffer *vb, *out;
  char needle[64], label[160];
  int ow;
  size_t i;
  for (i = 0; i < len; i++) values[i] = (float)i;
  vb = tu_buffer_from_host(e->ctx, d->id, values, len);
  out = tu_buffer_create(e->ctx, d->id, nrows);
  snprintf(needle, sizeof needle, "row %zu:", row_bad);
  for (ow = 0; ow < 2; ow++) {
    gpuprims_dtype t = ow ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
    gpuprims_buffer *ob = tu_index_buffer(e->ctx, t, offsets, nrows + 1);
    gpuprims_buffer *kb = ks ? tu_index_buffer(e->ctx, t, ks, nrows) : NULL;
    snprintf(label, sizeof label, "%s (offsets %s)", what, ow ? "u64" : "u32");
    expect_fault(e, vb, ob, kb, out, nrows, 4, GPUPRIMS_STATUS_INVALID_ARGUMENT, needle, label);
    gpuprims_buffer_destroy(ob);
    gpuprims_buffer_destroy(kb);
  }
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(out);
  free(values);
}

static void check_bad_rows(env_t *e) {
  static const uint64_t decreasing[] = {0, 5, 3, 8};
  static const uint64_t past_end[] = {2, 5, 9, 11}; /* len 10 */
  static const uint64_t empty[] = {0, 3, 3, 6};
  static const uint64_t ranked[] = {0, 3, 6, 10};
  static const uint64_t ranks[] = {2, 0, 4}; /* row 2 has 4 elements */
  const size_t big = e->quick ? 3000 : 50000;
  uint64_t *offsets = (uint64_t *)tu_xmalloc((big + 1) * 8), *ks = (uint64_t *)tu_xmalloc(big * 8);
  size_t i, first;
  bad_rows_case(e, decreasing, 3, 10, NULL, 1, "offsets decreasing");
  bad_rows_case(e, past_end, 3, 10, NULL, 2, "last row past the end");
  bad_rows_case(e, empty, 3, 10, NULL, 1, "empty row");
  bad_rows_case(e, ranked, 3, 10, ranks, 2, "rank past its row");
  /* Many rows, faults of every kind far apart: the lowest row is named, whichever
   * block of rows sees it first. */
  for (i = 0; i <= big; i++) offsets[i] = 3 * i;
  for (i = 0; i < big; i++) ks[i] = tu_below(&e->rng, 3);
  first = big / 3 + tu_below(&e->rng, big / 3);
  offsets[first + 1] = offsets[first]; /* row `first` empty, */
  ks[first] = 0;
  offsets[big - 2] = 1; /* offsets decrease at a later row, */
  ks[big / 5 * 4] = 7;  /* a rank past a later row */
  bad_rows_case(e, offsets, big, 3 * big, ks, first, "many rows, the first bad one named");
  ks[first / 2] = 3; /* an earlier rank fault now comes first */
  bad_rows_case(e, offsets, big, 3 * big, ks, first / 2, "many rows, an earlier rank fault");
  for (i = 0; i <= big; i++) offsets[i] = 3 * i;
  bad_rows_case(e, offsets, big, 3 * big - 1, NULL, big - 1, "many rows, the last past the end");
  free(offsets);
  free(ks);
}

static void check_arguments(env_t *e) {
  static const uint64_t offs[] = {0, 2, 5};
  static const uint32_t offs32[] = {0, 2, 5};
  const uint64_t ks[] = {1, 2};
  float values[6] = {3, 1, 2, 9, 8, 7};
  gpuprims_context *other = NULL;
  gpuprims_buffer *vb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, 6);
  gpuprims_buffer *ob = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, offs, 3);
  gpuprims_buffer *kb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks, 2);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 2);
  gpuprims_buffer *o_i32 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, offs32, 3);
  gpuprims_buffer *k_f32 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, 2);
  gpuprims_buffer *k_short = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks, 1);
  gpuprims_buffer *out_f64 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F64, 2);
  gpuprims_buffer *out_long = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 3);
  gpuprims_buffer *o_empty = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U32, 0);
  gpuprims_buffer *o_one = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U32, offs32, 1);
  gpuprims_buffer *out_none = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 0);
  gpuprims_buffer *vb2 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, 2);
  gpuprims_buffer *foreign = NULL;
  float got[2];

  TU_EXPECT_OK(gpuprims_segmented_select(e->ctx, vb, ob, kb, out));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, 2));
  TU_CHECKF(got[0] == 3.0f && got[1] == 9.0f, "ranks 1, 2 of {3,1},{2,9,8}: got %g, %g", got[0], got[1]);
  TU_EXPECT_OK(gpuprims_segmented_select(e->ctx, vb, ob, NULL, out));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, 2));
  TU_CHECKF(got[0] == 1.0f && got[1] == 8.0f, "medians of {3,1},{2,9,8}: got %g, %g", got[0], got[1]);
  /* no rows: nothing to do */
  TU_EXPECT_OK(gpuprims_segmented_select(e->ctx, vb, o_one, NULL, out_none));

  expect_fault(e, vb, o_i32, kb, out, 2, 4, GPUPRIMS_STATUS_TYPE_MISMATCH, "offsets", "offsets of i32");
  expect_fault(e, vb, ob, k_f32, out, 2, 4, GPUPRIMS_STATUS_TYPE_MISMATCH, "ks", "ks of f32");
  expect_fault(e, vb, ob, k_short, out, 2, 4, GPUPRIMS_STATUS_SIZE_MISMATCH, "ks", "ks of 1 entry for 2 rows");
  expect_fault(e, vb, o_empty, NULL, out, 2, 4, GPUPRIMS_STATUS_SIZE_MISMATCH, "offsets", "offsets empty");
  expect_fault(e, vb, ob, kb, out_long, 3, 4, GPUPRIMS_STATUS_SIZE_MISMATCH, "out", "out of 3 for 2 rows");
  expect_fault(e, vb, ob, kb, out_f64, 2, 8, GPUPRIMS_STATUS_TYPE_MISMATCH, "out", "out of f64 for f32 values");
  expect_fault(e, vb2, ob, kb, vb2, 2, 4, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out is values");
  TU_EXPECT_STATUS(gpuprims_segmented_select(NULL, vb, ob, kb, out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, NULL, ob, kb, out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, vb, NULL, kb, out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, vb, ob, kb, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, vb, (const gpuprims_buffer *)e->ctx, kb, out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &other));
  TU_REQUIRE_OK(gpuprims_buffer_from_host(other, GPUPRIMS_DTYPE_U64, ks, 2, &foreign));
  TU_EXPECT_STATUS(gpuprims_segmented_select(e->ctx, vb, ob, foreign, out), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_segmented_select(other, vb, ob, kb, out), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  gpuprims_buffer_destroy(foreign);
  gpuprims_context_destroy(other);
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(ob);
  gpuprims_buffer_destroy(kb);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(o_i32);
  gpuprims_buffer_destroy(k_f32);
  gpuprims_buffer_destroy(k_short);
  gpuprims_buffer_destroy(out_f64);
  gpuprims_buffer_destroy(out_long);
  gpuprims_buffer_destroy(o_empty);
  gpuprims_buffer_destroy(o_one);
  gpuprims_buffer_destroy(out_none);
  gpuprims_buffer_destroy(vb2);
}

int main(void) {
  env_t e;
  tu_layout l;
  int i;
  const char *q = getenv("GPUPRIMS_TEST_QUICK");
  tu_rng_seed(&e.rng, tu_init("test_segmented_select"));
  e.quick = q && *q && strcmp(q, "0") != 0;
  e.ctx = tu_open_context();
  check_arguments(&e);
  check_bad_rows(&e);
  l = make_layout(&e);
  printf("%zu rows over %zu elements%s\n", l.nrows, l.len, e.quick ? " (quick)" : "");
  for (i = 0; i < TU_NUM_DTYPES; i++) check_dtype(&e, &tu_dtypes()[i], &l);
  tu_layout_free(&l);
  l = make_short_layout(&e);
  printf("%zu short rows over %zu elements\n", l.nrows, l.len);
  for (i = 0; i < TU_NUM_DTYPES; i++) check_dtype(&e, &tu_dtypes()[i], &l);
  tu_layout_free(&l);
  l = make_many_layout(&e);
  printf("%zu rows of 1..100 over %zu elements (u16, f32)\n", l.nrows, l.len);
  for (i = 0; i < TU_NUM_DTYPES; i++)
    if (tu_dtypes()[i].id == GPUPRIMS_DTYPE_U16 || tu_dtypes()[i].id == GPUPRIMS_DTYPE_F32) check_dtype(&e, &tu_dtypes()[i], &l);
  tu_layout_free(&l);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
