/*
 * test_multi: the operations over several ranks (gpuprims_group_*, gpuprims_comm_*)
 * against one context's result on the concatenated shards (the one-context primitives
 * are checked against independent references by their own tests).
 *
 * Parts (GPUPRIMS_TEST_PARTS=group,comm,errors,procs,large selects; all but large by
 * default):
 *  - group: a group of 1..4 ranks (host backend: threads; CUDA: the visible devices, up
 *    to 4), every dtype, uneven and empty shards, specials (NaN of both signs and
 *    payloads, +-0, +-inf, extremes): reduce and reduce_to_buffer (SUM within a float
 *    tolerance, since partials combine in rank order; MIN/MAX exact), inclusive and
 *    exclusive scan, radix sort of keys and pairs in both orders (bitwise: stable on
 *    both sides), select_kth at the ends, the middle and random ranks, top-k with
 *    indices in both orders; everything again after other calls on the same group.
 *  - comm: ranks as threads with a communicator each (gpuprims_comm_create on one id).
 *  - errors: every argument error of a group call, then a good call; on the comm API a
 *    rank with a bad argument (every rank fails, the bad one with its own message), ranks
 *    asked different things, and (host) a rank that never calls (the others time out).
 *  - procs (CUDA, two or more devices): one process per GPU, the id handed through a
 *    pipe, sort and top-k checked on each process against its part of the answer.
 *  - large (GPUPRIMS_TEST_LARGE=1): past 2^32 elements in all (u8 on 2 ranks where there
 *    are two devices): sum, min and max, an inclusive scan, an ascending sort of keys and
 *    a descending one of pairs, select_kth at both ends, the middle and past the end,
 *    and a top-k.
 */
#include "test_util.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RANKS 4

static int part_on(const char *name) {
  const char *parts = getenv("GPUPRIMS_TEST_PARTS");
  if (!parts || !*parts) return strcmp(name, "large") != 0;
  return strstr(parts, name) != NULL;
}

static int quick(void) { return getenv("GPUPRIMS_TEST_QUICK") != NULL; }

/* ------------------------------------------------------------------------------------- */
/* A world: the group's contexts and one context holding everything                      */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  int nranks;
  gpuprims_group *group;
  gpuprims_context *ctx[MAX_RANKS];
  gpuprims_context *one; /* the reference */
} world;

static int g_cuda;        /* the test runs on CUDA */
static int g_devices = 1; /* CUDA devices visible (host: MAX_RANKS "devices") */

static void world_open(world *w, int nranks, gpuprims_context *one) {
  int32_t devices[MAX_RANKS];
  int i;
  size_t size = 0;
  memset(w, 0, sizeof *w);
  for (i = 0; i < nranks; i++) devices[i] = i;
  TU_REQUIRE_OK(gpuprims_group_create(g_cuda ? GPUPRIMS_BACKEND_CUDA : GPUPRIMS_BACKEND_HOST, devices, (size_t)nranks,
                                      &w->group));
  TU_REQUIRE_OK(gpuprims_group_size(w->group, &size));
  TU_CHECK(size == (size_t)nranks);
  for (i = 0; i < nranks; i++) TU_REQUIRE_OK(gpuprims_group_context(w->group, (size_t)i, &w->ctx[i]));
  w->nranks = nranks;
  w->one = one;
}

static void world_close(world *w) {
  int i;
  for (i = 0; i < w->nranks; i++) gpuprims_context_destroy(w->ctx[i]);
  gpuprims_group_destroy(w->group);
}

/* Shards: a random split of n elements, some empty. */
typedef struct {
  size_t len[MAX_RANKS], at[MAX_RANKS];
  gpuprims_buffer *buf[MAX_RANKS];
} shards;

static void split(tu_rng *r, size_t n, int nranks, shards *s) {
  size_t left = n, at = 0;
  int i;
  for (i = 0; i < nranks; i++) {
    size_t take = i == nranks - 1 ? left : (tu_below(r, 4) == 0 ? 0 : (size_t)tu_below(r, left + 1));
    s->len[i] = take;
    s->at[i] = at;
    at += take;
    left -= take;
  }
}

static void shards_upload(const world *w, shards *s, gpuprims_dtype t, const void *all) {
  int i;
  size_t w8 = tu_dtype_size(t);
  for (i = 0; i < w->nranks; i++)
    TU_REQUIRE_OK(gpuprims_buffer_from_host(w->ctx[i], t, (const unsigned char *)all + s->at[i] * w8, s->len[i], &s->buf[i]));
}

static void shards_empty(const world *w, const shards *like, shards *s, gpuprims_dtype t) {
  int i;
  *s = *like;
  for (i = 0; i < w->nranks; i++) TU_REQUIRE_OK(gpuprims_buffer_create(w->ctx[i], t, like->len[i], &s->buf[i]));
}

/* Every shard read back into one host array, in rank order. */
static void shards_download(const world *w, const shards *s, gpuprims_dtype t, void *all) {
  int i;
  size_t w8 = tu_dtype_size(t);
  for (i = 0; i < w->nranks; i++)
    TU_REQUIRE_OK(gpuprims_buffer_read(s->buf[i], 0, (unsigned char *)all + s->at[i] * w8, s->len[i]));
}

static void shards_free(const world *w, shards *s) {
  int i;
  for (i = 0; i < w->nranks; i++) gpuprims_buffer_destroy(s->buf[i]);
}

/* ------------------------------------------------------------------------------------- */
/* Data and comparisons                                                                    */
/* ------------------------------------------------------------------------------------- */

