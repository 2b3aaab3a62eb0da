/*
 * test_context: gpuprims_context_* on every backend value, device names, streams,
 * synchronize, argument errors; failed calls leave their out-parameters untouched.
 */
#include "test_util.h"

#define CANARY 0x7E

static void check_device_name(gpuprims_context *ctx, const char *what) {
  size_t needed = 12345, needed2 = 12345, len, k;
  char *full, buf[512];
  if (!TU_EXPECT_OK(gpuprims_context_device_name(ctx, NULL, 0, &needed))) return;
  TU_CHECKF(needed > 0 && needed < 4096, "%s: device name length %zu", what, needed);
  if (needed == 0 || needed >= 4096) return;
  full = (char *)tu_xmalloc(needed + 1);
  memset(full, CANARY, needed + 1);
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, full, needed + 1, &needed2));
  TU_CHECKF(needed2 == needed, "%s: device name length %zu, then %zu", what, needed, needed2);
  TU_CHECKF(full[needed] == '\0' && strlen(full) == needed, "%s: device name not NUL-terminated at %zu", what,
            needed);
  full[needed] = '\0';
  printf("test_context: %s device name \"%s\"\n", what, full);

  /* Truncation: len bytes at most, NUL included, full length reported. */
  for (len = 1; len <= needed + 2 && len < sizeof buf; len += (len < 6 ? 1 : needed / 3 + 1)) {
    size_t keep = len - 1 < needed ? len - 1 : needed;
    memset(buf, CANARY, sizeof buf);
    needed2 = 0;
    TU_EXPECT_OK(gpuprims_context_device_name(ctx, buf, len, &needed2));
    TU_CHECKF(needed2 == needed, "%s: device_name(len %zu) reported %zu, expected %zu", what, len, needed2, needed);
    TU_CHECKF(memcmp(buf, full, keep) == 0 && buf[keep] == '\0', "%s: device_name(len %zu) wrong truncation",
              what, len);
    for (k = len; k < sizeof buf; k++)
      if (buf[k] != (char)CANARY) break;
    TU_CHECKF(k == sizeof buf, "%s: device_name(len %zu) wrote byte %zu", what, len, k);
  }
  /* len 0 with a real buffer: nothing written. */
  memset(buf, CANARY, sizeof buf);
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, buf, 0, &needed2));
  TU_CHECKF(buf[0] == (char)CANARY, "%s: device_name(buf, 0) wrote into buf", what);
  /* buf NULL with len > 0: a NULL argument; needed untouched. */
  needed2 = 777;
  TU_EXPECT_STATUS(gpuprims_context_device_name(ctx, NULL, 8, &needed2), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECKF(needed2 == 777, "%s: failed device_name wrote *needed", what);
  free(full);
}

/* The device name of ctx, in buf (empty on failure). */
static void device_name_of(gpuprims_context *ctx, char *buf, size_t len) {
  buf[0] = '\0';
  TU_EXPECT_OK(gpuprims_context_device_name(ctx, buf, len, NULL));
}

/*
 * GPUPRIMS_BACKEND as AUTO reads it: unset, AUTO says why it took the host when it did;
 * "host" (any case) gives the host and says so; an unknown value fails AUTO with
 * INVALID_ARGUMENT naming it, and leaves HOST and CUDA asked for explicitly alone. The
 * caller's setting is restored afterwards.
 */
