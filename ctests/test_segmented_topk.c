/*
 * test_segmented_topk: gpuprims_segmented_topk for every dtype against a sequential
 * reference written here: each row's elements ordered by (order key, index) under the
 * total order (test_util.h tu_sort_key: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN,
 * every NaN one value, so NaNs tie and go by index), its first k read from there, bit for
 * bit, and the slots past a short row's length zero bits with index UINT64_MAX.
 *
 * Rows: ragged (offsets U32 and U64) with lengths in the classes a CUDA backend would
 * split at (0, 1, 31..33, 255..257, 1000, 4095..4097, 20000, 100000); uniform rows
 * (row_len, a 2-D array) of those lengths, and a few of 40,000 and 100,003 (which the
 * CUDA backend splits into parts); 5,000 ragged rows of 0..300 with per-row k of
 * 0..20. k: one for every row (0, 1, up to and past the row lengths; 4096, 4097 and the
 * row's length for a 20,000-long row) or per-row ks (U32 and U64). Both orders; indices
 * NULL and not. Row contents: random bits, the type's special values (NaNs of both signs
 * and other payloads, infinities, signed zeros, subnormals, the largest finite), all
 * equal, few distinct, a ramp. Outputs are poisoned before every call; values must come
 * back unchanged.
 *
 * Errors: every argument fault with its status, the message naming the call (and, for a
 * bad row, "row N"), both outputs untouched, and a good call on the same context after
 * each. Then a sequence of other primitives interleaved with segmented top-k calls on one
 * context, each checked.
 *
 * Nothing here assumes the host backend: GPUPRIMS_BACKEND=cuda runs it on a GPU.
 * GPUPRIMS_TEST_QUICK=1: fewer rows and shorter long rows; GPUPRIMS_TEST_PARTS: see main().
 */
#include "test_util.h"

#define POISON 0xA5

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  int quick;
} env_t;

/* ------------------------------------------------------------------------------------- */
/* Rows and their contents                                                                */
/* ------------------------------------------------------------------------------------- */

/* Random bits everywhere (gaps too), then each row's content. Returns len * es bytes. */
static unsigned char *make_values(env_t *e, const tu_dtype_info *d, const tu_layout *l) {
  unsigned char *values = (unsigned char *)tu_xmalloc(l->len * d->size);
  size_t r;
  tu_fill_bytes(&e->rng, values, l->len * d->size);
  for (r = 0; r < l->nrows; r++) tu_fill_row(&e->rng, d, values, (size_t)l->offsets[r], (size_t)l->offsets[r + 1], 1);
  return values;
}

/* ------------------------------------------------------------------------------------- */
/* The reference                                                                          */
/* ------------------------------------------------------------------------------------- */

/* perm[offsets[r] + j]: the index within row r of its j-th element in order o (ties by index). */
static size_t *ref_perm(const tu_dtype_info *d, const unsigned char *values, const tu_layout *l, gpuprims_order o) {
  size_t *perm = (size_t *)tu_xmalloc(l->len * sizeof(size_t)), r;
  for (r = 0; r < l->nrows; r++)
    tu_sort_ref(d->id, values + l->offsets[r] * d->size, (size_t)tu_row_n(l, r), o, perm + l->offsets[r], NULL);
  return perm;
}

/* One call's k: the same for every row, or per-row ks. */
typedef struct {
  int per_row;
  uint64_t k;
  const uint64_t *ks;
} ks_t;

static uint64_t k_of(const ks_t *k, size_t r) { return k->per_row ? k->ks[r] : k->k; }

static size_t total_of(const ks_t *k, size_t nrows) {
  size_t r, t = 0;
  for (r = 0; r < nrows; r++) t += (size_t)k_of(k, r);
  return t;
}

/* Compares what a call wrote with the reference; the number of wrong slots. */
static size_t compare(const tu_dtype_info *d, const unsigned char *values, const tu_layout *l, const size_t *perm,
                      const ks_t *k, const unsigned char *got, const uint64_t *got_ix, const char *what) {
  const size_t es = d->size;
  const uint64_t poison = tu_width_mask(es) & 0xA5A5A5A5A5A5A5A5ull;
  size_t r, j, pos = 0, bad = 0;
  for (r = 0; r < l->nrows; r++) {
    const uint64_t n = tu_row_n(l, r), kr = k_of(k, r);
    for (j = 0; j < kr; j++, pos++) {
      const int in_row = j < n;
      const uint64_t want_ix = in_row ? (uint64_t)perm[l->offsets[r] + j] : UINT64_MAX;
      const uint64_t want = in_row ? tu_get_bits(es, values, (size_t)(l->offsets[r] + want_ix)) : 0;
      const uint64_t have = tu_get_bits(es, got, pos), have_ix = got_ix ? got_ix[pos] : want_ix;
      if (want == have && want_ix == have_ix) continue;
      if (bad++ < 4)
        TU_CHECKF(0, "%s %s: row %zu (%llu elements, k %llu) slot %zu: value 0x%llx index %lld%s, expected 0x%llx index %lld",
                  d->name, what, r, (unsigned long long)n, (unsigned long long)kr, j, (unsigned long long)have,
                  (long long)have_ix, have == poison ? " (the poison: never written)" : "", (unsigned long long)want,
                  (long long)want_ix);
    }
  }
  return bad;
}

