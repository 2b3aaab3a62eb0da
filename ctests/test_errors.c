/*
 * test_errors: gpuprims_version (and the header's version macros), gpuprims_status_name,
 * gpuprims_last_error, gpuprims_dtype_size, and precompile's argument check.
 *
 * The last error is the message of this thread's most recent failed call (0 / empty when
 * there is none yet); whether a successful call clears it is not specified, so both are
 * accepted. Text output: at most len bytes including the NUL, truncated, full length
 * returned, buf may be NULL when len is 0.
 */
#include "test_util.h"

#define CANARY 0x7E

/* Normalised: lower case, only letters and digits ("NULL_ARGUMENT" -> "nullargument"). */
static void normalise(const char *in, char *out, size_t len) {
  size_t j = 0;
  for (; *in && j + 1 < len; in++) {
    char c = *in;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out[j++] = c;
  }
  out[j] = '\0';
}

static void test_version(void) {
  uint32_t v = gpuprims_version();
  unsigned major = (unsigned)(v >> 16), minor = (unsigned)((v >> 8) & 0xFF), patch = (unsigned)(v & 0xFF);
  printf("test_errors: gpuprims_version() = 0x%06lx (%u.%u.%u)\n", (unsigned long)v, major, minor, patch);
  TU_CHECKF(v != 0, "gpuprims_version() is 0");
  TU_CHECKF((v >> 24) == 0, "gpuprims_version() 0x%08lx: major does not fit (major << 16 | minor << 8 | patch)",
            (unsigned long)v);
  TU_CHECK(gpuprims_version() == v);
  /* The header's macros are the library's version (the header is generated with it). */
  TU_CHECKF(v == (uint32_t)GPUPRIMS_VERSION, "gpuprims_version() 0x%06lx, GPUPRIMS_VERSION 0x%06lx", (unsigned long)v,
            (unsigned long)GPUPRIMS_VERSION);
  TU_CHECKF(major == GPUPRIMS_VERSION_MAJOR && minor == GPUPRIMS_VERSION_MINOR && patch == GPUPRIMS_VERSION_PATCH,
            "GPUPRIMS_VERSION_MAJOR/MINOR/PATCH %d.%d.%d, library %u.%u.%u", GPUPRIMS_VERSION_MAJOR,
            GPUPRIMS_VERSION_MINOR, GPUPRIMS_VERSION_PATCH, major, minor, patch);
#ifdef GPUPRIMS_TEST_EXPECTED_VERSION
  {
    unsigned emaj = 0, emin = 0, epat = 0;
    if (sscanf(GPUPRIMS_TEST_EXPECTED_VERSION, "%u.%u.%u", &emaj, &emin, &epat) == 3) {
      TU_CHECKF(major == emaj && minor == emin && patch == epat,
                "gpuprims_version() says %u.%u.%u, Cargo.toml says %s", major, minor, patch,
                GPUPRIMS_TEST_EXPECTED_VERSION);
    }
  }
#endif
}

/* gpuprims_dtype_size for every dtype and for values that are none; precompile's
 * argument check and its host no-op. */
