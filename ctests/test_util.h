/*
 * test_util.h: helpers shared by the gpuprims C tests (each test is one translation unit,
 * compiled as C11 and again as C++17, so everything here is `static inline` and valid in
 * both languages).
 *
 * - TU_CHECK / TU_EXPECT_STATUS / TU_REQUIRE_OK: print file:line, the expression, the
 *   status names and this thread's gpuprims_last_error() text; EXPECT and CHECK go on,
 *   REQUIRE stops the program.
 * - A seeded RNG: a fresh seed per run (time, pid), printed at start; GPUPRIMS_TEST_SEED=
 *   <seed> replays a run.
 * - tu_open_context(): gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, ...), exit 77
 *   when GPUPRIMS_BACKEND=cuda but no device can be used, or on the host backend under
 *   GPUPRIMS_TEST_SKIP_ON_HOST=1 (CTest's runs under CUDA planner knobs).
 * - Sequential C references for reduce and scan over every dtype.
 * - A sequential reference for radix sort (tu_sort_key, tu_sort_ref: the stable order as a
 *   permutation, by an LSD radix sort of (order key, index) pairs) and tu_gather.
 * - The segmented tests' rows: tu_layout (offsets built row by row, or uniform rows),
 *   tu_index_buffer (offsets or ks as U32 or U64), tu_fill_row (a row's contents).
 * - tu_cuda_stream_create/_destroy: a caller's CUDA stream through the driver API loaded at
 *   run time (no CUDA headers), for gpuprims_context_set_stream.
 * - tu_destroy_as: the destroy of a kind of handle (TU_KCTX ... TU_KGROUP), whatever it is given.
 *
 * Include this header first: it sets the POSIX feature level before any system header.
 */
#ifndef GPUPRIMS_TEST_UTIL_H
#define GPUPRIMS_TEST_UTIL_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

/* First, so that the public header is checked to stand on its own, in C and in C++. */
#include "gpuprims.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#define TU_SKIP_CODE 77
#define TU_PRINT_LIMIT 40
#define TU_NUM_DTYPES 12

#if defined(__GNUC__)
#define TU_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define TU_NORETURN __attribute__((noreturn))
#else
#define TU_PRINTF(fmt_index, first_arg)
#define TU_NORETURN
#endif

/* A pointer value no library call should ever write: pre-fill out-parameters with it. */
#define TU_SENTINEL_PTR(type) ((type *)(uintptr_t)0x5E171E1ul)
#define TU_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------------------- */
/* Test state, failure reporting                                                          */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  uint64_t seed;
  unsigned long checks;
  unsigned long failures;
  char backend[96];
  pthread_mutex_t lock;
} tu_state_t;

static tu_state_t tu_state = {"test", 0, 0, 0, "none", PTHREAD_MUTEX_INITIALIZER};

static inline const char *tu_status_name(gpuprims_status s) {
  const char *n = gpuprims_status_name(s);
  return n ? n : "(NULL name)";
}

/* This thread's last error text (empty when none). */
static inline void tu_last_error_text(char *buf, size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  (void)gpuprims_last_error(buf, len);
  buf[len - 1] = '\0';
}

static inline void tu_summary_(FILE *f) {
  fprintf(f, "%s: %s: %lu checks, %lu failed (backend %s, seed 0x%016llx)\n", tu_state.name,
          tu_state.failures ? "FAIL" : "PASS", tu_state.checks, tu_state.failures,
          tu_state.backend, (unsigned long long)tu_state.seed);
}

static inline TU_NORETURN void tu_abort_(void) {
  pthread_mutex_lock(&tu_state.lock);
  if (tu_state.failures == 0) tu_state.failures = 1;
  printf("%s: stopping after a fatal failure\n", tu_state.name);
  tu_summary_(stdout);
  fflush(stdout);
  exit(1);
}

static inline void tu_vfail_(const char *file, int line, const char *fmt, va_list ap) {
  char err[1024];
  tu_last_error_text(err, sizeof err);
  pthread_mutex_lock(&tu_state.lock);
  tu_state.failures++;
  if (tu_state.failures <= TU_PRINT_LIMIT) {
    printf("%s:%d: FAIL: ", file, line);
    vprintf(fmt, ap);
    printf("\n    [last error of this thread: \"%s\"] [seed 0x%016llx]\n", err,
           (unsigned long long)tu_state.seed);
  } else if (tu_state.failures == TU_PRINT_LIMIT + 1) {
    printf("%s: more failures; only counting them from here\n", tu_state.name);
  }
  fflush(stdout);
  pthread_mutex_unlock(&tu_state.lock);
}

static inline void tu_count_check_(void) {
  pthread_mutex_lock(&tu_state.lock);
  tu_state.checks++;
  pthread_mutex_unlock(&tu_state.lock);
}

static inline int tu_check_(int ok, const char *file, int line, const char *fmt, ...) TU_PRINTF(4, 5);
static inline int tu_check_(int ok, const char *file, int line, const char *fmt, ...) {
  tu_count_check_();
  if (!ok) {
    va_list ap;
    va_start(ap, fmt);
    tu_vfail_(file, line, fmt, ap);
    va_end(ap);
  }
  return ok;
}

/* Fails unless got is want or alt (pass alt = want for a single expected status). */
static inline int tu_expect_status_(gpuprims_status got, gpuprims_status want, gpuprims_status alt,
                                    const char *file, int line, const char *expr) {
  int ok = got == want || got == alt;
  if (want == alt) {
    tu_check_(ok, file, line, "%s returned %s (%u), expected %s (%u)", expr, tu_status_name(got),
              (unsigned)got, tu_status_name(want), (unsigned)want);
  } else {
    tu_check_(ok, file, line, "%s returned %s (%u), expected %s or %s", expr, tu_status_name(got),
              (unsigned)got, tu_status_name(want), tu_status_name(alt));
  }
  return ok;
}