/* ------------------------------------------------------------------------------------- */
/* Calls                                                                                  */
/* ------------------------------------------------------------------------------------- */

/* How a call is made: ragged (offsets of off_dt) or uniform rows, ks of ks_dt, order,
 * indices or not. */
typedef struct {
  int ragged;
  gpuprims_dtype off_dt, ks_dt;
  gpuprims_order order;
  int with_ix;
} how_t;

static void describe(const how_t *h, const ks_t *k, char *buf, size_t len) {
  char kk[48];
  if (k->per_row) snprintf(kk, sizeof kk, "ks %s", tu_dtype_name(h->ks_dt));
  else snprintf(kk, sizeof kk, "k %llu", (unsigned long long)k->k);
  snprintf(buf, len, "%s, %s, %s, %s", h->ragged ? (h->off_dt == GPUPRIMS_DTYPE_U32 ? "offsets u32" : "offsets u64") : "row_len",
           kk, tu_order_name(h->order), h->with_ix ? "indices" : "no indices");
}

/* One call on values vb (layout l) checked against the reference perm (of h->order). */
static void run_case(env_t *e, const tu_dtype_info *d, const unsigned char *values, gpuprims_buffer *vb,
                     const tu_layout *l, const size_t *perm, const how_t *h, const ks_t *k) {
  const size_t es = d->size, total = total_of(k, l->nrows);
  gpuprims_buffer *ob = NULL, *kb = NULL, *out, *ix = NULL;
  unsigned char *got = (unsigned char *)tu_xmalloc(total * es);
  uint64_t *got_ix = (uint64_t *)tu_xmalloc(total * 8);
  char what[160];
  gpuprims_status s;
  describe(h, k, what, sizeof what);
  if (h->ragged) ob = tu_index_buffer(e->ctx, h->off_dt, l->offsets, l->nrows + 1);
  if (k->per_row) kb = tu_index_buffer(e->ctx, h->ks_dt, k->ks, l->nrows);
  out = tu_buffer_create(e->ctx, d->id, total);
  tu_poison(out, total, es);
  if (h->with_ix) {
    ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, total);
    tu_poison(ix, total, 8);
  }
  s = gpuprims_segmented_topk(e->ctx, vb, ob, h->ragged ? 0 : l->row_len, k->per_row ? 0 : k->k, kb, h->order, out, ix);
  if (TU_CHECKF(s == GPUPRIMS_STATUS_OK, "%s %s: returned %s (%zu rows over %zu elements)", d->name, what,
                tu_status_name(s), l->nrows, l->len)) {
    TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, total));
    if (ix) TU_REQUIRE_OK(gpuprims_buffer_read(ix, 0, got_ix, total));
    TU_CHECKF(compare(d, values, l, perm, k, got, ix ? got_ix : NULL, what) == 0, "%s %s: wrong results (%zu rows)",
              d->name, what, l->nrows);
  }
  gpuprims_buffer_destroy(ob);
  gpuprims_buffer_destroy(kb);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(ix);
  free(got);
  free(got_ix);
}

/* Per-row ks: 0, 1, the row's length, past it, or random up to a little past it. */
static void random_ks(env_t *e, const tu_layout *l, uint64_t *ks, uint64_t cap) {
  size_t r;
  for (r = 0; r < l->nrows; r++) {
    uint64_t n = tu_row_n(l, r), k;
    switch ((int)tu_below(&e->rng, 6)) {
      case 0: k = 0; break;
      case 1: k = 1; break;
      case 2: k = n; break;
      case 3: k = n + 1 + tu_below(&e->rng, 5); break;
      default: k = tu_below(&e->rng, n + 3);
    }
    ks[r] = k < cap ? k : cap;
  }
}

/* Every k of ks_list, then per-row ks, in both orders, over values of dtype d in layout
 * l; offsets, ks dtypes and indices vary from call to call. */
static void check_layout(env_t *e, const tu_dtype_info *d, const tu_layout *l, const uint64_t *k_list, size_t nk,
                         uint64_t ks_cap) {
  unsigned char *values = make_values(e, d, l), *back = (unsigned char *)tu_xmalloc(l->len * d->size);
  uint64_t *ks = (uint64_t *)tu_xmalloc((l->nrows + 1) * 8);
  gpuprims_buffer *vb = tu_buffer_from_host(e->ctx, d->id, values, l->len);
  int oi;
  size_t i, calls = 0;
  for (oi = 0; oi < 2; oi++) {
    const gpuprims_order o = oi ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
    size_t *perm = ref_perm(d, values, l, o);
    for (i = 0; i <= nk; i++, calls++) {
      how_t h;
      ks_t k;
      h.ragged = l->row_len == 0 || (calls % 3 == 2); /* uniform rows now and then as offsets too */
      h.off_dt = (calls & 1) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
      h.ks_dt = (calls & 2) ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
      h.order = o;
      h.with_ix = (calls % 4) != 1;
      k.per_row = i == nk;
      k.k = i < nk ? k_list[i] : 0;
      k.ks = ks;
      if (k.per_row) random_ks(e, l, ks, ks_cap);
      run_case(e, d, values, vb, l, perm, &h, &k);
    }
    free(perm);
  }
  TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, back, l->len));
  TU_CHECKF(memcmp(back, values, l->len * d->size) == 0, "%s: values changed", d->name);
  gpuprims_buffer_destroy(vb);
  free(values);
  free(back);
  free(ks);
}

