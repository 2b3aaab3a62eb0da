/*
 * sort_test_body.h: the sort tests, written once for both sorts. A test program defines
 *   SORT_NAME    "radix_sort" or "quicksort" (gpuprims_<SORT_NAME> is the function, and
 *                what messages and the last error name),
 *   SORT_CALL    that function,
 *   SORT_STABLE  1 when equal keys must keep their input order, 0 when they may not,
 *   SORT_EXTRA_TESTS (optional) a function of its own, run after the shared tests,
 *   SORT_MAIN    (optional) the name of the shared tests' main (default main), for a
 *                program with a main of its own,
 * then includes this file.
 *
 * Every key dtype, keys only and with values of every width (1, 2, 4 and 8 bytes, integer
 * and float dtypes), in place, ascending and descending, against a sequential C reference:
 * the stable order of (order key, input index) pairs (test_util.h's tu_sort_ref). A stable
 * sort's keys and values are compared bitwise with the inputs gathered through that
 * permutation (NaN payloads included: a stable sort moves each NaN with its own bits). An
 * unstable sort's keys are compared by order key (NaNs with other payloads may trade
 * places), and its output must hold exactly the input's (key bits, value bits) pairs: every
 * key's bits survive, and every value travels with its key (compared as multisets through
 * salted hashes, see check_same_pairs).
 *
 * Sizes 0, 1, 2, 3, small ones, around the CUDA tile edges (4096, 6144 and 6912 keys) up
 * to 16385, and the sort's own SORT_TILE_EDGES where it names them, for every dtype and
 * every input kind; 2^20 + 7 for every dtype; 3,000,017 for
 * u8, u32, u64 and f32 keys. Inputs: random bits (floats: NaNs included), sorted
 * ascending, sorted descending, strictly reversed (distinct keys: the values come out
 * exactly reversed), all equal, 4 distinct values, organ pipe, keys differing only in
 * their top bits, only in their bottom bits, already sorted in the requested order with
 * duplicates (a stable sort must leave the buffers bitwise identical), integer extremes,
 * and for floats NaNs of several payloads and both signs, -0.0/+0.0 mixtures, infinities
 * and denormals, and random bits with no NaN among them. Values hold the input index (in
 * their low bits, with other bits above where the width allows), so a value that moved
 * without its key, or (stable) an equal key out of input order, is named in the failure.
 * Also: sorting a sorted output again changes nothing; a buffer sorted ascending then
 * descending; every error (checked before any work: both buffers read back unchanged, and
 * the last error names the sort).
 *
 * GPUPRIMS_TEST_QUICK=1: sizes 2, 300, 8193, 16384 and 40001 for u8, i16, f32 and u64 keys,
 * nothing larger (for compute-sanitizer). On the host backend the 2^20 + 7 and 3,000,017
 * sections run only with GPUPRIMS_TEST_FULL=1.
 */
#include "test_util.h"

#define BIG_N ((size_t)3000017)
#define MID_N (((size_t)1 << 20) + 7)
#define CAP BIG_N

enum {
  P_RANDOM,
  P_SORTED_ASC,
  P_SORTED_DESC,
  P_REVERSED,
  P_ALL_EQUAL,
  P_FEW,
  P_ORGAN,
  P_TOP_BITS,
  P_BOTTOM_BITS,
  P_SPECIALS,
  P_ZEROS, /* floats only */
  P_NANS,  /* floats only */
  P_NO_NAN, /* floats only */
  NUM_PATTERNS
};

static const gpuprims_order ORDERS[2] = {GPUPRIMS_ORDER_ASCENDING, GPUPRIMS_ORDER_DESCENDING};

typedef struct {
  gpuprims_context *ctx;
  tu_rng rng;
  unsigned char *keys;   /* the input keys */
  unsigned char *vals;   /* the input values */
  unsigned char *want_k; /* expected keys */
  unsigned char *want_v; /* expected values */
  unsigned char *got_k;  /* keys of the keys-only sort */
  unsigned char *got_k2; /* keys of the pairs sort */
  unsigned char *got_v;  /* values of the pairs sort */
  size_t *perm;          /* the reference permutation */
  tu_sort_pair *pairs;   /* the reference's scratch */
  unsigned long sorts;
  unsigned rot;          /* rotates the value dtypes */
  int reversed_distinct; /* the keys are strictly decreasing (set by the generator) */
  char what[128];        /* the input's description */
} env_t;

#ifdef SORT_EXTRA_TESTS
static void SORT_EXTRA_TESTS(env_t *e);
#endif

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


static uint64_t mix64(uint64_t x) {
  x ^= x >> 31;
  x *= 0x7FB5D329728EA185ull;
  x ^= x >> 27;
  x *= 0x81DADEF4BC2DD44Dull;
  x ^= x >> 33;
  return x;
}

/* Bits needed for an index below n (at least 1). */
static unsigned index_bits(size_t n) {
  unsigned b = 1;
  while (b < 64 && ((uint64_t)1 << b) < (uint64_t)n) b++;
  return b;
}

/* ------------------------------------------------------------------------------------- */
/* Inputs                                                                                 */
/* ------------------------------------------------------------------------------------- */

static uint64_t random_nan(const tu_dtype_info *d, tu_rng *r) {
  uint64_t x = tu_next(r);
  if (d->size == 2) {
    const uint64_t exp = d->id == GPUPRIMS_DTYPE_F16 ? 0x7C00u : 0x7F80u, mant = exp ^ 0x7FFFu;
    uint64_t payload = x & mant;
    if (payload == 0) payload = 1;
    return ((x >> 48) & 0x8000u) | exp | payload;
  } else if (d->size == 4) {
    uint32_t payload = (uint32_t)(x & 0x007FFFFFu);
    if (payload == 0) payload = 1;
    return (uint64_t)(((x >> 32) & 0x80000000u) | 0x7F800000u | payload);
  } else {
    uint64_t payload = x & 0x000FFFFFFFFFFFFFull;
    if (payload == 0) payload = 1;
    return (tu_next(r) & 0x8000000000000000ull) | 0x7FF0000000000000ull | payload;
  }
}

static const uint32_t F32_SPECIALS[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC01234u, 0xFFC0BEEFu,
    0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu,
    0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x00000002u, 0x80000002u};
static const uint64_t F64_SPECIALS[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000001ull,
    0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x7FF800000000BEEFull, 0xFFF8000000001234ull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull,
    0x0000000000000001ull, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull,
    0x0010000000000000ull, 0x8010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
    0x3FF0000000000000ull, 0xBFF0000000000000ull, 0x0000000000000002ull, 0x8000000000000002ull};

/* One special value: NaNs (several payloads, both signs), infinities, signed zeros,
 * denormals, extremes, +-1 for floats; MIN, MAX, 0, -1 (all ones), 1, MIN + 1, MAX - 1 for
 * integers. */
static uint64_t special_bits(const tu_dtype_info *d, tu_rng *r) {
  if (d->is_float) {
    if (tu_below(r, 4) == 0) return random_nan(d, r);
    if (d->size == 2) return tu_special_bits(d, r);
    if (d->size == 4) return F32_SPECIALS[tu_below(r, TU_ARRAY_LEN(F32_SPECIALS))];
    return F64_SPECIALS[tu_below(r, TU_ARRAY_LEN(F64_SPECIALS))];
  } else {
    uint64_t mask = tu_width_mask(d->size), sign = (uint64_t)1 << (d->size * 8 - 1);
    uint64_t lo = d->is_signed ? sign : 0, hi = d->is_signed ? sign - 1 : mask;
    uint64_t c[7];
    c[0] = lo;
    c[1] = hi;
    c[2] = 0;
    c[3] = mask;
    c[4] = 1;
    c[5] = lo + 1;
    c[6] = (hi - 1) & mask;
    return c[tu_below(r, 7)];
  }
}