/* Random bits (floats: no NaN), with one in `specials` replaced by a special value. */
static void fill(tu_rng *r, const tu_dtype_info *d, void *p, size_t n, int kind, unsigned specials) {
  size_t i;
  tu_fill(r, d->id, p, n, kind);
  if (specials)
    for (i = 0; i < n; i++)
      if (tu_below(r, specials) == 0) tu_put_bits(d->id, p, i, tu_special_bits(d, r));
}

static uint64_t bits_at(gpuprims_dtype t, const void *p, size_t i) {
  uint64_t b = 0;
  memcpy(&b, (const unsigned char *)p + tu_dtype_size(t) * i, tu_dtype_size(t));
  return b;
}

static int is_nan(gpuprims_dtype t, uint64_t bits) {
  return tu_dtype(t)->is_float && isnan(tu_get_f(t, &bits, 0));
}

/* Equal bits, or both NaN (select_kth and MIN/MAX may canonicalise a NaN). */
static int same_or_nans(gpuprims_dtype t, uint64_t a, uint64_t b) {
  return a == b || (is_nan(t, a) && is_nan(t, b));
}

static double eps_of(gpuprims_dtype t) {
  switch (t) {
    case GPUPRIMS_DTYPE_F16: return ldexp(1.0, -11);
    case GPUPRIMS_DTYPE_BF16: return ldexp(1.0, -8);
    case GPUPRIMS_DTYPE_F32: return ldexp(1.0, -24);
    default: return ldexp(1.0, -53);
  }
}

/* Float sums that may round differently: within a few roundings of the magnitude. */
static int close_sum(gpuprims_dtype t, uint64_t got, uint64_t want, double magnitude, int nranks) {
  double g = tu_get_f(t, &got, 0), w = tu_get_f(t, &want, 0);
  if (same_or_nans(t, got, want) || g == w) return 1;
  return fabs(g - w) <= (4.0 * nranks + 8.0) * eps_of(t) * (magnitude + fabs(w));
}

static double abs_sum(gpuprims_dtype t, const void *p, size_t lo, size_t hi) {
  double s = 0;
  size_t i;
  for (i = lo; i < hi; i++) s += fabs(tu_get_f(t, p, i));
  return s;
}

/* ------------------------------------------------------------------------------------- */
/* The operations, group against one context                                              */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const world *w;
  const tu_dtype_info *d;
  size_t n;
  const void *all;   /* the data, host */
  shards s;          /* the data, per rank */
  gpuprims_buffer *ref; /* the data, one context */
  const char *what;
} case_t;

static void check_reduce(case_t *c, gpuprims_op op) {
  uint64_t got = 0, want = 0, on_buffer = 0;
  gpuprims_buffer *outs[MAX_RANKS];
  int i, sum_float = op == GPUPRIMS_OP_SUM && c->d->is_float;
  gpuprims_status sw = gpuprims_reduce(c->w->one, c->ref, op, &want);
  gpuprims_status sg = gpuprims_group_reduce(c->w->group, (const gpuprims_buffer *const *)c->s.buf, op, &got);
  TU_CHECKF(sg == sw, "%s reduce %s n=%zu ranks=%d: status %s, one context %s", c->d->name, tu_op_name(op), c->n,
            c->w->nranks, tu_status_name(sg), tu_status_name(sw));
  if (sw != GPUPRIMS_STATUS_OK) return;
  TU_CHECKF(sum_float ? close_sum(c->d->id, got, want, abs_sum(c->d->id, c->all, 0, c->n), c->w->nranks)
                      : same_or_nans(c->d->id, got, want),
            "%s reduce %s n=%zu ranks=%d (%s): got %#llx want %#llx", c->d->name, tu_op_name(op), c->n, c->w->nranks,
            c->what, (unsigned long long)got, (unsigned long long)want);
  for (i = 0; i < c->w->nranks; i++) TU_REQUIRE_OK(gpuprims_buffer_create(c->w->ctx[i], c->d->id, 1, &outs[i]));
  TU_EXPECT_OK(gpuprims_group_reduce_to_buffer(c->w->group, (const gpuprims_buffer *const *)c->s.buf, op, outs));
  for (i = 0; i < c->w->nranks; i++) {
    on_buffer = 0;
    TU_EXPECT_OK(gpuprims_buffer_read(outs[i], 0, &on_buffer, 1));
    TU_CHECKF(on_buffer == got, "%s reduce_to_buffer %s rank %d: %#llx, reduce gave %#llx", c->d->name,
              tu_op_name(op), i, (unsigned long long)on_buffer, (unsigned long long)got);
    gpuprims_buffer_destroy(outs[i]);
  }
}

static void check_scan(case_t *c, gpuprims_op op, gpuprims_scan_mode mode) {
  size_t w8 = c->d->size, i;
  unsigned char *got = (unsigned char *)tu_xmalloc(c->n * w8), *want = (unsigned char *)tu_xmalloc(c->n * w8);
  gpuprims_buffer *ref_out = NULL;
  shards out;
  double prefix = 0;
  size_t bad = (size_t)-1;
  shards_empty(c->w, &c->s, &out, c->d->id);
  TU_REQUIRE_OK(gpuprims_buffer_create(c->w->one, c->d->id, c->n, &ref_out));
  TU_EXPECT_OK(gpuprims_scan(c->w->one, c->ref, ref_out, op, mode));
  TU_EXPECT_OK(gpuprims_group_scan(c->w->group, (const gpuprims_buffer *const *)c->s.buf, out.buf, op, mode));
  TU_EXPECT_OK(gpuprims_buffer_read(ref_out, 0, want, c->n));
  shards_download(c->w, &out, c->d->id, got);
  for (i = 0; i < c->n && bad == (size_t)-1; i++) {
    uint64_t g = bits_at(c->d->id, got, i), wv = bits_at(c->d->id, want, i);
    int ok;
    if (c->d->is_float) prefix += fabs(tu_get_f(c->d->id, c->all, i));
    ok = op == GPUPRIMS_OP_SUM && c->d->is_float ? close_sum(c->d->id, g, wv, prefix, c->w->nranks)
                                                 : same_or_nans(c->d->id, g, wv);
    if (!ok) bad = i;
  }
  TU_CHECKF(bad == (size_t)-1, "%s scan %s %s n=%zu ranks=%d (%s): first difference at %zu", c->d->name,
            tu_op_name(op), tu_mode_name(mode), c->n, c->w->nranks, c->what, bad);
  shards_free(c->w, &out);
  gpuprims_buffer_destroy(ref_out);
  free(got);
  free(want);
}