/* ------------------------------------------------------------------------------------- */
/* The size classes                                                                       */
/* ------------------------------------------------------------------------------------- */

/* Ragged rows of every length class, a few each (one of the longest), mixed; empty rows
 * among them, the first row past 0 and the last ending before the values do. */
static tu_layout class_layout(env_t *e) {
  static const size_t lens[] = {0, 1, 31, 32, 33, 255, 256, 257, 1000, 4095, 4096, 4097};
  tu_layout l = tu_layout_new(1 + tu_below(&e->rng, 9));
  size_t i, rounds = e->quick ? 1 : 2;
  for (i = 0; i < rounds * TU_ARRAY_LEN(lens); i++) {
    tu_layout_add(&l, lens[(i * 7) % TU_ARRAY_LEN(lens)]);
    tu_layout_add(&l, (size_t)tu_below(&e->rng, 300)); /* a short one between */
  }
  tu_layout_add(&l, 20000);
  tu_layout_add(&l, 0);
  tu_layout_add(&l, e->quick ? 30000 : 100000);
  tu_layout_add(&l, 3);
  l.len = (size_t)l.offsets[l.nrows] + tu_below(&e->rng, 9);
  return l;
}

static void check_classes(env_t *e) {
  static const uint64_t k_list[] = {0, 1, 32, 257, 4097};
  tu_layout l = class_layout(e);
  int i;
  printf("ragged classes: %zu rows over %zu elements, every dtype\n", l.nrows, l.len);
  for (i = 0; i < TU_NUM_DTYPES; i++) check_layout(e, &tu_dtypes()[i], &l, k_list, TU_ARRAY_LEN(k_list), 5000);
  tu_layout_free(&l);
}

/* Uniform rows (a 2-D array) of each length class: k from 0 up to and past the length. */
static void check_uniform(env_t *e) {
  static const size_t lens[] = {1, 31, 32, 33, 255, 256, 257, 1000, 4095, 4096, 4097, 20000};
  size_t li;
  int i;
  printf("uniform rows of 1 .. 20000, every dtype\n");
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    for (li = 0; li < TU_ARRAY_LEN(lens); li++) {
      const size_t n = lens[li], nrows = n >= 4096 ? 1 + (size_t)tu_below(&e->rng, 2) : n >= 1000 ? 3 : 8;
      uint64_t k_list[4];
      tu_layout l;
      if (e->quick && n == 20000 && i % 3 != 0) continue;
      l = tu_layout_uniform(nrows, n);
      k_list[0] = tu_below(&e->rng, n + 1);
      k_list[1] = n;
      k_list[2] = n + 1 + tu_below(&e->rng, 3);
      k_list[3] = n == 20000 ? 4096 + (uint64_t)(i & 1) : 1; /* 4096 and 4097 of a 20000-long row */
      check_layout(e, &tu_dtypes()[i], &l, k_list, 4, n + 2);
      tu_layout_free(&l);
    }
  }
}

/* A few long uniform rows, which a CUDA backend splits into parts (a block a part, then
 * the top-k of the parts' results): lengths that divide unevenly, k from 1 to the most
 * a block gives and past it (those rows go whole to the device-wide top-k). */
static void check_split(env_t *e) {
  static const size_t lens[] = {40000, 100003};
  size_t li;
  int i;
  printf("a few uniform rows of 40000 and 100003 (split on CUDA), every dtype\n");
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    for (li = 0; li < TU_ARRAY_LEN(lens); li++) {
      uint64_t k_list[5] = {1, 17, 100, 1024, 0};
      tu_layout l;
      if (e->quick && i % 3 != (int)li) continue;
      l = tu_layout_uniform(li == 0 ? 3 : 2, lens[li]);
      k_list[4] = li == 0 ? 2048 : 2049; /* the most a block gives, and one more */
      k_list[(size_t)i % 4] = 1 + tu_below(&e->rng, 2048);
      check_layout(e, &tu_dtypes()[i], &l, k_list, 5, 2049);
      tu_layout_free(&l);
    }
  }
}

/* Many short ragged rows (0..300) with per-row k of 0..20 (and one k for all). */
static void check_many(env_t *e) {
  static const uint64_t k_list[] = {20};
  static const gpuprims_dtype types[] = {GPUPRIMS_DTYPE_U16, GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_BF16};
  tu_layout l = tu_layout_new(0);
  size_t i, rows = e->quick ? 500 : 5000;
  for (i = 0; i < rows; i++) tu_layout_add(&l, (size_t)tu_below(&e->rng, 301));
  l.len = (size_t)l.offsets[l.nrows];
  printf("%zu rows of 0..300 over %zu elements, k 0..20 (u16, f32, bf16)\n", l.nrows, l.len);
  for (i = 0; i < TU_ARRAY_LEN(types); i++) check_layout(e, tu_dtype(types[i]), &l, k_list, 1, 20);
  tu_layout_free(&l);
}