/* A value for the few-distinct kinds: random bits, and for floats often a special one. */
static uint64_t some_value(const tu_dtype_info *d, tu_rng *r) {
  if (d->is_float && tu_below(r, 2) == 0) return special_bits(d, r);
  return tu_next(r) & tu_width_mask(d->size);
}

/* Integer v (may be negative) as element i: integers truncated, floats converted. */
static void put_int(const tu_dtype_info *d, void *p, size_t i, int64_t v, double fscale) {
  if (d->is_float)
    tu_put_f(d->id, p, i, (double)v * fscale);
  else
    tu_put_bits(d->id, p, i, (uint64_t)v);
}

/* Sorts e->keys[0..n) in place with the reference (for the pre-sorted inputs). */
static void ref_sort_in_place(env_t *e, const tu_dtype_info *d, size_t n, gpuprims_order o) {
  tu_sort_ref(d->id, e->keys, n, o, e->perm, e->pairs);
  tu_gather(e->keys, d->size, e->perm, n, e->want_k);
  memcpy(e->keys, e->want_k, n * d->size);
}

/* Fills e->keys[0..n) with input kind p; 0 when the kind does not apply to the dtype. */
static int gen_keys(env_t *e, const tu_dtype_info *d, size_t n, int p) {
  tu_rng *r = &e->rng;
  size_t i, es = d->size;
  uint64_t mask = tu_width_mask(es);
  e->reversed_distinct = 0;
  switch (p) {
    case P_RANDOM:
      tu_fill_bytes(r, e->keys, n * es);
      snprintf(e->what, sizeof e->what, "random bits%s", d->is_float ? " (NaNs included)" : "");
      return 1;
    case P_SORTED_ASC:
    case P_SORTED_DESC:
      tu_fill_bytes(r, e->keys, n * es);
      ref_sort_in_place(e, d, n, p == P_SORTED_ASC ? GPUPRIMS_ORDER_ASCENDING : GPUPRIMS_ORDER_DESCENDING);
      snprintf(e->what, sizeof e->what, "random bits sorted %s", p == P_SORTED_ASC ? "ascending" : "descending");
      return 1;
    case P_REVERSED: {
      /* n-1-i, centred on 0 for signed and float keys: distinct while n fits the type */
      int64_t off = d->is_signed ? (int64_t)(n / 2) : 0;
      for (i = 0; i < n; i++) put_int(d, e->keys, i, (int64_t)(n - 1 - i) - off, 1.0);
      if (d->is_float) /* integers are exact up to 2^(mantissa digits): f16 2^11, bf16 2^8 */
        e->reversed_distinct = es == 8 || n <= ((size_t)1 << (es == 4 ? 24 : d->id == GPUPRIMS_DTYPE_F16 ? 12 : 9));
      else
        e->reversed_distinct = es == 8 || (uint64_t)n <= mask + 1;
      snprintf(e->what, sizeof e->what, "reversed, n-1-i%s (%s)", off ? " - n/2" : "",
               e->reversed_distinct ? "distinct" : "wrapping");
      return 1;
    }
    case P_ALL_EQUAL: {
      uint64_t v = d->is_float ? some_value(d, r) : tu_next(r) & mask;
      char buf[64];
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, v);
      tu_fmt_elem(d->id, &v, buf, sizeof buf);
      snprintf(e->what, sizeof e->what, "all equal to %s", buf);
      return 1;
    }
    case P_FEW: {
      uint64_t v[4];
      for (i = 0; i < 4; i++) v[i] = some_value(d, r);
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, v[tu_below(r, 4)]);
      snprintf(e->what, sizeof e->what, "4 distinct values");
      return 1;
    }
    case P_ORGAN: {
      int64_t off = d->is_signed ? (int64_t)(n / 4) : 0;
      for (i = 0; i < n; i++) {
        size_t k = i < n - i ? i : n - 1 - i;
        put_int(d, e->keys, i, (int64_t)k - off, 0.5);
      }
      snprintf(e->what, sizeof e->what, "organ pipe (up, then down)");
      return 1;
    }
    case P_TOP_BITS:
    case P_BOTTOM_BITS: {
      unsigned wbits = (unsigned)(es * 8);
      unsigned nb = 1 + (unsigned)tu_below(r, wbits - 1 < 12 ? wbits - 1 : 12);
      uint64_t tmpl = tu_next(r) & mask, vary;
      if (p == P_TOP_BITS)
        vary = mask & ~((((uint64_t)1) << (wbits - nb)) - 1);
      else
        vary = (((uint64_t)1) << nb) - 1;
      for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, (tmpl & ~vary) | (tu_next(r) & vary));
      snprintf(e->what, sizeof e->what, "only the %s %u bits differ", p == P_TOP_BITS ? "top" : "bottom", nb);
      return 1;
    }
    case P_SPECIALS:
      for (i = 0; i < n; i++)
        tu_put_bits(d->id, e->keys, i, tu_below(r, 4) ? special_bits(d, r) : tu_next(r) & mask);
      snprintf(e->what, sizeof e->what, "%s", d->is_float ? "NaNs, infinities, signed zeros, denormals, extremes"
                                                          : "MIN, MAX, 0, -1, 1, MIN+1, MAX-1");
      return 1;
    case P_ZEROS:
      if (!d->is_float) return 0;
      for (i = 0; i < n; i++) tu_put_f(d->id, e->keys, i, (tu_next(r) & 1) ? -0.0 : 0.0);
      snprintf(e->what, sizeof e->what, "-0.0 and +0.0 mixed");
      return 1;
    case P_NANS:
      if (!d->is_float) return 0;
      for (i = 0; i < n; i++)
        tu_put_bits(d->id, e->keys, i, tu_below(r, 5) < 3 ? random_nan(d, r) : special_bits(d, r));
      snprintf(e->what, sizeof e->what, "mostly NaNs (payloads, signs) among specials");
      return 1;
    case P_NO_NAN: {
      /* Every bit pattern but the NaNs (the radix sort moves such floats mapped between
       * its passes): random bits with a NaN's top exponent bit cleared, and a few
       * infinities and signed zeros. */
      static const double other[4] = {INFINITY, -INFINITY, 0.0, -0.0};
      uint64_t top_exponent_bit = (uint64_t)1 << (es == 4 ? 30 : 62);
      if (!d->is_float) return 0;
      tu_fill_bytes(r, e->keys, n * es);
      for (i = 0; i < n; i++) {
        uint64_t b = tu_get_bits(es, e->keys, i);
        if (tu_bits_is_nan(d, b)) tu_put_bits(d->id, e->keys, i, b & ~top_exponent_bit);
        if (tu_below(r, 64) == 0) tu_put_f(d->id, e->keys, i, other[tu_below(r, 4)]);
      }
      snprintf(e->what, sizeof e->what, "random bits but no NaN (some infinities and signed zeros)");
      return 1;
    }
    default: return 0;
  }
}