/* f16 SUM whose ranks' partials pass 65504 while the total does not: ranks 0 and 1 hold
 * 30000 x 3 and -30000, -30000, -26000 (partials 90000 and -86000, inf in f16), the
 * rest nothing. One context sums in f32 and rounds once (4000); the ranks' partials must
 * combine in f32 too, and the scan's carry into rank 1 likewise (60000, 30000, 4000). */
static void wide_partials(const world *w) {
  static const double vals[6] = {30000, 30000, 30000, -30000, -30000, -26000};
  static const double prefix[6] = {30000, 60000, 90000, 60000, 30000, 4000};
  uint16_t all[6], got_scan[6];
  uint64_t got = 0;
  shards s, out;
  int i;
  if (w->nranks < 2) return;
  for (i = 0; i < 6; i++) tu_put_f(GPUPRIMS_DTYPE_F16, all, (size_t)i, vals[i]);
  memset(&s, 0, sizeof s);
  s.len[0] = s.len[1] = 3;
  s.at[1] = 3;
  for (i = 2; i < w->nranks; i++) s.at[i] = 6;
  shards_upload(w, &s, GPUPRIMS_DTYPE_F16, all);
  TU_EXPECT_OK(gpuprims_group_reduce(w->group, (const gpuprims_buffer *const *)s.buf, GPUPRIMS_OP_SUM, &got));
  TU_CHECKF(tu_get_f(GPUPRIMS_DTYPE_F16, &got, 0) == 4000.0, "f16 sum over %d ranks, partials past 65504: %g, want 4000",
            w->nranks, tu_get_f(GPUPRIMS_DTYPE_F16, &got, 0));
  shards_empty(w, &s, &out, GPUPRIMS_DTYPE_F16);
  TU_EXPECT_OK(gpuprims_group_scan(w->group, (const gpuprims_buffer *const *)s.buf, out.buf, GPUPRIMS_OP_SUM,
                                   GPUPRIMS_SCAN_INCLUSIVE));
  shards_download(w, &out, GPUPRIMS_DTYPE_F16, got_scan);
  for (i = 0; i < 6; i++) {
    const double g = tu_get_f(GPUPRIMS_DTYPE_F16, got_scan, (size_t)i);
    /* element 2's prefix, 90000, is inf in f16 on one context too */
    TU_CHECKF(i == 2 ? isinf(g) : g == prefix[i], "f16 inclusive scan over %d ranks, element %d: %g, want %g",
              w->nranks, i, g, prefix[i]);
  }
  shards_free(w, &out);
  shards_free(w, &s);
}

/* Sorts copies (the shards stay as they were for the later checks). */
static void check_sort(case_t *c, gpuprims_order order, int pairs) {
  size_t w8 = c->d->size, i;
  size_t vbytes = c->n * 4;
  unsigned char *got = (unsigned char *)tu_xmalloc(c->n * w8), *want = (unsigned char *)tu_xmalloc(c->n * w8);
  uint32_t *vals = (uint32_t *)tu_xmalloc(vbytes), *gotv = (uint32_t *)tu_xmalloc(vbytes),
           *wantv = (uint32_t *)tu_xmalloc(vbytes);
  shards keys, values;
  gpuprims_buffer *rk = NULL, *rv = NULL;
  for (i = 0; i < c->n; i++) vals[i] = (uint32_t)i;
  keys = c->s;
  shards_upload(c->w, &keys, c->d->id, c->all);
  values = c->s;
  shards_upload(c->w, &values, GPUPRIMS_DTYPE_U32, vals);
  TU_REQUIRE_OK(gpuprims_buffer_from_host(c->w->one, c->d->id, c->all, c->n, &rk));
  TU_REQUIRE_OK(gpuprims_buffer_from_host(c->w->one, GPUPRIMS_DTYPE_U32, vals, c->n, &rv));
  TU_EXPECT_OK(gpuprims_radix_sort(c->w->one, rk, pairs ? rv : NULL, order));
  TU_EXPECT_OK(gpuprims_group_radix_sort(c->w->group, keys.buf, pairs ? values.buf : NULL, order));
  TU_EXPECT_OK(gpuprims_buffer_read(rk, 0, want, c->n));
  TU_EXPECT_OK(gpuprims_buffer_read(rv, 0, wantv, c->n));
  shards_download(c->w, &keys, c->d->id, got);
  shards_download(c->w, &values, GPUPRIMS_DTYPE_U32, gotv);
  TU_CHECKF(c->n == 0 || memcmp(got, want, c->n * w8) == 0, "%s sort %s%s n=%zu ranks=%d (%s): keys differ",
            c->d->name, order ? "descending" : "ascending", pairs ? " pairs" : "", c->n, c->w->nranks, c->what);
  if (pairs)
    TU_CHECKF(c->n == 0 || memcmp(gotv, wantv, vbytes) == 0, "%s sort pairs n=%zu ranks=%d (%s): values differ",
              c->d->name, c->n, c->w->nranks, c->what);
  else
    TU_CHECKF(c->n == 0 || memcmp(gotv, vals, vbytes) == 0, "%s sort keys: the values buffers were touched",
              c->d->name);
  shards_free(c->w, &keys);
  shards_free(c->w, &values);
  gpuprims_buffer_destroy(rk);
  gpuprims_buffer_destroy(rv);
  free(got), free(want), free(vals), free(gotv), free(wantv);
}