#define TU_CHECK(cond) tu_check_((cond) ? 1 : 0, __FILE__, __LINE__, "%s", #cond)
#define TU_CHECKF(cond, ...) tu_check_((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)
#define TU_EXPECT_STATUS(call, want) \
  tu_expect_status_((call), (want), (want), __FILE__, __LINE__, #call)
#define TU_EXPECT_STATUS2(call, want, alt) \
  tu_expect_status_((call), (want), (alt), __FILE__, __LINE__, #call)
#define TU_EXPECT_OK(call) TU_EXPECT_STATUS(call, GPUPRIMS_STATUS_OK)
#define TU_REQUIRE(cond)                 \
  do {                                   \
    if (!TU_CHECK(cond)) tu_abort_();    \
  } while (0)
#define TU_REQUIRE_OK(call)                 \
  do {                                      \
    if (!TU_EXPECT_OK(call)) tu_abort_();   \
  } while (0)

static inline TU_NORETURN void tu_fatal_(const char *file, int line, const char *fmt, ...)
    TU_PRINTF(3, 4);
static inline void tu_fatal_(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tu_count_check_();
  tu_vfail_(file, line, fmt, ap);
  va_end(ap);
  tu_abort_();
}
#define TU_FATAL(...) tu_fatal_(__FILE__, __LINE__, __VA_ARGS__)

static inline TU_NORETURN void tu_skip(const char *fmt, ...) TU_PRINTF(1, 2);
static inline void tu_skip(const char *fmt, ...) {
  va_list ap;
  printf("%s: SKIP: ", tu_state.name);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  exit(TU_SKIP_CODE);
}

/* Prints the one-line summary; returns the exit code for main. */
static inline int tu_finish(void) {
  tu_summary_(stdout);
  fflush(stdout);
  return tu_state.failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------- */
/* RNG: xoshiro256** seeded through splitmix64                                            */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  uint64_t s[4];
} tu_rng;

static inline uint64_t tu_splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline void tu_rng_seed(tu_rng *r, uint64_t seed) {
  uint64_t x = seed;
  int i;
  for (i = 0; i < 4; i++) r->s[i] = tu_splitmix64(&x);
}

static inline uint64_t tu_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t tu_next(tu_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = tu_rotl64(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = tu_rotl64(s[3], 45);
  return result;
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t tu_below(tu_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = tu_next(r);
  while (x >= limit);
  return x % n;
}

/* Uniform in [0, 1). */
static inline double tu_unit(tu_rng *r) { return (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static inline void tu_fill_bytes(tu_rng *r, void *p, size_t nbytes) {
  unsigned char *b = (unsigned char *)p;
  size_t i = 0;
  for (; i + 8 <= nbytes; i += 8) {
    uint64_t x = tu_next(r);
    memcpy(b + i, &x, 8);
  }
  if (i < nbytes) {
    uint64_t x = tu_next(r);
    memcpy(b + i, &x, nbytes - i);
  }
}

/* Starts a test: records its name, picks and prints the seed. Returns the seed. */
static inline uint64_t tu_init(const char *name) {
  const char *env = getenv("GPUPRIMS_TEST_SEED");
  uint64_t seed;
  tu_state.name = name;
  if (env && *env) {
    seed = (uint64_t)strtoull(env, NULL, 0);
  } else {
    struct timespec ts;
    uint64_t x;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = (uint64_t)ts.tv_sec * 1000000007ull ^ ((uint64_t)ts.tv_nsec << 20) ^
        ((uint64_t)getpid() << 40) ^ (uint64_t)clock();
    seed = tu_splitmix64(&x);
  }
  tu_state.seed = seed;
  printf("%s: seed 0x%016llx (replay: GPUPRIMS_TEST_SEED=0x%016llx)\n", name,
         (unsigned long long)seed, (unsigned long long)seed);
  fflush(stdout);
  return seed;
}

/* ------------------------------------------------------------------------------------- */
/* Allocation and small helpers                                                            */
/* ------------------------------------------------------------------------------------- */

static inline void *tu_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) TU_FATAL("host malloc(%zu) failed", bytes);
  return p;
}

/* Case-insensitive: is GPUPRIMS_BACKEND set to `want`? */
static inline int tu_env_backend_is(const char *want) {
  const char *v = getenv("GPUPRIMS_BACKEND");
  size_t i;
  if (!v) return 0;
  for (i = 0; v[i] && want[i]; i++) {
    char c = v[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != want[i]) return 0;
  }
  return v[i] == '\0' && want[i] == '\0';
}

static inline const char *tu_backend_name(gpuprims_backend b) {
  switch (b) {
    case GPUPRIMS_BACKEND_AUTO: return "auto";
    case GPUPRIMS_BACKEND_CUDA: return "cuda";
    case GPUPRIMS_BACKEND_HOST: return "host";
    default: return "unknown";
  }
}

static inline gpuprims_backend tu_backend_of(const gpuprims_context *ctx) {
  gpuprims_backend b = 0xDEADu;
  TU_REQUIRE_OK(gpuprims_context_backend(ctx, &b));
  return b;
}

/*
 * The context every test runs on: AUTO, which GPUPRIMS_BACKEND=cuda|host overrides.
 * GPUPRIMS_BACKEND=cuda without a usable device: print why and exit 77 (skipped); likewise
 * any backend but CUDA under GPUPRIMS_TEST_SKIP_ON_HOST=1, which CTest sets for the runs
 * under GPUPRIMS_TUNE knobs of the CUDA planner (elsewhere they would repeat a quick run).
 */
static inline gpuprims_context *tu_open_context(void) {
  gpuprims_context *ctx = NULL;
  gpuprims_status s = gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx);
  char name[64];
  size_t needed = 0;
  gpuprims_backend b;
  if (s == GPUPRIMS_STATUS_NO_DEVICE && tu_env_backend_is("cuda")) {
    char err[1024];
    tu_last_error_text(err, sizeof err);
    tu_skip("GPUPRIMS_BACKEND=cuda but no usable CUDA device (NO_DEVICE: %s)", err);
  }
  if (s != GPUPRIMS_STATUS_OK || ctx == NULL)
    TU_FATAL("gpuprims_context_create(AUTO) returned %s", tu_status_name(s));
  b = tu_backend_of(ctx);
  name[0] = '\0';
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, name, sizeof name, &needed));
  name[sizeof name - 1] = '\0';
  snprintf(tu_state.backend, sizeof tu_state.backend, "%s: %s", tu_backend_name(b), name);
  printf("%s: context backend %s\n", tu_state.name, tu_state.backend);
  fflush(stdout);
  if (b != GPUPRIMS_BACKEND_CUDA && getenv("GPUPRIMS_TEST_SKIP_ON_HOST") &&
      strcmp(getenv("GPUPRIMS_TEST_SKIP_ON_HOST"), "1") == 0) {
    gpuprims_context_destroy(ctx);
    tu_skip("a run under GPUPRIMS_TUNE knobs of the CUDA planner (GPUPRIMS_TEST_SKIP_ON_HOST=1): the %s backend "
            "ignores them, so it would repeat the test's quick run",
            tu_backend_name(b));
  }
  return ctx;
}

static inline int tu_is_cuda(const gpuprims_context *ctx) {
  return tu_backend_of(ctx) == GPUPRIMS_BACKEND_CUDA;
}

/* ------------------------------------------------------------------------------------- */
/* Element types                                                                          */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  gpuprims_dtype id;
  const char *name;
  size_t size;
  int is_float;
  int is_signed;
} tu_dtype_info;

static inline const tu_dtype_info *tu_dtypes(void) {
  static const tu_dtype_info table[TU_NUM_DTYPES] = {
      {GPUPRIMS_DTYPE_I8, "i8", 1, 0, 1},   {GPUPRIMS_DTYPE_U8, "u8", 1, 0, 0},
      {GPUPRIMS_DTYPE_I16, "i16", 2, 0, 1}, {GPUPRIMS_DTYPE_U16, "u16", 2, 0, 0},
      {GPUPRIMS_DTYPE_I32, "i32", 4, 0, 1}, {GPUPRIMS_DTYPE_U32, "u32", 4, 0, 0},
      {GPUPRIMS_DTYPE_I64, "i64", 8, 0, 1}, {GPUPRIMS_DTYPE_U64, "u64", 8, 0, 0},
      {GPUPRIMS_DTYPE_F32, "f32", 4, 1, 1}, {GPUPRIMS_DTYPE_F64, "f64", 8, 1, 1},
      {GPUPRIMS_DTYPE_F16, "f16", 2, 1, 1}, {GPUPRIMS_DTYPE_BF16, "bf16", 2, 1, 1},
  };
  return table;
}

static inline const tu_dtype_info *tu_dtype(gpuprims_dtype t) {
  const tu_dtype_info *d = tu_dtypes();
  int i;
  for (i = 0; i < TU_NUM_DTYPES; i++)
    if (d[i].id == t) return &d[i];
  TU_FATAL("unknown dtype %u in a test", (unsigned)t);
}

static inline size_t tu_dtype_size(gpuprims_dtype t) { return tu_dtype(t)->size; }
static inline const char *tu_dtype_name(gpuprims_dtype t) { return tu_dtype(t)->name; }

/* All ones in the low `size` bytes. */
static inline uint64_t tu_width_mask(size_t size) { return size == 8 ? UINT64_MAX : (((uint64_t)1 << (size * 8)) - 1); }

/* A special value of the dtype, as bits: NaNs of both signs and other payloads,
 * infinities, both zeros, denormals, the extremes; for integers the extremes, 0 and 1. */
static inline uint64_t tu_special_bits(const tu_dtype_info *d, tu_rng *r) {
  static const uint64_t f32s[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7F800000u, 0xFF800000u,
                                  0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu};
  static const uint64_t f64s[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0xFFF8000000000001ull,
                                  0x7FF0000000000001ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                  0x0000000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull,
                                  0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull};
  static const uint64_t f16s[] = {0x7E00u, 0xFE00u, 0x7C01u, 0xFFFFu, 0x7C00u, 0xFC00u, 0x0000u,
                                  0x8000u, 0x0001u, 0x8001u, 0x03FFu, 0x7BFFu, 0xFBFFu};
  static const uint64_t bf16s[] = {0x7FC0u, 0xFFC0u, 0x7F81u, 0xFFFFu, 0x7F80u, 0xFF80u, 0x0000u,
                                   0x8000u, 0x0001u, 0x8001u, 0x007Fu, 0x7F7Fu, 0xFF7Fu};
  uint64_t mask, sign, c[5];
  switch (d->id) {
    case GPUPRIMS_DTYPE_F32: return f32s[tu_below(r, TU_ARRAY_LEN(f32s))];
    case GPUPRIMS_DTYPE_F64: return f64s[tu_below(r, TU_ARRAY_LEN(f64s))];
    case GPUPRIMS_DTYPE_F16: return f16s[tu_below(r, TU_ARRAY_LEN(f16s))];
    case GPUPRIMS_DTYPE_BF16: return bf16s[tu_below(r, TU_ARRAY_LEN(bf16s))];
    default: break;
  }
  mask = tu_width_mask(d->size);
  sign = (uint64_t)1 << (d->size * 8 - 1);
  c[0] = d->is_signed ? sign : 0;
  c[1] = d->is_signed ? sign - 1 : mask;
  c[2] = 0;
  c[3] = mask;
  c[4] = 1;
  return c[tu_below(r, 5)];
}

static inline const char *tu_op_name(gpuprims_op op) {
  switch (op) {
    case GPUPRIMS_OP_SUM: return "SUM";
    case GPUPRIMS_OP_MIN: return "MIN";
    case GPUPRIMS_OP_MAX: return "MAX";
    default: return "?";
  }
}

/*
 * The 16-bit floats, worked on as bits: IEEE binary16 (F16) and bfloat16 (BF16). From a
 * double: rounded once, to nearest, ties to even (overflow to an infinity, NaN to the
 * canonical 0x7FFF); to a double: exact.
 */
typedef struct {
  int mant_bits;  /* stored mantissa bits: 10 or 7 */
  int bias;       /* exponent bias: 15 or 127 */
  int max_exp;    /* the largest finite value's unbiased exponent: 15 or 127 */
} tu_half_format;