/* Already sorted in order o, with duplicates (2 to 31 distinct values). */
static void gen_presorted(env_t *e, const tu_dtype_info *d, size_t n, gpuprims_order o) {
  uint64_t v[31];
  size_t m = 2 + (size_t)tu_below(&e->rng, 30), i;
  for (i = 0; i < m; i++) v[i] = some_value(d, &e->rng);
  for (i = 0; i < n; i++) tu_put_bits(d->id, e->keys, i, v[tu_below(&e->rng, m)]);
  ref_sort_in_place(e, d, n, o);
  e->reversed_distinct = 0;
  snprintf(e->what, sizeof e->what, "already %s, %zu distinct values", tu_order_name(o), m);
}

/* Values: the index in the low index_bits(n) bits, hashed bits above, truncated to the width. */
static void gen_values(env_t *e, const tu_dtype_info *vd, size_t n) {
  unsigned b = index_bits(n);
  uint64_t salt = tu_next(&e->rng);
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t v = (uint64_t)i;
    if (b < 64) v ^= mix64((uint64_t)i ^ salt) << b;
    tu_put_bits(vd->id, e->vals, i, v);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Checks                                                                                 */
/* ------------------------------------------------------------------------------------- */

/* The reference checked against C's own comparisons (so that the order-key mapping is
 * not trusted blindly): each neighbour pair of want_k in order o. */
static void ref_selfcheck(env_t *e, const tu_dtype_info *d, size_t n, gpuprims_order o) {
  size_t j;
  int desc = o == GPUPRIMS_ORDER_DESCENDING;
  for (j = 1; j < n; j++) {
    uint64_t a = tu_get_bits(d->size, e->want_k, j - 1), b = tu_get_bits(d->size, e->want_k, j);
    int ok;
    if (desc) {
      uint64_t t = a;
      a = b;
      b = t;
    }
    /* ascending: a before b must hold */
    if (d->is_float) {
      int an = tu_bits_is_nan(d, a), bn = tu_bits_is_nan(d, b);
      double x, y;
      if (d->size == 2) {
        x = tu_half_to_double(d->id, (uint16_t)a);
        y = tu_half_to_double(d->id, (uint16_t)b);
      } else if (d->size == 4) {
        float f, g;
        uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
        memcpy(&f, &a32, 4);
        memcpy(&g, &b32, 4);
        x = f;
        y = g;
      } else {
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
      }
      if (an || bn)
        ok = bn; /* a NaN is followed by NaNs only */
      else
        ok = x < y || (x == y && !(signbit(x) == 0 && signbit(y) != 0));
    } else if (d->is_signed) {
      unsigned sh = (unsigned)(64 - d->size * 8);
      int64_t x = (int64_t)(a << sh) >> sh, y = (int64_t)(b << sh) >> sh;
      ok = x <= y;
    } else {
      ok = a <= b;
    }
    if (!ok) {
      TU_CHECKF(0, "reference (test bug): %s %s n=%zu: elements %zu and %zu out of order", d->name,
                tu_order_name(o), n, j - 1, j);
      return;
    }
  }
  TU_CHECK(1);
}

/* The first of n keys where got differs from want_k: bitwise for a stable sort, by order
 * key for an unstable one (NaNs compare equal whatever their payloads); n when none. */
static size_t first_key_diff(env_t *e, const tu_dtype_info *d, size_t n, const unsigned char *got, size_t *count) {
  size_t j, first = n;
  if (SORT_STABLE) {
    *count = tu_count_diff(e->want_k, got, d->size, n);
    return tu_first_diff(e->want_k, got, d->size, n);
  }
  *count = 0;
  for (j = 0; j < n; j++)
    if (tu_sort_key(d, tu_get_bits(d->size, e->want_k, j)) != tu_sort_key(d, tu_get_bits(d->size, got, j))) {
      if (first == n) first = j;
      ++*count;
    }
  return first;
}

static void check_same_pairs(env_t *e, const tu_dtype_info *d, size_t vs, size_t n, gpuprims_order o,
                             const unsigned char *got_k, const char *how);

/* The keys of a sort against the reference's; of an unstable sort of keys alone
 * (keys_alone), also the key bits as a multiset (with values, check_values compares the
 * (key, value) pairs so). */
static void check_keys(env_t *e, const tu_dtype_info *d, size_t n, gpuprims_order o, const unsigned char *got,
                       const char *how, int identity, int keys_alone) {
  size_t es = d->size, wrong, j = first_key_diff(e, d, n, got, &wrong);
  char w[64], g[64];
  if (!SORT_STABLE && keys_alone) check_same_pairs(e, d, 0, n, o, got, how);
  if (j == n) {
    TU_CHECK(1);
    return;
  }
  tu_fmt_elem(d->id, e->want_k + j * es, w, sizeof w);
  tu_fmt_elem(d->id, got + j * es, g, sizeof g);
  TU_CHECKF(0, SORT_NAME " %s %s n=%zu (%s), %s: %zu keys wrong; first at %zu: expected %s, got %s%s", d->name,
            tu_order_name(o), n, e->what, how, wrong, j, w, g,
            identity && SORT_STABLE ? " (the input was already in this order: the buffer must stay bitwise identical)"
                                    : "");
}

/* (key bits, value bits) of one element, ordered lexicographically by qsort. */
typedef struct {
  uint64_t key, value;
} bits_pair;

static int cmp_bits_pair(const void *a, const void *b) {
  const bits_pair *x = (const bits_pair *)a, *y = (const bits_pair *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* A hash of one (key bits, value bits) pair, of the family that `salt` picks. */
static uint64_t pair_hash(uint64_t key, uint64_t value, const uint64_t *salt) {
  return mix64(mix64(key ^ salt[0]) + (value ^ salt[1]));
}

/* Unstable sorts: whether the n (key, value) pairs of the output (value width vs; vs 0:
 * keys alone) are exactly the input's, as multisets; on a mismatch, says so. Compared as
 * the sums (mod 2^64) of a hash of each pair, salted anew each run (from the seed): equal
 * multisets give equal sums, unequal ones equal sums with a chance of about 2^-64. Only
 * when the sums differ are both sides sorted (qsort), to count the pairs that differ for
 * the message. */
static void check_same_pairs(env_t *e, const tu_dtype_info *d, size_t vs, size_t n, gpuprims_order o,
                             const unsigned char *got_k, const char *how) {
  static uint64_t salt[2];
  static int salted = 0;
  uint64_t in_sum = 0, out_sum = 0;
  bits_pair *in, *out;
  size_t j, bad = 0;
  if (!salted) {
    uint64_t x = tu_state.seed ^ 0x5A17ED5A17ED5A17ull;
    salt[0] = tu_splitmix64(&x);
    salt[1] = tu_splitmix64(&x);
    salted = 1;
  }
  for (j = 0; j < n; j++) {
    in_sum += pair_hash(tu_get_bits(d->size, e->keys, j), vs ? tu_get_bits(vs, e->vals, j) : 0, salt);
    out_sum += pair_hash(tu_get_bits(d->size, got_k, j), vs ? tu_get_bits(vs, e->got_v, j) : 0, salt);
  }
  if (in_sum == out_sum) {
    TU_CHECK(1);
    return;
  }
  in = (bits_pair *)tu_xmalloc((n + 1) * sizeof *in);
  out = (bits_pair *)tu_xmalloc((n + 1) * sizeof *out);
  for (j = 0; j < n; j++) {
    in[j].key = tu_get_bits(d->size, e->keys, j);
    out[j].key = tu_get_bits(d->size, got_k, j);
    in[j].value = vs ? tu_get_bits(vs, e->vals, j) : 0;
    out[j].value = vs ? tu_get_bits(vs, e->got_v, j) : 0;
  }
  qsort(in, n, sizeof *in, cmp_bits_pair);
  qsort(out, n, sizeof *out, cmp_bits_pair);
  for (j = 0; j < n; j++) bad += in[j].key != out[j].key || in[j].value != out[j].value;
  TU_CHECKF(0, SORT_NAME " %s %s n=%zu (%s), %s: the output's (key, value) pairs are not the input's (%zu of "
            "%zu differ once both are sorted): %s",
            d->name, tu_order_name(o), n, e->what, how, bad, n,
            vs ? "a value did not travel with its key, or a key's bits changed" : "a key's bits changed");
  free(in);
  free(out);
}

static void check_values(env_t *e, const tu_dtype_info *d, const tu_dtype_info *vd, size_t n, gpuprims_order o,
                         const char *how) {
  size_t vs = vd->size, j;
  if (!SORT_STABLE) {
    check_same_pairs(e, d, vs, n, o, e->got_k2, how);
    return;
  }
  j = tu_first_diff(e->want_v, e->got_v, vs, n);
  unsigned b = index_bits(n);
  char diag[256], w[64], g[64];
  if (j == n) {
    TU_CHECK(1);
    return;
  }
  tu_fmt_elem(vd->id, e->want_v + j * vs, w, sizeof w);
  tu_fmt_elem(vd->id, e->got_v + j * vs, g, sizeof g);
  diag[0] = '\0';
  if (vs * 8 >= b) {
    uint64_t gi = tu_get_bits(vs, e->got_v, j) & (b >= 64 ? UINT64_MAX : (((uint64_t)1 << b) - 1));
    size_t want_i = e->perm[j];
    if (gi < n && tu_get_bits(vs, e->vals, (size_t)gi) == tu_get_bits(vs, e->got_v, j)) {
      if (tu_sort_key(d, tu_get_bits(d->size, e->keys, (size_t)gi)) ==
          tu_sort_key(d, tu_get_bits(d->size, e->keys, want_i)))
        snprintf(diag, sizeof diag,
                 ": it is the value of input %llu, whose key equals that of input %zu: equal keys are out of "
                 "input order (not stable)",
                 (unsigned long long)gi, want_i);
      else
        snprintf(diag, sizeof diag, ": it is the value of input %llu, not of input %zu: values did not travel with "
                 "their keys", (unsigned long long)gi, want_i);
    } else {
      snprintf(diag, sizeof diag, ": no input value (expected that of input %zu)", want_i);
    }
  }
  TU_CHECKF(0, SORT_NAME " %s %s n=%zu (%s), %s: %zu values wrong; first at %zu: expected %s, got %s%s", d->name,
            tu_order_name(o), n, e->what, how, tu_count_diff(e->want_v, e->got_v, vs, n), j, w, g, diag);
}

/* Sorts e->keys[0..n) in order o, keys only and with values of each of vdts[0..nv), and
 * checks every result against the reference. */
static void run_order(env_t *e, const tu_dtype_info *d, size_t n, gpuprims_order o, const gpuprims_dtype *vdts,
                      int nv) {
  size_t es = d->size, j;
  gpuprims_buffer *kb, *vb;
  gpuprims_status s;
  int identity, keys_only_ok = 0, v;
  char how[64];

  tu_sort_ref(d->id, e->keys, n, o, e->perm, e->pairs);
  tu_gather(e->keys, es, e->perm, n, e->want_k);
  for (j = 0; j < n && e->perm[j] == j; j++) {
  }
  identity = j == n;
  ref_selfcheck(e, d, n, o);

  kb = tu_buffer_from_host(e->ctx, d->id, e->keys, n);
  s = SORT_CALL(e->ctx, kb, NULL, o);
  e->sorts++;
  if (TU_CHECKF(s == GPUPRIMS_STATUS_OK, SORT_NAME " %s %s n=%zu (%s), keys only: status %s", d->name,
                tu_order_name(o), n, e->what, tu_status_name(s))) {
    TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k, n));
    check_keys(e, d, n, o, e->got_k, "keys only", identity, 1);
    keys_only_ok = 1;
  }
  for (v = 0; v < nv; v++) {
    const tu_dtype_info *vd = tu_dtype(vdts[v]);
    snprintf(how, sizeof how, "with %s values", vd->name);
    gen_values(e, vd, n);
    vb = tu_buffer_from_host(e->ctx, vd->id, e->vals, n);
    if (n) TU_REQUIRE_OK(gpuprims_buffer_write(kb, 0, e->keys, n));
    s = SORT_CALL(e->ctx, kb, vb, o);
    e->sorts++;
    if (TU_CHECKF(s == GPUPRIMS_STATUS_OK, SORT_NAME " %s %s n=%zu (%s), %s: status %s", d->name, tu_order_name(o),
                  n, e->what, how, tu_status_name(s))) {
      TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k2, n));
      TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, e->got_v, n));
      check_keys(e, d, n, o, e->got_k2, how, identity, 0);
      if (keys_only_ok && SORT_STABLE)
        TU_CHECKF(memcmp(e->got_k, e->got_k2, n * es) == 0,
                  SORT_NAME " %s %s n=%zu (%s): the keys sorted alone and with %s values differ", d->name,
                  tu_order_name(o), n, e->what, vd->name);
      tu_gather(e->vals, vd->size, e->perm, n, e->want_v);
      check_values(e, d, vd, n, o, how);
      if (e->reversed_distinct) {
        /* without the reference: ascending reverses the values exactly, descending
         * (already in order) leaves them as they are */
        size_t bad = 0;
        if (o == GPUPRIMS_ORDER_ASCENDING) {
          for (j = 0; j < n; j++)
            bad += memcmp(e->got_v + j * vd->size, e->vals + (n - 1 - j) * vd->size, vd->size) != 0;
        } else {
          bad = tu_count_diff(e->got_v, e->vals, vd->size, n);
        }
        TU_CHECKF(bad == 0, SORT_NAME " %s %s n=%zu (%s), %s: %zu values are not where the %s input puts them",
                  d->name, tu_order_name(o), n, e->what, how, bad,
                  o == GPUPRIMS_ORDER_ASCENDING ? "reversal of the" : "already sorted");
      }
      if (identity && SORT_STABLE)
        TU_CHECKF(memcmp(e->got_k2, e->keys, n * es) == 0 && memcmp(e->got_v, e->vals, n * vd->size) == 0,
                  SORT_NAME " %s %s n=%zu (%s), %s: an input already in order changed", d->name, tu_order_name(o),
                  n, e->what, how);
    }
    gpuprims_buffer_destroy(vb);
  }
  gpuprims_buffer_destroy(kb);
}