static void check_select(case_t *c, uint64_t k) {
  uint64_t got = 0, want = 0;
  gpuprims_status sw = gpuprims_select_kth(c->w->one, c->ref, k, &want);
  gpuprims_status sg = gpuprims_group_select_kth(c->w->group, (const gpuprims_buffer *const *)c->s.buf, k, &got);
  TU_CHECKF(sg == sw, "%s select_kth k=%llu n=%zu: status %s, one context %s", c->d->name, (unsigned long long)k, c->n,
            tu_status_name(sg), tu_status_name(sw));
  if (sw == GPUPRIMS_STATUS_OK)
    TU_CHECKF(same_or_nans(c->d->id, got, want), "%s select_kth k=%llu n=%zu ranks=%d (%s): got %#llx want %#llx",
              c->d->name, (unsigned long long)k, c->n, c->w->nranks, c->what, (unsigned long long)got,
              (unsigned long long)want);
}

static void check_topk(case_t *c, uint64_t k, gpuprims_order order, int with_indices) {
  size_t w8 = c->d->size;
  int i;
  gpuprims_buffer *vals[MAX_RANKS], *idx[MAX_RANKS], *rv = NULL, *ri = NULL;
  unsigned char *got = (unsigned char *)tu_xmalloc(k * w8 + 1), *want = (unsigned char *)tu_xmalloc(k * w8 + 1);
  uint64_t *goti = (uint64_t *)tu_xmalloc(k * 8 + 1), *wanti = (uint64_t *)tu_xmalloc(k * 8 + 1);
  TU_REQUIRE_OK(gpuprims_buffer_create(c->w->one, c->d->id, k, &rv));
  TU_REQUIRE_OK(gpuprims_buffer_create(c->w->one, GPUPRIMS_DTYPE_U64, k, &ri));
  for (i = 0; i < c->w->nranks; i++) {
    TU_REQUIRE_OK(gpuprims_buffer_create(c->w->ctx[i], c->d->id, k, &vals[i]));
    TU_REQUIRE_OK(gpuprims_buffer_create(c->w->ctx[i], GPUPRIMS_DTYPE_U64, k, &idx[i]));
  }
  TU_EXPECT_OK(gpuprims_topk(c->w->one, c->ref, k, order, rv, ri));
  TU_EXPECT_OK(gpuprims_group_topk(c->w->group, (const gpuprims_buffer *const *)c->s.buf, k, order, vals,
                                   with_indices ? idx : NULL));
  TU_EXPECT_OK(gpuprims_buffer_read(rv, 0, want, k));
  TU_EXPECT_OK(gpuprims_buffer_read(ri, 0, wanti, k));
  for (i = 0; i < c->w->nranks; i++) {
    TU_EXPECT_OK(gpuprims_buffer_read(vals[i], 0, got, k));
    TU_CHECKF(k == 0 || memcmp(got, want, k * w8) == 0, "%s topk k=%llu %s n=%zu ranks=%d rank %d (%s): values differ",
              c->d->name, (unsigned long long)k, order ? "largest" : "smallest", c->n, c->w->nranks, i, c->what);
    if (with_indices) {
      size_t at = 0;
      TU_EXPECT_OK(gpuprims_buffer_read(idx[i], 0, goti, k));
      while (at < k && goti[at] == wanti[at]) at++;
      TU_CHECKF(at == k, "%s topk k=%llu %s n=%zu ranks=%d rank %d: indices differ first at %zu of %llu: %llu, want %llu",
                c->d->name, (unsigned long long)k, order ? "largest" : "smallest", c->n, c->w->nranks, i, at,
                (unsigned long long)k, at < k ? (unsigned long long)goti[at] : 0ull,
                at < k ? (unsigned long long)wanti[at] : 0ull);
    }
    gpuprims_buffer_destroy(vals[i]);
    gpuprims_buffer_destroy(idx[i]);
  }
  gpuprims_buffer_destroy(rv);
  gpuprims_buffer_destroy(ri);
  free(got), free(want), free(goti), free(wanti);
}

/* Every operation, every op and order, the ends, the middle and a random rank. */
static void check_every_operation(case_t *c, tu_rng *r, int kind) {
  static const gpuprims_op ops[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};
  const size_t n = c->n;
  int o;
  for (o = 0; o < 3; o++) {
    if (ops[o] == GPUPRIMS_OP_SUM && c->d->is_float && kind == TU_FILL_BITS) continue; /* sums of extremes: inf/NaN */
    check_reduce(c, ops[o]);
    check_scan(c, ops[o], tu_below(r, 2) ? GPUPRIMS_SCAN_INCLUSIVE : GPUPRIMS_SCAN_EXCLUSIVE);
  }
  check_sort(c, GPUPRIMS_ORDER_ASCENDING, 0);
  check_sort(c, GPUPRIMS_ORDER_DESCENDING, 1);
  if (n > 0) {
    check_select(c, 0);
    check_select(c, n - 1);
    check_select(c, n / 2);
    check_select(c, tu_below(r, n));
  }
  check_select(c, n); /* past the end: INVALID_ARGUMENT on both */
  check_topk(c, n < 100 ? n : 100, GPUPRIMS_ORDER_DESCENDING, 1);
  check_topk(c, n ? tu_below(r, n) + 1 : 0, GPUPRIMS_ORDER_ASCENDING, (int)tu_below(r, 2));
}