/* Ties: every element equal (and every one a NaN of its own payload): indices in order. */
static void check_ties(env_t *e) {
  static const uint64_t k_list[] = {5, 64};
  tu_layout l = tu_layout_uniform(4, 100);
  const tu_dtype_info *d = tu_dtype(GPUPRIMS_DTYPE_F32);
  unsigned char *values = (unsigned char *)tu_xmalloc(l.len * 4);
  gpuprims_buffer *vb;
  size_t i;
  int oi;
  for (i = 0; i < l.len; i++) tu_put_bits(d->id, values, i, i < 200 ? 0x3F800000u : tu_nan_bits(d->id, (int)i));
  vb = tu_buffer_from_host(e->ctx, d->id, values, l.len);
  for (oi = 0; oi < 2; oi++) {
    how_t h;
    ks_t k;
    size_t *perm;
    h.ragged = oi;
    h.off_dt = h.ks_dt = GPUPRIMS_DTYPE_U64;
    h.order = oi ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
    h.with_ix = 1;
    perm = ref_perm(d, values, &l, h.order);
    for (i = 0; i < l.len; i++) TU_CHECK(perm[i] == i % 100); /* the reference agrees: ties by index */
    k.per_row = 0;
    k.ks = NULL;
    k.k = k_list[oi];
    run_case(e, d, values, vb, &l, perm, &h, &k);
    free(perm);
  }
  gpuprims_buffer_destroy(vb);
  free(values);
  tu_layout_free(&l);
}

/* ------------------------------------------------------------------------------------- */
/* Argument faults                                                                        */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *values, *offsets;
  uint64_t row_len, k;
  gpuprims_buffer *ks;
  gpuprims_order order;
  gpuprims_buffer *out, *ix;
} args_t;

static gpuprims_status call(const args_t *a) {
  return gpuprims_segmented_topk(a->ctx, a->values, a->offsets, a->row_len, a->k, a->ks, a->order, a->out, a->ix);
}

/* A known good call on the context: rows {5, 1, 4}, {}, {2, 9} with k 2, descending. */
static void good_call(env_t *e, const char *after) {
  static const float v[] = {5, 1, 4, 2, 9};
  static const uint32_t offs[] = {0, 3, 3, 5};
  static const float want[] = {5, 4, 0, 0, 9, 2};
  static const uint64_t want_ix[] = {0, 2, UINT64_MAX, UINT64_MAX, 1, 0};
  gpuprims_buffer *vb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, v, 5);
  gpuprims_buffer *ob = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U32, offs, 4);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 6);
  gpuprims_buffer *ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 6);
  float got[6];
  uint64_t got_ix[6];
  tu_poison(out, 6, 4);
  TU_EXPECT_OK(gpuprims_segmented_topk(e->ctx, vb, ob, 0, 2, NULL, GPUPRIMS_ORDER_DESCENDING, out, ix));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, 6));
  TU_REQUIRE_OK(gpuprims_buffer_read(ix, 0, got_ix, 6));
  TU_CHECKF(memcmp(got, want, sizeof want) == 0 && memcmp(got_ix, want_ix, sizeof want_ix) == 0,
            "the good call after %s: got %g %g %g %g %g %g", after, got[0], got[1], got[2], got[3], got[4], got[5]);
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(ob);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(ix);
}

/* Poisons a buffer whole (when it is one); returns its bytes, or NULL. */
static unsigned char *poison_all(gpuprims_buffer *b, size_t *bytes) {
  size_t n = 0;
  gpuprims_dtype t = 0;
  unsigned char *p;
  *bytes = 0;
  if (!b || gpuprims_buffer_len(b, &n) != GPUPRIMS_STATUS_OK || gpuprims_buffer_dtype(b, &t) != GPUPRIMS_STATUS_OK)
    return NULL;
  tu_poison(b, n, tu_dtype_size(t));
  *bytes = n * tu_dtype_size(t);
  p = (unsigned char *)tu_xmalloc(*bytes);
  TU_REQUIRE_OK(gpuprims_buffer_read(b, 0, p, n));
  return p;
}

static void expect_unchanged(gpuprims_buffer *b, const unsigned char *before, size_t bytes, const char *what, const char *name) {
  size_t n = 0, i, touched = 0;
  gpuprims_dtype t = 0;
  unsigned char *p;
  if (!before) return;
  TU_REQUIRE_OK(gpuprims_buffer_len(b, &n));
  TU_REQUIRE_OK(gpuprims_buffer_dtype(b, &t));
  p = (unsigned char *)tu_xmalloc(bytes);
  TU_REQUIRE_OK(gpuprims_buffer_read(b, 0, p, n));
  for (i = 0; i < bytes; i++) touched += p[i] != POISON;
  TU_CHECKF(touched == 0, "%s: %s was written (%zu bytes)", what, name, touched);
  free(p);
}

/* The call fails with `want`, its message naming the call and `needle`; both outputs stay
 * poisoned; then a good call on the same context works. */