/* One value dtype of each width, rotating through the integer and float dtypes. */
static int pick_values(env_t *e, gpuprims_dtype *out) {
  static const gpuprims_dtype w1[2] = {GPUPRIMS_DTYPE_U8, GPUPRIMS_DTYPE_I8};
  static const gpuprims_dtype w2[2] = {GPUPRIMS_DTYPE_U16, GPUPRIMS_DTYPE_I16};
  static const gpuprims_dtype w4[3] = {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_I32, GPUPRIMS_DTYPE_F32};
  static const gpuprims_dtype w8[3] = {GPUPRIMS_DTYPE_U64, GPUPRIMS_DTYPE_I64, GPUPRIMS_DTYPE_F64};
  unsigned r = e->rot++;
  out[0] = w1[r % 2];
  out[1] = w2[(r / 2) % 2];
  out[2] = w4[r % 3];
  out[3] = w8[(r / 3) % 3];
  return 4;
}

/* Every input kind at size n, both orders, keys only and with values of 4 widths. */
static void all_kinds(env_t *e, const tu_dtype_info *d, size_t n) {
  gpuprims_dtype vd[4];
  int p, o, nv;
  for (p = 0; p < NUM_PATTERNS; p++) {
    if (!gen_keys(e, d, n, p)) continue;
    nv = pick_values(e, vd);
    for (o = 0; o < 2; o++) run_order(e, d, n, ORDERS[o], vd, nv);
  }
  for (o = 0; o < 2; o++) {
    gen_presorted(e, d, n, ORDERS[o]);
    nv = pick_values(e, vd);
    run_order(e, d, n, ORDERS[o], vd, nv);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Repeated sorts of one buffer                                                           */
/* ------------------------------------------------------------------------------------- */

/* Sorted, then sorted again (its own output): nothing changes. */
static void sort_twice(env_t *e, gpuprims_dtype t, size_t n, int pattern) {
  const tu_dtype_info *d = tu_dtype(t);
  const tu_dtype_info *vd = tu_dtype(GPUPRIMS_DTYPE_U32);
  int o;
  gen_keys(e, d, n, pattern);
  for (o = 0; o < 2; o++) {
    gpuprims_buffer *kb = tu_buffer_from_host(e->ctx, t, e->keys, n);
    gpuprims_buffer *vb;
    gen_values(e, vd, n);
    vb = tu_buffer_from_host(e->ctx, vd->id, e->vals, n);
    tu_sort_ref(t, e->keys, n, ORDERS[o], e->perm, e->pairs);
    tu_gather(e->keys, d->size, e->perm, n, e->want_k);
    tu_gather(e->vals, vd->size, e->perm, n, e->want_v);
    if (TU_EXPECT_OK(SORT_CALL(e->ctx, kb, vb, ORDERS[o])) &&
        TU_EXPECT_OK(SORT_CALL(e->ctx, kb, vb, ORDERS[o]))) {
      e->sorts += 2;
      TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k2, n));
      TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, e->got_v, n));
      check_keys(e, d, n, ORDERS[o], e->got_k2, "sorted twice, with u32 values", 0, 0);
      check_values(e, d, vd, n, ORDERS[o], "sorted twice, with u32 values");
    }
    /* and keys only, twice */
    TU_REQUIRE_OK(gpuprims_buffer_write(kb, 0, e->keys, n));
    if (TU_EXPECT_OK(SORT_CALL(e->ctx, kb, NULL, ORDERS[o])) &&
        TU_EXPECT_OK(SORT_CALL(e->ctx, kb, NULL, ORDERS[o]))) {
      e->sorts += 2;
      TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k, n));
      check_keys(e, d, n, ORDERS[o], e->got_k, "keys only, sorted twice", 0, 1);
    }
    gpuprims_buffer_destroy(vb);
    gpuprims_buffer_destroy(kb);
  }
}