/* One of each operation (n > 0; integer keys: the sum of random float bits may be inf):
 * for the case past 2^32, where a scan, sort or top-k check brings the whole input's size
 * to the host twice and a top-k of random k could take tens of GB. */
static void check_one_of_each(case_t *c) {
  check_reduce(c, GPUPRIMS_OP_SUM);
  check_reduce(c, GPUPRIMS_OP_MIN);
  check_reduce(c, GPUPRIMS_OP_MAX);
  check_scan(c, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE);
  check_sort(c, GPUPRIMS_ORDER_ASCENDING, 0);
  /* Values too, descending: the merge's value offsets pass 2^34 bytes. */
  check_sort(c, GPUPRIMS_ORDER_DESCENDING, 1);
  check_select(c, 0);
  check_select(c, c->n / 2);
  check_select(c, c->n - 1);
  check_select(c, c->n); /* past the end: the same error as one context's */
  check_topk(c, 100, GPUPRIMS_ORDER_DESCENDING, 1);
}

/* One data set through the operations: every one, or one of each when `lean`. */
static void run_case_as(tu_rng *r, const world *w, const tu_dtype_info *d, size_t n, int kind, const char *what, int lean) {
  unsigned char *all = (unsigned char *)tu_xmalloc(n * d->size);
  case_t c;
  memset(&c, 0, sizeof c);
  fill(r, d, all, n, kind, kind == TU_FILL_BITS ? 16 : 0);
  c.w = w, c.d = d, c.n = n, c.all = all, c.what = what;
  split(r, n, w->nranks, &c.s);
  shards_upload(w, &c.s, d->id, all);
  TU_REQUIRE_OK(gpuprims_buffer_from_host(w->one, d->id, all, n, &c.ref));
  if (lean) check_one_of_each(&c);
  else check_every_operation(&c, r, kind);
  shards_free(w, &c.s);
  gpuprims_buffer_destroy(c.ref);
  free(all);
}

static void run_case(tu_rng *r, const world *w, const tu_dtype_info *d, size_t n, int kind, const char *what) {
  run_case_as(r, w, d, n, kind, what, 0);
}