static inline const tu_half_format *tu_half_format_of(gpuprims_dtype t) {
  static const tu_half_format f16 = {10, 15, 15}, bf16 = {7, 127, 127};
  return t == GPUPRIMS_DTYPE_F16 ? &f16 : &bf16;
}

static inline double tu_half_to_double(gpuprims_dtype t, uint16_t bits) {
  const tu_half_format *f = tu_half_format_of(t);
  const int exp_mask = (1 << (15 - f->mant_bits)) - 1;
  const int e = (bits >> f->mant_bits) & exp_mask;
  const unsigned m = bits & ((1u << f->mant_bits) - 1);
  double v;
  if (e == exp_mask) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - f->bias - f->mant_bits);
  else v = ldexp(1.0 + ldexp((double)m, -f->mant_bits), e - f->bias);
  return (bits & 0x8000u) ? -v : v;
}

static inline uint16_t tu_half_from_double(gpuprims_dtype t, double v) {
  const tu_half_format *f = tu_half_format_of(t);
  const uint16_t sign = signbit(v) ? 0x8000u : 0, inf = (uint16_t)(0x7FFFu & ~((1u << f->mant_bits) - 1));
  const int min_exp = 1 - f->bias;
  double a = fabs(v), units;
  int e;
  if (isnan(v)) return 0x7FFFu;
  if (a < ldexp(1.0, min_exp)) { /* subnormal or zero: a multiple of the smallest step */
    units = nearbyint(ldexp(a, f->mant_bits - min_exp)); /* exact scaling; ties to even */
    return (uint16_t)(sign | (uint16_t)units);          /* 2^mant_bits units is the smallest normal */
  }
  if (isinf(a)) return sign | inf;
  frexp(a, &e);
  e -= 1; /* a in [2^e, 2^(e+1)) */
  units = nearbyint(ldexp(ldexp(a, -e) - 1.0, f->mant_bits));
  if (units == ldexp(1.0, f->mant_bits)) {
    units = 0;
    e += 1;
  }
  if (e > f->max_exp) return sign | inf;
  return (uint16_t)(sign | (uint16_t)((e + f->bias) << f->mant_bits) | (uint16_t)units);
}

static inline int tu_is_half(gpuprims_dtype t) { return t == GPUPRIMS_DTYPE_F16 || t == GPUPRIMS_DTYPE_BF16; }

/* Writes element i of a float array (f32, f64, f16, bf16) from a double. */
static inline void tu_put_f(gpuprims_dtype t, void *p, size_t i, double v) {
  if (t == GPUPRIMS_DTYPE_F32) {
    float f = (float)v;
    memcpy((unsigned char *)p + 4 * i, &f, 4);
  } else if (tu_is_half(t)) {
    uint16_t h = tu_half_from_double(t, v);
    memcpy((unsigned char *)p + 2 * i, &h, 2);
  } else {
    memcpy((unsigned char *)p + 8 * i, &v, 8);
  }
}

/* Element i of a float array (f32, f64, f16, bf16) as a double (exact). */
static inline double tu_get_f(gpuprims_dtype t, const void *p, size_t i) {
  if (t == GPUPRIMS_DTYPE_F32) {
    float f;
    memcpy(&f, (const unsigned char *)p + 4 * i, 4);
    return f;
  } else if (tu_is_half(t)) {
    uint16_t h;
    memcpy(&h, (const unsigned char *)p + 2 * i, 2);
    return tu_half_to_double(t, h);
  } else {
    double d;
    memcpy(&d, (const unsigned char *)p + 8 * i, 8);
    return d;
  }
}

/* NaN patterns of a float dtype: 0 quiet, 1 negative quiet, 2 with a payload, 3 signalling. */
static inline uint64_t tu_nan_bits(gpuprims_dtype t, int which) {
  static const uint64_t f32[4] = {0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0x7F800001u};
  static const uint64_t f64[4] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF800000000BEEFull,
                                  0x7FF0000000000001ull};
  static const uint64_t f16[4] = {0x7E00u, 0xFE00u, 0x7E5Au, 0x7C01u};
  static const uint64_t bf16[4] = {0x7FC0u, 0xFFC0u, 0x7FE5u, 0x7F81u};
  switch (t) {
    case GPUPRIMS_DTYPE_F32: return f32[which & 3];
    case GPUPRIMS_DTYPE_F16: return f16[which & 3];
    case GPUPRIMS_DTYPE_BF16: return bf16[which & 3];
    default: return f64[which & 3];
  }
}

/* Writes the low bytes of `bits` as element i (little-endian). */
static inline void tu_put_bits(gpuprims_dtype t, void *p, size_t i, uint64_t bits) {
  memcpy((unsigned char *)p + tu_dtype_size(t) * i, &bits, tu_dtype_size(t));
}

/* A special value, or (with `nans`, for floats, now and then) a NaN of another sign or
 * payload. */
static inline uint64_t tu_row_special(tu_rng *r, const tu_dtype_info *d, int nans) {
  if (nans && d->is_float && tu_below(r, 3) == 0) return tu_nan_bits(d->id, (int)tu_below(r, 4));
  return tu_special_bits(d, r);
}

/* Fills values[begin, end) (a row of the segmented tests) with one kind of content, drawn
 * at random: random bits, special values mixed with random ones, all equal, four
 * distinct values, a ramp, and with `nans` also every NaN pattern with both zeros and the
 * infinities (ties among NaNs). */
static inline void tu_fill_row(tu_rng *r, const tu_dtype_info *d, void *values, size_t begin, size_t end, int nans) {
  enum { RANDOM, SPECIALS, ALL_EQUAL, FEW, RAMP, NANS_ZEROS };
  uint64_t mask = tu_width_mask(d->size), v[4];
  size_t i;
  switch ((int)tu_below(r, nans ? NANS_ZEROS + 1 : NANS_ZEROS)) {
    case RANDOM: tu_fill_bytes(r, (unsigned char *)values + begin * d->size, (end - begin) * d->size); break;
    case SPECIALS:
      for (i = begin; i < end; i++)
        tu_put_bits(d->id, values, i, tu_below(r, 2) ? tu_row_special(r, d, nans) : tu_next(r) & mask);
      break;
    case ALL_EQUAL:
      v[0] = tu_below(r, 2) ? tu_row_special(r, d, nans) : tu_next(r) & mask;
      for (i = begin; i < end; i++) tu_put_bits(d->id, values, i, v[0]);
      break;
    case FEW:
      for (i = 0; i < 4; i++) v[i] = (i & 1) ? tu_row_special(r, d, nans) : tu_next(r) & mask;
      for (i = begin; i < end; i++) tu_put_bits(d->id, values, i, v[tu_below(r, 4)]);
      break;
    case NANS_ZEROS:
      for (i = begin; i < end; i++) {
        uint64_t sign = (uint64_t)1 << (d->size * 8 - 1), pick = tu_below(r, 4);
        if (!d->is_float) v[0] = pick == 0 ? 0 : pick == 1 ? mask : pick == 2 ? sign : 1;
        else v[0] = pick == 0 ? tu_nan_bits(d->id, (int)tu_below(r, 4)) : pick == 1 ? 0 : pick == 2 ? sign
                                                                                   : tu_row_special(r, d, nans);
        tu_put_bits(d->id, values, i, v[0]);
      }
      break;
    default: /* RAMP */
      for (i = begin; i < end; i++) {
        int64_t x = (int64_t)(end - i) - (int64_t)(end - begin) / 2;
        if (d->is_float) tu_put_f(d->id, values, i, (double)x * 0.25);
        else tu_put_bits(d->id, values, i, (uint64_t)x);
      }
  }
}

static inline const char *tu_mode_name(gpuprims_scan_mode m) {
  switch (m) {
    case GPUPRIMS_SCAN_INCLUSIVE: return "inclusive";
    case GPUPRIMS_SCAN_EXCLUSIVE: return "exclusive";
    default: return "?";
  }
}

/* Formats one element of dtype t at p (floats also with their bits). */
static inline void tu_fmt_elem(gpuprims_dtype t, const void *p, char *buf, size_t len) {
  switch (t) {
    case GPUPRIMS_DTYPE_I8: { int8_t v; memcpy(&v, p, 1); snprintf(buf, len, "%d", (int)v); return; }
    case GPUPRIMS_DTYPE_U8: { uint8_t v; memcpy(&v, p, 1); snprintf(buf, len, "%u", (unsigned)v); return; }
    case GPUPRIMS_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); snprintf(buf, len, "%d", (int)v); return; }
    case GPUPRIMS_DTYPE_U16: { uint16_t v; memcpy(&v, p, 2); snprintf(buf, len, "%u", (unsigned)v); return; }
    case GPUPRIMS_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); snprintf(buf, len, "%ld", (long)v); return; }
    case GPUPRIMS_DTYPE_U32: { uint32_t v; memcpy(&v, p, 4); snprintf(buf, len, "%lu", (unsigned long)v); return; }
    case GPUPRIMS_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); snprintf(buf, len, "%lld", (long long)v); return; }
    case GPUPRIMS_DTYPE_U64: { uint64_t v; memcpy(&v, p, 8); snprintf(buf, len, "%llu", (unsigned long long)v); return; }
    case GPUPRIMS_DTYPE_F32: {
      float v; uint32_t bits;
      memcpy(&v, p, 4); memcpy(&bits, p, 4);
      snprintf(buf, len, "%.9g (0x%08lx)", (double)v, (unsigned long)bits);
      return;
    }
    case GPUPRIMS_DTYPE_F64: {
      double v; uint64_t bits;
      memcpy(&v, p, 8); memcpy(&bits, p, 8);
      snprintf(buf, len, "%.17g (0x%016llx)", v, (unsigned long long)bits);
      return;
    }
    case GPUPRIMS_DTYPE_F16:
    case GPUPRIMS_DTYPE_BF16: {
      uint16_t bits;
      memcpy(&bits, p, 2);
      snprintf(buf, len, "%.6g (0x%04x)", tu_half_to_double(t, bits), (unsigned)bits);
      return;
    }
    default: snprintf(buf, len, "?"); return;
  }
}