/* CUDA: pairs in device memory the caller owns, the keys and the values each wrapped at
 * an offset of 0 or 1 element into memory of its own (the radix sort moves 4-byte keys
 * with 4-byte values packed only when both lie at 8-byte boundaries). */
static void wrapped_pairs(env_t *e, gpuprims_dtype t, gpuprims_dtype vt, size_t n, int pattern) {
  const tu_dtype_info *d = tu_dtype(t), *vd = tu_dtype(vt);
  gpuprims_buffer *kmem, *vmem;
  unsigned char *kp = NULL, *vp = NULL;
  int offsets, o;
  if (!tu_is_cuda(e->ctx)) return;
  TU_REQUIRE_OK(gpuprims_buffer_create(e->ctx, t, n + 1, &kmem));
  TU_REQUIRE_OK(gpuprims_buffer_create(e->ctx, vt, n + 1, &vmem));
  TU_REQUIRE_OK(gpuprims_buffer_device_ptr(kmem, (void **)&kp));
  TU_REQUIRE_OK(gpuprims_buffer_device_ptr(vmem, (void **)&vp));
  gen_keys(e, d, n, pattern);
  gen_values(e, vd, n);
  for (offsets = 0; offsets < 4; offsets++) {
    const size_t ko = (size_t)(offsets & 1), vo = (size_t)(offsets >> 1);
    gpuprims_buffer *kb, *vb;
    char how[96];
    o = offsets % 2;
    snprintf(how, sizeof how, "wrapped at offsets %zu (keys) and %zu (%s values)", ko, vo, vd->name);
    TU_REQUIRE_OK(gpuprims_buffer_wrap_device(e->ctx, t, kp + ko * d->size, n, &kb));
    TU_REQUIRE_OK(gpuprims_buffer_wrap_device(e->ctx, vt, vp + vo * vd->size, n, &vb));
    TU_REQUIRE_OK(gpuprims_buffer_write(kb, 0, e->keys, n));
    TU_REQUIRE_OK(gpuprims_buffer_write(vb, 0, e->vals, n));
    tu_sort_ref(t, e->keys, n, ORDERS[o], e->perm, e->pairs);
    tu_gather(e->keys, d->size, e->perm, n, e->want_k);
    tu_gather(e->vals, vd->size, e->perm, n, e->want_v);
    if (TU_EXPECT_OK(SORT_CALL(e->ctx, kb, vb, ORDERS[o]))) {
      e->sorts++;
      TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k2, n));
      TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, e->got_v, n));
      check_keys(e, d, n, ORDERS[o], e->got_k2, how, 0, 0);
      check_values(e, d, vd, n, ORDERS[o], how);
    }
    gpuprims_buffer_destroy(vb);
    gpuprims_buffer_destroy(kb);
  }
  gpuprims_buffer_destroy(vmem);
  gpuprims_buffer_destroy(kmem);
}

/* One buffer sorted ascending, then descending, then ascending again: each step against
 * the reference applied to the previous step's output (stability carries over). */
static void asc_then_desc(env_t *e, gpuprims_dtype t, gpuprims_dtype vt, size_t n, int pattern) {
  const tu_dtype_info *d = tu_dtype(t), *vd = tu_dtype(vt);
  gpuprims_buffer *kb, *vb;
  int step;
  gen_keys(e, d, n, pattern);
  gen_values(e, vd, n);
  kb = tu_buffer_from_host(e->ctx, t, e->keys, n);
  vb = tu_buffer_from_host(e->ctx, vt, e->vals, n);
  for (step = 0; step < 3; step++) {
    gpuprims_order o = step == 1 ? GPUPRIMS_ORDER_DESCENDING : GPUPRIMS_ORDER_ASCENDING;
    char how[96];
    snprintf(how, sizeof how, "step %d of ascending, descending, ascending on one buffer, %s values", step + 1,
             vd->name);
    tu_sort_ref(t, e->keys, n, o, e->perm, e->pairs);
    tu_gather(e->keys, d->size, e->perm, n, e->want_k);
    tu_gather(e->vals, vd->size, e->perm, n, e->want_v);
    if (!TU_EXPECT_OK(SORT_CALL(e->ctx, kb, vb, o))) break;
    e->sorts++;
    TU_REQUIRE_OK(gpuprims_buffer_read(kb, 0, e->got_k2, n));
    TU_REQUIRE_OK(gpuprims_buffer_read(vb, 0, e->got_v, n));
    check_keys(e, d, n, o, e->got_k2, how, 0, 0);
    check_values(e, d, vd, n, o, how);
    /* the next step's input is this step's output (the expected one, when stable) */
    memcpy(e->keys, e->got_k2, n * d->size);
    memcpy(e->vals, e->got_v, n * vd->size);
  }
  gpuprims_buffer_destroy(vb);
  gpuprims_buffer_destroy(kb);
}