static void expect_fault(env_t *e, const args_t *a, gpuprims_status want, const char *needle, const char *what) {
  char err[512];
  size_t ob = 0, ib = 0;
  unsigned char *o = poison_all(a->out, &ob), *x = a->ix != a->out ? poison_all(a->ix, &ib) : NULL;
  gpuprims_status s = call(a);
  TU_CHECKF(s == want, "%s: returned %s, expected %s", what, tu_status_name(s), tu_status_name(want));
  tu_last_error_text(err, sizeof err);
  TU_CHECKF(strstr(err, needle) != NULL, "%s: the message \"%s\" does not name \"%s\"", what, err, needle);
  TU_CHECKF(strstr(err, "gpuprims_segmented_topk") != NULL, "%s: the message \"%s\" does not name the call", what, err);
  expect_unchanged(a->out, o, ob, what, "out_values");
  expect_unchanged(a->ix, x, ib, what, "out_indices");
  free(o);
  free(x);
  good_call(e, what);
}

/* Rows {3, 1}, {2, 9, 8} of f32 (offsets U64), k 2: every fault one at a time. */
static void check_arguments(env_t *e) {
  static const uint64_t offs[] = {0, 2, 5};
  static const uint32_t offs32[] = {0, 2, 5};
  static const uint64_t ks[] = {1, 2}, ks_few[] = {1, 1}, ks_many[] = {2, 2}, big[] = {0, 2};
  const float values[6] = {3, 1, 2, 9, 8, 7};
  gpuprims_context *other = NULL;
  gpuprims_buffer *vb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, 5);
  gpuprims_buffer *ob = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, offs, 3);
  gpuprims_buffer *kb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks, 2);
  gpuprims_buffer *k_few = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U32, offs32, 2); /* {0, 2}: adds up to 2 */
  gpuprims_buffer *k_few64 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks_few, 2);
  gpuprims_buffer *k_many = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks_many, 2);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 4);
  gpuprims_buffer *out3 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 3);
  gpuprims_buffer *ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 4);
  gpuprims_buffer *ix3 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 3);
  gpuprims_buffer *ix_i64 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_I64, 4);
  gpuprims_buffer *o_i32 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, offs32, 3);
  gpuprims_buffer *o_empty = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U32, 0);
  gpuprims_buffer *k_f32 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, 2);
  gpuprims_buffer *k_short = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, ks, 1);
  gpuprims_buffer *out_f64 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F64, 4);
  gpuprims_buffer *out_long = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 5);
  gpuprims_buffer *v64 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, big, 2); /* u64 values {0, 2} */
  gpuprims_buffer *o64 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, big, 2); /* one row of 2 */
  gpuprims_buffer *k64 = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, big + 1, 1); /* ks {2} */
  gpuprims_buffer *out64 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 2);
  gpuprims_buffer *out64_1 = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 1);
  gpuprims_buffer *foreign = NULL;
  args_t a, g;
  float got[4];

  g.ctx = e->ctx;
  g.values = vb;
  g.offsets = ob;
  g.row_len = 0;
  g.k = 2;
  g.ks = NULL;
  g.order = GPUPRIMS_ORDER_ASCENDING;
  g.out = out;
  g.ix = ix;
  TU_EXPECT_OK(call(&g));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, 4));
  TU_CHECKF(got[0] == 1 && got[1] == 3 && got[2] == 2 && got[3] == 8, "k 2 of {3,1},{2,9,8}: got %g %g %g %g", got[0],
            got[1], got[2], got[3]);
  a = g, a.ks = kb, a.k = 0, a.out = out3, a.ix = ix3;
  TU_EXPECT_OK(call(&a));
  a = g, a.offsets = NULL, a.row_len = 5, a.k = 4; /* one row of 5 */
  TU_EXPECT_OK(call(&a));

  a = g, a.ctx = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_NULL_ARGUMENT, "ctx", "ctx NULL");
  a = g, a.values = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_NULL_ARGUMENT, "values", "values NULL");
  a = g, a.out = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_NULL_ARGUMENT, "out_values", "out_values NULL");
  a = g, a.offsets = (gpuprims_buffer *)e->ctx;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "offsets", "a context as offsets");
  a = g, a.order = 2;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "order", "order 2");
  a = g, a.order = 0xFFFFFFFFu;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "order", "order 0xFFFFFFFF");
  a = g, a.offsets = o_i32;
  expect_fault(e, &a, GPUPRIMS_STATUS_TYPE_MISMATCH, "offsets", "offsets of i32");
  a = g, a.offsets = o_empty;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "offsets", "offsets empty");
  a = g, a.row_len = 2;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "row_len", "row_len with offsets");
  a = g, a.offsets = NULL, a.row_len = 0;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "row_len", "row_len 0 without offsets");
  a = g, a.offsets = NULL, a.row_len = 2;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "row_len", "row_len 2 of 5 values");
  a = g, a.ks = kb, a.k = 3;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "k = 3", "k with ks");
  a = g, a.ks = k_f32, a.k = 0;
  expect_fault(e, &a, GPUPRIMS_STATUS_TYPE_MISMATCH, "ks", "ks of f32");
  a = g, a.ks = k_short, a.k = 0;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "ks", "ks of 1 entry for 2 rows");
  a = g, a.out = out_f64;
  expect_fault(e, &a, GPUPRIMS_STATUS_TYPE_MISMATCH, "out_values", "out_values of f64");
  a = g, a.out = out_long;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "out_values", "out_values of 5 for 2 x 2");
  a = g, a.k = UINT64_MAX;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "2^64", "2 rows of k = 2^64 - 1");
  a = g, a.k = 0, a.ks = k_few, a.out = out3, a.ix = ix3;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "out_values", "ks u32 adding up to 2 for 3");
  a = g, a.k = 0, a.ks = k_few64, a.out = out3, a.ix = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "out_values", "ks adding up to 2 for 3");
  a = g, a.k = 0, a.ks = k_many, a.out = out3, a.ix = ix3;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "out_values", "ks adding up to 4 for 3");
  a = g, a.offsets = NULL, a.row_len = 5, a.k = 0, a.ks = k_many, a.out = out3, a.ix = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "ks", "ks of 2 for 1 uniform row");
  a = g, a.ix = ix_i64;
  expect_fault(e, &a, GPUPRIMS_STATUS_TYPE_MISMATCH, "out_indices", "out_indices of i64");
  a = g, a.ix = ix3;
  expect_fault(e, &a, GPUPRIMS_STATUS_SIZE_MISMATCH, "out_indices", "out_indices of 3 for 4");
  a = g, a.offsets = NULL, a.row_len = 5, a.k = 5, a.out = vb, a.ix = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_values is values");
  a = g, a.values = v64, a.offsets = o64, a.out = o64, a.ix = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_values is offsets");
  a = g, a.values = v64, a.offsets = o64, a.k = 0, a.ks = k64, a.out = k64, a.ix = NULL;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_values is ks");
  a = g, a.values = v64, a.offsets = o64, a.out = out64, a.ix = out64;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_indices is out_values");
  a = g, a.values = v64, a.offsets = NULL, a.row_len = 2, a.out = out64, a.ix = v64;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_indices is values");
  a = g, a.values = v64, a.offsets = o64, a.out = out64, a.ix = o64;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_indices is offsets");
  a = g, a.values = v64, a.offsets = o64, a.k = 0, a.ks = k64, a.out = out64_1, a.ix = k64;
  expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, "shares memory", "out_indices is ks");
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &other));
  TU_REQUIRE_OK(gpuprims_buffer_from_host(other, GPUPRIMS_DTYPE_U64, ks, 2, &foreign));
  a = g, a.k = 0, a.ks = foreign;
  expect_fault(e, &a, GPUPRIMS_STATUS_CONTEXT_MISMATCH, "ks", "ks of another context");
  a = g, a.ctx = other;
  TU_EXPECT_STATUS(call(&a), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  gpuprims_buffer_destroy(foreign);
  gpuprims_context_destroy(other);
  /* nothing to do: no rows, k 0 */
  {
    gpuprims_buffer *one = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U64, offs + 1, 1); /* {2}: no rows */
    gpuprims_buffer *none = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 0);
    gpuprims_buffer *none_ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 0);
    gpuprims_buffer *empty_v = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 0);
    a = g, a.offsets = one, a.out = none, a.ix = none_ix;
    TU_EXPECT_OK(call(&a));
    a = g, a.offsets = one, a.k = 0, a.ks = o_empty, a.out = none, a.ix = NULL; /* no rows, no ks */
    TU_EXPECT_OK(call(&a));
    a = g, a.k = 0, a.out = none, a.ix = none_ix;
    TU_EXPECT_OK(call(&a));
    a = g, a.offsets = NULL, a.row_len = 5, a.k = 0, a.out = none, a.ix = NULL;
    TU_EXPECT_OK(call(&a));
    a = g, a.values = empty_v, a.offsets = NULL, a.row_len = 3, a.k = 7, a.out = none, a.ix = NULL;
    TU_EXPECT_OK(call(&a));
    gpuprims_buffer_destroy(one);
    gpuprims_buffer_destroy(none);
    gpuprims_buffer_destroy(none_ix);
    gpuprims_buffer_destroy(empty_v);
  }
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(ob);
  gpuprims_buffer_destroy(kb);
  gpuprims_buffer_destroy(k_few);
  gpuprims_buffer_destroy(k_few64);
  gpuprims_buffer_destroy(k_many);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(out3);
  gpuprims_buffer_destroy(ix);
  gpuprims_buffer_destroy(ix3);
  gpuprims_buffer_destroy(ix_i64);
  gpuprims_buffer_destroy(o_i32);
  gpuprims_buffer_destroy(o_empty);
  gpuprims_buffer_destroy(k_f32);
  gpuprims_buffer_destroy(k_short);
  gpuprims_buffer_destroy(out_f64);
  gpuprims_buffer_destroy(out_long);
  gpuprims_buffer_destroy(v64);
  gpuprims_buffer_destroy(o64);
  gpuprims_buffer_destroy(k64);
  gpuprims_buffer_destroy(out64);
  gpuprims_buffer_destroy(out64_1);
}