static void test_dtype_size_and_precompile(void) {
  static const struct {
    gpuprims_dtype dtype;
    size_t size;
  } sizes[] = {{GPUPRIMS_DTYPE_I8, 1},  {GPUPRIMS_DTYPE_U8, 1},  {GPUPRIMS_DTYPE_I16, 2}, {GPUPRIMS_DTYPE_U16, 2},
               {GPUPRIMS_DTYPE_I32, 4}, {GPUPRIMS_DTYPE_U32, 4}, {GPUPRIMS_DTYPE_I64, 8}, {GPUPRIMS_DTYPE_U64, 8},
               {GPUPRIMS_DTYPE_F32, 4}, {GPUPRIMS_DTYPE_F64, 8}, {GPUPRIMS_DTYPE_F16, 2}, {GPUPRIMS_DTYPE_BF16, 2}};
  static const gpuprims_dtype not_dtypes[] = {0, 13, 100, 0x7FFFFFFFu, 0xFFFFFFFFu};
  gpuprims_context *ctx = NULL;
  size_t i;
  for (i = 0; i < TU_ARRAY_LEN(sizes); i++)
    TU_CHECKF(gpuprims_dtype_size(sizes[i].dtype) == sizes[i].size, "gpuprims_dtype_size(%lu) is %zu, expected %zu",
              (unsigned long)sizes[i].dtype, gpuprims_dtype_size(sizes[i].dtype), sizes[i].size);
  for (i = 0; i < TU_ARRAY_LEN(not_dtypes); i++)
    TU_CHECKF(gpuprims_dtype_size(not_dtypes[i]) == 0, "gpuprims_dtype_size(%lu) is %zu for no dtype",
              (unsigned long)not_dtypes[i], gpuprims_dtype_size(not_dtypes[i]));

  TU_EXPECT_STATUS(gpuprims_context_precompile(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  if (TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &ctx))) {
    TU_EXPECT_OK(gpuprims_context_precompile(ctx));
    gpuprims_context_destroy(ctx);
  }
}

static void test_status_names(void) {
  static const char *const expected[] = {
      "ok",           "nullargument", "invalidargument", "typemismatch", "sizemismatch",
      "contextmismatch", "outofmemory", "nodevice",     "drivererror",  "compileerror",
      "unsupported",  "parseerror",   "internalerror"};
  static const gpuprims_status codes[] = {
      GPUPRIMS_STATUS_OK,              GPUPRIMS_STATUS_NULL_ARGUMENT,  GPUPRIMS_STATUS_INVALID_ARGUMENT,
      GPUPRIMS_STATUS_TYPE_MISMATCH,   GPUPRIMS_STATUS_SIZE_MISMATCH,  GPUPRIMS_STATUS_CONTEXT_MISMATCH,
      GPUPRIMS_STATUS_OUT_OF_MEMORY,   GPUPRIMS_STATUS_NO_DEVICE,      GPUPRIMS_STATUS_DRIVER_ERROR,
      GPUPRIMS_STATUS_COMPILE_ERROR,   GPUPRIMS_STATUS_UNSUPPORTED,    GPUPRIMS_STATUS_PARSE_ERROR,
      GPUPRIMS_STATUS_INTERNAL_ERROR};
  static const gpuprims_status unknown[] = {13, 14, 100, 0x7FFFFFFFu, 0xFFFFFFFFu};
  const char *names[TU_ARRAY_LEN(codes)];
  size_t i, j;
  char norm[128];

  TU_CHECK(GPUPRIMS_STATUS_OK == 0);
  for (i = 0; i < TU_ARRAY_LEN(codes); i++) {
    const char *n = gpuprims_status_name(codes[i]);
    names[i] = n;
    if (!TU_CHECKF(n != NULL, "gpuprims_status_name(%u) is NULL", (unsigned)codes[i])) continue;
    TU_CHECKF(n[0] != '\0', "gpuprims_status_name(%u) is empty", (unsigned)codes[i]);
    normalise(n, norm, sizeof norm);
    TU_CHECKF(strstr(norm, expected[i]) != NULL, "gpuprims_status_name(%u) = \"%s\" does not name %s",
              (unsigned)codes[i], n, expected[i]);
    TU_CHECKF(gpuprims_status_name(codes[i]) && strcmp(gpuprims_status_name(codes[i]), n) == 0,
              "gpuprims_status_name(%u) changes between calls", (unsigned)codes[i]);
  }
  for (i = 0; i < TU_ARRAY_LEN(codes); i++)
    for (j = i + 1; j < TU_ARRAY_LEN(codes); j++)
      if (names[i] && names[j])
        TU_CHECKF(strcmp(names[i], names[j]) != 0, "statuses %u and %u share the name \"%s\"",
                  (unsigned)codes[i], (unsigned)codes[j], names[i]);
  for (i = 0; i < TU_ARRAY_LEN(unknown); i++) {
    const char *n = gpuprims_status_name(unknown[i]);
    if (!TU_CHECKF(n != NULL, "gpuprims_status_name(%lu) (unknown) is NULL", (unsigned long)unknown[i]))
      continue;
    TU_CHECKF(n[0] != '\0', "gpuprims_status_name(%lu) (unknown) is empty", (unsigned long)unknown[i]);
    TU_CHECKF(!names[0] || strcmp(n, names[0]) != 0,
              "gpuprims_status_name(%lu) (unknown) claims \"%s\", the name of OK", (unsigned long)unknown[i], n);
  }
}

