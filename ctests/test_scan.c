/*
 * test_scan: gpuprims_scan for every dtype x {SUM, MIN, MAX} x {inclusive, exclusive}, into
 * another buffer and in place, at sizes 0, 1 and around warp, block and tile boundaries up
 * to 3,000,000, on fresh random data, against a sequential C reference. The out buffer is
 * poisoned (0xA5 bytes) before each run so an element left unwritten fails; the input must
 * be unchanged when out is another buffer; float SUM in place and out of place must agree
 * bitwise. Special values (NaN, signed zeros, infinities, integer extremes), a repeat test
 * (2^22 elements of i32, f32 and f64, 20 runs, every run bitwise identical and right:
 * look-back races), errors.
 *
 * GPUPRIMS_TEST_QUICK=1: sizes up to 65537 (the edges of the first tiles and of a look-back
 * window's worth of 4-byte tiles kept), the repeat test at 2^18 elements and 5 runs.
 */
#include "test_util.h"

#define MAX_N 3000000u
#define REPEAT_N ((size_t)1 << 22)
#define REPEAT_RUNS 20

static const gpuprims_op OPS[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};
static const gpuprims_scan_mode MODES[2] = {GPUPRIMS_SCAN_INCLUSIVE, GPUPRIMS_SCAN_EXCLUSIVE};

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  unsigned char *data;   /* the input (host copy) */
  unsigned char *got;    /* read back */
  unsigned char *got2;   /* read back, second run */
  unsigned char *poison; /* 0xA5 bytes */
  unsigned long runs;
} env_t;

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void read_back(gpuprims_buffer *b, void *dst, size_t n) { TU_REQUIRE_OK(gpuprims_buffer_read(b, 0, dst, n)); }

/*
 * Scans data[0..n) of dtype t with op/mode, into a separate poisoned buffer and in place;
 * checks both against the reference, the input unchanged, and (float SUM) the two results
 * bitwise equal.
 */
/* Scans `in` into `out` (the same buffer for in place), reads the result into `got`
 * and checks it against the reference scan of e->data. `how` labels messages.
 * Returns -1 when the call failed, 0 when elements are wrong, 1 when all are right. */
static int scan_and_check(env_t *e, const char *how, gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode,
                          size_t n, gpuprims_buffer *in, gpuprims_buffer *out, void *got, double tolf,
                          const char *what) {
  const char *dn = tu_dtype_name(t), *on = tu_op_name(op), *mn = tu_mode_name(mode);
  char msg[512];
  size_t bad;
  gpuprims_status s = gpuprims_scan(e->ctx, in, out, op, mode);
  e->runs++;
  if (!TU_CHECKF(s == GPUPRIMS_STATUS_OK, "%s %s %s %s n=%zu (%s): status %s", how, dn, on, mn, n, what,
                 tu_status_name(s)))
    return -1;
  read_back(out, got, n);
  msg[0] = '\0';
  bad = tu_check_scan(t, op, mode, e->data, n, got, tolf, msg, sizeof msg);
  return TU_CHECKF(bad == 0, "%s %s %s %s n=%zu (%s): %zu wrong elements; first %s", how, dn, on, mn, n, what, bad,
                   msg);
}

static void check_scan(env_t *e, gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode, size_t n,
                       gpuprims_buffer *in, gpuprims_buffer *out, double tolf, const char *what) {
  int separate, in_place;

  /* into another buffer, poisoned */
  if (n) TU_REQUIRE_OK(gpuprims_buffer_write(out, 0, e->poison, n));
  separate = scan_and_check(e, "scan", t, op, mode, n, in, out, e->got, tolf, what);

  /* in place (out's content is replaced by the input first) */
  if (n) TU_REQUIRE_OK(gpuprims_buffer_write(out, 0, e->data, n));
  in_place = scan_and_check(e, "in-place scan", t, op, mode, n, out, out, e->got2, tolf, what);
  if (separate == 1 && in_place >= 0 && op == GPUPRIMS_OP_SUM && tu_dtype(t)->is_float)
    TU_CHECKF(memcmp(e->got, e->got2, n * tu_dtype_size(t)) == 0,
              "scan %s SUM %s n=%zu (%s): in place and out of place differ bitwise", tu_dtype_name(t),
              tu_mode_name(mode), n, what);
}

static void check_ops(void *env, gpuprims_dtype t, size_t n, const gpuprims_op *ops, int nops, double tolf,
                      const char *what) {
  env_t *e = (env_t *)env;
  gpuprims_buffer *in = tu_buffer_from_host(e->ctx, t, e->data, n);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, t, n);
  int i, m;
  for (i = 0; i < nops; i++)
    for (m = 0; m < 2; m++) check_scan(e, t, ops[i], MODES[m], n, in, out, tolf, what);
  /* the input of all those scans into another buffer is unchanged */
  read_back(in, e->got2, n);
  TU_CHECKF(memcmp(e->got2, e->data, n * tu_dtype_size(t)) == 0,
            "scan %s n=%zu (%s): the input changed (scans into another buffer)", tu_dtype_name(t), n, what);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(in);
}