/* Offsets (U32 and U64) with a bad row: INVALID_ARGUMENT naming it, with one k, with ks,
 * and with k 0 (the rows are still checked). */
static void bad_rows_case(env_t *e, const uint64_t *offsets, size_t nrows, size_t len, size_t row_bad, const char *what) {
  float *values = (float *)tu_xmalloc(len * 4);
  uint64_t *ks = (uint64_t *)tu_xmalloc(nrows * 8);
  gpuprims_buffer *vb, *out, *ix, *none;
  char needle[64], label[160];
  args_t a;
  int ow, kind;
  size_t i;
  for (i = 0; i < len; i++) values[i] = (float)i;
  for (i = 0; i < nrows; i++) ks[i] = 2;
  vb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, values, len);
  out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 2 * nrows);
  ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, 2 * nrows);
  none = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 0);
  snprintf(needle, sizeof needle, "row %zu:", row_bad);
  for (ow = 0; ow < 2; ow++) {
    gpuprims_dtype t = ow ? GPUPRIMS_DTYPE_U64 : GPUPRIMS_DTYPE_U32;
    gpuprims_buffer *ob = tu_index_buffer(e->ctx, t, offsets, nrows + 1);
    gpuprims_buffer *kb = tu_index_buffer(e->ctx, t, ks, nrows);
    for (kind = 0; kind < 3; kind++) {
      a.ctx = e->ctx, a.values = vb, a.offsets = ob, a.row_len = 0, a.order = (gpuprims_order)(kind & 1);
      a.k = kind == 0 ? 2 : 0, a.ks = kind == 1 ? kb : NULL;
      a.out = kind == 2 ? none : out, a.ix = kind == 2 ? NULL : ix;
      snprintf(label, sizeof label, "%s (offsets %s, %s)", what, ow ? "u64" : "u32", kind == 0 ? "k 2" : kind == 1 ? "ks" : "k 0");
      expect_fault(e, &a, GPUPRIMS_STATUS_INVALID_ARGUMENT, needle, label);
    }
    gpuprims_buffer_destroy(ob);
    gpuprims_buffer_destroy(kb);
  }
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(ix);
  gpuprims_buffer_destroy(none);
  free(values);
  free(ks);
}