/* Reads the whole last error of this thread into a malloc'd string; *len_out = length. */
static char *read_last_error(size_t *len_out) {
  size_t n = gpuprims_last_error(NULL, 0);
  char *s = (char *)tu_xmalloc(n + 1);
  size_t n2 = gpuprims_last_error(s, n + 1);
  TU_CHECKF(n2 == n, "gpuprims_last_error length changed between calls (%zu then %zu)", n, n2);
  s[n] = '\0';
  *len_out = n;
  return s;
}

static void check_truncation(const char *full, size_t n) {
  size_t lens[] = {1, 2, 3, 5, 16, 0, 0, 0, 0};
  size_t i;
  char *buf = (char *)tu_xmalloc(n + 64);
  lens[5] = n;
  lens[6] = n + 1;
  lens[7] = n + 2;
  lens[8] = n > 1 ? n - 1 : 1;
  for (i = 0; i < TU_ARRAY_LEN(lens); i++) {
    size_t len = lens[i], k, keep, ret;
    if (len == 0 || len > n + 32) continue;
    memset(buf, CANARY, n + 64);
    ret = gpuprims_last_error(buf, len);
    keep = len - 1 < n ? len - 1 : n;
    TU_CHECKF(ret == n, "gpuprims_last_error(buf, %zu) returned %zu, expected the full length %zu", len, ret, n);
    TU_CHECKF(memcmp(buf, full, keep) == 0, "gpuprims_last_error(buf, %zu): the first %zu bytes differ", len, keep);
    TU_CHECKF(buf[keep] == '\0', "gpuprims_last_error(buf, %zu): no NUL at %zu", len, keep);
    /* bytes at and past len are never written */
    for (k = len; k < n + 64; k++)
      if (buf[k] != (char)CANARY) break;
    TU_CHECKF(k == n + 64, "gpuprims_last_error(buf, %zu) wrote byte %zu (past len)", len, k);
  }
  /* len 0 with a real buffer: nothing written. */
  memset(buf, CANARY, n + 64);
  TU_CHECK(gpuprims_last_error(buf, 0) == n);
  TU_CHECKF(buf[0] == (char)CANARY, "gpuprims_last_error(buf, 0) wrote into buf");
  /* buf NULL, len 0: the length. */
  TU_CHECK(gpuprims_last_error(NULL, 0) == n);
  free(buf);
}

typedef struct {
  size_t fresh_len;      /* last_error length before any failure in this thread */
  char fresh_first;      /* buf[0] after reading with none */
  gpuprims_status status;
  size_t own_len;
  char own[512];
} thread_result;

static void *thread_body(void *arg) {
  thread_result *r = (thread_result *)arg;
  char buf[8];
  size_t len = 0;
  memset(buf, CANARY, sizeof buf);
  r->fresh_len = gpuprims_last_error(buf, sizeof buf);
  r->fresh_first = buf[0];
  r->status = gpuprims_buffer_len(NULL, &len); /* NULL_ARGUMENT */
  r->own_len = gpuprims_last_error(r->own, sizeof r->own);
  r->own[sizeof r->own - 1] = '\0';
  return NULL;
}

