/*
 * test_reduce: gpuprims_reduce for every dtype x {SUM, MIN, MAX} at sizes around warp,
 * block and tile boundaries up to 3,000,000, on fresh random data, against a sequential C
 * reference: integer SUM wraps, float SUM within a tolerance relative to the sum of absolute
 * values (and exact on small-integer data, where every order of summation is exact), MIN/MAX
 * exact. Special values (NaN, signed zeros, infinities, integer extremes), all-equal, sorted
 * and reversed inputs, empty input, run-to-run bitwise determinism of float SUM, errors.
 */
#include "test_util.h"

#define MAX_N 3000000u
#define OUT_BYTES 16
#define OUT_POISON 0xA5

static const gpuprims_op OPS[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  unsigned char *data; /* MAX_N elements of the widest type */
  unsigned long runs;
} env_t;

static int bytes_all(const unsigned char *p, size_t n, unsigned char v) {
  size_t i;
  for (i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

/* Reduces data[0..n) (already in buffer b) with op; checks against the reference. */
static void check_one(env_t *e, gpuprims_buffer *b, gpuprims_dtype t, gpuprims_op op, size_t n, double tolf,
                      const char *what) {
  unsigned char out[OUT_BYTES];
  char msg[512];
  size_t es = tu_dtype_size(t);
  gpuprims_status s;
  memset(out, OUT_POISON, sizeof out);
  s = gpuprims_reduce(e->ctx, b, op, out);
  e->runs++;
  if (!TU_CHECKF(s == GPUPRIMS_STATUS_OK, "reduce %s %s n=%zu (%s): status %s", tu_dtype_name(t), tu_op_name(op), n,
                 what, tu_status_name(s)))
    return;
  TU_CHECKF(bytes_all(out + es, OUT_BYTES - es, OUT_POISON), "reduce %s %s n=%zu (%s): wrote past one element",
            tu_dtype_name(t), tu_op_name(op), n, what);
  msg[0] = '\0';
  TU_CHECKF(tu_check_reduce(t, op, e->data, n, out, tolf, msg, sizeof msg) == 0, "reduce %s %s n=%zu (%s): %s",
            tu_dtype_name(t), tu_op_name(op), n, what, msg);
}

/* Uploads data[0..n) and checks the given ops. */
static void check_ops(void *env, gpuprims_dtype t, size_t n, const gpuprims_op *ops, int nops, double tolf,
                      const char *what) {
  env_t *e = (env_t *)env;
  gpuprims_buffer *b = tu_buffer_from_host(e->ctx, t, e->data, n);
  int i;
  for (i = 0; i < nops; i++) check_one(e, b, t, ops[i], n, tolf, what);
  gpuprims_buffer_destroy(b);
}


/* --- element helpers for the special cases --------------------------------------------- */

/* A quiet NaN, a negative NaN, one with a payload, a signalling pattern. */
static uint64_t nan_bits(gpuprims_dtype t, int which) { return tu_nan_bits(t, which); }

static void float_specials(env_t *e, gpuprims_dtype t) {
  static const size_t sizes[] = {1, 2, 3, 33, 1000, 65537};
  size_t si, i, n, pos;
  char what[96];
  unsigned char out[OUT_BYTES];
  gpuprims_buffer *b;

  for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
    n = sizes[si];
    /* one NaN (of each kind) among uniform data, at the start, the end, and inside */
    for (i = 0; i < 4; i++) {
      tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
      pos = i == 0 ? 0 : i == 1 ? n - 1 : (size_t)tu_below(&e->rng, n);
      tu_put_bits(t, e->data, pos, nan_bits(t, (int)i));
      snprintf(what, sizeof what, "NaN kind %d at %zu", (int)i, pos);
      check_ops(e, t, n, OPS, 3, -1, what);
    }
    /* NaN with infinities */
    if (n >= 3) {
      tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
      tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), -INFINITY);
      tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), INFINITY);
      tu_put_bits(t, e->data, (size_t)tu_below(&e->rng, n), nan_bits(t, 0));
      check_ops(e, t, n, OPS, 3, -1, "NaN and infinities");
    }
    /* +inf, -inf, both */
    tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), INFINITY);
    check_ops(e, t, n, OPS, 3, -1, "+inf");
    tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), -INFINITY);
    check_ops(e, t, n, OPS, 3, -1, "-inf");
    if (n >= 2) {
      tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
      pos = (size_t)tu_below(&e->rng, n);
      tu_put_f(t, e->data, pos, INFINITY);
      tu_put_f(t, e->data, (pos + 1 + (size_t)tu_below(&e->rng, n - 1)) % n, -INFINITY);
      check_ops(e, t, n, OPS, 3, -1, "+inf and -inf");
    }
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, INFINITY);
    check_ops(e, t, n, OPS, 3, -1, "all +inf");
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, -INFINITY);
    check_ops(e, t, n, OPS, 3, -1, "all -inf");
    /* signed zeros: all +0.0 but one -0.0, all -0.0 but one +0.0, random mixtures */
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, 0.0);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), -0.0);
    check_ops(e, t, n, OPS + 1, 2, -1, "+0.0 with one -0.0");
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, -0.0);
    tu_put_f(t, e->data, (size_t)tu_below(&e->rng, n), 0.0);
    check_ops(e, t, n, OPS + 1, 2, -1, "-0.0 with one +0.0");
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, -0.0);
    check_ops(e, t, n, OPS + 1, 2, -1, "all -0.0");
    for (i = 0; i < n; i++) tu_put_f(t, e->data, i, (tu_next(&e->rng) & 1) ? -0.0 : 0.0);
    check_ops(e, t, n, OPS + 1, 2, -1, "random signed zeros");
  }

  /* {+0.0, -0.0} in both orders: MIN is -0.0, MAX is +0.0 (sign bits checked) */
  for (i = 0; i < 2; i++) {
    int k;
    tu_put_f(t, e->data, 0, i ? -0.0 : 0.0);
    tu_put_f(t, e->data, 1, i ? 0.0 : -0.0);
    b = tu_buffer_from_host(e->ctx, t, e->data, 2);
    for (k = 0; k < 2; k++) {
      gpuprims_op op = k ? GPUPRIMS_OP_MAX : GPUPRIMS_OP_MIN;
      memset(out, OUT_POISON, sizeof out);
      if (TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, op, out))) {
        double v = tu_get_f(t, out, 0);
        TU_CHECKF(v == 0.0 && (signbit(v) ? 1 : 0) == (k ? 0 : 1), "%s %s{%s0.0, %s0.0} is %g, expected %s0.0",
                  tu_dtype_name(t), tu_op_name(op), i ? "-" : "+", i ? "+" : "-", v, k ? "+" : "-");
      }
    }
    gpuprims_buffer_destroy(b);
  }

  /* float SUM is bitwise reproducible run to run */
  {
    static const size_t det_sizes[] = {65537, ((size_t)1 << 20) + 3, MAX_N};
    for (si = 0; si < TU_ARRAY_LEN(det_sizes); si++) {
      unsigned char first[OUT_BYTES], again[OUT_BYTES];
      int r;
      n = det_sizes[si];
      tu_fill(&e->rng, t, e->data, n, TU_FILL_UNIFORM);
      b = tu_buffer_from_host(e->ctx, t, e->data, n);
      memset(first, OUT_POISON, sizeof first);
      TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, first));
      for (r = 0; r < 3; r++) {
        memset(again, OUT_POISON, sizeof again);
        TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, again));
        TU_CHECKF(memcmp(first, again, tu_dtype_size(t)) == 0, "%s SUM n=%zu: run %d differs bitwise from run 0",
                  tu_dtype_name(t), n, r + 1);
      }
      gpuprims_buffer_destroy(b);
    }
  }
}