static void check_bad_rows(env_t *e) {
  static const uint64_t decreasing[] = {0, 5, 3, 8};
  static const uint64_t past_end[] = {2, 5, 9, 11}; /* len 10 */
  static const uint64_t first_decreasing[] = {4, 3, 5, 6};
  const size_t big = e->quick ? 3000 : 50000;
  uint64_t *offsets = (uint64_t *)tu_xmalloc((big + 1) * 8);
  size_t i, first;
  bad_rows_case(e, decreasing, 3, 10, 1, "offsets decreasing");
  bad_rows_case(e, past_end, 3, 10, 2, "last row past the end");
  bad_rows_case(e, first_decreasing, 3, 10, 0, "row 0 decreasing");
  /* Many rows, faults far apart: the lowest row is named. */
  for (i = 0; i <= big; i++) offsets[i] = 3 * i;
  first = big / 3 + tu_below(&e->rng, big / 3);
  offsets[first + 1] = offsets[first] - 1; /* row `first` decreases, */
  offsets[big - 2] = 1;                    /* a later row too */
  bad_rows_case(e, offsets, big, 3 * big, first, "many rows, the first bad one named");
  for (i = 0; i <= big; i++) offsets[i] = 3 * i;
  bad_rows_case(e, offsets, big, 3 * big - 1, big - 1, "many rows, the last past the end");
  free(offsets);
}

/* ------------------------------------------------------------------------------------- */
/* A sequence with other primitives                                                       */
/* ------------------------------------------------------------------------------------- */

/* One segmented top-k of random f32 rows (ragged or uniform, k or ks), checked. */
static void one_topk(env_t *e, int round) {
  const tu_dtype_info *d = tu_dtype(round & 1 ? GPUPRIMS_DTYPE_F32 : GPUPRIMS_DTYPE_I32);
  tu_layout l = round % 3 == 0
                    ? tu_layout_uniform(1 + (size_t)tu_below(&e->rng, 40), 1 + (size_t)tu_below(&e->rng, 600))
                    : tu_layout_new(0);
  unsigned char *values;
  uint64_t *ks;
  gpuprims_buffer *vb;
  size_t i, *perm;
  how_t h;
  ks_t k;
  if (l.row_len == 0) {
    for (i = 0; i < 50; i++) tu_layout_add(&l, (size_t)tu_below(&e->rng, 700));
    l.len = (size_t)l.offsets[l.nrows];
  }
  values = make_values(e, d, &l);
  vb = tu_buffer_from_host(e->ctx, d->id, values, l.len);
  ks = (uint64_t *)tu_xmalloc((l.nrows + 1) * 8);
  h.ragged = l.row_len == 0, h.off_dt = GPUPRIMS_DTYPE_U32, h.ks_dt = GPUPRIMS_DTYPE_U64;
  h.order = (gpuprims_order)(round & 1), h.with_ix = 1;
  k.per_row = round % 2 == 0, k.k = tu_below(&e->rng, 70), k.ks = ks;
  random_ks(e, &l, ks, 300);
  perm = ref_perm(d, values, &l, h.order);
  run_case(e, d, values, vb, &l, perm, &h, &k);
  gpuprims_buffer_destroy(vb);
  free(values);
  free(ks);
  free(perm);
  tu_layout_free(&l);
}