int main(void) {
  char buf[16];
  size_t n1, n2, n_again, n_after_ok;
  char *m1, *m2;
  gpuprims_context *ctx;
  gpuprims_status s;

  tu_init("test_errors");

  /* Before any failed call in this thread: length 0, empty string. */
  memset(buf, CANARY, sizeof buf);
  TU_CHECKF(gpuprims_last_error(NULL, 0) == 0, "gpuprims_last_error(NULL, 0) is %zu before any failure",
            gpuprims_last_error(NULL, 0));
  TU_CHECKF(gpuprims_last_error(buf, sizeof buf) == 0, "gpuprims_last_error(buf) nonzero before any failure");
  TU_CHECKF(buf[0] == '\0', "gpuprims_last_error(buf, %zu) with no error did not write an empty string", sizeof buf);

  test_version();
  test_status_names();

  /* A failed call: an unknown backend value. */
  ctx = TU_SENTINEL_PTR(gpuprims_context);
  s = gpuprims_context_create((gpuprims_backend)0x7777, 0, &ctx);
  TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECKF(ctx == TU_SENTINEL_PTR(gpuprims_context), "failed context_create wrote its out-parameter");
  m1 = read_last_error(&n1);
  printf("test_errors: INVALID_ARGUMENT message: \"%s\"\n", m1);
  TU_CHECKF(n1 > 0, "no last error after a failed call");
  TU_CHECKF(strlen(m1) == n1, "last error has an embedded NUL or a wrong length (%zu vs %zu)", strlen(m1), n1);
  check_truncation(m1, n1);

  /* Reading does not consume it. */
  n_again = gpuprims_last_error(NULL, 0);
  TU_CHECKF(n_again == n1, "reading the last error changed it (%zu then %zu)", n1, n_again);

  /* A successful call: the message stays or is cleared, nothing else. */
  TU_CHECK(gpuprims_status_name(GPUPRIMS_STATUS_OK) != NULL);
  ctx = NULL;
  if (TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &ctx))) {
    char *after = read_last_error(&n_after_ok);
    TU_CHECKF(n_after_ok == 0 || strcmp(after, m1) == 0,
              "after a successful call the last error is \"%s\": neither the previous failure's nor empty", after);
    free(after);
    gpuprims_context_destroy(ctx);
  }

  /* A different failure replaces it. */
  s = gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, NULL);
  TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_NULL_ARGUMENT);
  m2 = read_last_error(&n2);
  printf("test_errors: NULL_ARGUMENT message: \"%s\"\n", m2);
  TU_CHECKF(n2 > 0, "no last error after a NULL_ARGUMENT failure");
  TU_CHECKF(strcmp(m1, m2) != 0, "the last error did not change with a different failure (\"%s\")", m2);
  check_truncation(m2, n2);

  /* Per thread: a new thread has none; its own failure does not reach this thread. */
  {
    pthread_t th;
    thread_result r;
    char *m3;
    size_t n3;
    memset(&r, 0, sizeof r);
    TU_REQUIRE(pthread_create(&th, NULL, thread_body, &r) == 0);
    TU_REQUIRE(pthread_join(th, NULL) == 0);
    TU_CHECKF(r.fresh_len == 0, "a new thread sees a last error of length %zu (another thread's)", r.fresh_len);
    TU_CHECKF(r.fresh_first == '\0', "a new thread's last_error(buf) did not write an empty string");
    TU_EXPECT_STATUS(r.status, GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_CHECKF(r.own_len > 0, "the thread has no last error after its own failure");
    m3 = read_last_error(&n3);
    TU_CHECKF(n3 == n2 && strcmp(m3, m2) == 0,
              "this thread's last error changed after another thread failed: \"%s\" (was \"%s\")", m3, m2);
    free(m3);
  }

  test_dtype_size_and_precompile();

  free(m1);
  free(m2);
  return tu_finish();
}