static void int_specials(env_t *e, const tu_dtype_info *d) {
  static const size_t sizes[] = {1, 2, 3, 1000, 65537};
  gpuprims_dtype t = d->id;
  size_t es = d->size, si, i, n;
  /* the type's extremes: lowest = sign bit only (signed) or 0, highest = all ones but sign */
  uint64_t lo = d->is_signed ? (uint64_t)1 << (es * 8 - 1) : 0;
  uint64_t hi = d->is_signed ? (((uint64_t)1 << (es * 8 - 1)) - 1) : (es == 8 ? UINT64_MAX : ((uint64_t)1 << (es * 8)) - 1);
  uint64_t choices[6];
  choices[0] = lo;
  choices[1] = hi;
  choices[2] = 0;
  choices[3] = 1;
  choices[4] = UINT64_MAX; /* -1, or the unsigned maximum */
  choices[5] = lo + 1;
  for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
    n = sizes[si];
    for (i = 0; i < n; i++) tu_put_bits(t, e->data, i, hi);
    check_ops(e, t, n, OPS, 3, -1, "all maximum (SUM wraps)");
    for (i = 0; i < n; i++) tu_put_bits(t, e->data, i, lo);
    check_ops(e, t, n, OPS, 3, -1, "all lowest");
    for (i = 0; i < n; i++) tu_put_bits(t, e->data, i, choices[tu_below(&e->rng, 6)]);
    check_ops(e, t, n, OPS, 3, -1, "extremes mixed");
  }
  /* {max, 1}: SUM wraps to the lowest value; {lowest, -1} wraps to max (signed) */
  {
    unsigned char out[OUT_BYTES];
    gpuprims_buffer *b;
    uint64_t got = 0;
    tu_put_bits(t, e->data, 0, hi);
    tu_put_bits(t, e->data, 1, 1);
    b = tu_buffer_from_host(e->ctx, t, e->data, 2);
    memset(out, OUT_POISON, sizeof out);
    if (TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, out))) {
      memcpy(&got, out, es);
      TU_CHECKF(got == lo, "%s SUM{max, 1} = 0x%llx, expected the wrapped 0x%llx", d->name, (unsigned long long)got,
                (unsigned long long)lo);
    }
    gpuprims_buffer_destroy(b);
  }
}