static inline void tu_mismatch_msg_(char *msg, size_t ml, gpuprims_dtype t, size_t index,
                                    const void *want, const void *got) {
  char w[64], g[64];
  tu_fmt_elem(t, want, w, sizeof w);
  tu_fmt_elem(t, got, g, sizeof g);
  if (index == (size_t)-1)
    snprintf(msg, ml, "expected %s, got %s", w, g);
  else
    snprintf(msg, ml, "at index %zu: expected %s, got %s", index, w, g);
}

/* ------------------------------------------------------------------------------------- */
/* Random data                                                                            */
/* ------------------------------------------------------------------------------------- */

enum {
  TU_FILL_BITS = 0,     /* integers: every bit pattern; floats: every bit pattern but NaN */
  TU_FILL_SMALLINT = 1, /* small integers: float sums of them are exact (|sum| < 2^24) */
  TU_FILL_UNIFORM = 2   /* floats: uniform in [-1, 1); integers: every bit pattern */
};

static inline void tu_fill(tu_rng *r, gpuprims_dtype t, void *p, size_t n, int kind) {
  size_t i;
  const tu_dtype_info *d = tu_dtype(t);
  if (!d->is_float) {
    if (kind == TU_FILL_SMALLINT) {
      unsigned char *b = (unsigned char *)p;
      for (i = 0; i < n; i++) {
        int64_t v = d->is_signed ? (int64_t)tu_below(r, 5) - 2 : (int64_t)tu_below(r, 5);
        memcpy(b + i * d->size, &v, d->size); /* little-endian truncation */
      }
    } else {
      tu_fill_bytes(r, p, n * d->size);
    }
    return;
  }
  if (tu_is_half(t)) {
    for (i = 0; i < n; i++) {
      if (kind == TU_FILL_BITS) {
        uint16_t bits;
        do bits = (uint16_t)(tu_next(r) >> 48);
        while (isnan(tu_half_to_double(t, bits)));
        memcpy((unsigned char *)p + 2 * i, &bits, 2);
      } else if (kind == TU_FILL_SMALLINT) {
        tu_put_f(t, p, i, (double)((int)tu_below(r, 5) - 2));
      } else {
        tu_put_f(t, p, i, tu_unit(r) * 2.0 - 1.0);
      }
    }
  } else if (t == GPUPRIMS_DTYPE_F32) {
    float *f = (float *)p;
    for (i = 0; i < n; i++) {
      if (kind == TU_FILL_BITS) {
        uint32_t bits;
        do bits = (uint32_t)(tu_next(r) >> 32);
        while ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0);
        memcpy(&f[i], &bits, 4);
      } else if (kind == TU_FILL_SMALLINT) {
        f[i] = (float)((int)tu_below(r, 5) - 2);
      } else {
        f[i] = (float)(tu_unit(r) * 2.0 - 1.0);
      }
    }
  } else {
    double *f = (double *)p;
    for (i = 0; i < n; i++) {
      if (kind == TU_FILL_BITS) {
        uint64_t bits;
        do bits = tu_next(r);
        while ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull &&
               (bits & 0x000FFFFFFFFFFFFFull) != 0);
        memcpy(&f[i], &bits, 8);
      } else if (kind == TU_FILL_SMALLINT) {
        f[i] = (double)((int)tu_below(r, 2001) - 1000);
      } else {
        f[i] = tu_unit(r) * 2.0 - 1.0;
      }
    }
  }
}

/* One primitive's check of ops[0..nops) on data[0..n) as filled, for the test's `env`;
 * tolf: float SUM tolerance factor (-1: default, 0: exact). */
typedef void (*tu_check_ops_fn)(void *env, gpuprims_dtype t, size_t n, const gpuprims_op *ops, int nops,
                                double tolf, const char *what);

/* The fresh-random-data cases of a primitive over SUM, MIN and MAX: every bit pattern
 * (floats: MIN/MAX only, NaN excluded, so signed zeros, subnormals and infinities),
 * then for floats small integers (SUM exact whatever the order) and uniform [-1, 1)
 * (SUM within tolerance). Those two float cases check the first `float_sum_nops` of
 * {SUM, MIN, MAX}. */
static inline void tu_random_cases(tu_rng *r, const tu_dtype_info *d, void *data, size_t n, tu_check_ops_fn check,
                                   void *env, int float_sum_nops) {
  static const gpuprims_op ops[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};
  tu_fill(r, d->id, data, n, TU_FILL_BITS);
  if (!d->is_float) {
    check(env, d->id, n, ops, 3, -1, "random bits");
    return;
  }
  check(env, d->id, n, ops + 1, 2, -1, "random bits");
  tu_fill(r, d->id, data, n, TU_FILL_SMALLINT);
  check(env, d->id, n, ops, float_sum_nops, 0, "small integers, exact");
  tu_fill(r, d->id, data, n, TU_FILL_UNIFORM);
  check(env, d->id, n, ops, float_sum_nops, -1, "uniform");
}

/* ------------------------------------------------------------------------------------- */
/* Sequential references                                                                  */
/* ------------------------------------------------------------------------------------- */

/* Float SUM tolerance: |got - exact| <= factor * eps * (sum of |x|); factor 0 is exact. */
static inline double tu_default_tol_factor(size_t n) { return 16.0 + 2.0 * log2((double)n + 1.0); }

/* The scan check loop: STEP folds in[i] into acc; SAME(want, got) compares. */
#define TU_EQ_(a, b) ((a) == (b))
#define TU_SCAN_CHECK_LOOP_(ID, STEP, SAME)                                                  \
  do {                                                                                       \
    if (incl) {                                                                              \
      for (i = 0; i < n; i++) {                                                              \
        STEP;                                                                                \
        if (!SAME(acc, out[i]) && bad++ == 0) tu_mismatch_msg_(msg, ml, ID, i, &acc, &out[i]); \
      }                                                                                      \
    } else {                                                                                 \
      for (i = 0; i < n; i++) {                                                              \
        if (!SAME(acc, out[i]) && bad++ == 0) tu_mismatch_msg_(msg, ml, ID, i, &acc, &out[i]); \
        STEP;                                                                                \
      }                                                                                      \
    }                                                                                        \
  } while (0)

#define TU_DEFINE_INT_REF(NAME, ID, T, UT, TMIN, TMAX)                                       \
  static inline T tu_ident_##NAME(gpuprims_op op) {                                          \
    return op == GPUPRIMS_OP_SUM ? (T)0 : op == GPUPRIMS_OP_MIN ? (T)(TMAX) : (T)(TMIN);     \
  }                                                                                          \
  static inline T tu_comb_##NAME(gpuprims_op op, T a, T b) {                                 \
    if (op == GPUPRIMS_OP_SUM) return (T)(UT)((UT)a + (UT)b);                                \
    if (op == GPUPRIMS_OP_MIN) return b < a ? b : a;                                         \
    return b > a ? b : a;                                                                    \
  }                                                                                          \
  static inline size_t tu_check_reduce_##NAME(gpuprims_op op, const void *in_, size_t n,     \
                                              const void *got_, char *msg, size_t ml) {      \
    const T *in = (const T *)in_;                                                            \
    T acc = tu_ident_##NAME(op), got;                                                        \
    size_t i;                                                                                \
    for (i = 0; i < n; i++) acc = tu_comb_##NAME(op, acc, in[i]);                            \
    memcpy(&got, got_, sizeof got);                                                          \
    if (got == acc) return 0;                                                                \
    tu_mismatch_msg_(msg, ml, ID, (size_t)-1, &acc, &got);                                   \
    return 1;                                                                                \
  }                                                                                          \
  static inline size_t tu_check_scan_##NAME(gpuprims_op op, gpuprims_scan_mode mode,         \
                                            const void *in_, size_t n, const void *out_,     \
                                            char *msg, size_t ml) {                          \
    const T *in = (const T *)in_;                                                            \
    const T *out = (const T *)out_;                                                          \
    T acc = tu_ident_##NAME(op);                                                             \
    size_t i, bad = 0;                                                                       \
    int incl = mode == GPUPRIMS_SCAN_INCLUSIVE;                                              \
    if (op == GPUPRIMS_OP_SUM)                                                               \
      TU_SCAN_CHECK_LOOP_(ID, acc = (T)(UT)((UT)acc + (UT)in[i]), TU_EQ_);                   \
    else if (op == GPUPRIMS_OP_MIN)                                                          \
      TU_SCAN_CHECK_LOOP_(ID, acc = in[i] < acc ? in[i] : acc, TU_EQ_);                      \
    else                                                                                     \
      TU_SCAN_CHECK_LOOP_(ID, acc = in[i] > acc ? in[i] : acc, TU_EQ_);                      \
    return bad;                                                                              \
  }

