/*
 * fuzz_data.c: random dtypes, enum values, lengths and contents, and the small
 * references the results are compared with (those of test_util.h do reduce, scan and
 * the sort order).
 */
#include "fuzz.h"

const tu_dtype_info *fz_rand_dtype(void) { return &tu_dtypes()[fz_below(TU_NUM_DTYPES)]; }

gpuprims_dtype fz_bad_dtype(void) {
  static const gpuprims_dtype bad[] = {0, 13, 14, 100, 255, 0x7FFFFFFFu, 0x80000001u, 0xFFFFFFFFu};
  return fz_pct(80) ? bad[fz_below(TU_ARRAY_LEN(bad))] : (gpuprims_dtype)fz_range(13, UINT32_MAX);
}

uint32_t fz_bad_enum(void) {
  static const uint32_t bad[] = {3, 4, 7, 0x100, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
  return fz_pct(80) ? bad[fz_below(TU_ARRAY_LEN(bad))] : (uint32_t)fz_range(3, UINT32_MAX);
}

/* Mostly tiny, some a few tiles long, a few past one block's worth of selection, and
 * now and then around the host backend's chunk (2^16 elements). */
size_t fz_rand_len(void) {
  unsigned r = (unsigned)fz_below(1000);
  if (r < 300) return (size_t)fz_below(4);
  if (r < 700) return (size_t)fz_range(4, 64);
  if (r < 950) return (size_t)fz_range(65, 1100);
  if (r < 995) return (size_t)fz_range(1100, 9000);
  return fz_pct(50) ? (size_t)65536 - 3 + (size_t)fz_below(7) : (size_t)fz_range(60000, 140000);
}

/* A length no allocation can serve: at least 2^48 elements (past what x86-64 and AArch64
 * user space can map), or past what a size_t of bytes can hold. */
size_t fz_huge_len(size_t es) {
  static const size_t fixed[] = {SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX - 1, SIZE_MAX};
  /* Most are past isize::MAX bytes (INVALID_ARGUMENT before any allocation); a few reach
     the allocator (OUT_OF_MEMORY; under ASan each prints a "failed to allocate" warning,
     so only the first 24 of a run) */
  if (fz_pct(20) && fz.oom_tries++ < 24) return fz_pct(50) ? (size_t)1 << 48 : (size_t)fz_range((uint64_t)1 << 48, ((uint64_t)1 << 62) / es);
  if (fz_pct(50)) return fixed[fz_below(TU_ARRAY_LEN(fixed))];
  if (fz_pct(50)) return SIZE_MAX / es + (es > 1 ? (size_t)fz_below(2) : 0); /* the largest that fits, or one past */
  return (size_t)fz_range(SIZE_MAX / 2 + 1, SIZE_MAX);
}

/* Contents: random bits, small integers, uniform floats, special values among small ones,
 * sorted either way, all equal, a few distinct values. */
void fz_fill(gpuprims_dtype t, void *p, size_t n) {
  const tu_dtype_info *d = tu_dtype(t);
  unsigned kind = (unsigned)fz_below(8);
  size_t i;
  switch (kind) {
    case 0: tu_fill(&fz.rng, t, p, n, TU_FILL_BITS); break;
    case 1: tu_fill(&fz.rng, t, p, n, TU_FILL_SMALLINT); break;
    case 2: tu_fill(&fz.rng, t, p, n, TU_FILL_UNIFORM); break;
    case 3:
      tu_fill(&fz.rng, t, p, n, TU_FILL_SMALLINT);
      for (i = 0; i < n; i++)
        if (fz_pct(30)) tu_put_bits(t, p, i, tu_special_bits(d, &fz.rng));
      break;
    case 4:
    case 5: {
      size_t *perm = (size_t *)tu_xmalloc((n + 1) * sizeof(size_t));
      unsigned char *tmp = (unsigned char *)tu_xmalloc(n * d->size + 1);
      tu_fill(&fz.rng, t, tmp, n, fz_pct(50) ? TU_FILL_SMALLINT : TU_FILL_BITS);
      tu_sort_ref(t, tmp, n, kind == 4 ? GPUPRIMS_ORDER_ASCENDING : GPUPRIMS_ORDER_DESCENDING, perm, NULL);
      tu_gather(tmp, d->size, perm, n, p);
      free(perm);
      free(tmp);
      break;
    }
    case 6: {
      uint64_t v = fz_pct(50) ? tu_special_bits(d, &fz.rng) : tu_next(&fz.rng);
      for (i = 0; i < n; i++) tu_put_bits(t, p, i, v);
      break;
    }
    default: {
      uint64_t v[3];
      for (i = 0; i < 3; i++) v[i] = fz_pct(30) ? tu_special_bits(d, &fz.rng) : tu_next(&fz.rng);
      for (i = 0; i < n; i++) tu_put_bits(t, p, i, v[fz_below(3)]);
      break;
    }
  }
}

uint64_t fz_get_index(gpuprims_dtype t, const void *p, size_t i) {
  return tu_get_bits(t == GPUPRIMS_DTYPE_U32 ? 4 : 8, p, i);
}

const char *fz_op_name(gpuprims_op op) {
  switch (op) {
    case GPUPRIMS_OP_SUM: return "SUM";
    case GPUPRIMS_OP_MIN: return "MIN";
    case GPUPRIMS_OP_MAX: return "MAX";
    default: return "(unknown op)";
  }
}

static int is_nan_at(const tu_dtype_info *d, const void *x, size_t i) {
  return tu_bits_is_nan(d, tu_get_bits(d->size, x, i));
}

int fz_has_nan(gpuprims_dtype t, const void *x, size_t n) {
  const tu_dtype_info *d = tu_dtype(t);
  size_t i;
  if (!d->is_float) return 0;
  for (i = 0; i < n; i++)
    if (is_nan_at(d, x, i)) return 1;
  return 0;
}

/* No partial sum, in any order, can overflow: the finite |x| add up to at most half the
 * largest finite value of the type the sums are computed in (f32 for the 16-bit floats,
 * whose results the references check past their own overflow). (Infinities and NaN are
 * fine: the references handle them.) */
int fz_fsum_checkable(gpuprims_dtype t, const void *x, size_t n) {
  const long double largest = t == GPUPRIMS_DTYPE_F64 ? (long double)DBL_MAX : (long double)FLT_MAX;
  long double a = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double v = tu_get_f(t, x, i);
    if (isfinite(v)) a += fabsl((long double)v);
  }
  return a <= 0.5L * largest;
}