/* all-equal, sorted, reversed */
static int cmp_elems_t;
static int cmp_elems(const void *a, const void *b) {
  switch (cmp_elems_t) {
#define CMP_CASE(ID, T)                             \
  case ID: {                                        \
    T x, y;                                         \
    memcpy(&x, a, sizeof x);                        \
    memcpy(&y, b, sizeof y);                        \
    return x < y ? -1 : x > y ? 1 : 0;              \
  }
    CMP_CASE(GPUPRIMS_DTYPE_I8, int8_t)
    CMP_CASE(GPUPRIMS_DTYPE_U8, uint8_t)
    CMP_CASE(GPUPRIMS_DTYPE_I16, int16_t)
    CMP_CASE(GPUPRIMS_DTYPE_U16, uint16_t)
    CMP_CASE(GPUPRIMS_DTYPE_I32, int32_t)
    CMP_CASE(GPUPRIMS_DTYPE_U32, uint32_t)
    CMP_CASE(GPUPRIMS_DTYPE_I64, int64_t)
    CMP_CASE(GPUPRIMS_DTYPE_U64, uint64_t)
    CMP_CASE(GPUPRIMS_DTYPE_F32, float)
    CMP_CASE(GPUPRIMS_DTYPE_F64, double)
#undef CMP_CASE
    case GPUPRIMS_DTYPE_F16:
    case GPUPRIMS_DTYPE_BF16: {
      double x = tu_get_f((gpuprims_dtype)cmp_elems_t, a, 0), y = tu_get_f((gpuprims_dtype)cmp_elems_t, b, 0);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    default: return 0;
  }
}

static void reverse(unsigned char *p, size_t n, size_t es) {
  size_t i, k;
  for (i = 0; i < n / 2; i++)
    for (k = 0; k < es; k++) {
      unsigned char tmp = p[i * es + k];
      p[i * es + k] = p[(n - 1 - i) * es + k];
      p[(n - 1 - i) * es + k] = tmp;
    }
}

static void ordered_inputs(env_t *e, const tu_dtype_info *d) {
  static const size_t sizes[] = {1000, 65537, ((size_t)1 << 20) + 3}; /* sorted: the first two */
  size_t si, i, n, es = d->size;
  int kind;
  for (si = 0; si < TU_ARRAY_LEN(sizes); si++) {
    n = sizes[si];
    /* all equal: a random value (a small integer for floats, so that SUM is exact) */
    tu_fill(&e->rng, d->id, e->data, 1, d->is_float ? TU_FILL_SMALLINT : TU_FILL_BITS);
    if (d->is_float && n > 1000) tu_put_f(d->id, e->data, 0, (tu_next(&e->rng) & 1) ? 3.0 : -2.0);
    for (i = 1; i < n; i++) memcpy(e->data + i * es, e->data, es);
    check_ops(e, d->id, n, OPS, 3, d->is_float ? 0 : -1, "all equal");
    /* sorted and reversed */
    if (n > 65537) continue;
    for (kind = 0; kind < (d->is_float ? 2 : 1); kind++) {
      int fill = d->is_float ? (kind == 0 ? TU_FILL_SMALLINT : TU_FILL_BITS) : TU_FILL_BITS;
      tu_fill(&e->rng, d->id, e->data, n, fill);
      cmp_elems_t = (int)d->id;
      qsort(e->data, n, es, cmp_elems);
      if (fill == TU_FILL_BITS && d->is_float) {
        check_ops(e, d->id, n, OPS + 1, 2, -1, "sorted");
        reverse(e->data, n, es);
        check_ops(e, d->id, n, OPS + 1, 2, -1, "reversed");
      } else {
        check_ops(e, d->id, n, OPS, 3, d->is_float ? 0 : -1, "sorted");
        reverse(e->data, n, es);
        check_ops(e, d->id, n, OPS, 3, d->is_float ? 0 : -1, "reversed");
      }
    }
  }
}

static void empty_input(env_t *e, const tu_dtype_info *d) {
  gpuprims_buffer *b = tu_buffer_create(e->ctx, d->id, 0);
  unsigned char out[OUT_BYTES], zero[OUT_BYTES];
  memset(zero, 0, sizeof zero);
  memset(out, OUT_POISON, sizeof out);
  if (TU_EXPECT_OK(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, out))) {
    int is_zero;
    if (d->is_float) {
      is_zero = tu_get_f(d->id, out, 0) == 0.0;
    } else {
      is_zero = memcmp(out, zero, d->size) == 0;
    }
    TU_CHECKF(is_zero, "%s SUM of nothing is not 0", d->name);
    TU_CHECKF(bytes_all(out + d->size, OUT_BYTES - d->size, OUT_POISON), "%s SUM of nothing wrote past one element",
              d->name);
  }
  memset(out, OUT_POISON, sizeof out);
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_MIN, out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECKF(bytes_all(out, OUT_BYTES, OUT_POISON), "%s MIN of nothing wrote out", d->name);
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_MAX, out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECKF(bytes_all(out, OUT_BYTES, OUT_POISON), "%s MAX of nothing wrote out", d->name);
  gpuprims_buffer_destroy(b);
}