/* ------------------------------------------------------------------------------------- */
/* Errors                                                                                 */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  gpuprims_buffer *buf;
  size_t n, es;
  unsigned char bytes[7 * 8];
} held_t;

/* Every buffer of the error tests, with its content. */
typedef struct {
  held_t h[12];
  int count;
} fixture_t;

static gpuprims_buffer *hold(fixture_t *f, gpuprims_context *ctx, gpuprims_dtype t, const void *src, size_t n) {
  held_t *h = &f->h[f->count++];
  h->buf = tu_buffer_from_host(ctx, t, src, n);
  h->n = n;
  h->es = tu_dtype_size(t);
  if (n) memcpy(h->bytes, src, n * h->es);
  return h->buf;
}

/* Leaves a last error that is not the sort's. */
static void prime_last_error(void) {
  size_t len = 0;
  (void)gpuprims_buffer_len(NULL, &len);
}

static void after_failure(fixture_t *f, int status_ok, const char *expr) {
  char err[1024];
  int i;
  tu_last_error_text(err, sizeof err);
  if (status_ok)
    TU_CHECKF(err[0] != '\0' && strstr(err, "gpuprims_" SORT_NAME) != NULL,
              "%s: the last error \"%s\" does not name gpuprims_" SORT_NAME, expr, err);
  for (i = 0; i < f->count; i++) {
    unsigned char got[7 * 8];
    held_t *h = &f->h[i];
    TU_REQUIRE_OK(gpuprims_buffer_read(h->buf, 0, got, h->n));
    TU_CHECKF(h->n == 0 || memcmp(got, h->bytes, h->n * h->es) == 0,
              "%s: a failed sort changed buffer %d of the error tests", expr, i);
  }
}