static void float_specials(env_t *e, gpuprims_dtype t) {
  static const size_t sizes[] = {1, 2, 33, 1000, 70001};
  static const double zoo[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0};
  size_t si, i, n;
  for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
    n = sizes[si];
    /* NaNs: everything from the first NaN on is NaN (MIN, MAX and SUM) */
    tu_fill(&e->rng, t, e->data, n, TU_FILL_SMALLINT);
    tu_put_bits(t, e->data, (size_t)tu_below(&e->rng, n), tu_nan_bits(t, 0));
    if (n > 2) tu_put_bits(t, e->data, (size_t)tu_below(&e->rng, n), tu_nan_bits(t, 1));
    check_ops(e, t, n, OPS, 3, 0, "NaNs among small integers");
    /* infinities */
    tu_fill(&e->rng, t, e->data, n, TU_FILL_SMALLINT);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), INFINITY);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), -INFINITY);
    check_ops(e, t, n, OPS, 3, 0, "infinities among small integers");
    /* signed zeros among small values: -0.0 < +0.0 for MIN/MAX */
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, zoo[tu_below(&e->rng, (uint64_t)(i & 1 ? 2 : 7))]);
    check_ops(e, t, n, OPS, 3, 0, "signed zeros");
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, (tu_next(&e->rng) & 1) ? -0.0 : 0.0);
    check_ops(e, t, n, OPS + 1, 2, 0, "only signed zeros");
  }
}

static void int_specials(env_t *e, const tu_dtype_info *d) {
  static const size_t sizes[] = {1, 2, 1000, 70001};
  size_t es = d->size, si, i, n;
  uint64_t lo = d->is_signed ? (uint64_t)1 << (es * 8 - 1) : 0;
  uint64_t hi = d->is_signed ? (((uint64_t)1 << (es * 8 - 1)) - 1) : (es == 8 ? UINT64_MAX : ((uint64_t)1 << (es * 8)) - 1);
  uint64_t choices[5];
  choices[0] = lo;
  choices[1] = hi;
  choices[2] = 0;
  choices[3] = 1;
  choices[4] = UINT64_MAX;
  for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
    n = sizes[si];
    for (i = 0; i < n; i++) tu_put_bits(d->id, e->data, i, hi);
    check_ops(e, d->id, n, OPS, 3, -1, "all maximum");
    for (i = 0; i < n; i++) tu_put_bits(d->id, e->data, i, choices[tu_below(&e->rng, 5)]);
    check_ops(e, d->id, n, OPS, 3, -1, "extremes mixed");
  }
}

/* n elements, scanned `runs` times: every run bitwise identical to the first, and right. */
static void repeat_test(env_t *e, gpuprims_dtype t, size_t n, int runs) {
  size_t es = tu_dtype_size(t), bad;
  gpuprims_buffer *in, *out;
  unsigned char *first = (unsigned char *)tu_xmalloc(n * es);
  int r, differ = 0, first_ok;
  char msg[512];
  tu_fill(&e->rng, t, e->data, n, tu_dtype(t)->is_float ? TU_FILL_UNIFORM : TU_FILL_BITS);
  in = tu_buffer_from_host(e->ctx, t, e->data, n);
  out = tu_buffer_create(e->ctx, t, n);
  tu_poison(out, n, es);
  TU_REQUIRE_OK(gpuprims_scan(e->ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
  read_back(out, first, n);
  msg[0] = '\0';
  bad = tu_check_scan(t, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE, e->data, n, first, -1, msg, sizeof msg);
  first_ok = TU_CHECKF(bad == 0, "repeat %s SUM inclusive n=%zu run 0: %zu wrong; first %s", tu_dtype_name(t), n, bad,
                       msg);
  for (r = 1; r < runs; r++) {
    TU_REQUIRE_OK(gpuprims_buffer_write(out, 0, e->poison, n));
    TU_REQUIRE_OK(gpuprims_scan(e->ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    e->runs++;
    read_back(out, e->got, n);
    if (memcmp(e->got, first, n * es) != 0) {
      size_t i = 0;
      char w[64], g[64];
      while (i < n && memcmp(e->got + i * es, first + i * es, es) == 0) i++;
      tu_fmt_elem(t, first + i * es, w, sizeof w);
      tu_fmt_elem(t, e->got + i * es, g, sizeof g);
      TU_CHECKF(0, "repeat %s SUM inclusive n=%zu: run %d differs from run 0 first at %zu (%s vs %s)",
                tu_dtype_name(t), n, r, i, g, w);
      differ++;
      msg[0] = '\0';
      bad = tu_check_scan(t, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE, e->data, n, e->got, -1, msg, sizeof msg);
      TU_CHECKF(bad == 0, "repeat %s SUM inclusive run %d: %zu wrong; first %s", tu_dtype_name(t), r, bad, msg);
    } else {
      TU_CHECK(1);
    }
  }
  printf("test_scan: repeat %s n=%zu: %d runs, %d differ from the first%s\n", tu_dtype_name(t), n, runs, differ,
         first_ok ? "" : " (the first is wrong)");
  fflush(stdout);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(in);
  free(first);
}

static void errors(env_t *e) {
  static const gpuprims_op bad_ops[] = {3, 100, 0xFFFFFFFFu};
  static const gpuprims_scan_mode bad_modes[] = {2, 100, 0xFFFFFFFFu};
  int32_t vals[6] = {1, 2, 3, 4, 5, 6};
  unsigned char pois[6 * 8];
  gpuprims_buffer *in = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, vals, 6);
  gpuprims_buffer *out = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_I32, 6);
  gpuprims_buffer *wrong_t = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U32, 6);
  gpuprims_buffer *wrong_f = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_F32, 6);
  gpuprims_buffer *wrong_n = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_I32, 7);
  gpuprims_buffer *shorter = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_I32, 5);
  gpuprims_context *other = NULL;
  gpuprims_buffer *in_o, *out_o;
  size_t i;
  memset(pois, 0xA5, sizeof pois);