static void errors(env_t *e) {
  static const gpuprims_op bad_ops[] = {3, 4, 100, 0xFFFFFFFFu};
  int32_t vals[5] = {5, -3, 8, 1, 0};
  unsigned char out[OUT_BYTES];
  gpuprims_buffer *b = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, vals, 5);
  gpuprims_context *other = NULL;
  gpuprims_buffer *bo;
  size_t i;
  for (i = 0; i < TU_ARRAY_LEN(bad_ops); i++) {
    memset(out, OUT_POISON, sizeof out);
    TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, b, bad_ops[i], out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECKF(bytes_all(out, OUT_BYTES, OUT_POISON), "reduce with op %lu wrote out", (unsigned long)bad_ops[i]);
  }
  memset(out, OUT_POISON, sizeof out);
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, b, GPUPRIMS_OP_SUM, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_reduce(NULL, b, GPUPRIMS_OP_SUM, out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, NULL, GPUPRIMS_OP_SUM, out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(bytes_all(out, OUT_BYTES, OUT_POISON));
  /* handles of the wrong type */
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, (const gpuprims_buffer *)(void *)e->ctx, GPUPRIMS_OP_SUM, out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_reduce((gpuprims_context *)(void *)b, b, GPUPRIMS_OP_SUM, out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(bytes_all(out, OUT_BYTES, OUT_POISON));
  /* a buffer of another context */
  TU_REQUIRE_OK(gpuprims_context_create(tu_backend_of(e->ctx), 0, &other));
  bo = tu_buffer_from_host(other, GPUPRIMS_DTYPE_I32, vals, 5);
  TU_EXPECT_STATUS(gpuprims_reduce(e->ctx, bo, GPUPRIMS_OP_SUM, out), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_reduce(other, b, GPUPRIMS_OP_MAX, out), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_CHECK(bytes_all(out, OUT_BYTES, OUT_POISON));
  /* and the right one works */
  if (TU_EXPECT_OK(gpuprims_reduce(other, bo, GPUPRIMS_OP_SUM, out))) {
    int32_t s;
    memcpy(&s, out, 4);
    TU_CHECK(s == 11);
  }
  gpuprims_buffer_destroy(bo);
  gpuprims_context_destroy(other);
  gpuprims_buffer_destroy(b);
}

int main(void) {
  env_t e;
  const tu_dtype_info *d = tu_dtypes();
  size_t sizes[32], nsizes = 0, si;
  static const size_t fixed[] = {1,     2,     31,    32,    33,    255,   256,   257,
                                 1023,  1024,  1025,  4095,  4096,  4097,  65535, 65536,
                                 65537, ((size_t)1 << 20) + 3, MAX_N};
  int i;
  uint64_t seed = tu_init("test_reduce");
  tu_rng_seed(&e.rng, seed);
  e.ctx = tu_open_context();
  e.data = (unsigned char *)tu_xmalloc((size_t)MAX_N * 8);
  e.runs = 0;
  for (si = 0; si < TU_ARRAY_LEN(fixed); si++) sizes[nsizes++] = fixed[si];
  sizes[nsizes++] = 1 + (size_t)tu_below(&e.rng, 5000);
  sizes[nsizes++] = 1 + (size_t)tu_below(&e.rng, 300000);
  printf("test_reduce: random sizes %zu and %zu\n", sizes[nsizes - 2], sizes[nsizes - 1]);

  for (i = 0; i < TU_NUM_DTYPES; i++) {
    for (si = 0; si < nsizes; si++) tu_random_cases(&e.rng, &d[i], e.data, sizes[si], check_ops, &e, 3);
    empty_input(&e, &d[i]);
    ordered_inputs(&e, &d[i]);
    if (d[i].is_float)
      float_specials(&e, d[i].id);
    else
      int_specials(&e, &d[i]);
  }
  errors(&e);

  printf("test_reduce: %lu reductions\n", e.runs);
  free(e.data);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