static void check_backend_env(void) {
  const char *env = getenv("GPUPRIMS_BACKEND");
  char *saved = env ? strcpy((char *)tu_xmalloc(strlen(env) + 1), env) : NULL;
  gpuprims_context *c, *out;
  gpuprims_backend b;
  char name[512], err[512];

  unsetenv("GPUPRIMS_BACKEND");
  if (TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &c))) {
    b = tu_backend_of(c);
    device_name_of(c, name, sizeof name);
    if (b == GPUPRIMS_BACKEND_HOST)
      TU_CHECKF(strstr(name, "CUDA unavailable: ") != NULL, "AUTO fell back to the host without a reason: \"%s\"",
                name);
    printf("test_context: GPUPRIMS_BACKEND unset: AUTO is \"%s\"\n", name);
    gpuprims_context_destroy(c);
  }

  setenv("GPUPRIMS_BACKEND", "HoSt", 1);
  if (TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &c))) {
    TU_CHECKF(tu_backend_of(c) == GPUPRIMS_BACKEND_HOST, "GPUPRIMS_BACKEND=HoSt: AUTO is not the host");
    device_name_of(c, name, sizeof name);
    TU_CHECKF(strstr(name, "GPUPRIMS_BACKEND=host") != NULL, "GPUPRIMS_BACKEND=HoSt: device name \"%s\"", name);
    gpuprims_context_destroy(c);
  }

  setenv("GPUPRIMS_BACKEND", "bogus", 1);
  out = TU_SENTINEL_PTR(gpuprims_context);
  TU_EXPECT_STATUS(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECKF(out == TU_SENTINEL_PTR(gpuprims_context), "failed AUTO context_create wrote its out-parameter");
  tu_last_error_text(err, sizeof err);
  TU_CHECKF(strstr(err, "GPUPRIMS_BACKEND") && strstr(err, "bogus"), "GPUPRIMS_BACKEND=bogus: message \"%s\"", err);
  printf("test_context: GPUPRIMS_BACKEND=bogus: %s\n", err);
  if (TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &c))) {
    device_name_of(c, name, sizeof name);
    TU_CHECKF(strchr(name, ';') == NULL, "HOST asked for explicitly gives a reason: \"%s\"", name);
    gpuprims_context_destroy(c);
  }
  /* Explicit CUDA ignores the variable: a context, or NO_DEVICE, never INVALID_ARGUMENT. */
  c = NULL;
  TU_EXPECT_STATUS2(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &c), GPUPRIMS_STATUS_OK, GPUPRIMS_STATUS_NO_DEVICE);
  gpuprims_context_destroy(c);

  if (saved) setenv("GPUPRIMS_BACKEND", saved, 1);
  else unsetenv("GPUPRIMS_BACKEND");
  free(saved);
}

/* Some work on ctx, so that a context is shown to be usable, not only created. */
static void check_usable(gpuprims_context *ctx, const char *what) {
  int32_t data[100], sum = 0, got = -1;
  int i;
  gpuprims_buffer *b;
  for (i = 0; i < 100; i++) data[i] = i * 3 - 7;
  for (i = 0; i < 100; i++) sum += data[i];
  b = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, data, 100);
  TU_EXPECT_OK(gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &got));
  TU_CHECKF(got == sum, "%s: SUM %ld, expected %ld", what, (long)got, (long)sum);
  TU_EXPECT_OK(gpuprims_context_synchronize(ctx));
  gpuprims_buffer_destroy(b);
}

/*
 * CUDA only: a caller's stream from the driver API (test_util.h: tu_cuda_stream, on the
 * device's primary context as the runtime API would create it), non-blocking so that
 * nothing orders it implicitly. Work issued on it must be ordered after earlier work,
 * and work issued after switching back must be ordered after it.
 */