#define EXPECT_SORT_FAILS(call, want)                                  \
  do {                                                                 \
    prime_last_error();                                                \
    after_failure(&f, TU_EXPECT_STATUS((call), (want)), #call);        \
  } while (0)

/* Sorts a small u32-keyed buffer (n <= 8) with values of vsize bytes and checks keys and
 * values bitwise against the expected arrays; `what` describes a mismatch. */
static void expect_small_sort(gpuprims_context *ctx, gpuprims_buffer *keys, gpuprims_buffer *vals,
                              gpuprims_order o, const uint32_t *want_keys, const void *want_vals, size_t n,
                              size_t vsize, const char *what) {
  uint32_t gk[8];
  unsigned char gv[64];
  if (!TU_EXPECT_OK(SORT_CALL(ctx, keys, vals, o))) return;
  TU_REQUIRE_OK(gpuprims_buffer_read(keys, 0, gk, n));
  TU_REQUIRE_OK(gpuprims_buffer_read(vals, 0, gv, n));
  TU_CHECKF(memcmp(gk, want_keys, n * sizeof gk[0]) == 0 && memcmp(gv, want_vals, n * vsize) == 0, "%s", what);
}

static void errors(env_t *e) {
  static const gpuprims_order bad_orders[] = {2, 3, 100, 0x80000000u, 0xFFFFFFFFu};
  static const uint32_t k6v[6] = {5, 3, 9, 1, 7, 3};
  static const uint16_t v6v[6] = {10, 11, 12, 13, 14, 15};
  static const double v6d[6] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
  static const int32_t v7v[7] = {1, 2, 3, 4, 5, 6, 7};
  static const uint8_t v5v[5] = {1, 2, 3, 4, 5};
  static const int64_t k1v[1] = {-42};
  static const uint16_t v2v[2] = {7, 8};
  static const uint32_t ko_v[6] = {40, 20, 80, 10, 70, 30};
  static const uint16_t vo_v[6] = {0, 1, 2, 3, 4, 5};
  gpuprims_context *ctx = e->ctx, *other = NULL;
  gpuprims_buffer *k6, *v6, *v6f64, *v7, *v5, *k1, *v2, *k0, *v1, *ko, *vo;
  fixture_t f;
  char err[1024];
  size_t i;
  uint8_t one = 9;

  f.count = 0;
  TU_REQUIRE_OK(gpuprims_context_create(tu_backend_of(ctx), 0, &other));
  k6 = hold(&f, ctx, GPUPRIMS_DTYPE_U32, k6v, 6);
  v6 = hold(&f, ctx, GPUPRIMS_DTYPE_U16, v6v, 6);
  v6f64 = hold(&f, ctx, GPUPRIMS_DTYPE_F64, v6d, 6);
  v7 = hold(&f, ctx, GPUPRIMS_DTYPE_I32, v7v, 7);
  v5 = hold(&f, ctx, GPUPRIMS_DTYPE_U8, v5v, 5);
  k1 = hold(&f, ctx, GPUPRIMS_DTYPE_I64, k1v, 1);
  v2 = hold(&f, ctx, GPUPRIMS_DTYPE_U16, v2v, 2);
  k0 = hold(&f, ctx, GPUPRIMS_DTYPE_F32, NULL, 0);
  v1 = hold(&f, ctx, GPUPRIMS_DTYPE_U8, &one, 1);
  ko = hold(&f, other, GPUPRIMS_DTYPE_U32, ko_v, 6);
  vo = hold(&f, other, GPUPRIMS_DTYPE_U16, vo_v, 6);

  prime_last_error();
  tu_last_error_text(err, sizeof err);
  TU_CHECKF(strstr(err, "gpuprims_" SORT_NAME) == NULL, "priming the last error: \"%s\"", err);

  /* NULL */
  EXPECT_SORT_FAILS(SORT_CALL(NULL, k6, v6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_NULL_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(NULL, k6, NULL, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_NULL_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, NULL, v6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_NULL_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, NULL, NULL, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_NULL_ARGUMENT);
  /* keys and values the same buffer */
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, k6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, k6, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k1, k1, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  /* CUDA: two handles over the same device memory (the keys and a wrap of their pointer) */
  if (tu_is_cuda(ctx)) {
    void *p = NULL;
    gpuprims_buffer *alias = NULL;
    TU_REQUIRE_OK(gpuprims_buffer_device_ptr(k6, &p));
    TU_REQUIRE_OK(gpuprims_buffer_wrap_device(ctx, GPUPRIMS_DTYPE_U32, p, 6, &alias));
    EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, alias, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    EXPECT_SORT_FAILS(SORT_CALL(ctx, alias, k6, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    gpuprims_buffer_destroy(alias);
  }
  /* values of another length (also when the keys' length makes the sort a no-op) */
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, v7, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_SIZE_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, v5, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_SIZE_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k1, v2, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_SIZE_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k0, v1, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_SIZE_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k1, v6, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_SIZE_MISMATCH);
  /* buffers of another context */
  EXPECT_SORT_FAILS(SORT_CALL(ctx, ko, NULL, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, ko, v6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, vo, GPUPRIMS_ORDER_DESCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, ko, vo, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(other, k6, v6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(other, k6, NULL, GPUPRIMS_ORDER_DESCENDING),
                    GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  EXPECT_SORT_FAILS(SORT_CALL(other, ko, v6, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  /* unknown orders (also on the no-op lengths 0 and 1) */
  for (i = 0; i < TU_ARRAY_LEN(bad_orders); i++) {
    EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, v6, bad_orders[i]), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, NULL, bad_orders[i]), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  }
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k1, NULL, 2), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k0, NULL, 0xFFFFFFFFu), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  /* handles of the wrong kind */
  EXPECT_SORT_FAILS(SORT_CALL(ctx, (gpuprims_buffer *)(void *)ctx, v6, GPUPRIMS_ORDER_ASCENDING),
                    GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, (gpuprims_buffer *)(void *)ctx, NULL, GPUPRIMS_ORDER_ASCENDING),
                    GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL(ctx, k6, (gpuprims_buffer *)(void *)ctx, GPUPRIMS_ORDER_DESCENDING),
                    GPUPRIMS_STATUS_INVALID_ARGUMENT);
  EXPECT_SORT_FAILS(SORT_CALL((gpuprims_context *)(void *)k6, k6, v6, GPUPRIMS_ORDER_ASCENDING),
                    GPUPRIMS_STATUS_INVALID_ARGUMENT);

  /* what does work: no-op lengths, the other context's own buffers, values of another dtype */
  TU_EXPECT_OK(SORT_CALL(ctx, k0, NULL, GPUPRIMS_ORDER_ASCENDING));
  TU_EXPECT_OK(SORT_CALL(ctx, k1, NULL, GPUPRIMS_ORDER_DESCENDING));
  TU_EXPECT_OK(SORT_CALL(ctx, k1, v1, GPUPRIMS_ORDER_ASCENDING));
  {
    int64_t k;
    uint8_t v;
    TU_REQUIRE_OK(gpuprims_buffer_read(k1, 0, &k, 1));
    TU_REQUIRE_OK(gpuprims_buffer_read(v1, 0, &v, 1));
    TU_CHECKF(k == -42 && v == 9, "sorting one element changed it: key %lld, value %u", (long long)k, (unsigned)v);
  }
  {
    static const uint32_t wk[6] = {80, 70, 40, 30, 20, 10};
    static const uint16_t wv[6] = {2, 4, 0, 5, 1, 3};
    expect_small_sort(other, ko, vo, GPUPRIMS_ORDER_DESCENDING, wk, wv, 6, sizeof wv[0],
                      "descending sort of 6 u32 keys with u16 values in a second context is wrong");
  }
#if SORT_STABLE
  {
    static const uint32_t wk[6] = {1, 3, 3, 5, 7, 9};
    static const double wv[6] = {3.5, 1.5, 5.5, 0.5, 4.5, 2.5};
    expect_small_sort(ctx, k6, v6f64, GPUPRIMS_ORDER_ASCENDING, wk, wv, 6, sizeof wv[0],
                      "ascending sort of {5, 3, 9, 1, 7, 3} with f64 values is wrong");
  }
  {
    /* the two 3s keep their order (input positions 1 and 5) */
    static const uint32_t wk[6] = {9, 7, 5, 3, 3, 1};
    static const double wv[6] = {2.5, 4.5, 0.5, 1.5, 5.5, 3.5};
    expect_small_sort(ctx, k6, v6f64, GPUPRIMS_ORDER_DESCENDING, wk, wv, 6, sizeof wv[0],
                      "then descending on the same buffers is wrong (or not stable)");
  }
#else
  {
    /* equal keys (the two 3s) may leave their values in either order: keys 7 and 9 are
     * distinct, so the values beside them are fixed */
    uint32_t gk[6];
    double gv[6];
    TU_EXPECT_OK(SORT_CALL(ctx, k6, v6f64, GPUPRIMS_ORDER_DESCENDING));
    TU_REQUIRE_OK(gpuprims_buffer_read(k6, 0, gk, 6));
    TU_REQUIRE_OK(gpuprims_buffer_read(v6f64, 0, gv, 6));
    TU_CHECKF(gk[0] == 9 && gk[1] == 7 && gk[2] == 5 && gk[3] == 3 && gk[4] == 3 && gk[5] == 1 && gv[0] == 2.5 &&
                  gv[1] == 4.5 && gv[2] == 0.5 && gv[5] == 3.5 &&
                  ((gv[3] == 1.5 && gv[4] == 5.5) || (gv[3] == 5.5 && gv[4] == 1.5)),
              "descending sort of {5, 3, 9, 1, 7, 3} with f64 values is wrong");
  }
#endif
  for (i = 0; i < (size_t)f.count; i++) gpuprims_buffer_destroy(f.h[i].buf);
  gpuprims_context_destroy(other);
}
#undef EXPECT_SORT_FAILS

/* ------------------------------------------------------------------------------------- */

#ifndef SORT_MAIN
#define SORT_MAIN main
#endif

/* The test's buffers, CAP elements of up to 8 bytes each. */
static void env_alloc(env_t *e) {
  e->keys = (unsigned char *)tu_xmalloc(CAP * 8);
  e->vals = (unsigned char *)tu_xmalloc(CAP * 8);
  e->want_k = (unsigned char *)tu_xmalloc(CAP * 8);
  e->want_v = (unsigned char *)tu_xmalloc(CAP * 8);
  e->got_k = (unsigned char *)tu_xmalloc(CAP * 8);
  e->got_k2 = (unsigned char *)tu_xmalloc(CAP * 8);
  e->got_v = (unsigned char *)tu_xmalloc(CAP * 8);
  e->perm = (size_t *)tu_xmalloc(CAP * sizeof(size_t));
  e->pairs = (tu_sort_pair *)tu_xmalloc(CAP * sizeof(tu_sort_pair));
  e->sorts = 0;
  e->rot = 0;
  e->reversed_distinct = 0;
  e->what[0] = '\0';
}

static void env_free(env_t *e) {
  free(e->keys);
  free(e->vals);
  free(e->want_k);
  free(e->want_v);
  free(e->got_k);
  free(e->got_k2);
  free(e->got_v);
  free(e->perm);
  free(e->pairs);
}

int SORT_MAIN(void) {
  env_t e;
  const tu_dtype_info *d = tu_dtypes();
  static const size_t fixed[] = {0,    1,    2,    3,    4,    5,    7,    8,    15,   16,    17,
                                 31,   32,   33,   100,  255,  256,  257,  1000, 1023, 1025,  4095,
                                 4096, 4097, 6143, 6144, 6145, 6911, 6912, 6913, 8191, 8192,  8193, 12289,
                                 16383, 16384, 16385};
#ifdef SORT_TILE_EDGES
  static const size_t tile_edges[] = {SORT_TILE_EDGES};
  size_t sizes[TU_ARRAY_LEN(fixed) + TU_ARRAY_LEN(tile_edges) + 2], nsizes = 0, si;
#else
  size_t sizes[TU_ARRAY_LEN(fixed) + 2], nsizes = 0, si;
#endif
  /* 2^20 + 7, every dtype: keys only and with two value dtypes (one can hold the index) */
  static const gpuprims_dtype mid_values[TU_NUM_DTYPES][2] = {
      {GPUPRIMS_DTYPE_U64, GPUPRIMS_DTYPE_I16}, /* i8 */
      {GPUPRIMS_DTYPE_U64, GPUPRIMS_DTYPE_U8},  /* u8 */
      {GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_U16}, /* i16 */
      {GPUPRIMS_DTYPE_I64, GPUPRIMS_DTYPE_I8},  /* u16 */
      {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_F64}, /* i32 */
      {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_U16}, /* u32 */
      {GPUPRIMS_DTYPE_I32, GPUPRIMS_DTYPE_U8},  /* i64 */
      {GPUPRIMS_DTYPE_F64, GPUPRIMS_DTYPE_I16}, /* u64 */
      {GPUPRIMS_DTYPE_I64, GPUPRIMS_DTYPE_F32}, /* f32 */
      {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_U16}, /* f64 */
      {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_BF16}, /* f16 */
      {GPUPRIMS_DTYPE_U64, GPUPRIMS_DTYPE_F16}, /* bf16 */
  };
  /* 3,000,017: four key dtypes, keys only and with one value dtype */
  static const gpuprims_dtype big_keys[4] = {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_U64,
                                             GPUPRIMS_DTYPE_U8};
  static const gpuprims_dtype big_values[4] = {GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_I64, GPUPRIMS_DTYPE_F32,
                                               GPUPRIMS_DTYPE_U64};
  int i, o;
  double t_start, t0;
  uint64_t seed = tu_init("test_" SORT_NAME);
  const int quick = getenv("GPUPRIMS_TEST_QUICK") != NULL;
  int large; /* the 2^20 + 7 and 3,000,017 sections */

  tu_rng_seed(&e.rng, seed);
  e.ctx = tu_open_context();
  /* The host backend's sorts (rayon's, of the keys) take no path by size that the sizes
   * above do not: there the two large sections, two thirds of the test's time on a
   * 2-core machine, only repeat them. GPUPRIMS_TEST_FULL=1 runs them there too. */
  large = !quick && (tu_is_cuda(e.ctx) || getenv("GPUPRIMS_TEST_FULL") != NULL);
  env_alloc(&e);
  if (quick) {
    static const size_t few[] = {2, 300, 8193, 16384, 40001};
    for (si = 0; si < TU_ARRAY_LEN(few); si++) sizes[nsizes++] = few[si];
  } else {
    for (si = 0; si < TU_ARRAY_LEN(fixed); si++) sizes[nsizes++] = fixed[si];
#ifdef SORT_TILE_EDGES
    for (si = 0; si < TU_ARRAY_LEN(tile_edges); si++) sizes[nsizes++] = tile_edges[si];
#endif
    sizes[nsizes++] = 1 + (size_t)tu_below(&e.rng, 3000);
    sizes[nsizes++] = 3000 + (size_t)tu_below(&e.rng, 17000);
  }
  printf("test_" SORT_NAME ": random sizes %zu and %zu\n", sizes[nsizes - 2], sizes[nsizes - 1]);
  t_start = seconds();

  errors(&e);
  printf("test_" SORT_NAME ": errors checked\n");
  fflush(stdout);

  /* every dtype, every input kind, the sizes above */
  for (i = 0; i < TU_NUM_DTYPES; i++) {
    unsigned long before = e.sorts;
    if (quick && d[i].id != GPUPRIMS_DTYPE_U8 && d[i].id != GPUPRIMS_DTYPE_I16 && d[i].id != GPUPRIMS_DTYPE_F32 &&
        d[i].id != GPUPRIMS_DTYPE_U64)
      continue;
    t0 = seconds();
    for (si = 0; si < nsizes; si++) all_kinds(&e, &d[i], sizes[si]);
    printf("test_" SORT_NAME ": %-3s keys, %zu sizes, every input kind: %lu sorts (%.1f s)\n", d[i].name, nsizes,
           e.sorts - before, seconds() - t0);
    fflush(stdout);
  }

  /* 2^20 + 7: random bits for every dtype, and 4 distinct values or the special values
   * (floats: and random bits with no NaN) */
  for (i = 0; i < (large ? TU_NUM_DTYPES : 0); i++) {
    unsigned long before = e.sorts;
    int kinds[3];
    int k, nk = 2;
    t0 = seconds();
    kinds[0] = P_RANDOM;
    kinds[1] = d[i].is_float ? P_SPECIALS : (i % 2 ? P_FEW : P_TOP_BITS);
    if (d[i].is_float) kinds[nk++] = P_NO_NAN;
    for (k = 0; k < nk; k++) {
      gen_keys(&e, &d[i], MID_N, kinds[k]);
      for (o = 0; o < 2; o++) run_order(&e, &d[i], MID_N, ORDERS[o], mid_values[i], k == 0 ? 2 : 1);
    }
    printf("test_" SORT_NAME ": n=%zu, %-3s keys, random bits and one or two more kinds: %lu sorts (%.1f s)\n",
           (size_t)MID_N, d[i].name, e.sorts - before, seconds() - t0);
    fflush(stdout);
  }

  /* 3,000,017 */
  for (i = 0; i < (large ? 4 : 0); i++) {
    const tu_dtype_info *kd = tu_dtype(big_keys[i]);
    unsigned long before = e.sorts;
    int kinds[4];
    int k;
    t0 = seconds();
    int nk = 2;
    kinds[0] = P_RANDOM;
    kinds[1] = kd->is_float ? P_NANS : P_FEW;
    if (kd->is_float) kinds[nk++] = P_NO_NAN;
    if (kd->id == GPUPRIMS_DTYPE_U32) {
      /* distinct keys reversed (values come out exactly reversed), and already sorted */
      kinds[nk++] = P_REVERSED;
      kinds[nk++] = P_SORTED_ASC;
    }
    for (k = 0; k < nk; k++) {
      gen_keys(&e, kd, BIG_N, kinds[k]);
      for (o = 0; o < 2; o++) run_order(&e, kd, BIG_N, ORDERS[o], &big_values[i], 1);
    }
    printf("test_" SORT_NAME ": n=%zu, %s keys with %s values: %lu sorts (%.1f s)\n", (size_t)BIG_N, kd->name,
           tu_dtype_name(big_values[i]), e.sorts - before, seconds() - t0);
    fflush(stdout);
  }

  /* repeated sorts of one buffer */
  t0 = seconds();
  sort_twice(&e, GPUPRIMS_DTYPE_U32, 50001, P_FEW);
  sort_twice(&e, GPUPRIMS_DTYPE_F64, 6913, P_NANS);
  sort_twice(&e, GPUPRIMS_DTYPE_I16, 100003, P_RANDOM);
  sort_twice(&e, GPUPRIMS_DTYPE_U8, 12289, P_RANDOM);
  asc_then_desc(&e, GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_U64, 100003, P_FEW);
  asc_then_desc(&e, GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_U32, 8193, P_TOP_BITS);
  asc_then_desc(&e, GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_U16, 6145, P_SPECIALS);
  printf("test_" SORT_NAME ": sorted twice, and ascending then descending on one buffer (%.1f s)\n", seconds() - t0);

  /* pairs in wrapped device memory, aligned and not to 8 bytes */
  t0 = seconds();
  wrapped_pairs(&e, GPUPRIMS_DTYPE_U32, GPUPRIMS_DTYPE_U32, 40002, P_RANDOM);
  wrapped_pairs(&e, GPUPRIMS_DTYPE_F32, GPUPRIMS_DTYPE_I32, 23040, P_NO_NAN);
  wrapped_pairs(&e, GPUPRIMS_DTYPE_I32, GPUPRIMS_DTYPE_F32, 15360, P_FEW);
  printf("test_" SORT_NAME ": pairs in wrapped memory (%.1f s)\n", seconds() - t0);

#ifdef SORT_EXTRA_TESTS
  SORT_EXTRA_TESTS(&e);
#endif
  printf("test_" SORT_NAME ": %lu sorts in %.1f s\n", e.sorts, seconds() - t_start);
  env_free(&e);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