#define OUT_UNTOUCHED(buf, n, es)                                                       \
  do {                                                                                  \
    unsigned char chk_[7 * 8];                                                          \
    TU_REQUIRE_OK(gpuprims_buffer_read((buf), 0, chk_, (n)));                            \
    TU_CHECKF(memcmp(chk_, pois, (n) * (es)) == 0, "a failed scan wrote its out buffer"); \
  } while (0)

  tu_poison(out, 6, 4);
  tu_poison(wrong_t, 6, 4);
  tu_poison(wrong_f, 6, 4);
  tu_poison(wrong_n, 7, 4);
  tu_poison(shorter, 5, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, wrong_t, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_TYPE_MISMATCH);
  OUT_UNTOUCHED(wrong_t, 6, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, wrong_f, GPUPRIMS_OP_MAX, GPUPRIMS_SCAN_EXCLUSIVE),
                   GPUPRIMS_STATUS_TYPE_MISMATCH);
  OUT_UNTOUCHED(wrong_f, 6, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, wrong_n, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_SIZE_MISMATCH);
  OUT_UNTOUCHED(wrong_n, 7, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, shorter, GPUPRIMS_OP_MIN, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_SIZE_MISMATCH);
  OUT_UNTOUCHED(shorter, 5, 4);
  for (i = 0; i < TU_ARRAY_LEN(bad_ops); i++) {
    TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, out, bad_ops[i], GPUPRIMS_SCAN_INCLUSIVE),
                     GPUPRIMS_STATUS_INVALID_ARGUMENT);
    OUT_UNTOUCHED(out, 6, 4);
  }
  for (i = 0; i < TU_ARRAY_LEN(bad_modes); i++) {
    TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, out, GPUPRIMS_OP_SUM, bad_modes[i]), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    OUT_UNTOUCHED(out, 6, 4);
  }
  /* in place with a bad op: the buffer stays */
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, in, 7, GPUPRIMS_SCAN_INCLUSIVE), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  {
    int32_t chk[6];
    TU_REQUIRE_OK(gpuprims_buffer_read(in, 0, chk, 6));
    TU_CHECKF(memcmp(chk, vals, sizeof vals) == 0, "a failed in-place scan changed the buffer");
  }
  TU_EXPECT_STATUS(gpuprims_scan(NULL, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, NULL, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, NULL, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_NULL_ARGUMENT);
  OUT_UNTOUCHED(out, 6, 4);
  /* handles of the wrong type */
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, (gpuprims_buffer *)(void *)e->ctx, GPUPRIMS_OP_SUM,
                                 GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_scan((gpuprims_context *)(void *)in, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  OUT_UNTOUCHED(out, 6, 4);
  /* buffers of another context */
  TU_REQUIRE_OK(gpuprims_context_create(tu_backend_of(e->ctx), 0, &other));
  in_o = tu_buffer_from_host(other, GPUPRIMS_DTYPE_I32, vals, 6);
  out_o = tu_buffer_create(other, GPUPRIMS_DTYPE_I32, 6);
  tu_poison(out_o, 6, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in_o, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  OUT_UNTOUCHED(out, 6, 4);
  TU_EXPECT_STATUS(gpuprims_scan(e->ctx, in, out_o, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  OUT_UNTOUCHED(out_o, 6, 4);
  TU_EXPECT_STATUS(gpuprims_scan(other, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE),
                   GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  OUT_UNTOUCHED(out, 6, 4);
  /* the right context works */
  if (TU_EXPECT_OK(gpuprims_scan(other, in_o, out_o, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE))) {
    int32_t chk[6];
    static const int32_t want[6] = {0, 1, 3, 6, 10, 15};
    TU_REQUIRE_OK(gpuprims_buffer_read(out_o, 0, chk, 6));
    TU_CHECKF(memcmp(chk, want, sizeof want) == 0, "exclusive SUM of 1..6 is wrong");
  }
#undef OUT_UNTOUCHED
  gpuprims_buffer_destroy(in_o);
  gpuprims_buffer_destroy(out_o);
  gpuprims_context_destroy(other);
  gpuprims_buffer_destroy(in);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(wrong_t);
  gpuprims_buffer_destroy(wrong_f);
  gpuprims_buffer_destroy(wrong_n);
  gpuprims_buffer_destroy(shorter);
}

int main(void) {
  env_t e;
  const tu_dtype_info *d = tu_dtypes();
  size_t sizes[48], nsizes = 0, si, cap;
  /* Warp, block and tile edges; the CUDA tiles are 5120 (8-byte), 8192 (4- and 2-byte)
   * and 16384 (1-byte) elements, and a look-back window is 64 tiles. */
  static const size_t fixed[] = {0,      1,      2,      31,     32,      33,      255,
                                 256,    257,    1023,   1024,   1025,    4095,    4096,
                                 4097,   5119,   5120,   5121,   8191,    8192,    8193,
                                 16383,  16384,  16385,  65535,  65536,   65537,   327680,
                                 327681, 524288, 524289, ((size_t)1 << 20) + 3, MAX_N};
  static const size_t quick_fixed[] = {0, 1, 2, 33, 257, 1025, 4097, 5121, 8193, 16385, 65537};
  const int quick = getenv("GPUPRIMS_TEST_QUICK") != NULL;
  const size_t repeat_n = quick ? (size_t)1 << 18 : REPEAT_N;
  const int repeat_runs = quick ? 5 : REPEAT_RUNS;
  int i;
  double t0, t1, t2, t3;
  uint64_t seed = tu_init("test_scan");
  tu_rng_seed(&e.rng, seed);
  e.ctx = tu_open_context();
  cap = REPEAT_N > MAX_N ? REPEAT_N : MAX_N;
  e.data = (unsigned char *)tu_xmalloc(cap * 8);
  e.got = (unsigned char *)tu_xmalloc(cap * 8);
  e.got2 = (unsigned char *)tu_xmalloc(cap * 8);
  e.poison = (unsigned char *)tu_xmalloc(cap * 8);
  memset(e.poison, 0xA5, cap * 8);
  e.runs = 0;
  if (quick) {
    for (si = 0; si < TU_ARRAY_LEN(quick_fixed); si++) sizes[nsizes++] = quick_fixed[si];
  } else {
    for (si = 0; si < TU_ARRAY_LEN(fixed); si++) sizes[nsizes++] = fixed[si];
  }
  sizes[nsizes++] = 1 + (size_t)tu_below(&e.rng, 5000);
  sizes[nsizes++] = 1 + (size_t)tu_below(&e.rng, quick ? 70000 : 300000);
  printf("test_scan: random sizes %zu and %zu\n", sizes[nsizes - 2], sizes[nsizes - 1]);

  t0 = seconds();
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    double td = seconds();
    for (si = 0; si < nsizes; si++) tu_random_cases(&e.rng, &d[i], e.data, sizes[si], check_ops, &e, 1);
    printf("test_scan: %-3s random data, %zu sizes (%.1f s)\n", d[i].name, nsizes, seconds() - td);
    fflush(stdout);
  }
  t1 = seconds();
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    if (d[i].is_float)
      float_specials(&e, d[i].id);
    else
      int_specials(&e, &d[i]);
  }
  t2 = seconds();
  repeat_test(&e, GPUPRIMS_DTYPE_I32, repeat_n, repeat_runs);
  repeat_test(&e, GPUPRIMS_DTYPE_F32, repeat_n, repeat_runs);
  repeat_test(&e, GPUPRIMS_DTYPE_F64, repeat_n, repeat_runs);
  repeat_test(&e, GPUPRIMS_DTYPE_BF16, repeat_n, repeat_runs);
  t3 = seconds();
  errors(&e);

  printf("test_scan: %lu scans (random data %.1f s, special values %.1f s, repeats %.1f s)\n", e.runs, t1 - t0,
         t2 - t1, t3 - t2);
  free(e.data);
  free(e.got);
  free(e.got2);
  free(e.poison);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