static void part_group(tu_rng *r, gpuprims_context *one) {
  static const size_t sizes[] = {0, 1, 2, 17, 1000, 70001};
  int nranks, di;
  size_t si;
  int most = g_devices < MAX_RANKS ? g_devices : MAX_RANKS;
  for (nranks = 1; nranks <= most; nranks++) {
    world w;
    world_open(&w, nranks, one);
    for (di = 0; di < TU_NUM_DTYPES; di++) {
      const tu_dtype_info *d = &tu_dtypes()[di];
      for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
        if (quick() && sizes[si] > 1000) continue;
        run_case(r, &w, d, sizes[si], TU_FILL_BITS, "bits and specials");
        if (d->is_float) run_case(r, &w, d, sizes[si], TU_FILL_UNIFORM, "uniform");
      }
    }
    if (g_cuda && !quick()) run_case(r, &w, &tu_dtypes()[8], (size_t)1 << 22, TU_FILL_BITS, "2^22 f32");
    wide_partials(&w);
    world_close(&w);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Argument errors                                                                         */
/* ------------------------------------------------------------------------------------- */

static void expect_error(gpuprims_status got, gpuprims_status want, const char *what) {
  char msg[512];
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(got == want, "%s: %s, want %s (%s)", what, tu_status_name(got), tu_status_name(want), msg);
  if (got != GPUPRIMS_STATUS_OK) TU_CHECKF(msg[0] != '\0', "%s: no message", what);
}

static void part_group_errors(tu_rng *r, gpuprims_context *one) {
  world w;
  int n = g_devices >= 2 ? 2 : 1, i;
  uint32_t data[50];
  shards s;
  gpuprims_buffer *other = NULL, *vals[MAX_RANKS], *bad[MAX_RANKS];
  uint64_t value = 0;
  int32_t dup[2] = {0, 0};
  gpuprims_group *g = NULL;
  world_open(&w, n, one);
  for (i = 0; i < 50; i++) data[i] = (uint32_t)tu_below(r, 1000);
  split(r, 50, n, &s);
  shards_upload(&w, &s, GPUPRIMS_DTYPE_U32, data);
  for (i = 0; i < n; i++) TU_REQUIRE_OK(gpuprims_buffer_create(w.ctx[i], GPUPRIMS_DTYPE_U32, 51, &vals[i]));
  TU_REQUIRE_OK(gpuprims_buffer_create(one, GPUPRIMS_DTYPE_U32, 3, &other));

  expect_error(gpuprims_group_create(GPUPRIMS_BACKEND_HOST, NULL, 1, &g), GPUPRIMS_STATUS_NULL_ARGUMENT, "no devices");
  expect_error(gpuprims_group_create(GPUPRIMS_BACKEND_HOST, dup, 0, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT, "0 devices");
  dup[1] = -1;
  expect_error(gpuprims_group_create(GPUPRIMS_BACKEND_HOST, dup, 2, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT, "device -1");
  if (g_cuda) {
    dup[1] = 0;
    expect_error(gpuprims_group_create(GPUPRIMS_BACKEND_CUDA, dup, 2, &g), GPUPRIMS_STATUS_INVALID_ARGUMENT,
                 "one device twice");
  }
  expect_error(gpuprims_group_reduce(w.group, (const gpuprims_buffer *const *)s.buf, 99, &value),
               GPUPRIMS_STATUS_INVALID_ARGUMENT, "unknown op");
  expect_error(gpuprims_group_reduce(w.group, NULL, GPUPRIMS_OP_SUM, &value), GPUPRIMS_STATUS_NULL_ARGUMENT, "no in");
  expect_error(gpuprims_group_reduce(NULL, (const gpuprims_buffer *const *)s.buf, GPUPRIMS_OP_SUM, &value),
               GPUPRIMS_STATUS_NULL_ARGUMENT, "no group");
  expect_error(gpuprims_group_topk(w.group, (const gpuprims_buffer *const *)s.buf, 51, GPUPRIMS_ORDER_ASCENDING, vals,
                                   NULL),
               GPUPRIMS_STATUS_INVALID_ARGUMENT, "k past the total");
  expect_error(gpuprims_group_topk(w.group, (const gpuprims_buffer *const *)s.buf, 50, GPUPRIMS_ORDER_ASCENDING, vals,
                                   NULL),
               GPUPRIMS_STATUS_SIZE_MISMATCH, "out_values of 51 for k=50");
  expect_error(gpuprims_group_select_kth(w.group, (const gpuprims_buffer *const *)s.buf, 50, &value),
               GPUPRIMS_STATUS_INVALID_ARGUMENT, "select k = total");
  for (i = 0; i < n; i++) bad[i] = s.buf[i];
  bad[n - 1] = other;
  expect_error(gpuprims_group_reduce(w.group, (const gpuprims_buffer *const *)bad, GPUPRIMS_OP_SUM, &value),
               GPUPRIMS_STATUS_CONTEXT_MISMATCH, "a buffer of another context");
  expect_error(gpuprims_group_radix_sort(w.group, s.buf, s.buf, GPUPRIMS_ORDER_ASCENDING),
               GPUPRIMS_STATUS_INVALID_ARGUMENT, "values aliasing keys");
  expect_error(gpuprims_group_scan(w.group, (const gpuprims_buffer *const *)s.buf, vals, GPUPRIMS_OP_SUM,
                                   GPUPRIMS_SCAN_INCLUSIVE),
               GPUPRIMS_STATUS_SIZE_MISMATCH, "scan out of another length");
  value = 0;
  TU_EXPECT_OK(gpuprims_group_reduce(w.group, (const gpuprims_buffer *const *)s.buf, GPUPRIMS_OP_SUM, &value));
  {
    uint64_t want = 0;
    for (i = 0; i < 50; i++) want += data[i];
    TU_CHECKF((uint32_t)value == (uint32_t)want, "a good reduce after the errors: %llu, want %llu",
              (unsigned long long)value, (unsigned long long)want);
  }
  gpuprims_buffer_destroy(other);
  for (i = 0; i < n; i++) gpuprims_buffer_destroy(vals[i]);
  shards_free(&w, &s);
  world_close(&w);
}

/* ------------------------------------------------------------------------------------- */
/* The comm API: ranks as threads                                                          */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  int rank, nranks;
  const uint8_t *id;
  const uint32_t *data; /* every rank's data: rank r's shard is data[r * per .. ) */
  size_t per;
  int scenario;
  gpuprims_status status[4];
  uint64_t value[4];
  char message[4][256];
} rank_job;

enum { SC_GOOD, SC_BAD_ARG, SC_DISAGREE, SC_ABSENT };

/* Records a call's status, its value (read after the call: `*v`) and message. */
static void note(rank_job *j, int step, gpuprims_status s, const uint64_t *v) {
  j->status[step] = s;
  j->value[step] = *v;
  if (s != GPUPRIMS_STATUS_OK) tu_last_error_text(j->message[step], sizeof j->message[step]);
}

static void *rank_main(void *arg) {
  rank_job *j = (rank_job *)arg;
  gpuprims_context *ctx = NULL;
  gpuprims_comm *comm = NULL;
  gpuprims_buffer *in = NULL;
  uint64_t v = 0;
  uint32_t rank = 9, nranks = 9;
  gpuprims_op op = GPUPRIMS_OP_SUM;
  if (gpuprims_context_create(g_cuda ? GPUPRIMS_BACKEND_CUDA : GPUPRIMS_BACKEND_HOST, g_cuda ? j->rank : 0, &ctx) !=
          GPUPRIMS_STATUS_OK ||
      gpuprims_comm_create(ctx, j->id, (uint32_t)j->rank, (uint32_t)j->nranks, &comm) != GPUPRIMS_STATUS_OK) {
    note(j, 0, GPUPRIMS_STATUS_INTERNAL_ERROR, &v);
    gpuprims_context_destroy(ctx);
    return NULL;
  }
  (void)gpuprims_comm_rank(comm, &rank, &nranks);
  j->value[3] = rank * 100 + nranks;
  (void)gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, j->data + j->rank * j->per, j->per, &in);
  if (j->scenario == SC_BAD_ARG && j->rank == 1) op = 77;
  if (j->scenario == SC_DISAGREE && j->rank == 1) op = GPUPRIMS_OP_MAX;
  if (!(j->scenario == SC_ABSENT && j->rank == 1)) {
    gpuprims_status s = gpuprims_comm_reduce(comm, in, op, &v);
    note(j, 0, s, &v);
    if (j->scenario != SC_ABSENT) {
      v = 0;
      s = gpuprims_comm_reduce(comm, in, GPUPRIMS_OP_SUM, &v);
      note(j, 1, s, &v);
      v = 0;
      s = gpuprims_comm_select_kth(comm, in, (uint64_t)j->per * (uint64_t)j->nranks / 2, &v);
      note(j, 2, s, &v);
    }
  }
  gpuprims_buffer_destroy(in);
  gpuprims_comm_destroy(comm);
  gpuprims_context_destroy(ctx);
  return NULL;
}

/* Runs `nranks` threads through `scenario`. */
static void run_ranks(rank_job *jobs, int nranks, int scenario, const uint32_t *data, size_t per) {
  pthread_t threads[MAX_RANKS];
  uint8_t id[GPUPRIMS_COMM_ID_BYTES];
  int i;
  TU_REQUIRE_OK(gpuprims_comm_id_create(g_cuda ? GPUPRIMS_BACKEND_CUDA : GPUPRIMS_BACKEND_HOST, id));
  for (i = 0; i < nranks; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].rank = i, jobs[i].nranks = nranks, jobs[i].id = id, jobs[i].data = data, jobs[i].per = per;
    jobs[i].scenario = scenario;
    TU_REQUIRE(pthread_create(&threads[i], NULL, rank_main, &jobs[i]) == 0);
  }
  for (i = 0; i < nranks; i++) pthread_join(threads[i], NULL);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void part_comm(tu_rng *r) {
  enum { PER = 1000 };
  uint32_t data[MAX_RANKS * PER], sorted[MAX_RANKS * PER];
  rank_job jobs[MAX_RANKS];
  int nranks = g_devices >= 2 ? (g_devices < 3 ? g_devices : 3) : 1, i;
  uint32_t sum = 0;
  for (i = 0; i < nranks * PER; i++) data[i] = (uint32_t)tu_below(r, 1u << 20), sum += data[i];
  memcpy(sorted, data, sizeof(uint32_t) * nranks * PER);
  qsort(sorted, (size_t)nranks * PER, 4, cmp_u32);

  run_ranks(jobs, nranks, SC_GOOD, data, PER);
  for (i = 0; i < nranks; i++) {
    TU_CHECKF(jobs[i].value[3] == (uint64_t)(i * 100 + nranks), "rank %d: gpuprims_comm_rank says %llu", i,
              (unsigned long long)jobs[i].value[3]);
    TU_CHECKF(jobs[i].status[0] == 0 && (uint32_t)jobs[i].value[0] == sum, "rank %d reduce: %s %llu, want %u (%s)", i,
              tu_status_name(jobs[i].status[0]), (unsigned long long)jobs[i].value[0], sum, jobs[i].message[0]);
    TU_CHECKF(jobs[i].status[2] == 0 && (uint32_t)jobs[i].value[2] == sorted[nranks * PER / 2],
              "rank %d select_kth: %s %llu, want %u (%s)", i, tu_status_name(jobs[i].status[2]),
              (unsigned long long)jobs[i].value[2], sorted[nranks * PER / 2], jobs[i].message[2]);
  }
  if (nranks < 2) return;
  run_ranks(jobs, nranks, SC_BAD_ARG, data, PER);
  for (i = 0; i < nranks; i++) {
    TU_CHECKF(jobs[i].status[0] == GPUPRIMS_STATUS_INVALID_ARGUMENT, "bad op on rank 1: rank %d got %s (%s)", i,
              tu_status_name(jobs[i].status[0]), jobs[i].message[0]);
    if (i != 1)
      TU_CHECKF(strstr(jobs[i].message[0], "rank 1") != NULL, "rank %d's message names rank 1: %s", i,
                jobs[i].message[0]);
    TU_CHECKF(jobs[i].status[1] == 0 && (uint32_t)jobs[i].value[1] == sum, "rank %d: the good call after: %s (%s)", i,
              tu_status_name(jobs[i].status[1]), jobs[i].message[1]);
  }
  run_ranks(jobs, nranks, SC_DISAGREE, data, PER);
  for (i = 0; i < nranks; i++) {
    TU_CHECKF(jobs[i].status[0] == GPUPRIMS_STATUS_INVALID_ARGUMENT, "SUM against MAX: rank %d got %s (%s)", i,
              tu_status_name(jobs[i].status[0]), jobs[i].message[0]);
    TU_CHECKF(jobs[i].status[1] == 0, "rank %d: the good call after disagreeing: %s (%s)", i,
              tu_status_name(jobs[i].status[1]), jobs[i].message[1]);
  }
  if (!g_cuda) {
    /* Rank 1 never calls: rank 0 gives up after the timeout, with an error. */
    setenv("GPUPRIMS_COMM_TIMEOUT_S", "1", 1);
    run_ranks(jobs, nranks, SC_ABSENT, data, PER);
    unsetenv("GPUPRIMS_COMM_TIMEOUT_S");
    TU_CHECKF(jobs[0].status[0] != GPUPRIMS_STATUS_OK && strstr(jobs[0].message[0], "timed out") != NULL,
              "a rank that never calls: rank 0 got %s (%s)", tu_status_name(jobs[0].status[0]), jobs[0].message[0]);
  }
}

/* ------------------------------------------------------------------------------------- */
/* One process per GPU                                                                     */
/* ------------------------------------------------------------------------------------- */

/* A child: rank `rank`, its id from the pipe; sorts its shard of a common data set and
 * takes the top 100 of all; exit status 0 when both match what it computes itself. */
static int child(int rank, int nranks, int fd, uint64_t seed) {
  enum { PER = 300000 };
  uint8_t id[GPUPRIMS_COMM_ID_BYTES];
  size_t got = 0;
  uint32_t *all = (uint32_t *)tu_xmalloc(sizeof(uint32_t) * PER * (size_t)nranks), *mine;
  uint32_t top[100], want_top[100];
  tu_rng r;
  gpuprims_context *ctx = NULL;
  gpuprims_comm *comm = NULL;
  gpuprims_buffer *keys = NULL, *in = NULL, *out = NULL;
  int ok = 1, i;
  while (got < sizeof id) {
    ssize_t n = read(fd, id + got, sizeof id - got);
    if (n <= 0) return 2;
    got += (size_t)n;
  }
  tu_rng_seed(&r, seed);
  for (i = 0; i < PER * nranks; i++) all[i] = (uint32_t)tu_next(&r);
  mine = (uint32_t *)tu_xmalloc(sizeof(uint32_t) * PER);
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, rank, &ctx) || gpuprims_comm_create(ctx, id, (uint32_t)rank, (uint32_t)nranks, &comm) ||
      gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, all + (size_t)rank * PER, PER, &keys) ||
      gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, all + (size_t)rank * PER, PER, &in) ||
      gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, 100, &out) ||
      gpuprims_comm_radix_sort(comm, keys, NULL, GPUPRIMS_ORDER_ASCENDING) ||
      gpuprims_comm_topk(comm, in, 100, GPUPRIMS_ORDER_DESCENDING, out, NULL) ||
      gpuprims_buffer_read(keys, 0, mine, PER) || gpuprims_buffer_read(out, 0, top, 100)) {
    char msg[512];
    tu_last_error_text(msg, sizeof msg);
    fprintf(stderr, "rank %d: %s\n", rank, msg);
    return 3;
  }
  qsort(all, (size_t)PER * nranks, 4, cmp_u32);
  ok &= memcmp(mine, all + (size_t)rank * PER, sizeof(uint32_t) * PER) == 0;
  for (i = 0; i < 100; i++) want_top[i] = all[(size_t)PER * nranks - 1 - i];
  ok &= memcmp(top, want_top, sizeof top) == 0;
  gpuprims_buffer_destroy(keys), gpuprims_buffer_destroy(in), gpuprims_buffer_destroy(out);
  gpuprims_comm_destroy(comm);
  gpuprims_context_destroy(ctx);
  free(all), free(mine);
  return ok ? 0 : 1;
}