TU_DEFINE_INT_REF(i8, GPUPRIMS_DTYPE_I8, int8_t, uint8_t, INT8_MIN, INT8_MAX)
TU_DEFINE_INT_REF(u8, GPUPRIMS_DTYPE_U8, uint8_t, uint8_t, 0, UINT8_MAX)
TU_DEFINE_INT_REF(i16, GPUPRIMS_DTYPE_I16, int16_t, uint16_t, INT16_MIN, INT16_MAX)
TU_DEFINE_INT_REF(u16, GPUPRIMS_DTYPE_U16, uint16_t, uint16_t, 0, UINT16_MAX)
TU_DEFINE_INT_REF(i32, GPUPRIMS_DTYPE_I32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
TU_DEFINE_INT_REF(u32, GPUPRIMS_DTYPE_U32, uint32_t, uint32_t, 0, UINT32_MAX)
TU_DEFINE_INT_REF(i64, GPUPRIMS_DTYPE_I64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
TU_DEFINE_INT_REF(u64, GPUPRIMS_DTYPE_U64, uint64_t, uint64_t, 0, UINT64_MAX)

/*
 * Floats. MIN/MAX follow the total order -inf < ... < -0.0 < +0.0 < ... < +inf and give NaN
 * once a NaN is among the inputs; they are compared bitwise (any NaN matches any NaN).
 * SUM is compared with a compensated (Neumaier) sum in double, within a tolerance relative
 * to the sum of absolute values; NaN and infinite sums must match.
 */
/* s + c is the running sum, c the compensation (Neumaier's variant of Kahan summation). */
#define TU_NEUMAIER_ADD_(ACC, s, c, x)                                                       \
  do {                                                                                       \
    ACC t_ = (s) + (x);                                                                      \
    if (((s) < 0 ? -(s) : (s)) >= ((x) < 0 ? -(x) : (x)))                                    \
      (c) += ((s) - t_) + (x);                                                               \
    else                                                                                     \
      (c) += ((x) - t_) + (s);                                                               \
    (s) = t_;                                                                                \
  } while (0)
/* once s is infinite or NaN it stays so, and the compensation means nothing */
#define TU_NEUMAIER_SUM_(s, c) (isfinite(s) ? (s) + (c) : (s))

#define TU_DEFINE_FLOAT_REF(NAME, ID, T, ACC, EPS)                                           \
  static inline T tu_ident_##NAME(gpuprims_op op) {                                          \
    return op == GPUPRIMS_OP_SUM ? (T)0 : op == GPUPRIMS_OP_MIN ? (T)INFINITY : (T)-INFINITY;\
  }                                                                                          \
  static inline T tu_min_##NAME(T a, T b) {                                                  \
    if (b < a) return b;                                                                     \
    if (a < b) return a;                                                                     \
    if (isnan(a)) return a;                                                                  \
    if (isnan(b)) return b;                                                                  \
    return signbit(b) ? b : a; /* equal: -0.0 before +0.0 */                                 \
  }                                                                                          \
  static inline T tu_max_##NAME(T a, T b) {                                                  \
    if (isnan(a)) return a;                                                                  \
    if (isnan(b)) return b;                                                                  \
    if (b > a) return b;                                                                     \
    if (a > b) return a;                                                                     \
    return signbit(b) ? a : b; /* equal: +0.0 after -0.0 */                                  \
  }                                                                                          \
  static inline T tu_comb_##NAME(gpuprims_op op, T a, T b) {                                 \
    if (op == GPUPRIMS_OP_SUM) return a + b;                                                 \
    return op == GPUPRIMS_OP_MIN ? tu_min_##NAME(a, b) : tu_max_##NAME(a, b);                \
  }                                                                                          \
  static inline int tu_same_##NAME(T want, T got) {                                          \
    if (memcmp(&want, &got, sizeof(T)) == 0) return 1;                                       \
    return isnan(want) && isnan(got);                                                        \
  }                                                                                          \
  static inline int tu_sum_ok_##NAME(ACC want, ACC abs_sum, T got, ACC tol_scale) {          \
    ACC d = (ACC)got - want;                                                                 \
    if (d < 0) d = -d;                                                                       \
    if (d <= tol_scale * abs_sum) return 1; /* false for any NaN */                          \
    if (isnan(want)) return isnan(got);                                                      \
    if (isinf(want)) return (ACC)got == want;                                                \
    return 0;                                                                                \
  }                                                                                          \
  static inline void tu_sum_msg_##NAME(char *msg, size_t ml, size_t index, ACC want,         \
                                       ACC abs_sum, T got, ACC tol_scale) {                  \
    char g[64];                                                                              \
    tu_fmt_elem(ID, &got, g, sizeof g);                                                      \
    snprintf(msg, ml, "at index %zu: expected %.21Lg (tolerance %.3Lg), got %s (error %.3Lg)",\
             index, (long double)want, (long double)(tol_scale * abs_sum), g,                \
             fabsl((long double)got - (long double)want));                                   \
  }                                                                                          \
  static inline ACC tu_tol_scale_##NAME(double tolf, size_t n) {                             \
    return (ACC)(tolf < 0 ? tu_default_tol_factor(n) : tolf) * (ACC)(EPS);                   \
  }                                                                                          \
  static inline size_t tu_check_reduce_##NAME(gpuprims_op op, const void *in_, size_t n,     \
                                              const void *got_, double tolf, char *msg,      \
                                              size_t ml) {                                   \
    const T *in = (const T *)in_;                                                            \
    T got;                                                                                   \
    size_t i;                                                                                \
    memcpy(&got, got_, sizeof got);                                                          \
    if (op == GPUPRIMS_OP_SUM) {                                                             \
      ACC s = 0, c = 0, a = 0, scale = tu_tol_scale_##NAME(tolf, n);                         \
      for (i = 0; i < n; i++) {                                                              \
        ACC x = (ACC)in[i];                                                                  \
        TU_NEUMAIER_ADD_(ACC, s, c, x);                                                      \
        a += x < 0 ? -x : x;                                                                 \
      }                                                                                      \
      if (tu_sum_ok_##NAME(TU_NEUMAIER_SUM_(s, c), a, got, scale)) return 0;                                  \
      tu_sum_msg_##NAME(msg, ml, n, TU_NEUMAIER_SUM_(s, c), a, got, scale);                                   \
      return 1;                                                                              \
    } else {                                                                                 \
      T acc = tu_ident_##NAME(op);                                                           \
      for (i = 0; i < n; i++) acc = tu_comb_##NAME(op, acc, in[i]);                          \
      if (tu_same_##NAME(acc, got)) return 0;                                                \
      tu_mismatch_msg_(msg, ml, ID, (size_t)-1, &acc, &got);                                 \
      return 1;                                                                              \
    }                                                                                        \
  }                                                                                          \
  static inline size_t tu_check_scan_##NAME(gpuprims_op op, gpuprims_scan_mode mode,         \
                                            const void *in_, size_t n, const void *out_,     \
                                            double tolf, char *msg, size_t ml) {             \
    const T *in = (const T *)in_;                                                            \
    const T *out = (const T *)out_;                                                          \
    size_t i, bad = 0;                                                                       \
    int incl = mode == GPUPRIMS_SCAN_INCLUSIVE;                                              \
    if (op == GPUPRIMS_OP_SUM) {                                                             \
      ACC s = 0, c = 0, a = 0, scale = tu_tol_scale_##NAME(tolf, n);                         \
      for (i = 0; i < n; i++) {                                                              \
        ACC x = (ACC)in[i];                                                                  \
        if (incl) {                                                                          \
          TU_NEUMAIER_ADD_(ACC, s, c, x);                                                    \
          a += x < 0 ? -x : x;                                                               \
        }                                                                                    \
        if (!tu_sum_ok_##NAME(TU_NEUMAIER_SUM_(s, c), a, out[i], scale) && bad++ == 0)                        \
          tu_sum_msg_##NAME(msg, ml, i, TU_NEUMAIER_SUM_(s, c), a, out[i], scale);                            \
        if (!incl) {                                                                         \
          TU_NEUMAIER_ADD_(ACC, s, c, x);                                                    \
          a += x < 0 ? -x : x;                                                               \
        }                                                                                    \
      }                                                                                      \
    } else {                                                                                 \
      T acc = tu_ident_##NAME(op);                                                           \
      if (op == GPUPRIMS_OP_MIN)                                                             \
        TU_SCAN_CHECK_LOOP_(ID, acc = tu_min_##NAME(acc, in[i]), tu_same_##NAME);            \
      else                                                                                   \
        TU_SCAN_CHECK_LOOP_(ID, acc = tu_max_##NAME(acc, in[i]), tu_same_##NAME);            \
    }                                                                                        \
    return bad;                                                                              \
  }

TU_DEFINE_FLOAT_REF(f32, GPUPRIMS_DTYPE_F32, float, double, FLT_EPSILON)
TU_DEFINE_FLOAT_REF(f64, GPUPRIMS_DTYPE_F64, double, double, DBL_EPSILON)

/*
 * The 16-bit floats: the library computes in f32 and rounds each result once. MIN/MAX are
 * exact (compared as above). SUM with tolerance factor 0 must be the exact sum rounded once
 * (small integers, whose f32 sums are exact); otherwise the rounding of some value within
 * the f32 tolerance of the exact sum (an infinity where the sum may have overflowed).
 */
static inline int tu_half_sum_ok_(gpuprims_dtype t, double want, double abs_sum, uint16_t got, double scale) {
  const double g = tu_half_to_double(t, got), tol = scale * abs_sum;
  if (tu_half_from_double(t, want) == got) return 1;
  if (isnan(want) || isnan(g)) return isnan(want) && isnan(g);
  if (isinf(want)) return g == want;
  /* the f32 sum lies within tol of the exact one and is rounded once, and rounding is
   * monotone: the result lies between the roundings of the interval's ends (which may
   * be infinities, where the sum may have overflowed) */
  return tu_half_to_double(t, tu_half_from_double(t, want - tol)) <= g &&
         g <= tu_half_to_double(t, tu_half_from_double(t, want + tol));
}

static inline void tu_half_sum_msg_(gpuprims_dtype t, char *msg, size_t ml, size_t index, double want, double tol,
                                    uint16_t got) {
  char g[64];
  uint64_t slot = got; /* the formatter reads up to 8 bytes for other dtypes */
  tu_fmt_elem(t, &slot, g, sizeof g);
  snprintf(msg, ml, "at index %zu: expected %.17g rounded once (f32 tolerance %.3g), got %s", index, want, tol, g);
}

static inline void tu_half_mismatch_msg_(gpuprims_dtype t, char *msg, size_t ml, size_t index, uint16_t want,
                                         uint16_t got) {
  uint64_t w = want, g = got; /* 8-byte slots: see tu_half_sum_msg_ */
  tu_mismatch_msg_(msg, ml, t, index, &w, &g);
}

static inline double tu_half_scale_(double tolf, size_t n) {
  return (tolf < 0 ? tu_default_tol_factor(n) : tolf) * FLT_EPSILON;
}

static inline size_t tu_check_reduce_half(gpuprims_dtype t, gpuprims_op op, const void *in, size_t n,
                                          const void *got_, double tolf, char *msg, size_t ml) {
  uint16_t got, want;
  size_t i;
  memcpy(&got, got_, 2);
  if (op == GPUPRIMS_OP_SUM) {
    double s = 0, c = 0, a = 0, scale = tu_half_scale_(tolf, n);
    for (i = 0; i < n; i++) {
      double x = tu_get_f(t, in, i);
      TU_NEUMAIER_ADD_(double, s, c, x);
      a += fabs(x);
    }
    if (tu_half_sum_ok_(t, TU_NEUMAIER_SUM_(s, c), a, got, scale)) return 0;
    tu_half_sum_msg_(t, msg, ml, n, TU_NEUMAIER_SUM_(s, c), scale * a, got);
    return 1;
  } else {
    double acc = tu_ident_f64(op);
    for (i = 0; i < n; i++) acc = tu_comb_f64(op, acc, tu_get_f(t, in, i));
    want = tu_half_from_double(t, acc);
    if (want == got || (isnan(acc) && isnan(tu_half_to_double(t, got)))) return 0;
    tu_half_mismatch_msg_(t, msg, ml, (size_t)-1, want, got);
    return 1;
  }
}

static inline size_t tu_check_scan_half(gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode, const void *in,
                                        size_t n, const void *out, double tolf, char *msg, size_t ml) {
  const int incl = mode == GPUPRIMS_SCAN_INCLUSIVE;
  double s = 0, c = 0, a = 0, acc = tu_ident_f64(op), scale = tu_half_scale_(tolf, n);
  size_t i, bad = 0;
  for (i = 0; i < n; i++) {
    uint16_t got, want;
    double x = tu_get_f(t, in, i);
    int ok;
    memcpy(&got, (const unsigned char *)out + 2 * i, 2);
    if (incl) {
      TU_NEUMAIER_ADD_(double, s, c, x);
      a += fabs(x);
      acc = tu_comb_f64(op, acc, x);
    }
    if (op == GPUPRIMS_OP_SUM) {
      ok = tu_half_sum_ok_(t, TU_NEUMAIER_SUM_(s, c), a, got, scale);
      if (!ok && bad++ == 0) tu_half_sum_msg_(t, msg, ml, i, TU_NEUMAIER_SUM_(s, c), scale * a, got);
    } else {
      want = tu_half_from_double(t, acc);
      ok = want == got || (isnan(acc) && isnan(tu_half_to_double(t, got)));
      if (!ok && bad++ == 0) tu_half_mismatch_msg_(t, msg, ml, i, want, got);
    }
    if (!incl) {
      TU_NEUMAIER_ADD_(double, s, c, x);
      a += fabs(x);
      acc = tu_comb_f64(op, acc, x);
    }
  }
  return bad;
}

/*
 * Checks gpuprims_reduce's result `got` (one element of dtype t) against the sequential
 * reference over in[0..n). tol_factor: float SUM tolerance factor (< 0: default, 0: exact).
 * Returns 0 when right, else 1 with a description in msg.
 */
static inline size_t tu_check_reduce(gpuprims_dtype t, gpuprims_op op, const void *in, size_t n,
                                     const void *got, double tol_factor, char *msg, size_t ml) {
  switch (t) {
    case GPUPRIMS_DTYPE_I8: return tu_check_reduce_i8(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_U8: return tu_check_reduce_u8(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_I16: return tu_check_reduce_i16(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_U16: return tu_check_reduce_u16(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_I32: return tu_check_reduce_i32(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_U32: return tu_check_reduce_u32(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_I64: return tu_check_reduce_i64(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_U64: return tu_check_reduce_u64(op, in, n, got, msg, ml);
    case GPUPRIMS_DTYPE_F32: return tu_check_reduce_f32(op, in, n, got, tol_factor, msg, ml);
    case GPUPRIMS_DTYPE_F64: return tu_check_reduce_f64(op, in, n, got, tol_factor, msg, ml);
    case GPUPRIMS_DTYPE_F16:
    case GPUPRIMS_DTYPE_BF16: return tu_check_reduce_half(t, op, in, n, got, tol_factor, msg, ml);
    default: snprintf(msg, ml, "unknown dtype %u", (unsigned)t); return 1;
  }
}

/*
 * Checks a scan's output out[0..n) against the sequential reference over in[0..n).
 * Returns the number of wrong elements; msg describes the first.
 */
static inline size_t tu_check_scan(gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode,
                                   const void *in, size_t n, const void *out, double tol_factor,
                                   char *msg, size_t ml) {
  switch (t) {
    case GPUPRIMS_DTYPE_I8: return tu_check_scan_i8(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_U8: return tu_check_scan_u8(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_I16: return tu_check_scan_i16(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_U16: return tu_check_scan_u16(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_I32: return tu_check_scan_i32(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_U32: return tu_check_scan_u32(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_I64: return tu_check_scan_i64(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_U64: return tu_check_scan_u64(op, mode, in, n, out, msg, ml);
    case GPUPRIMS_DTYPE_F32: return tu_check_scan_f32(op, mode, in, n, out, tol_factor, msg, ml);
    case GPUPRIMS_DTYPE_F64: return tu_check_scan_f64(op, mode, in, n, out, tol_factor, msg, ml);
    case GPUPRIMS_DTYPE_F16:
    case GPUPRIMS_DTYPE_BF16: return tu_check_scan_half(t, op, mode, in, n, out, tol_factor, msg, ml);
    default: snprintf(msg, ml, "unknown dtype %u", (unsigned)t); return n ? n : 1;
  }
}

/* ------------------------------------------------------------------------------------- */
/* Handles of every kind                                                                  */
/* ------------------------------------------------------------------------------------- */

/* The kinds of handle. */
enum { TU_KCTX, TU_KBUF, TU_KGRID, TU_KCOMM, TU_KGROUP, TU_KINDS };

/* The destroy of `kind`, whatever h is (a destroyed or foreign handle: a no-op). */
static inline void tu_destroy_as(int kind, void *h) {
  switch (kind) {
    case TU_KCTX: gpuprims_context_destroy((gpuprims_context *)h); break;
    case TU_KBUF: gpuprims_buffer_destroy((gpuprims_buffer *)h); break;
    case TU_KGRID: gpuprims_life_destroy((gpuprims_life_grid *)h); break;
    case TU_KCOMM: gpuprims_comm_destroy((gpuprims_comm *)h); break;
    default: gpuprims_group_destroy((gpuprims_group *)h); break;
  }
}

/* ------------------------------------------------------------------------------------- */
/* Buffers                                                                                */
/* ------------------------------------------------------------------------------------- */

static inline gpuprims_buffer *tu_buffer_from_host(gpuprims_context *ctx, gpuprims_dtype t,
                                                   const void *src, size_t n) {
  gpuprims_buffer *b = NULL;
  TU_REQUIRE_OK(gpuprims_buffer_from_host(ctx, t, src, n, &b));
  TU_REQUIRE(b != NULL);
  return b;
}

static inline gpuprims_buffer *tu_buffer_create(gpuprims_context *ctx, gpuprims_dtype t, size_t n) {
  gpuprims_buffer *b = NULL;
  TU_REQUIRE_OK(gpuprims_buffer_create(ctx, t, n, &b));
  TU_REQUIRE(b != NULL);
  return b;
}

/* Fills the buffer's n elements of elem_size bytes with the byte 0xA5. */
static inline void tu_poison(gpuprims_buffer *b, size_t n, size_t elem_size) {
  void *p = tu_xmalloc(n * elem_size);
  memset(p, 0xA5, n * elem_size);
  TU_REQUIRE_OK(gpuprims_buffer_write(b, 0, p, n));
  free(p);
}

/* ------------------------------------------------------------------------------------- */
/* Rows of the segmented tests                                                            */
/* ------------------------------------------------------------------------------------- */

/* nrows rows over len values, row r at values[offsets[r], offsets[r + 1]) (the first may
 * start past 0, the last end before len); row_len > 0: uniform rows (a 2-D array). cap:
 * the entries offsets has room for. */
typedef struct {
  size_t nrows, len, row_len, cap;
  uint64_t *offsets;
} tu_layout;

/* No rows yet, the first to start at `first`; len is the caller's to set. */
static inline tu_layout tu_layout_new(uint64_t first) {
  tu_layout l;
  l.nrows = l.len = l.row_len = 0;
  l.cap = 1024;
  l.offsets = (uint64_t *)tu_xmalloc(l.cap * sizeof(uint64_t));
  l.offsets[0] = first;
  return l;
}

/* Appends a row of n elements. */
static inline void tu_layout_add(tu_layout *l, size_t n) {
  if (l->nrows + 2 > l->cap) {
    l->cap *= 2;
    l->offsets = (uint64_t *)realloc(l->offsets, l->cap * sizeof(uint64_t));
    if (!l->offsets) TU_FATAL("out of memory");
  }
  l->offsets[l->nrows + 1] = l->offsets[l->nrows] + n;
  l->nrows++;
}

/* nrows rows of row_len elements covering the values. */
static inline tu_layout tu_layout_uniform(size_t nrows, size_t row_len) {
  tu_layout l;
  size_t r;
  l.nrows = nrows;
  l.row_len = row_len;
  l.len = nrows * row_len;
  l.cap = nrows + 1;
  l.offsets = (uint64_t *)tu_xmalloc(l.cap * sizeof(uint64_t));
  for (r = 0; r <= nrows; r++) l.offsets[r] = (uint64_t)(r * row_len);
  return l;
}

/* The number of elements of row r. */
static inline uint64_t tu_row_n(const tu_layout *l, size_t r) { return l->offsets[r + 1] - l->offsets[r]; }

static inline void tu_layout_free(tu_layout *l) {
  free(l->offsets);
  l->offsets = NULL;
}

/* Offsets or ks v[0..n) as a buffer of U32 (narrowed) or U64 entries. */
static inline gpuprims_buffer *tu_index_buffer(gpuprims_context *ctx, gpuprims_dtype t, const uint64_t *v, size_t n) {
  gpuprims_buffer *b;
  uint32_t *w;
  size_t i;
  if (t == GPUPRIMS_DTYPE_U64) return tu_buffer_from_host(ctx, t, v, n);
  w = (uint32_t *)tu_xmalloc(n * 4);
  for (i = 0; i < n; i++) w[i] = (uint32_t)v[i];
  b = tu_buffer_from_host(ctx, t, w, n);
  free(w);
  return b;
}

/* ------------------------------------------------------------------------------------- */
/* Sorting: a sequential reference for gpuprims_radix_sort                                */
/* ------------------------------------------------------------------------------------- */

static inline const char *tu_order_name(gpuprims_order o) {
  switch (o) {
    case GPUPRIMS_ORDER_ASCENDING: return "ascending";
    case GPUPRIMS_ORDER_DESCENDING: return "descending";
    default: return "?";
  }
}

/* The bits of element i of an array of es-byte elements, zero-extended (little-endian). */
static inline uint64_t tu_get_bits(size_t es, const void *p, size_t i) {
  const unsigned char *at = (const unsigned char *)p + es * i;
  switch (es) { /* fixed sizes, so each memcpy is one load */
    case 1: return *at;
    case 2: { uint16_t v; memcpy(&v, at, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, at, 4); return v; }
    case 8: { uint64_t v; memcpy(&v, at, 8); return v; }
    default: { uint64_t bits = 0; memcpy(&bits, at, es); return bits; }
  }
}

/* Is this float bit pattern a NaN (any sign, any payload)? False for integer dtypes. */
static inline int tu_bits_is_nan(const tu_dtype_info *d, uint64_t bits) {
  if (!d->is_float) return 0;
  if (d->size == 2) return isnan(tu_half_to_double(d->id, (uint16_t)bits));
  if (d->size == 4) return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
  return (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (bits & 0x000FFFFFFFFFFFFFull) != 0;
}

/*
 * The sort's order as an unsigned key, ascending: unsigned integers as they are, signed
 * ones with the sign bit flipped, floats in the total order -inf < ... < -0.0 < +0.0 <
 * ... < +inf < NaN (negative: every bit inverted; positive: the sign bit set; every NaN
 * UINT64_MAX, one value above +inf).
 */
static inline uint64_t tu_sort_key(const tu_dtype_info *d, uint64_t bits) {
  uint64_t sign = (uint64_t)1 << (d->size * 8 - 1);
  uint64_t mask = d->size == 8 ? UINT64_MAX : (((uint64_t)1 << (d->size * 8)) - 1);
  bits &= mask;
  if (!d->is_float) return d->is_signed ? bits ^ sign : bits;
  if (tu_bits_is_nan(d, bits)) return UINT64_MAX;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

/* The key of element i as the order `o` wants it (complemented for descending). */
static inline uint64_t tu_sort_key_at(const tu_dtype_info *d, gpuprims_order o, const void *keys, size_t i) {
  uint64_t k = tu_sort_key(d, tu_get_bits(d->size, keys, i));
  return o == GPUPRIMS_ORDER_DESCENDING ? ~k : k;
}

typedef struct {
  uint64_t key;   /* tu_sort_key, complemented for descending */
  uint64_t index; /* the position in the input */
} tu_sort_pair;

static inline int tu_sort_pair_cmp_(const void *a_, const void *b_) {
  const tu_sort_pair *a = (const tu_sort_pair *)a_, *b = (const tu_sort_pair *)b_;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->index != b->index) return a->index < b->index ? -1 : 1;
  return 0;
}

/* The reference's key of element i as a number whose ascending order is order o's: the
 * order key, with NaN (UINT64_MAX) brought down to one above the largest finite key of a
 * 4-byte float and the complement taken within the keys' range for descending, so that the
 * radix sort below finds the high digits of narrow keys constant and skips them. */
static inline uint64_t tu_ref_key_(const tu_dtype_info *d, gpuprims_order o, uint64_t top, const void *keys,
                                   size_t i) {
  uint64_t k = tu_sort_key(d, tu_get_bits(d->size, keys, i));
  if (k > top) k = top; /* NaN of a 4-byte float */
  return o == GPUPRIMS_ORDER_DESCENDING ? top - k : k;
}

#define TU_REF_DIGIT_BITS 11
#define TU_REF_DIGITS 6 /* 6 x 11 >= 64 */
#define TU_REF_BUCKETS ((size_t)1 << TU_REF_DIGIT_BITS)

/* The radix sort's second array of pairs and its counts, kept from call to call. */
static struct {
  pthread_mutex_t lock;
  tu_sort_pair *pairs;
  size_t cap;
  size_t counts[TU_REF_DIGITS][TU_REF_BUCKETS];
} tu_ref_work_ = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, {{0}}};

/*
 * The stable sort of keys[0..n) (dtype t) in order o, as a permutation: perm[j] is the input
 * position of the element the sort puts at j. scratch: n pairs (NULL: allocated here).
 * An LSD radix sort of (key, index) pairs by 11-bit digits, the digits every key shares
 * skipped: stable, so equal keys keep their input order. Short inputs: qsort of the pairs,
 * whose (key, index) are unique, so its order is the same.
 */
static inline void tu_sort_ref(gpuprims_dtype t, const void *keys, size_t n, gpuprims_order o, size_t *perm,
                               tu_sort_pair *scratch) {
  const tu_dtype_info *d = tu_dtype(t);
  const uint64_t mask = tu_width_mask(d->size);
  /* the largest reference key: a NaN of a 4-byte float sits one above the finite keys */
  const uint64_t top = d->size == 8 ? UINT64_MAX : d->is_float ? mask + 1 : mask;
  tu_sort_pair *pairs = scratch ? scratch : (tu_sort_pair *)tu_xmalloc(n * sizeof(tu_sort_pair));
  size_t i;
  for (i = 0; i < n; i++) {
    pairs[i].key = tu_ref_key_(d, o, top, keys, i);
    pairs[i].index = (uint64_t)i;
  }
  if (n <= 256) {
    if (n > 1) qsort(pairs, n, sizeof(tu_sort_pair), tu_sort_pair_cmp_);
  } else {
    tu_sort_pair *src = pairs, *dst;
    int g, digits = 1;
    while (digits < TU_REF_DIGITS && (top >> (digits * TU_REF_DIGIT_BITS)) != 0) digits++;
    pthread_mutex_lock(&tu_ref_work_.lock);
    if (tu_ref_work_.cap < n) {
      free(tu_ref_work_.pairs);
      tu_ref_work_.pairs = (tu_sort_pair *)tu_xmalloc(n * sizeof(tu_sort_pair));
      tu_ref_work_.cap = n;
    }
    dst = tu_ref_work_.pairs;
    memset(tu_ref_work_.counts, 0, sizeof tu_ref_work_.counts);
    for (i = 0; i < n; i++) {
      uint64_t k = pairs[i].key;
      for (g = 0; g < digits; g++)
        tu_ref_work_.counts[g][(k >> (g * TU_REF_DIGIT_BITS)) & (TU_REF_BUCKETS - 1)]++;
    }
    for (g = 0; g < digits; g++) {
      size_t *c = tu_ref_work_.counts[g], sum = 0, b;
      const unsigned shift = (unsigned)(g * TU_REF_DIGIT_BITS);
      tu_sort_pair *tmp;
      if (c[(src[0].key >> shift) & (TU_REF_BUCKETS - 1)] == n) continue; /* every key has this digit */
      for (b = 0; b < TU_REF_BUCKETS; b++) {
        size_t here = c[b];
        c[b] = sum;
        sum += here;
      }
      for (i = 0; i < n; i++) dst[c[(src[i].key >> shift) & (TU_REF_BUCKETS - 1)]++] = src[i];
      tmp = src;
      src = dst;
      dst = tmp;
    }
    for (i = 0; i < n; i++) perm[i] = (size_t)src[i].index;
    pthread_mutex_unlock(&tu_ref_work_.lock);
    if (!scratch) free(pairs);
    return;
  }
  for (i = 0; i < n; i++) perm[i] = (size_t)pairs[i].index;
  if (!scratch) free(pairs);
}

/* out[j] = in[perm[j]] for n elements of es bytes (out and in must not overlap). */
static inline void tu_gather(const void *in, size_t es, const size_t *perm, size_t n, void *out) {
  const unsigned char *src = (const unsigned char *)in;
  unsigned char *dst = (unsigned char *)out;
  size_t j;
  switch (es) {
    case 1: for (j = 0; j < n; j++) dst[j] = src[perm[j]]; return;
    case 2: for (j = 0; j < n; j++) memcpy(dst + 2 * j, src + 2 * perm[j], 2); return;
    case 4: for (j = 0; j < n; j++) memcpy(dst + 4 * j, src + 4 * perm[j], 4); return;
    default: for (j = 0; j < n; j++) memcpy(dst + es * j, src + es * perm[j], es); return;
  }
}

/* The first element (of es bytes) where a and b differ bitwise; n when none does. */
static inline size_t tu_first_diff(const void *a, const void *b, size_t es, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  size_t lo = 0;
  if (memcmp(x, y, n * es) == 0) return n;
  /* blocks of 4096 elements, then elements */
  while (lo + 4096 <= n && memcmp(x + lo * es, y + lo * es, 4096 * es) == 0) lo += 4096;
  while (lo < n && memcmp(x + lo * es, y + lo * es, es) == 0) lo++;
  return lo;
}

/* How many elements (of es bytes) differ bitwise between a and b. */
static inline size_t tu_count_diff(const void *a, const void *b, size_t es, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  size_t i, c = 0;
  for (i = 0; i < n; i++) c += memcmp(x + i * es, y + i * es, es) != 0;
  return c;
}

/* ------------------------------------------------------------------------------------- */
/* A caller's CUDA stream, without CUDA headers                                           */
/* ------------------------------------------------------------------------------------- */

/*
 * A non-blocking stream on the primary context of CUDA device `device` (the context
 * gpuprims uses, as the runtime API would), made through libcuda.so.1 loaded at run time,
 * so a test needs neither the CUDA headers nor nvcc. Only for a context whose backend is
 * CUDA: elsewhere there is nothing to load.
 */
typedef int (*tu_cu_init_fn)(unsigned);
typedef int (*tu_cu_device_get_fn)(int *, int);
typedef int (*tu_cu_primary_retain_fn)(void **, int);
typedef int (*tu_cu_primary_release_fn)(int);
typedef int (*tu_cu_ctx_push_fn)(void *);
typedef int (*tu_cu_ctx_pop_fn)(void **);
typedef int (*tu_cu_stream_create_fn)(void **, unsigned);
typedef int (*tu_cu_stream_fn)(void *);

typedef struct {
  void *lib, *pctx, *stream;
  int dev;
  tu_cu_primary_release_fn release;
  tu_cu_ctx_push_fn push;
  tu_cu_ctx_pop_fn pop;
  tu_cu_stream_fn sync, destroy;
} tu_cuda_stream;

static inline int tu_load_sym_(void *lib, const char *name, void *fn_out, size_t fn_size) {
  void *sym = dlsym(lib, name);
  if (!sym) return 0;
  memcpy(fn_out, &sym, fn_size); /* object pointer to function pointer, without a cast */
  return 1;
}

/* Makes cs->stream; 1 on success, else 0 with the reason in why. */
static inline int tu_cuda_stream_create(tu_cuda_stream *cs, int device, char *why, size_t wl) {
  tu_cu_init_fn init;
  tu_cu_device_get_fn device_get;
  tu_cu_primary_retain_fn retain;
  tu_cu_stream_create_fn create;
  void *popped = NULL;
  int r;
  memset(cs, 0, sizeof *cs);
  cs->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cs->lib) {
    snprintf(why, wl, "dlopen(libcuda.so.1) failed: %s", dlerror());
    return 0;
  }
  if (!(tu_load_sym_(cs->lib, "cuInit", &init, sizeof init) &&
        tu_load_sym_(cs->lib, "cuDeviceGet", &device_get, sizeof device_get) &&
        tu_load_sym_(cs->lib, "cuDevicePrimaryCtxRetain", &retain, sizeof retain) &&
        tu_load_sym_(cs->lib, "cuDevicePrimaryCtxRelease_v2", &cs->release, sizeof cs->release) &&
        tu_load_sym_(cs->lib, "cuCtxPushCurrent_v2", &cs->push, sizeof cs->push) &&
        tu_load_sym_(cs->lib, "cuCtxPopCurrent_v2", &cs->pop, sizeof cs->pop) &&
        tu_load_sym_(cs->lib, "cuStreamCreate", &create, sizeof create) &&
        tu_load_sym_(cs->lib, "cuStreamSynchronize", &cs->sync, sizeof cs->sync) &&
        tu_load_sym_(cs->lib, "cuStreamDestroy_v2", &cs->destroy, sizeof cs->destroy))) {
    snprintf(why, wl, "libcuda.so.1 lacks a driver API symbol");
    dlclose(cs->lib);
    cs->lib = NULL;
    return 0;
  }
  cs->dev = -1;
  r = init(0);
  if (r == 0) r = device_get(&cs->dev, device);
  if (r == 0) r = retain(&cs->pctx, cs->dev);
  if (r == 0) r = cs->push(cs->pctx);
  if (r == 0) r = create(&cs->stream, 1 /* CU_STREAM_NON_BLOCKING */);
  if (cs->pctx) cs->pop(&popped);
  if (r == 0 && cs->stream) return 1;
  snprintf(why, wl, "creating a CUDA stream through the driver API failed (CUresult %d)", r);
  if (cs->pctx) cs->release(cs->dev);
  dlclose(cs->lib);
  memset(cs, 0, sizeof *cs);
  return 0;
}

/* Waits for the stream and destroys it (no context may still issue work on it); 0 when
 * the driver reported an error. */
static inline int tu_cuda_stream_destroy(tu_cuda_stream *cs) {
  void *popped = NULL;
  int r = 0;
  if (!cs->lib) return 1;
  if (cs->push(cs->pctx) == 0) {
    r |= cs->sync(cs->stream);
    r |= cs->destroy(cs->stream);
    cs->pop(&popped);
  } else {
    r = 1;
  }
  cs->release(cs->dev);
  dlclose(cs->lib);
  memset(cs, 0, sizeof *cs);
  return r == 0;
}

#endif /* GPUPRIMS_TEST_UTIL_H */