int fz_same_elem(gpuprims_dtype t, const void *a, const void *b, int nan_any) {
  const tu_dtype_info *d = tu_dtype(t);
  if (memcmp(a, b, d->size) == 0) return 1;
  return nan_any && is_nan_at(d, a, 0) && is_nan_at(d, b, 0);
}

void fz_rank_ref(gpuprims_dtype t, const void *x, size_t n, size_t k, void *out) {
  size_t es = tu_dtype_size(t);
  size_t *perm = (size_t *)tu_xmalloc((n + 1) * sizeof(size_t));
  tu_sort_ref(t, x, n, GPUPRIMS_ORDER_ASCENDING, perm, NULL);
  memcpy(out, (const unsigned char *)x + es * perm[k], es);
  free(perm);
}

/* Up to 8 elements, for messages. */
void fz_fmt_elems(gpuprims_dtype t, const void *p, size_t n, char *out, size_t len) {
  size_t i, at = 0, es = tu_dtype_size(t);
  out[0] = '\0';
  for (i = 0; i < n && i < 8 && at + 1 < len; i++) {
    char e[64];
    int w;
    tu_fmt_elem(t, (const unsigned char *)p + i * es, e, sizeof e);
    w = snprintf(out + at, len - at, "%s%s", i ? ", " : "", e);
    if (w < 0) break;
    at += (size_t)w;
  }
  if (n > 8 && at + 5 < len) snprintf(out + at, len - at, ", ...");
}