static void cuda_stream_test(gpuprims_context *ctx) {
  tu_cuda_stream cs;
  char why[256];
  void *stream;
  int i;
  enum { N = 300001 };
  int32_t *data, *got, sum = 0, red = 0, acc;
  gpuprims_buffer *in, *out;
  if (!TU_CHECKF(tu_cuda_stream_create(&cs, 0, why, sizeof why), "CUDA context, but no caller's stream: %s", why))
    return;
  stream = cs.stream;

  data = (int32_t *)tu_xmalloc(N * sizeof(int32_t));
  got = (int32_t *)tu_xmalloc(N * sizeof(int32_t));
  for (i = 0; i < N; i++) data[i] = (i * 7) % 13 - 6;
  for (i = 0; i < N; i++) sum += data[i];

  /* work issued before the switch, then on the caller's stream */
  in = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, data, N);
  out = tu_buffer_create(ctx, GPUPRIMS_DTYPE_I32, N);
  TU_EXPECT_OK(gpuprims_context_set_stream(ctx, stream));
  TU_EXPECT_OK(gpuprims_scan(ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
  TU_EXPECT_OK(gpuprims_scan(ctx, out, out, GPUPRIMS_OP_MAX, GPUPRIMS_SCAN_INCLUSIVE));
  if (TU_EXPECT_OK(gpuprims_reduce(ctx, in, GPUPRIMS_OP_SUM, &red)))
    TU_CHECKF(red == sum, "SUM on the caller's stream: %ld, expected %ld", (long)red, (long)sum);
  TU_EXPECT_OK(gpuprims_buffer_read(out, 0, got, N));
  {
    int32_t run = 0, mx = INT32_MIN;
    int bad = 0;
    for (i = 0; i < N; i++) {
      run += data[i];
      mx = run > mx ? run : mx;
      if (got[i] != mx) bad++;
    }
    TU_CHECKF(bad == 0, "scans on the caller's stream: %d wrong elements", bad);
  }
  /* issue on the caller's stream, switch back, read: ordered */
  TU_EXPECT_OK(gpuprims_scan(ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE));
  TU_EXPECT_OK(gpuprims_context_set_stream(ctx, NULL));
  TU_EXPECT_OK(gpuprims_buffer_read(out, 0, got, N));
  acc = 0;
  {
    int bad = 0;
    for (i = 0; i < N; i++) {
      if (got[i] != acc) bad++;
      acc += data[i];
    }
    TU_CHECKF(bad == 0, "scan issued on the caller's stream, read after set_stream(NULL): %d wrong", bad);
  }
  TU_EXPECT_OK(gpuprims_context_synchronize(ctx));
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(in);
  free(data);
  free(got);

  TU_CHECK(tu_cuda_stream_destroy(&cs));
  printf("test_context: work on a caller's CUDA stream checked\n");
}

int main(void) {
  gpuprims_context *ctx, *host, *cuda, *out;
  gpuprims_backend b;
  gpuprims_status s;
  char err[512];
  int i, on_cuda;
  static const gpuprims_backend bad_backends[] = {3, 4, 100, 0x7FFFFFFFu, 0xFFFFFFFFu};

  tu_init("test_context");

  /* AUTO (the test's main context; GPUPRIMS_BACKEND may override it). */
  ctx = tu_open_context();
  b = tu_backend_of(ctx);
  TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA || b == GPUPRIMS_BACKEND_HOST, "AUTO context reports backend %lu",
            (unsigned long)b);
  if (tu_env_backend_is("host"))
    TU_CHECKF(b == GPUPRIMS_BACKEND_HOST, "GPUPRIMS_BACKEND=host but the AUTO context is %s", tu_backend_name(b));
  if (tu_env_backend_is("cuda"))
    TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA, "GPUPRIMS_BACKEND=cuda but the AUTO context is %s", tu_backend_name(b));
  on_cuda = b == GPUPRIMS_BACKEND_CUDA;
  check_device_name(ctx, "AUTO");
  TU_EXPECT_OK(gpuprims_context_synchronize(ctx));
  check_usable(ctx, "AUTO");

  /* Streams. */
  TU_EXPECT_OK(gpuprims_context_set_stream(ctx, NULL));
  if (!on_cuda) {
    TU_EXPECT_STATUS(gpuprims_context_set_stream(ctx, (void *)(uintptr_t)0x1000), GPUPRIMS_STATUS_UNSUPPORTED);
    TU_EXPECT_OK(gpuprims_context_set_stream(ctx, NULL));
  } else {
    cuda_stream_test(ctx);
  }
  check_usable(ctx, "AUTO after set_stream(NULL)");

  /* HOST, explicitly: always available, whatever GPUPRIMS_BACKEND says. */
  host = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &host));
  TU_REQUIRE(host != NULL);
  b = 0xDEAD;
  TU_EXPECT_OK(gpuprims_context_backend(host, &b));
  TU_CHECKF(b == GPUPRIMS_BACKEND_HOST, "HOST context reports backend %lu", (unsigned long)b);
  check_device_name(host, "HOST");
  TU_EXPECT_STATUS(gpuprims_context_set_stream(host, (void *)(uintptr_t)0x1000), GPUPRIMS_STATUS_UNSUPPORTED);
  TU_EXPECT_OK(gpuprims_context_set_stream(host, NULL));
  TU_EXPECT_OK(gpuprims_context_synchronize(host));
  check_usable(host, "HOST");

  /* CUDA, explicitly: a device, or NO_DEVICE with a reason. */
  cuda = TU_SENTINEL_PTR(gpuprims_context);
  s = gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &cuda);
  if (s == GPUPRIMS_STATUS_OK) {
    TU_REQUIRE(cuda != NULL && cuda != TU_SENTINEL_PTR(gpuprims_context));
    b = 0xDEAD;
    TU_EXPECT_OK(gpuprims_context_backend(cuda, &b));
    TU_CHECKF(b == GPUPRIMS_BACKEND_CUDA, "CUDA context reports backend %lu", (unsigned long)b);
    check_device_name(cuda, "CUDA");
    TU_EXPECT_OK(gpuprims_context_set_stream(cuda, NULL));
    TU_EXPECT_OK(gpuprims_context_synchronize(cuda));
    check_usable(cuda, "CUDA");
    gpuprims_context_destroy(cuda);

    /* A device index that does not exist. */
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS2(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 4096, &out), GPUPRIMS_STATUS_NO_DEVICE,
                      GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_context));
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS2(gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, -1, &out), GPUPRIMS_STATUS_NO_DEVICE,
                      GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_context));
  } else {
    TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_NO_DEVICE);
    TU_CHECKF(cuda == TU_SENTINEL_PTR(gpuprims_context), "failed CUDA context_create wrote its out-parameter");
    tu_last_error_text(err, sizeof err);
    TU_CHECKF(err[0] != '\0', "NO_DEVICE without a reason in the last error");
    printf("test_context: no CUDA device: %s\n", err);
    TU_CHECKF(!on_cuda, "AUTO gave CUDA but CUDA explicitly gave NO_DEVICE");
  }

  check_backend_env();

  /* Unknown backend values. */
  for (i = 0; i < (int)TU_ARRAY_LEN(bad_backends); i++) {
    out = TU_SENTINEL_PTR(gpuprims_context);
    TU_EXPECT_STATUS(gpuprims_context_create(bad_backends[i], 0, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECKF(out == TU_SENTINEL_PTR(gpuprims_context), "context_create(backend %lu) wrote its out-parameter",
              (unsigned long)bad_backends[i]);
    TU_CHECK(gpuprims_last_error(NULL, 0) > 0);
  }

  /* NULL arguments. */
  TU_EXPECT_STATUS(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  b = 0xDEAD;
  TU_EXPECT_STATUS(gpuprims_context_backend(NULL, &b), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(b == 0xDEAD);
  TU_EXPECT_STATUS(gpuprims_context_backend(ctx, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  {
    size_t needed = 777;
    char nb[16];
    memset(nb, CANARY, sizeof nb);
    TU_EXPECT_STATUS(gpuprims_context_device_name(NULL, nb, sizeof nb, &needed), GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_CHECK(needed == 777 && nb[0] == (char)CANARY);
  }
  TU_EXPECT_STATUS(gpuprims_context_set_stream(NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_synchronize(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  gpuprims_context_destroy(NULL); /* a no-op */

  /* A buffer handle passed where a context is expected: INVALID_ARGUMENT, not a crash. */
  {
    uint8_t one = 1;
    gpuprims_buffer *buf = tu_buffer_from_host(host, GPUPRIMS_DTYPE_U8, &one, 1);
    gpuprims_context *fake = (gpuprims_context *)(void *)buf;
    size_t needed = 777;
    char nb[16];
    b = 0xDEAD;
    TU_EXPECT_STATUS(gpuprims_context_backend(fake, &b), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(b == 0xDEAD);
    memset(nb, CANARY, sizeof nb);
    TU_EXPECT_STATUS(gpuprims_context_device_name(fake, nb, sizeof nb, &needed), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_CHECK(needed == 777 && nb[0] == (char)CANARY);
    TU_EXPECT_STATUS(gpuprims_context_synchronize(fake), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(gpuprims_context_set_stream(fake, NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    gpuprims_buffer_destroy(buf);
  }

  /* Many contexts, created and destroyed; two alive at once are independent. */
  for (i = 0; i < 32; i++) {
    gpuprims_context *c = NULL;
    if (!TU_EXPECT_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &c))) break;
    if (i % 8 == 0) check_usable(c, "HOST (loop)");
    gpuprims_context_destroy(c);
  }
  check_usable(host, "HOST, after the others were destroyed");
  check_usable(ctx, "AUTO, after the others were destroyed");

  gpuprims_context_destroy(host);
  gpuprims_context_destroy(ctx);
  return tu_finish();
}