/* Rank 0 makes the id and writes it to the others' pipes (no CUDA in the parent, so
 * the children may use it after fork). */
static void part_procs(uint64_t seed) {
  int nranks = g_devices < MAX_RANKS ? g_devices : MAX_RANKS, i, fds[MAX_RANKS][2];
  pid_t pids[MAX_RANKS];
  for (i = 0; i < nranks; i++) TU_REQUIRE(pipe(fds[i]) == 0);
  for (i = 0; i < nranks; i++) {
    pids[i] = fork();
    TU_REQUIRE(pids[i] >= 0);
    if (pids[i] == 0) {
      if (i == 0) {
        uint8_t id[GPUPRIMS_COMM_ID_BYTES];
        int j;
        if (gpuprims_comm_id_create(GPUPRIMS_BACKEND_CUDA, id) != GPUPRIMS_STATUS_OK) _exit(4);
        for (j = 0; j < nranks; j++)
          if (write(fds[j][1], id, sizeof id) != (ssize_t)sizeof id) _exit(5);
      }
      _exit(child(i, nranks, fds[i][0], seed));
    }
  }
  for (i = 0; i < nranks; i++) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    TU_CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process of rank %d of %d: exit status %d", i, nranks,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Past 2^32 elements in all                                                               */
/* ------------------------------------------------------------------------------------- */

static void part_large(tu_rng *r, gpuprims_context *one) {
  world w;
  const tu_dtype_info *d = &tu_dtypes()[1]; /* u8: 2^32 + 3 bytes in all */
  size_t n = ((size_t)1 << 32) + 3;
  int nranks = g_devices >= 2 ? 2 : 1;
  world_open(&w, nranks, one);
  run_case_as(r, &w, d, n, TU_FILL_BITS, "past 2^32", 1);
  world_close(&w);
}

int main(void) {
  uint64_t seed = tu_init("test_multi");
  tu_rng r;
  gpuprims_context *one;
  tu_rng_seed(&r, seed);
  if (part_on("procs") && tu_env_backend_is("cuda")) {
    /* Before this process touches CUDA: the children need a parent without it. */
    int count = 0;
    const char *n = getenv("GPUPRIMS_TEST_GPUS");
    count = n ? atoi(n) : 0;
    if (count >= 2) {
      g_devices = count;
      part_procs(seed);
    } else {
      printf("test_multi: procs part skipped (GPUPRIMS_TEST_GPUS=<count of GPUs> enables it)\n");
    }
  }
  one = tu_open_context();
  g_cuda = tu_is_cuda(one);
  g_devices = g_cuda ? 0 : MAX_RANKS;
  if (g_cuda) {
    /* How many devices the group may take: try to open each. */
    gpuprims_context *probe = NULL;
    while (g_devices < MAX_RANKS && gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, g_devices, &probe) == 0) {
      gpuprims_context_destroy(probe);
      g_devices++;
    }
    printf("test_multi: %d CUDA device(s)\n", g_devices);
  }
  if (part_on("group")) part_group(&r, one);
  if (part_on("errors")) part_group_errors(&r, one);
  if (part_on("comm")) part_comm(&r);
  if (part_on("large") && getenv("GPUPRIMS_TEST_LARGE")) part_large(&r, one);
  gpuprims_context_destroy(one);
  return tu_finish();
}