static void one_radix_sort(env_t *e) {
  const size_t n = 1000 + (size_t)tu_below(&e->rng, 50000);
  uint32_t *keys = (uint32_t *)tu_xmalloc(n * 4), *got = (uint32_t *)tu_xmalloc(n * 4);
  size_t i, bad = 0;
  gpuprims_buffer *b;
  tu_fill_bytes(&e->rng, keys, n * 4);
  b = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U32, keys, n);
  TU_EXPECT_OK(gpuprims_radix_sort(e->ctx, b, NULL, GPUPRIMS_ORDER_ASCENDING));
  TU_REQUIRE_OK(gpuprims_buffer_read(b, 0, got, n));
  for (i = 1; i < n; i++) bad += got[i - 1] > got[i];
  TU_CHECKF(bad == 0, "radix sort in the sequence: %zu pairs out of order", bad);
  gpuprims_buffer_destroy(b);
  free(keys);
  free(got);
}

static void one_reduce(env_t *e) {
  const size_t n = 1 + (size_t)tu_below(&e->rng, 100000);
  int32_t *x = (int32_t *)tu_xmalloc(n * 4), got = 0;
  uint32_t want = 0;
  size_t i;
  gpuprims_buffer *b;
  for (i = 0; i < n; i++) want += (uint32_t)(x[i] = (int32_t)tu_below(&e->rng, 2001) - 1000);
  b = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, x, n);
  TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, &got));
  TU_CHECKF((uint32_t)got == want, "reduce in the sequence: %ld, expected %ld", (long)got, (long)(int32_t)want);
  gpuprims_buffer_destroy(b);
  free(x);
}

static void one_flat_topk(env_t *e) {
  const size_t n = 10 + (size_t)tu_below(&e->rng, 30000), k = 1 + (size_t)tu_below(&e->rng, 10);
  float *x = (float *)tu_xmalloc(n * 4), got[10];
  size_t *perm = (size_t *)tu_xmalloc(n * sizeof(size_t)), i;
  uint64_t got_ix[10];
  gpuprims_buffer *b, *out, *ix;
  for (i = 0; i < n; i++) x[i] = (float)tu_below(&e->rng, 500);
  tu_sort_ref(GPUPRIMS_DTYPE_F32, x, n, GPUPRIMS_ORDER_DESCENDING, perm, NULL);
  b = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_F32, x, n);
  out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, k);
  ix = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, k);
  TU_EXPECT_OK(gpuprims_topk(e->ctx, b, k, GPUPRIMS_ORDER_DESCENDING, out, ix));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, k));
  TU_REQUIRE_OK(gpuprims_buffer_read(ix, 0, got_ix, k));
  for (i = 0; i < k; i++)
    TU_CHECKF(got_ix[i] == perm[i] && got[i] == x[perm[i]], "topk in the sequence: slot %zu index %llu, expected %zu", i,
              (unsigned long long)got_ix[i], perm[i]);
  gpuprims_buffer_destroy(b);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(ix);
  free(x);
  free(perm);
}

static void one_segmented_select(env_t *e) {
  static const uint32_t offs[] = {0, 3, 4, 9};
  static const int16_t v[] = {5, -2, 7, 4, 9, 1, 8, 3, 6};
  static const int16_t want[] = {5, 4, 6};
  int16_t got[3];
  gpuprims_buffer *vb = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I16, v, 9);
  gpuprims_buffer *ob = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_U32, offs, 4);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_I16, 3);
  TU_EXPECT_OK(gpuprims_segmented_select(e->ctx, vb, ob, NULL, out));
  TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, 3));
  TU_CHECKF(memcmp(got, want, sizeof want) == 0, "segmented select in the sequence: %d %d %d", got[0], got[1], got[2]);
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(ob);
  gpuprims_buffer_destroy(out);
}

static void check_sequence(env_t *e) {
  int round, rounds = e->quick ? 6 : 16;
  printf("a sequence of %d rounds: segmented top-k between radix sort, reduce, topk, segmented select\n", rounds);
  for (round = 0; round < rounds; round++) {
    one_topk(e, round);
    switch (round % 4) {
      case 0: one_radix_sort(e); break;
      case 1: one_reduce(e); break;
      case 2: one_flat_topk(e); break;
      default: one_segmented_select(e);
    }
  }
}

/* GPUPRIMS_TEST_PARTS="ties,classes" runs only those parts (compute-sanitizer's slower
 * tools take a few); unset: every part. */
static int part(const char *name) {
  const char *parts = getenv("GPUPRIMS_TEST_PARTS");
  return !parts || !*parts || strstr(parts, name) != NULL;
}

int main(void) {
  env_t e;
  const char *q = getenv("GPUPRIMS_TEST_QUICK");
  tu_rng_seed(&e.rng, tu_init("test_segmented_topk"));
  e.quick = q && *q && strcmp(q, "0") != 0;
  e.ctx = tu_open_context();
  if (part("arguments")) check_arguments(&e);
  if (part("bad_rows")) check_bad_rows(&e);
  if (part("ties")) check_ties(&e);
  if (part("classes")) check_classes(&e);
  if (part("uniform")) check_uniform(&e);
  if (part("split")) check_split(&e);
  if (part("many")) check_many(&e);
  if (part("sequence")) check_sequence(&e);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
